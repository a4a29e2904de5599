"""The typed contract of `engine.view` (RULES 9: what a player sees of a game): every
view and ask of real games is what the TypedDicts `View` and `Ask` say, key by key and
value by value, with the sometimes-missing keys there exactly when they should be."""

from __future__ import annotations

import pytest

from engine.ai import RandomPlayer
from engine.game import GameState, new_game, submit
from engine.position import COLOURS
from engine.setup import Settings
from engine.view import Ask, View, ask, view
from tests.engine_helpers import assert_typed


def states(settings: Settings, seed: str) -> list[GameState]:
    """Every state of a whole game between random players."""
    players = {p: RandomPlayer(f"{seed}/{p}") for p in settings.players}
    state = new_game(settings)
    found = [state]
    while not state.is_over:
        player = state.phase.waiting[0]
        state, _ = submit(state, player, players[player].choose(state, player))
        found.append(state)
    return found


@pytest.mark.parametrize(
    ("players", "setup", "decisions", "money"),
    [
        (2, "variable", "sealed", "hidden"),
        (3, "basic", "open", "open"),
        (4, "variable", "open", "hidden"),
        (4, "basic", "sealed", "open"),
    ],
)
def test_every_view_is_a_view(players: int, setup: str, decisions: str, money: str) -> None:
    settings = Settings(
        players=COLOURS[:players], setup=setup, decisions=decisions, money=money, seed=players * 11
    )
    asked = set()
    for state in states(settings, "types"):
        for viewer in (None, *state.players):
            seen = view(state, viewer)
            assert_typed(seen, View, f"view({viewer})")
            assert ("ask" in seen) == (viewer in state.phase.waiting)
            assert ("deck" in seen) == ("sealed" in seen) == state.is_over
            assert ("seed" in seen["settings"]) == state.is_over
            if "ask" in seen:
                asked.add((seen["ask"]["phase"], (seen["ask"]["action"] or "")[:1]))
        assert_typed(view(state, None, reveal=True), View, "view(reveal)")
    assert {("decision", ""), ("perform", "W"), ("perform", "S")} <= asked


def test_an_ask_in_every_phase() -> None:
    """Placement (RULES 2.3), decision (3.2), negotiation (4.1), duel (4.2), perform (5)
    and crown (5.4): each kind of ask is an `Ask`."""
    kinds = set()
    for seed in range(6):
        settings = Settings(players=COLOURS[:3], seed=seed)
        for state in states(settings, f"ask/{seed}"):
            for player in state.phase.waiting:
                assert_typed(ask(state, player), Ask, f"ask in {state.phase.kind}")
                kinds.add(state.phase.kind)
    assert kinds == {"placement", "decision", "negotiation", "duel", "perform", "crown"}


def test_the_type_check_is_not_vacuous() -> None:
    state = new_game(Settings(players=COLOURS[:2], seed=1))
    seen = view(state, "red")
    broken = dict(seen, turn="1")
    with pytest.raises(AssertionError, match="turn"):
        assert_typed(broken, View)
    extra = dict(seen, secret=1)
    with pytest.raises(AssertionError, match="secret"):
        assert_typed(extra, View)
