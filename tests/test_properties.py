"""Property tests: random legal games through the whole engine API, as OpenSpiel's
`random_sim_test` does for every game. Hypothesis draws the game (players, colours,
setup, decision mode, seed) and the computer players' seed; after every accepted
submission the invariants of RULES 1, 5 and 6 are checked, a rejected submission
must leave the state as it was (RULES 9), and the record must replay the game.

A failing example prints its settings and `ai_seed`:
`engine.simulate.play(settings, "random", ai_seed)` plays the same game again.
"""

from __future__ import annotations

import contextlib
import copy
import random
from collections import Counter
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from engine import rules
from engine.ai import PLAYERS, RandomPlayer
from engine.board import FOREST, PLAIN, Edge
from engine.errors import IllegalMove
from engine.game import GameState, apply, check, default_move, new_game, replay, submit
from engine.moves import (
    POLITICS_CARDS,
    Accept,
    Alliance,
    Bid,
    BreakOff,
    Choice,
    Decide,
    EndAlliance,
    Knight,
    Offer,
    Pass,
    Place,
    Submission,
    Swords,
    TakeCard,
    Walls,
)
from engine.position import COLOURS, KNIGHTS_PER_COLOUR, WALLS_IN_GAME, alliance_key
from engine.serialize import state_to_json
from engine.setup import DECISION_MODES, SETUPS, Settings
from engine.simulate import Record, play

Log = list[dict]
Check = Callable[[GameState | None, GameState, Log], None]  # (before, after, events)
MAX_SUBMISSIONS = 5_000
SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
# Whole games are played by the kinds that decide in milliseconds (the search player
# thinks a quarter of a second a move: its games are tests/test_engine_search.py's).
FAST_PLAYERS = sorted(k for k in PLAYERS if k != "search")


def games(count: int) -> settings:
    """Hypothesis settings for tests that play `count` whole games (each ~0.1 s). No
    shrinking: a smaller seed is not a simpler game, and each try replays a whole one."""
    return settings(
        max_examples=count,
        deadline=None,
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
        suppress_health_check=[HealthCheck.too_slow],
    )


# Every kind of game: 2-4 players, both setups where allowed (RULES 2.2: basic is for 3
# or 4), sealed and open decisions (RULES 3.2).
KINDS = [
    (players, setup, decisions)
    for players in (2, 3, 4)
    for setup in SETUPS
    for decisions in DECISION_MODES
    if players > 2 or setup == "variable"
]


@st.composite
def game_settings(draw: st.DrawFn, kind: tuple[int, str, str] | None = None) -> Settings:
    """A game of that kind, or any kind, in any colours and seat order."""
    players, setup, decisions = kind or draw(st.sampled_from(KINDS))
    colours = tuple(draw(st.permutations(COLOURS))[:players])
    return Settings(players=colours, setup=setup, decisions=decisions, seed=draw(SEEDS))


def play_checked(
    game: Settings,
    ai_seed: int,
    check: Check,
    ai: str = "random",
) -> tuple[GameState, Record]:
    """Play a whole game between computer players, calling `check` after every step."""
    seats = {p: PLAYERS[ai](f"{ai_seed}/{i}") for i, p in enumerate(game.players)}
    state, record = new_game(game), []
    check(None, state, [])
    while not state.is_over:
        assert len(record) < MAX_SUBMISSIONS, f"no end after {len(record)} submissions"
        player = state.phase.waiting[0]
        move = seats[player].choose(state, player)
        after, log = submit(state, player, move)
        record.append((player, move))
        check(state, after, log)
        state = after
    return state, record


def no_check(before: GameState | None, after: GameState, log: Log) -> None:
    pass


# --- the invariants ------------------------------------------------------------------


def colours_in_play(state: GameState) -> list[str]:
    return [*state.players, *filter(None, [state.settings.neutral_colour])]


def check_holdings(state: GameState) -> None:
    """RULES 1: power and ducats never below 0; 12 knights per colour in play (neutral
    included) between board and supply; 100 walls between board and supply; no more
    politics cards of a kind than the 13-card deck holds."""
    pos = state.pos
    for colour, holder in pos.players.items():
        assert holder.power >= 0, f"{colour} has power {holder.power}"
        assert holder.ducats >= 0, f"{colour} has {holder.ducats} ducats"
    on_board = Counter(pos.knights.values())
    for colour in colours_in_play(state):
        assert pos.knight_supply[colour] >= 0, f"{colour} supply {pos.knight_supply[colour]}"
        total = on_board[colour] + pos.knight_supply[colour]
        assert total == KNIGHTS_PER_COLOUR, f"{colour} has {total} knights in all"
    assert pos.wall_supply >= 0, f"wall supply {pos.wall_supply}"
    assert pos.wall_supply + len(pos.walls) == WALLS_IN_GAME, (
        f"{pos.wall_supply} walls in supply and {len(pos.walls)} on the board"
    )
    cards = Counter(c for p in pos.players.values() for c in p.hand)
    cards += Counter(c for pile in state.piles for c in pile) + Counter(state.discard)
    assert not cards - Counter(POLITICS_CARDS), f"politics cards beyond the deck: {cards}"


