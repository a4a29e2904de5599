"""The engine's shortcuts give what the plain computation gives (issue 11).

Areas are kept up to date where a wall can change them instead of being filled anew
over the whole board; placements measure the castle distance once; the `legal_*` lists
word no refusal; computer players apply each move once. Each test below holds one
shortcut to a plain reference, on positions from real games and on random ones, and
the first of each pair shows that the comparison catches a shortcut gone wrong.
"""

from __future__ import annotations

import dataclasses
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import ai, rules
from engine.ai import PLAYERS
from engine.board import PLAIN, Board, Cell, Edge, assemble, make_edge
from engine.errors import IllegalMove
from engine.game import GameState, Phase, attempt, new_game, submit
from engine.moves import Pass, Place, Walls
from engine.position import COLOURS, Player, Position
from engine.serialize import state_to_json
from engine.setup import Settings, arrangement

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


def positions_of_a_game(
    seed: int, players: int = 4, ai_kind: str = "random", setup: str = "variable"
) -> list[GameState]:
    """Every state of one game between computer players, start to end."""
    game = Settings(players=COLOURS[:players], setup=setup, seed=seed)
    seats = {p: PLAYERS[ai_kind](f"{seed}/{i}") for i, p in enumerate(game.players)}
    states = [new_game(game)]
    while not states[-1].is_over:
        state = states[-1]
        player = state.phase.waiting[0]
        states.append(submit(state, player, seats[player].choose(state, player))[0])
    return states


# --- areas: kept up to date where walls changed (engine.position) ---------------------------


def filled_afresh(pos: Position) -> Position:
    """The same pieces and walls, with areas filled over the whole board."""
    fresh = pos.copy()
    fresh.invalidate_areas()
    return fresh


def area_differences(pos: Position) -> list[str]:
    """How the kept areas differ from areas filled afresh: the same areas in the same
    order, each region's cells in the same order (the engine's output follows it)."""
    afresh = filled_afresh(pos)
    kept, fresh = pos.areas, afresh.areas
    found = []
    if [(a.cells, a.castles) for a in kept] != [(a.cells, a.castles) for a in fresh]:
        found.append("the areas differ")
    found += [
        f"the cells of the region at {a.castle} are in another order"
        for a, b in zip(kept, fresh, strict=False)
        if a.is_region and a.cells == b.cells and list(a.cells) != list(b.cells)
    ]
    found += [
        f"{cell} is mapped to another area"
        for cell in pos.board.cells
        if pos.area_at(cell).cells != afresh.area_at(cell).cells
    ][:1]
    return found


def test_the_area_check_catches_a_wall_the_areas_were_not_told_of() -> None:
    pos = positions_of_a_game(3)[-1].pos
    edge = next(
        e for e in pos.board.edges if e not in pos.walls and not pos.area_at(e[0]).is_region
    )
    for _, wall in pos.links(edge[0]):
        pos.walls.add(wall)  # behind the position's back: its areas are stale now
    assert area_differences(pos)


@pytest.mark.parametrize(
    "players,ai_kind,setup",
    [
        (4, "random", "variable"),
        (3, "greedy", "variable"),
        (2, "random", "variable"),
        (3, "random", "basic"),
        (4, "greedy", "basic"),
    ],
)
@settings(max_examples=3, deadline=None)
@given(seed=SEEDS)
def test_kept_areas_equal_areas_filled_afresh_after_every_move(
    players: int, ai_kind: str, setup: str, seed: int
) -> None:
    for state in positions_of_a_game(seed, players, ai_kind, setup):
        assert area_differences(state.pos) == [], f"seed {seed}, turn {state.turn}"


def open_board() -> Position:
    """6 × 5 plain cells, a red castle at B2 and a grey one at E4: free land."""
    board = Board(tuple("." * 6 for _ in range(5)))
    return Position(
        board=board,
        players={"red": Player()},
        knight_supply={"red": 12},
        castles={(1, 1): "red", (4, 3): "grey"},
    )


def test_a_wall_in_open_land_leaves_the_areas_as_they_were() -> None:
    pos = open_board()
    before = pos.areas
    rules.place_wall(pos, "red", make_edge((2, 2), (3, 2)), [])
    assert pos.areas == before and area_differences(pos) == []


def test_the_wall_that_closes_a_ring_splits_the_area() -> None:
    pos = open_board()
    ring = [make_edge((1, 1), n) for n in ((1, 0), (0, 1), (2, 1), (1, 2))]
    for edge in ring:
        rules.place_wall(pos, "red", edge, [])
    assert pos.area_at((1, 1)).cells == {(1, 1)}
    assert pos.players["red"].power == 3  # RULES 6.1: T(1) = 3
    assert area_differences(pos) == []


