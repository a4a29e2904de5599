"""RULES 5.1 and 5.3: what one action card's symbol allows. `W2` places up to two walls,
`S2` two knights or a knight and an expansion, never two expansions. Each test builds a
move every step of which is legal on its own, so that only the count refuses it."""

from __future__ import annotations

import copy

import pytest

from engine import rules
from engine.errors import IllegalMove
from engine.game import GameState, check, submit
from engine.moves import Expand, Swords, Walls
from engine.phase_rules import walls_problem
from tests.engine_helpers import Play, game


def performing(card: str) -> tuple[GameState, str]:
    """The state where the start player performs the card's first action alone."""
    play = Play(game(cards=(card,)))
    s, a, b = play.order
    play.decide({s: "decide 1, 3", a: "decide 2", b: "decide 3"})
    assert play.state.phase.kind == "perform" and play.state.waiting == [s]
    assert play.state.phase.action == card.split()[0]
    return play.state, s


def three_walls(state: GameState, player: str) -> Walls:
    """Three walls each legal after the ones before it (RULES 5.1), far apart."""
    scratch, chosen = state.pos.copy(), []
    for _ in range(3):
        edge = rules.legal_walls(scratch, player)[len(chosen) * 30]
        rules.place_wall(scratch, player, edge, [])
        chosen.append(edge)
    return Walls(tuple(chosen))


# RULES 5.1: "place up to that many walls": W2 is at most two.
def test_rules_5_1_a_w2_action_places_no_third_wall():
    state, s = performing("W2 S1 M5")
    move = three_walls(state, s)
    assert walls_problem(state.pos, s, 3, move) is None  # as a W3 these three are legal
    before = copy.deepcopy(state)
    with pytest.raises(IllegalMove, match="this action places 1 to 2 walls, not 3"):
        submit(state, s, move)
    assert state == before
    two = Walls(move.walls[:2])  # the first two alone are taken
    after, _ = submit(state, s, two)
    assert after.pos.walls == state.pos.walls | set(two.walls)


def two_expansions(state: GameState, player: str) -> Swords:
    """Two one-cell expansions, the second legal after the first (RULES 5.3)."""
    first = rules.legal_expansions(state.pos, player)[0]
    scratch = state.pos.copy()
    rules.expand(scratch, player, first.castle, first.cells, [])
    second = next(
        e for e in rules.legal_expansions(scratch, player) if not set(e.cells) & set(first.cells)
    )
    return Swords((first, second))


# RULES 5.3: "S2: two knights, or one knight and one expansion in either order; never two
# expansions."
def test_rules_5_3_an_s2_action_takes_no_two_expansions():
    state, s = performing("S2 W2 M4")
    move = two_expansions(state, s)
    first, second = move.steps
    assert isinstance(first, Expand) and isinstance(second, Expand)
    check(state, s, Swords((first,)))  # the first alone is legal...
    grown = state.pos.copy()
    rules.expand(grown, s, first.castle, first.cells, [])
    assert rules.expansion_problem(grown, s, second.castle, second.cells) is None  # ...then it
    before = copy.deepcopy(state)
    with pytest.raises(IllegalMove, match="two knights, or one knight and one expansion"):
        submit(state, s, move)
    assert state == before