def check_pieces(state: GameState) -> None:
    """RULES 1, 2, 5.2: castles and knights of colours in play, never two on one cell,
    at most 3 castles per colour (4 with 2 players), knights only on plain or forest."""
    pos = state.pos
    assert not pos.castles.keys() & pos.knights.keys(), "a castle and a knight share a cell"
    colours = set(colours_in_play(state))
    assert set(pos.castles.values()) <= colours and set(pos.knights.values()) <= colours
    for colour, castles in Counter(pos.castles.values()).items():
        assert castles <= state.settings.castles_per_player, f"{colour} has {castles} castles"
    for cell, colour in pos.knights.items():
        assert pos.board.terrain(cell) in (PLAIN, FOREST), f"{colour} knight on {cell}"


def check_regions(state: GameState) -> None:
    """RULES 5.1, 6, 6.1: the areas split the board; a region holds exactly one castle;
    no wall lies inside a region; a founded region stays a region."""
    pos = state.pos
    cells = [c for area in pos.areas for c in area.cells]
    assert sorted(cells) == sorted(pos.board.cells), "the areas do not split the board"
    for area in pos.areas:
        castles = sorted(c for c in area.cells if c in pos.castles)
        assert sorted(area.castles) == castles, f"area castles {area.castles} vs {castles}"
    for region in pos.regions():
        assert len(region.castles) == 1 and region.castle in pos.castles
    for a, b in pos.walls:
        area = pos.area_at(a)
        assert not (area.is_region and b in area.cells), (
            f"wall {a}/{b} inside the {pos.owner(area)} region at {area.castle}"
        )
    region_castles = {r.castle for r in pos.regions()}
    assert pos.founded <= region_castles, f"founded castles {pos.founded - region_castles}"


POWER_EVENTS = ("founded", "expanded", "lost", "severed", "silver", "final_hills", "parchment")


def check_power_ledger(before: GameState, after: GameState, log: Log) -> None:
    """RULES 6, 8: every change of power is the points of a scoring event."""
    for colour in after.players:
        scored = sum(
            e["points"]
            for e in log
            if e["kind"] in POWER_EVENTS and e.get("owner", e.get("player")) == colour
        )
        change = after.pos.players[colour].power - before.pos.players[colour].power
        assert change == scored, f"{colour} power changed by {change}, events say {scored}"


def check_scoring_events(after: GameState, log: Log) -> None:
    """RULES 5.3, 6.1: a founded region has the size scored; expanded cells joined it."""
    pos = after.pos
    for event in log:
        if event["kind"] in ("founded", "expanded"):
            region = pos.region_of_castle(tuple(event["castle"]))
            assert region is not None, f"no region at {event['castle']} after {event}"
        if event["kind"] == "founded":
            assert len(region.cells) == event["size"], f"{event}: {len(region.cells)} cells"
        if event["kind"] == "expanded":
            assert {tuple(c) for c in event["cells"]} <= region.cells, f"{event} not joined"


def check_invariants(before: GameState | None, after: GameState, log: Log) -> None:
    check_holdings(after)
    check_pieces(after)
    check_regions(after)
    check_scoring_events(after, log)
    if before is not None:
        check_power_ledger(before, after, log)


# --- rejected submissions (RULES 9) ------------------------------------------------------


def illegal_submissions(state: GameState, rng: random.Random) -> list[tuple[str, Submission]]:
    """Submissions the game must refuse now: from a player it does not wait for, of the
    wrong kind, beyond the player's means, or half legal (a legal first wall or knight
    followed by the same one again, so that the refusal comes mid-way)."""
    if state.is_over:
        return [(p, Pass()) for p in state.players]
    player = rng.choice(state.phase.waiting)
    idle = [p for p in state.players if p not in state.phase.waiting]
    found: list[tuple[str, Submission]] = [(p, Decide(())) for p in idle[:1]]
    wrong = {
        "placement": Bid(0),
        "decision": Pass(),
        "negotiation": Bid(0),
        "duel": Offer(0),
        "perform": Place((0, 0), (0, 1)),
        "crown": Bid(0),
    }
    found.append((player, wrong[state.phase.kind]))
    found += [(player, m) for m in beyond_means(state, player)]
    return found