def test_a_copy_keeps_its_areas_when_the_original_gets_a_wall() -> None:
    pos = open_board()
    for n in ((1, 0), (0, 1), (2, 1)):
        rules.place_wall(pos, "red", make_edge((1, 1), n), [])
    twin = pos.copy()
    rules.place_wall(pos, "red", make_edge((1, 1), (1, 2)), [])
    assert pos.area_at((1, 1)).is_region and not twin.area_at((1, 1)).is_region
    assert len(twin.area_at((1, 1)).cells) == 30
    assert area_differences(twin) == [] and area_differences(pos) == []


# --- placement: the castle distance once per decision (RULES 2.3) ---------------------------


def reference_distance(pos: Position, colour: str) -> int:
    """RULES 2.3 and docs/rules-decisions.md, word for word: 7, or the largest distance
    to the colour's nearest castle that any free cell where a castle and knight fit has."""
    own = [c for c, owner in pos.castles.items() if owner == colour]
    best = 0
    for castle, _ in reference_pairs(pos):
        spacing = min(
            (abs(castle[0] - c[0]) + abs(castle[1] - c[1]) for c in own),
            default=rules.CASTLE_DISTANCE,
        )
        best = max(best, min(spacing, rules.CASTLE_DISTANCE))
    return best


def reference_pairs(pos: Position) -> list[tuple[Cell, Cell]]:
    def free_plain(c: Cell) -> bool:
        return pos.board.terrain(c) == PLAIN and pos.piece_at(c) is None

    return [
        (c, n)
        for c in pos.board.cells
        for n in pos.board.neighbours(c)
        if free_plain(c) and free_plain(n)
    ]


def reference_placements(pos: Position, colour: str) -> list[Place]:
    need = reference_distance(pos, colour)
    own = [c for c, owner in pos.castles.items() if owner == colour]
    return [
        Place(c, k)
        for c, k in reference_pairs(pos)
        if all(abs(c[0] - o[0]) + abs(c[1] - o[1]) >= need for o in own)
    ]


def crowded_position(seed: int) -> Position:
    """A random board with castles and knights of every colour on random plain cells,
    from a few to so many that little or no room is left."""
    rng = random.Random(seed)
    board = assemble(arrangement(Settings(players=COLOURS, setup="variable", seed=seed), rng))
    pos = Position(board=board, players={c: Player() for c in COLOURS[:2]})
    plain = [c for c in board.cells if board.terrain(c) == PLAIN]
    rng.shuffle(plain)
    for cell in plain[: rng.choice((2, 8, 20, 40, 60, len(plain) - 2))]:
        pieces = pos.castles if rng.random() < 0.4 else pos.knights
        pieces[cell] = rng.choice(COLOURS)
    return pos


def test_the_placement_reference_tells_a_far_castle_from_a_near_one() -> None:
    pos = open_board()
    legal = reference_placements(pos, "red")
    assert Place((5, 4), (5, 3)) in legal  # 4 + 3 = 7 from the castle at B2
    assert Place((5, 3), (5, 4)) not in legal  # 4 + 2 = 6: too close
    assert Place((0, 4), (1, 4)) not in legal


@settings(max_examples=150, deadline=None)
@given(seed=SEEDS)
def test_placements_equal_the_rules_word_for_word(seed: int) -> None:
    pos = crowded_position(seed)
    for colour in COLOURS:
        legal = reference_placements(pos, colour)
        assert rules.castle_distance(pos, colour) == reference_distance(pos, colour)
        assert rules.legal_placements(pos, colour) == legal
        assert rules.can_place(pos) == bool(legal)
        for castle, knight in reference_pairs(pos)[:40]:
            move = Place(castle, knight)
            assert (rules.placement_problem(pos, colour, move) is None) == (move in legal)


def test_a_castle_too_near_is_refused_in_words() -> None:
    pos = open_board()
    assert rules.placement_problem(pos, "red", Place((5, 3), (5, 2))) == (
        "F4 is too close to the red castle at B2: same-colour castles need 6 cells between them"
    )


# --- refusals worded only when read (engine.rules) ------------------------------------------


@pytest.mark.parametrize("seed", [5, 8])
def test_the_legal_lists_keep_what_the_worded_checks_allow(seed: int) -> None:
    for state in positions_of_a_game(seed)[::7]:
        pos = state.pos
        for colour in state.players:
            assert rules.legal_knight_cells(pos, colour) == [
                c for c in pos.board.cells if rules.knight_problem(pos, colour, c) is None
            ]
            if rules.may_place_walls(pos, colour):
                assert rules.legal_walls(pos, colour) == [
                    e for e in pos.board.edges if rules.wall_problem(pos, colour, e) is None
                ]


