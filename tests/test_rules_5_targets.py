"""The legal targets a player is asked to choose from (`engine.view.ask`) are what the
engine takes on submit: a page highlights them (issue 10, item 5), an email lists them.

RULES 5.2: a knight on a forest costs the 5 ducat fee, which ducats or a Treasure card
(RULES 7.3) must pay: a forest is a target only when the player can pay it. RULES 5.3:
expansions start on the listed cells, from the listed castles. RULES 2.3: a placement's
knight goes next to its castle.
"""

from __future__ import annotations

import pytest

from engine import rules
from engine.ai import RandomPlayer
from engine.board import FOREST, Cell
from engine.errors import IllegalMove
from engine.game import GameState, check, new_game, submit
from engine.moves import Expand, Knight, Place, Submission, Swords, Walls
from engine.position import COLOURS
from engine.setup import Settings
from engine.view import ask
from tests.engine_helpers import Play, game


def performing_swords(ducats: int, treasure: tuple[int, ...] = ()) -> tuple[GameState, str]:
    """The state where the start player performs `S1` alone (RULES 3.3), holding
    `ducats` and the Treasure cards `treasure`."""
    play = Play(game(cards=("S1 W2 M5",)))
    s, a, b = play.order
    play.decide({s: "decide 1, 3", a: "decide 2", b: "decide 3"})
    assert play.state.phase.kind == "perform" and play.state.phase.action == "S1"
    assert play.state.phase.waiting == [s]
    holder = play.state.pos.players[s]
    holder.ducats = ducats
    holder.hand.extend(f"treasure {t}" for t in treasure)
    return play.state, s


def cells(values: list[list[int]]) -> set[Cell]:
    return {(x, y) for x, y in values}


def forests_next_to(state: GameState, player: str) -> set[Cell]:
    """The forest cells a knight of `player` could stand on but for the fee (RULES 5.2)."""
    pos = state.pos
    return {c for c in rules.legal_knight_cells(pos, player) if pos.board.terrain(c) == FOREST}


def test_rules_5_2_no_forest_is_a_knight_target_when_the_fee_cannot_be_paid():
    state, player = performing_swords(ducats=4)
    forests = forests_next_to(state, player)
    assert forests, "the basic layout puts a forest next to the start player's pieces"
    asked = cells(ask(state, player)["knights"])
    assert asked and not asked & forests
    for cell in forests:  # and the engine would refuse each of them
        with pytest.raises(IllegalMove, match="ducats"):
            check(state, player, Swords((Knight(cell),)))


@pytest.mark.parametrize(("ducats", "treasure"), [(5, ()), (12, ()), (0, (8,))])
def test_rules_5_2_a_forest_is_a_knight_target_when_ducats_or_treasure_pay_the_fee(
    ducats: int, treasure: tuple[int, ...]
):
    state, player = performing_swords(ducats, treasure)
    forests = forests_next_to(state, player)
    assert forests and forests <= cells(ask(state, player)["knights"])
    for cell in forests:
        check(state, player, Swords((Knight(cell),), treasure))


def test_rules_5_3_expansions_and_their_castles_are_asked_apart_from_knights():
    state, player = performing_swords(ducats=0)
    asked = ask(state, player)
    castles = cells(asked["expanding"])
    assert castles == {
        c
        for c, owner in state.pos.castles.items()
        if owner == player and state.pos.region_of_castle(c) is not None
    }
    assert not cells(asked["expansions"]) & cells(asked["knights"])


def test_rules_2_3_placement_asks_for_the_knight_cells_of_legal_placements():
    state = new_game(Settings(players=COLOURS[:2], setup="variable", seed=5))
    player = state.phase.waiting[0]
    asked = ask(state, player)
    castles, knights = cells(asked["castles"]), cells(asked["knights"])
    assert knights and castles
    for knight in knights:  # each goes with some listed castle next to it
        partners = [c for c in castles if abs(c[0] - knight[0]) + abs(c[1] - knight[1]) == 1]
        assert any(_accepted(state, player, Place(c, knight)) for c in partners), knight


def _accepted(state: GameState, player: str, move: Submission) -> bool:
    try:
        check(state, player, move)
    except IllegalMove:
        return False
    return True


def target_moves(state: GameState, player: str) -> list[list[Submission]]:
    """Per target the ask lists, the submissions naming that target alone: one of
    each list must be taken."""
    asked = ask(state, player)
    moves: list[list[Submission]] = []
    if asked["phase"] == "perform":
        treasure = tuple(asked.get("treasure") or ())
        for x, y in asked.get("knights", []):
            fee = 5 if state.pos.board.terrain((x, y)) == FOREST else 0
            pay = () if fee <= state.pos.players[player].ducats else treasure[:1]
            moves.append([Swords((Knight((x, y)),), pay)])
        castles = [(x, y) for x, y in asked.get("expanding", [])]
        for x, y in asked.get("expansions", []):
            moves.append([Swords((Expand(((x, y),), c),)) for c in castles])
        for a, b in asked.get("edges", []):
            moves.append([Walls((((a[0], a[1]), (b[0], b[1])),))])
    return moves


@pytest.mark.parametrize("seed", range(4))
def test_rules_5_every_listed_target_is_taken_on_submit(seed: int):
    """In random games (with players made poor at times, so that forest fees bite):
    every knight cell, expansion cell and wall the ask lists is one the engine takes."""
    settings = Settings(players=COLOURS[:3], seed=seed)
    players = {p: RandomPlayer(f"targets/{seed}/{p}") for p in settings.players}
    state, checked = new_game(settings), 0
    while not state.is_over:
        player = state.phase.waiting[0]
        if state.phase.kind == "perform":
            if checked % 2:
                state.pos.players[player].ducats = checked % 5
            for options in target_moves(state, player):
                assert any(_accepted(state, player, m) for m in options), (options, state.phase)
                checked += 1
        state, _ = submit(state, player, players[player].choose(state, player))
    assert checked