def beyond_means(state: GameState, player: str) -> list[Submission]:
    pos, phase = state.pos, state.phase
    ducats = pos.players[player].ducats
    if phase.kind == "placement":
        rough = next(c for c in pos.board.cells if pos.board.terrain(c) != PLAIN)
        return [Place(rough, pos.board.neighbours(rough)[0])]
    if phase.kind == "decision":
        need = state.cards_to_choose(player)
        nonsense = Alliance((0, 0), (0, 0))
        return [
            Decide(tuple(Choice(c) for c in (1, 2, 3))),
            Decide((Choice(4),) * need),
            Decide((Choice(1, nonsense), *(Choice(c) for c in (2, 3)[: need - 1]))),
        ]
    if phase.kind == "negotiation":
        return [Offer(ducats + 1), Offer(-1)]
    if phase.kind == "duel":
        return [Bid(ducats + 1), Bid(0, (99,))]
    if phase.kind == "crown":
        return [TakeCard("lion heart")]
    return half_legal(state, player)


def half_legal(state: GameState, player: str) -> list[Submission]:
    action = state.phase.action or ""
    if action.startswith("W"):
        walls: list[Edge] = rules.legal_walls(state.pos, player)[:1]
        return [Walls((walls[0], walls[0]))] if walls else [Walls(())]
    if action.startswith("S"):
        cells = rules.legal_knight_cells(state.pos, player)[:1]
        return [Swords((Knight(cells[0]), Knight(cells[0])))] if cells else [Swords(())]
    return []


def check_rejections(state: GameState, rng: random.Random) -> None:
    before = copy.deepcopy(state)  # not state.copy(): that is under test too
    for player, move in illegal_submissions(state, rng):
        with pytest.raises(IllegalMove):
            submit(state, player, move)
        assert state == before, f"refusing {move!r} from {player} changed the state"


# --- check, then apply (RULES 9) -----------------------------------------------------------


def candidates(
    state: GameState, rng: random.Random, prober: RandomPlayer
) -> list[tuple[str, Submission]]:
    """Legal and illegal submissions alike: a random player's proposals for every
    awaited player (refused now and then: several walls or knights in a row, politics
    no longer playable, ...), the refusals of `illegal_submissions`, ends of every
    alliance by every player, and a player not in the game."""
    found = illegal_submissions(state, rng)
    if not state.is_over:
        found += [(p, prober.propose(state, p)) for p in state.phase.waiting for _ in range(3)]
    for own, other in sorted(state.pos.alliances):
        found += [
            (p, EndAlliance(own, other, treasure))
            for p in state.players
            for treasure in ((), (10,))
        ]
    found.append(("nobody", Pass()))
    return found


def refusal(attempt: Callable[[], object]) -> str | None:
    try:
        attempt()
    except IllegalMove as exc:
        return str(exc)
    return None


def check_agrees_with_submit(
    state: GameState, player: str, move: Submission, before: GameState
) -> bool:
    """`check` refuses exactly what `submit` refuses, with the same sentence, and
    changes nothing (`before` is a deep copy of `state`); after it, `apply` gives what
    `submit` gives. True if the move is legal."""
    submitted: list[tuple[GameState, Log]] = []
    expected = refusal(lambda: submitted.append(submit(state, player, move)))
    assert refusal(lambda: check(state, player, move)) == expected, (
        f"check and submit disagree on {move!r} from {player}"
    )
    assert state == before, f"checking {move!r} from {player} changed the state"
    if expected is not None:
        return False
    after, log = apply(state, player, move)
    assert state == before, f"applying {move!r} from {player} changed the state"
    assert state_to_json(after) == state_to_json(submitted[0][0])
    assert log == submitted[0][1]
    return True


@games(10)
@given(game=game_settings(), ai_seed=SEEDS)
def test_check_then_apply_is_submit(game: Settings, ai_seed: int) -> None:
    """`engine.game.check` raises exactly when `submit` does, with the same message;
    `apply` after it gives the state (as JSON) and the events `submit` gives."""
    rng, prober = random.Random(ai_seed), RandomPlayer(f"probe/{ai_seed}")
    counts = Counter[bool]()

    def compare(_: GameState | None, state: GameState, __: Log) -> None:
        before = copy.deepcopy(state)
        for player, move in candidates(state, rng, prober):
            counts[check_agrees_with_submit(state, player, move, before)] += 1

    play_checked(game, ai_seed, compare)
    assert counts[True] and counts[False]