def test_a_refusal_is_worded_when_read() -> None:
    pos = open_board()
    pos.knights[(2, 1)] = "red"
    refusal = rules.edge_refusal(pos, make_edge((1, 1), (2, 1)))
    assert refusal is not None
    assert refusal() == "a wall may not separate the red knight at C2 from the red castle at B2"
    assert rules.knight_problem(pos, "red", (4, 4)) == (
        "E5 is not next to a red knight or castle without a wall between them"
    )
    assert rules.knight_refusal(pos, "red", (3, 1)) is None


# --- the computer players' boxes (engine.ai) -------------------------------------------------


def reference_enclosure(
    pos: Position, player: str, legal: list[Edge], rng: random.Random
) -> tuple[list[Edge], list[Edge]]:
    """`enclosure_walls` with sets, as it was written before it used bits."""
    walled_or_legal = pos.walls | set(legal)
    best: list[tuple[frozenset[Cell], list[Edge]]] = []
    for castle in ai.open_castles(pos, player):
        for box in ai.boxes_around(pos.board.width, pos.board.height, castle):
            others, border = box.cells - {castle}, reference_border(pos, box.cells)
            if not others.isdisjoint(pos.castles) or not walled_or_legal.issuperset(border):
                continue
            missing = [e for e in border if e not in pos.walls]
            if missing and (not best or len(missing) < len(best[0][1])):
                best = [(box.cells, missing)]
            elif missing and len(missing) == len(best[0][1]):
                best.append((box.cells, missing))
    if not best:
        return [], []
    cells, missing = rng.choice(best)
    return missing, [e for e in legal if e[0] in cells and e[1] in cells]


def reference_border(pos: Position, cells: frozenset[Cell]) -> list[Edge]:
    return sorted(make_edge(c, n) for c in cells for n in pos.board.neighbours(c) if n not in cells)


@pytest.mark.parametrize("seed", [2, 13])
def test_enclosure_walls_equal_the_set_reference(seed: int) -> None:
    compared = 0
    for state in positions_of_a_game(seed)[::3]:
        for player in state.players:
            legal = rules.legal_walls(state.pos, player)
            got = ai.enclosure_walls(state.pos, player, legal, random.Random(seed))
            assert got == reference_enclosure(state.pos, player, legal, random.Random(seed))
            compared += bool(got[0])
    assert compared > 10, "too few positions with a box to enclose"


# --- states copied and moves applied once (engine.state, engine.game, engine.ai) -------------


def test_a_copied_state_shares_nothing_mutable_and_misses_no_field() -> None:
    state = positions_of_a_game(4)[150]
    twin = state.copy()
    assert twin == state
    for f in dataclasses.fields(GameState):
        value = getattr(state, f.name)
        if isinstance(value, (list, dict, set, Position, Phase)):
            assert getattr(twin, f.name) is not value, f"{f.name} is shared"
    assert twin.phase.waiting is not state.phase.waiting
    assert twin.pos.walls is not state.pos.walls


def test_attempt_is_submit_or_none() -> None:
    state = positions_of_a_game(6)[20]
    player = state.phase.waiting[0]
    assert attempt(state, "nobody", Pass()) is None
    with pytest.raises(IllegalMove):
        submit(state, "nobody", Pass())
    move = PLAYERS["random"](1).choose(state, player)
    tried, submitted = attempt(state, player, move), submit(state, player, move)
    assert tried is not None
    assert state_to_json(tried[0]) == state_to_json(submitted[0]) and tried[1] == submitted[1]


@pytest.mark.parametrize("ai_kind", ["random", "greedy"])
def test_playing_a_move_equals_choosing_and_submitting_it(ai_kind: str) -> None:
    """`play` applies each move once (the greedy player reuses the state it scored the
    move on): the same moves, states and events as `choose` and `submit`."""
    game = Settings(players=COLOURS[:3], setup="variable", seed=21)
    playing = {p: PLAYERS[ai_kind](f"21/{i}") for i, p in enumerate(game.players)}
    choosing = {p: PLAYERS[ai_kind](f"21/{i}") for i, p in enumerate(game.players)}
    state = new_game(game)
    while not state.is_over:
        player = state.phase.waiting[0]
        move, played, log = playing[player].play(state, player)
        chosen = choosing[player].choose(state, player)
        submitted, expected = submit(state, player, chosen)
        assert move == chosen and log == expected
        assert state_to_json(played) == state_to_json(submitted)
        state = played


def test_the_greedy_player_reuses_only_a_state_it_scored_on_this_very_state() -> None:
    tactic = ai.GreedyPerformTactic(random.Random(1))
    state = positions_of_a_game(6)[40]
    outcome: ai.Outcome = (state, [])
    tactic.best = (state, "red", Walls(()), outcome)
    assert tactic.applied(state, "red", Walls(())) is outcome
    assert tactic.applied(state.copy(), "red", Walls(())) is None
    assert tactic.applied(state, "ochre", Walls(())) is None
