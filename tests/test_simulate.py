"""`python -m engine.simulate` plays the same games for the same seeds, release after
release (RULES 2: every chance of a game is drawn from its seed, and the computer
players' choices from theirs). These lines were printed before the computer players
were split into one tactic per phase; a change that draws their random numbers in
another order, or that changes what the rules allow, changes them."""

from __future__ import annotations

import pytest

from engine.simulate import simulate

GAMES = [
    (
        2,
        1,
        1,
        "random",
        "variable",
        "game 1: won by red; 26 turns, 160 submissions; power red 26, ochre 0",
    ),
    (
        3,
        2,
        1,
        "random",
        "variable",
        "game 2: won by ochre; 22 turns, 205 submissions; power red 6, ochre 18, lilac 3",
    ),
    (
        4,
        3,
        1,
        "random",
        "variable",
        "game 3: won by ochre; 23 turns, 226 submissions; power red 3, ochre 6, lilac 0, grey 5",
    ),
    (
        3,
        1,
        1,
        "greedy",
        "variable",
        "game 1: won by ochre; 26 turns, 227 submissions; power red 31, ochre 37, lilac 26",
    ),
    (
        4,
        1,
        3,
        "random",
        "basic",
        "game 1: won by grey; 20 turns, 180 submissions; power red 8, ochre 17, lilac 13, grey 24",
    ),
]


@pytest.mark.parametrize(("players", "game", "seed", "ai", "setup", "line"), GAMES)
def test_the_same_seeds_play_the_same_games(
    players: int, game: int, seed: int, ai: str, setup: str, line: str
) -> None:
    assert simulate(players, game, seed, ai, setup).as_text() == line