# --- the tests ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: f"{k[0]}p-{k[1]}-{k[2]}")
@games(5)
@given(data=st.data(), ai_seed=SEEDS)
def test_invariants_hold_after_every_step(
    kind: tuple[int, str, str], data: st.DataObject, ai_seed: int
) -> None:
    """RULES 1, 5.1, 5.2, 6, 6.1: power, ducats, pieces, walls and regions stay sound."""
    game = data.draw(game_settings(kind))
    play_checked(game, ai_seed, check_invariants)


@games(20)
@given(game=game_settings(), ai_seed=SEEDS)
def test_a_rejected_submission_leaves_the_state_unchanged(game: Settings, ai_seed: int) -> None:
    """RULES 9: an illegal submission raises IllegalMove and changes nothing."""
    rng = random.Random(ai_seed)
    play_checked(game, ai_seed, lambda _, after, __: check_rejections(after, rng))


@games(15)
@given(game=game_settings(), ai_seed=SEEDS, ai=st.sampled_from(FAST_PLAYERS))
def test_replaying_the_record_gives_the_same_final_state(
    game: Settings, ai_seed: int, ai: str
) -> None:
    """RULES 9: the settings plus the accepted submissions are the game."""
    final, record = play_checked(game, ai_seed, check_invariants, ai)
    again = replay(game, record)
    assert again.pos.walls == final.pos.walls
    assert (again.pos.castles, again.pos.knights) == (final.pos.castles, final.pos.knights)
    assert again.pos.players == final.pos.players  # power, ducats and hands
    assert again.winners == final.winners
    assert again == final


@games(20)
@given(game=game_settings(), ai_seed=SEEDS)
def test_every_game_ends_with_winners(game: Settings, ai_seed: int) -> None:
    """RULES 8: the King card (or an empty deck) ends the game; the winners are the
    players with the highest power, ties broken by wealth."""
    final, _ = play_checked(game, ai_seed, no_check)
    assert final.phase.kind == "over" and final.phase.waiting == []
    assert final.winners and set(final.winners) <= set(game.players)
    best = max(final.pos.players[p].power for p in game.players)
    assert all(final.pos.players[p].power == best for p in final.winners)
    with pytest.raises(IllegalMove):
        submit(final, final.players[0], Pass())


@games(4)
@given(game=game_settings(), ai_seed=SEEDS)
def test_the_same_seeds_give_the_same_game(game: Settings, ai_seed: int) -> None:
    """RULES 2: every chance of a game is drawn from its seed; the computer players'
    from theirs."""
    assert play(game, "random", ai_seed) == play(game, "random", ai_seed)


@pytest.mark.parametrize("players", [2, 3, 4])
@games(2)
@given(data=st.data(), ai_seed=SEEDS)
def test_greedy_games_keep_the_invariants(players: int, data: st.DataObject, ai_seed: int) -> None:
    """RULES 1, 5, 6: as for random play, with players that found and expand more."""
    game = data.draw(
        game_settings(data.draw(st.sampled_from([k for k in KINDS if k[0] == players])))
    )
    play_checked(game, ai_seed, check_invariants, "greedy")


def test_the_deadline_default_always_finds_a_placement() -> None:
    """RULES 2.3, 9: placement by deadline defaults alone must reach the first turn.
    With seed 87 the neutral colour's fourth castle has no free cell 6 cells away from
    the other lilac castles; it then goes as far from them as any cell allows
    (docs/rules-decisions.md) instead of leaving the game stuck."""
    state = new_game(Settings(players=("red", "ochre"), seed=87))
    while state.phase.kind == "placement":
        player = state.phase.waiting[0]
        state, _ = submit(state, player, default_move(state, player))
    assert state.phase.kind == "decision"


def allied_contest(treasure: bool) -> GameState:
    """Seed 1, basic setup: red (start player, two cards) and ochre both choose action 1
    (`W1`), lilac action 2, so red and ochre negotiate. Their starting regions are made
    allies directly (how the alliance came about does not matter here), and with
    `treasure` red is handed the Treasure 12 card from pile 2."""
    state = new_game(Settings(players=("red", "ochre", "lilac"), setup="basic", seed=1))
    state.pos.alliances.add(alliance_key(RED_CASTLE, OCHRE_CASTLE))
    if treasure:
        state.piles[1].remove("treasure 12")
        state.pos.players["red"].hand.append("treasure 12")
    for player, cards in (("red", (1, 3)), ("ochre", (1,)), ("lilac", (2,))):
        state, _ = submit(state, player, Decide(tuple(Choice(c) for c in cards)))
    assert state.phase.kind == "negotiation"
    return state


