"""The event kinds the engine writes (engine/events.py): every `"kind": "..."` literal in
the engine's source is registered in `ENGINE_EVENT_KINDS` with a TypedDict, and every
event of real games has the keys its TypedDict names (RULES 9: the log is what players
read of a game)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.events import ENGINE_EVENT_KINDS, EVENT_TYPE_OF_KIND, EVENT_TYPES, Event
from engine.game import start_game, submit
from engine.position import COLOURS
from engine.setup import Settings
from engine.simulate import play
from tests.engine_helpers import assert_typed

ENGINE = Path(__file__).resolve().parent.parent / "engine"


# Dicts with a "kind" that are not events: (file, function).
NOT_EVENTS = {("serialize.py", "phase_to_json")}  # the phase's kind (engine.state.Phase)


def written_kinds(source: str, filename: str) -> Iterator[tuple[str, int, str | None]]:
    """(file, line, kind) for every dict literal with a "kind" key; kind is None when
    it is not a string literal (which would escape the registry)."""
    tree = ast.parse(source, filename)
    skipped = {
        id(node)
        for function in ast.walk(tree)
        if isinstance(function, ast.FunctionDef) and (filename, function.name) in NOT_EVENTS
        for node in ast.walk(function)
    }
    for node in ast.walk(tree):
        if not isinstance(node, ast.Dict) or id(node) in skipped:
            continue
        for key, value in zip(node.keys, node.values, strict=True):
            if isinstance(key, ast.Constant) and key.value == "kind":
                kind = (
                    value.value
                    if isinstance(value, ast.Constant) and isinstance(value.value, str)
                    else None
                )
                yield filename, node.lineno, kind


def engine_kinds() -> list[tuple[str, int, str | None]]:
    found = []
    for path in sorted(ENGINE.glob("*.py")):
        if path.name == "events.py":  # the registry itself
            continue
        found += written_kinds(path.read_text(encoding="utf-8"), path.name)
    return found


def unregistered(found: list[tuple[str, int, str | None]]) -> list[str]:
    return [
        f"{name}:{line}: {kind!r}" for name, line, kind in found if kind not in ENGINE_EVENT_KINDS
    ]


def test_every_kind_the_engine_writes_is_registered() -> None:
    found = engine_kinds()
    assert len(found) >= len(ENGINE_EVENT_KINDS)
    assert unregistered(found) == []


def test_every_registered_kind_is_written_somewhere() -> None:
    """No stale entries: each kind of the registry is written by some engine code."""
    assert {kind for _, _, kind in engine_kinds()} == ENGINE_EVENT_KINDS


def test_the_scan_catches_an_unregistered_or_computed_kind() -> None:
    """The check above is not vacuous."""
    source = (
        'log.append({"kind": "wall", "player": p})\n'
        'log.append({"kind": "teleported", "player": p})\n'
        'log.append({"kind": kind, "player": p})\n'
    )
    assert unregistered(list(written_kinds(source, "x.py"))) == [
        "x.py:2: 'teleported'",
        "x.py:3: None",
    ]


def test_the_registry_is_the_event_types() -> None:
    assert len(EVENT_TYPES) == len(ENGINE_EVENT_KINDS) == len(EVENT_TYPE_OF_KIND)
    for kind, event_type in EVENT_TYPE_OF_KIND.items():
        assert "kind" in event_type.__required_keys__
        assert event_type.__optional_keys__ == {"turn"}, kind


def assert_shape(event: Event | dict[str, Any]) -> None:
    """The event is what its TypedDict says, stamped with its turn."""
    event_type = EVENT_TYPE_OF_KIND.get(event["kind"])
    assert event_type is not None, f"unregistered event {event}"
    assert_typed(event, event_type, event["kind"])
    assert isinstance(event.get("turn"), int), f"{event} is not stamped with its turn"


@pytest.mark.parametrize(
    ("players", "setup", "decisions", "seed"),
    [
        (2, "variable", "sealed", 3),
        (3, "basic", "open", 4),
        (4, "variable", "open", 5),
        (4, "basic", "sealed", 6),
    ],
)
def test_the_events_of_whole_games_have_their_shapes(
    players: int, setup: str, decisions: str, seed: int
) -> None:
    settings = Settings(players=COLOURS[:players], setup=setup, decisions=decisions, seed=seed)
    _, record = play(settings, "greedy", seed)
    state, events = start_game(settings)
    for player, move in record:
        state, log = submit(state, player, move)
        events += log
    assert state.is_over
    for event in events:
        assert_shape(event)
    seen = {e["kind"] for e in events}
    assert {"reveal", "wall", "founded", "game_over"} <= seen
