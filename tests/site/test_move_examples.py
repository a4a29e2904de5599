"""Every move example the site shows a player (the "waits for you" email's HOW TO MOVE,
the game page's examples and the text field's hint: `view_text.examples`) is a move the
engine accepts from that player then (issue 24, item 6): asked of the engine at every
phase of whole games between computers, for each player the phase waits for.
"""

from __future__ import annotations

import pytest

from engine.ai import RandomPlayer
from engine.errors import IllegalMove
from engine.game import GameState, check, new_game, submit
from engine.notation import parse_move
from engine.setup import Settings
from engine.view import view
from games.show import view_text

GAMES = [
    # (players, setup, decisions, money, seed): each option of the new-game form
    (("red", "ochre"), "variable", "sealed", "hidden", 1),
    (("red", "ochre", "lilac"), "variable", "open", "open", 2),
    (("red", "ochre", "lilac", "grey"), "variable", "sealed", "hidden", 3),
    (("red", "ochre", "lilac"), "basic", "sealed", "hidden", 4),
]
MAX_STEPS = 3000  # a whole game takes a few hundred


def refusals(state: GameState, colour: str) -> list[tuple[str, str]]:
    """The examples shown to `colour` that the engine refuses, with its reason."""
    refused = []
    for example in view_text.examples(view(state, colour)):
        try:
            check(state, colour, parse_move(example))
        except IllegalMove as error:
            refused.append((example, str(error)))
    return refused


@pytest.mark.parametrize(("players", "setup", "decisions", "money", "seed"), GAMES)
def test_every_example_shown_is_a_legal_move_for_its_reader(players, setup, decisions, money, seed):
    state = new_game(
        Settings(players=players, setup=setup, decisions=decisions, money=money, seed=seed)
    )
    brains = {colour: RandomPlayer(f"examples/{seed}/{colour}") for colour in players}
    asked = set()
    for _ in range(MAX_STEPS):
        if state.is_over:
            break
        for colour in state.waiting:
            asked.add(state.phase.kind)
            assert refusals(state, colour) == [], (state.phase.kind, state.turn, colour)
        colour = state.waiting[0]
        state, _ = submit(state, colour, brains[colour].choose(state, colour))
    assert state.is_over
    assert {"decision", "duel", "perform"} <= asked


def test_a_counter_offer_is_shown_only_with_the_ducats_to_make_it():
    """The case seen in a negotiation email: an offer of 8 to a player with 7 ducats."""
    v = {
        "viewer": "red",
        "ask": {"phase": "negotiation", "offer": ["ochre", 8], "max_offer": 7},
    }
    assert view_text.examples(v) == ["accept", "break off"]  # no "offer 9"
    v["ask"]["max_offer"] = 9
    assert view_text.examples(v) == ["accept", "offer 9", "break off"]
    v["ask"] = {"phase": "negotiation", "offer": None, "max_offer": 2}
    assert view_text.examples(v) == ["offer 2", "break off"]