RED_CASTLE, OCHRE_CASTLE = (1, 0), (13, 0)  # their regions in the basic setup


def submit_each(state: GameState, steps: list[tuple[str, Submission]]) -> GameState:
    """Submit in turn; a refused submission is skipped (that is a legal outcome too)."""
    for player, move in steps:
        with contextlib.suppress(IllegalMove):
            state, _ = submit(state, player, move)
    return state


def test_ending_an_alliance_cannot_spend_ducats_offered() -> None:
    """RULES 1, 4.1, 7.1: red offers all 12 ducats; ending the alliance for 10 while the
    offer stands is refused, so when ochre accepts red cannot go below 0 ducats."""
    state = submit_each(allied_contest(treasure=False), [("red", Offer(12))])
    with pytest.raises(IllegalMove, match="promised 12 of 12 ducats"):
        submit(state, "red", EndAlliance(RED_CASTLE, OCHRE_CASTLE))
    state = submit_each(state, [("ochre", Accept())])
    check_holdings(state)


def test_ending_an_alliance_cannot_spend_a_treasure_card_bid() -> None:
    """RULES 4.2, 7.1, 7.3: red bids its Treasure 12 card; paying the alliance's end with
    that card before the duel settles is refused, and the duel then settles."""
    state = submit_each(
        allied_contest(treasure=True), [("ochre", BreakOff()), ("red", Bid(0, (12,)))]
    )
    with pytest.raises(IllegalMove, match="worth 12 is bid"):
        submit(state, "red", EndAlliance(RED_CASTLE, OCHRE_CASTLE, (12,)))
    state = submit_each(state, [("ochre", Bid(0))])
    check_holdings(state)
    assert state.phase.kind != "duel", "the duel did not settle"


# --- the checks can fail ---------------------------------------------------------------


def a_finished_game() -> GameState:
    state, _ = play(Settings(players=("red", "ochre", "lilac"), setup="basic", seed=5))
    return state


def dangling_wall(state: GameState) -> None:
    """Put a wall from the supply inside a region, leaving the region in one piece."""
    pos = state.pos
    for region in pos.regions():
        for cell in region.sorted_cells():
            for n, edge in pos.links(cell):
                trial = pos.copy()
                trial.walls.add(edge)
                trial.invalidate_areas()
                if n in region.cells and n in trial.area_at(cell).cells:
                    pos.walls.add(edge)
                    pos.wall_supply -= 1
                    return
    raise AssertionError("no region with a cycle of cells to put a wall in")


def knight_onto_castle(state: GameState) -> None:
    knights, castle = state.pos.knights, next(iter(state.pos.castles))
    knights[castle] = knights.pop(next(iter(knights)))


# Each breakage, and the message of the check that must catch it.
BREAKAGES: dict[str, tuple[Callable[[GameState], None], str]] = {
    "negative power": (lambda s: setattr(s.pos.players["red"], "power", -1), "power -1"),
    "negative ducats": (lambda s: setattr(s.pos.players["ochre"], "ducats", -3), "-3 ducats"),
    "lost knight": (lambda s: s.pos.knight_supply.__setitem__("grey", 0), "knights in all"),
    "lost wall": (
        lambda s: setattr(s.pos, "wall_supply", s.pos.wall_supply - 1),
        "walls in supply",
    ),
    "wall in a region": (dangling_wall, "inside the"),
    "knight on a castle": (knight_onto_castle, "share a cell"),
    "extra politics card": (
        lambda s: s.pos.players["red"].hand.extend(["parchment 5"] * 2),
        "beyond the deck",
    ),
}


@pytest.mark.parametrize("breakage", sorted(BREAKAGES))
def test_the_invariant_checks_catch_a_broken_state(breakage: str) -> None:
    """The checks above are not vacuous: each catches a state broken on purpose."""
    state = a_finished_game()
    check_invariants(None, state, [])
    broken = state.copy()
    breaker, message = BREAKAGES[breakage]
    breaker(broken)
    broken.pos.invalidate_areas()
    with pytest.raises(AssertionError, match=message):
        check_invariants(None, broken, [])


def test_the_power_ledger_catches_unexplained_power() -> None:
    """RULES 6: power that changes without a scoring event is caught."""
    state = a_finished_game()
    after = state.copy()
    after.pos.players["red"].power += 2
    with pytest.raises(AssertionError, match="events say"):
        check_invariants(state, after, [])
