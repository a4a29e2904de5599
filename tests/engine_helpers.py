"""Small builders for rules tests: games with a chosen deck, moves typed in notation."""

from __future__ import annotations

import types
import typing
from typing import Any

from engine.game import GameState, new_game, submit
from engine.notation import parse_move
from engine.setup import Settings

THREE = ("red", "ochre", "lilac")
FOUR = ("red", "ochre", "lilac", "grey")


def stacked_deck(cards: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """A deck whose order is fixed: one card per pile, so no shuffle can move it."""
    return tuple((f"P{i}", (card,)) for i, card in enumerate((*cards, "KING")))


def game(
    cards: tuple[str, ...] = ("W2 S1 M5",),
    players: tuple[str, ...] = THREE,
    decisions: str = "sealed",
    seed: int = 1,
    setup: str = "basic",
    money: str = "hidden",
) -> GameState:
    settings = Settings(
        players=players,
        setup=setup,
        decisions=decisions,
        seed=seed,
        money=money,
        deck=stacked_deck(cards),
    )
    return new_game(settings)


class Play:
    """A game being played in a test, keeping every event."""

    def __init__(self, state: GameState) -> None:
        self.state = state
        self.events: list[dict] = []

    def __call__(self, player: str, text: str) -> Play:
        self.state, events = submit(self.state, player, parse_move(text))
        self.events.extend(events)
        return self

    def kinds(self) -> list[str]:
        return [e["kind"] for e in self.events]

    def decide(self, choices: dict[str, str]) -> Play:
        """Every player's decision, given as {player: 'decide ...'} in any order."""
        for player, text in choices.items():
            self(player, text)
        return self

    @property
    def order(self) -> list[str]:
        return self.state.order


def assert_typed(value: object, hint: Any, where: str = "value") -> None:
    """Check JSON-like `value` against a type hint at run time: TypedDicts (required
    and optional keys, no others), lists, dicts, unions, Literals, str, int, None, Any.
    For the typed contracts of engine/events.py and engine/view.py."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any or hint is object:
        return
    if hint is None or hint is type(None):
        assert value is None, f"{where}: {value!r} is not None"
    elif typing.is_typeddict(hint):
        assert isinstance(value, dict), f"{where}: {value!r} is not an object"
        keys = set(value)
        missing = hint.__required_keys__ - keys
        extra = keys - hint.__required_keys__ - hint.__optional_keys__
        assert not missing, f"{where}: no {sorted(missing)} ({hint.__name__})"
        assert not extra, f"{where}: {sorted(extra)} not in {hint.__name__}"
        hints = typing.get_type_hints(hint)
        for key, item in value.items():
            assert_typed(item, hints[key], f"{where}.{key}")
    elif origin in (typing.Union, types.UnionType):
        failures = []
        for option in args:
            try:
                assert_typed(value, option, where)
            except AssertionError as exc:
                failures.append(str(exc))
            else:
                return
        raise AssertionError(f"{where}: {value!r} is none of {hint}: {failures}")
    elif origin is typing.Literal:
        assert value in args, f"{where}: {value!r} is not one of {args}"
    elif origin is list:
        assert isinstance(value, list), f"{where}: {value!r} is not a list"
        for i, item in enumerate(value):
            assert_typed(item, args[0], f"{where}[{i}]")
    elif origin is dict:
        assert isinstance(value, dict), f"{where}: {value!r} is not an object"
        for key, item in value.items():
            assert_typed(key, args[0], f"{where} key")
            assert_typed(item, args[1], f"{where}[{key!r}]")
    elif hint is int:
        assert isinstance(value, int) and not isinstance(value, bool), (
            f"{where}: {value!r} is not a whole number"
        )
    else:
        assert isinstance(value, hint), f"{where}: {value!r} is not a {hint}"
