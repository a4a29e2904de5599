"""RULES 2: setup, common, basic and variable."""

from __future__ import annotations

import pytest

from engine.errors import IllegalMove
from engine.game import new_game, submit
from engine.moves import Place
from engine.notation import parse_cell
from engine.setup import Settings, default_deck
from tests.engine_helpers import FOUR, THREE, Play, game


@pytest.mark.parametrize("players", [THREE, FOUR])
def test_rules_2_2_basic_setup_gives_every_colour_one_region_worth_nothing(players):
    state = game(players=players, seed=4)
    pos = state.pos
    for colour in FOUR:
        regions = pos.regions(colour)
        assert len(regions) == 1
        assert 4 <= len(regions[0].cells) <= 10
        assert pos.board.count("T", regions[0].cells) == 0
        assert list(pos.castles.values()).count(colour) == 3
        assert list(pos.knights.values()).count(colour) == 3
        assert pos.knight_supply[colour] == 9
    assert pos.founded == {r.castle for r in pos.regions()}
    assert all(p.power == 0 for p in pos.players.values())
    assert pos.wall_supply + len(pos.walls) == 100


def test_rules_2_2_the_starting_regions_are_equally_good():
    pos = game(players=FOUR).pos
    values = {(len(r.cells), pos.board.count("H", r.cells)) for r in pos.regions()}
    assert len(values) == 1, values


def test_rules_2_2_with_three_players_the_fourth_colour_is_neutral():
    state = new_game(Settings(players=THREE, setup="basic"))
    assert state.settings.neutral_colour == "grey"
    assert "grey" not in state.pos.players
    assert list(state.pos.castles.values()).count("grey") == 3


def test_rules_2_2_the_basic_deck_leaves_out_pile_a_and_ends_in_pile_e():
    state = new_game(Settings(players=THREE, setup="basic", seed=9))
    deck = default_deck()
    cards = [state.card, *state.deck]
    assert len(cards) == 25
    assert not set(deck["A"]) & set(cards[:6])
    assert sorted(cards[-7:]) == sorted(deck["E"])


def test_rules_2_3_the_variable_deck_has_pile_a_on_top():
    state = new_game(Settings(players=THREE, setup="variable", seed=9))
    deck = default_deck()
    assert len(state.deck) == 31
    assert sorted(state.deck[:6]) == sorted(deck["A"])
    assert sorted(state.deck[6:12]) == sorted(deck["B"])
    assert "KING" in state.deck[-7:]


def test_rules_2_1_everyone_starts_with_12_ducats_and_two_politics_piles():
    state = new_game(Settings(players=FOUR, setup="basic", seed=2))
    assert [len(p) for p in state.piles] == [6, 7]
    assert sorted(state.piles[0] + state.piles[1]).count("alliance") == 3
    assert all(p.ducats == 12 and p.hand == [] for p in state.pos.players.values())


def test_rules_2_1_the_seed_decides_start_player_and_shuffles_and_repeats():
    a = new_game(Settings(players=FOUR, setup="variable", seed=11))
    b = new_game(Settings(players=FOUR, setup="variable", seed=11))
    assert (a.start, a.deck, a.piles, a.pos.board) == (b.start, b.deck, b.piles, b.pos.board)
    others = [new_game(Settings(players=FOUR, setup="variable", seed=s)) for s in range(5)]
    assert len({tuple(o.deck) for o in others}) > 1
    assert len({o.start for o in others}) > 1


def test_rules_2_3_the_creator_may_arrange_the_tiles():
    tiles = (("F", 1), ("E", 0), ("D", 2), ("C", 3), ("B", 0), ("A", 0))
    state = new_game(Settings(players=THREE, tiles=tiles))
    from engine.board import assemble

    assert state.pos.board == assemble(tiles)


@pytest.mark.parametrize(
    ("players", "own", "neutral"), [(("red", "ochre"), 8, 4), (THREE, 9, 3), (FOUR, 12, 0)]
)
def test_rules_2_3_placement_rounds_start_with_the_start_player(players, own, neutral):
    state = new_game(Settings(players=players, seed=3))
    queue = state.placements
    assert len(queue) == own + neutral
    assert queue[0] == (state.start_player, state.start_player)
    assert [p for p, _ in queue[: len(players)]] == state.order
    neutral_colour = state.settings.neutral_colour
    assert sum(1 for _, c in queue if c == neutral_colour) == neutral


def test_rules_2_3_a_whole_placement_ends_in_the_first_decision():
    play = Play(new_game(Settings(players=("red", "ochre"), seed=5)))
    from engine.rules import legal_placements

    while play.state.phase.kind == "placement":
        player, colour = play.state.placements[0]
        move = legal_placements(play.state.pos, colour)[0]
        play.state, _ = submit(play.state, player, move)
    pos = play.state.pos
    assert play.state.phase.kind == "decision"
    assert list(pos.castles.values()).count("red") == 4
    assert list(pos.castles.values()).count(play.state.settings.neutral_colour) == 4
    assert not pos.walls and not pos.regions()  # RULES 2.3: no walls, all free land


def first_placement():
    state = new_game(Settings(players=THREE, seed=3))
    return state, state.placements[0][0]


def plain_pair(state):
    board = state.pos.board
    for cell in board.cells:
        for n in board.neighbours(cell):
            if board.terrain(cell) == "." and board.terrain(n) == ".":
                return cell, n
    raise AssertionError("no two plains side by side")


def test_rules_2_3_castles_and_knights_stand_on_free_plains_side_by_side():
    state, player = first_placement()
    board = state.pos.board
    castle, knight = plain_pair(state)
    non_plain = next(c for c in board.cells if board.terrain(c) != ".")
    with pytest.raises(IllegalMove, match="plain"):
        submit(state, player, Place(non_plain, castle))
    far = next(
        c
        for c in board.cells
        if board.terrain(c) == "." and abs(c[0] - castle[0]) + abs(c[1] - castle[1]) > 1
    )
    with pytest.raises(IllegalMove, match="next to its castle"):
        submit(state, player, Place(castle, far))
    after, _ = submit(state, player, Place(castle, knight))
    assert after.pos.castles[castle] == player and after.pos.knights[knight] == player


def test_rules_2_3_same_colour_castles_keep_six_cells_between_them():
    state = new_game(
        Settings(players=("red", "ochre"), seed=3, tiles=tuple((t, 0) for t in "ABCDEF"))
    )
    first = state.start_player
    state.placements = [(first, first), (first, first)]
    state.phase.waiting = [first]
    state.phase.colour = first
    state, _ = submit(state, first, Place(parse_cell("B3"), parse_cell("B4")))
    # B3 is (1, 2); H3 is 6 columns away (distance 6): too close; I3 (distance 7) is fine.
    with pytest.raises(IllegalMove, match="6 cells between"):
        submit(state, first, Place(parse_cell("G4"), parse_cell("G5")))
    legal = [c for c in ("I3", "J2", "B10") if state.pos.board.terrain(parse_cell(c)) == "."]
    assert legal, "the basic map has plains far from B3"


def test_rules_2_3_placing_out_of_turn_is_refused_and_changes_nothing():
    state, player = first_placement()
    other = next(p for p in THREE if p != player)
    castle, knight = plain_pair(state)
    before = state.copy()
    with pytest.raises(IllegalMove, match=f"waiting for {player}"):
        submit(state, other, Place(castle, knight))
    assert state == before
