"""The game record as a file, and replaying it: `python -m engine.replay record.json`.

A record is the settings (with the seed that draws every shuffle) plus the accepted
submissions in notation, and optionally the result the game ended with:

    {"format": "lowenherz-record/1",
     "settings": {...engine.serialize.settings_to_json...},
     "moves": [{"player": "red", "move": "place C3 D3"}, {"player": "ochre", ...}],
     "result": {"power": {"red": 31, "ochre": 27}, "winners": ["red"]}}

Like `chess/pgn.py` beside the board, this module is the file format only: the
game itself is `engine.game.replay(settings, moves)`. The command prints each
player's final power and the winners (`--json`: the result as JSON). Exit status
0: replayed, and any result given matches; 1: the replay ends with another result
than the record says; 2: the input is not a valid record, or a move in it is
malformed or illegal (one line on stderr, nothing on stdout).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.errors import IllegalMove, NotationError
from engine.game import GameState, new_game, submit
from engine.moves import Submission
from engine.notation import format_move, parse_move
from engine.serialize import settings_from_json, settings_to_json
from engine.setup import Settings

FORMAT = "lowenherz-record/1"


class RecordError(ValueError):
    """Input that is not a valid record, or a move that is not legal in it (exit 2)."""


@dataclass(frozen=True)
class Result:
    """How a game ended: each player's power, and who won (in seat order)."""

    power: dict[str, int]
    winners: list[str]

    @classmethod
    def of(cls, state: GameState) -> Result:
        return cls({p: state.pos.players[p].power for p in state.players}, list(state.winners))

    def to_json(self) -> dict[str, Any]:
        return {"power": dict(self.power), "winners": list(self.winners)}

    def matches(self, other: Result) -> bool:
        return self.power == other.power and sorted(self.winners) == sorted(other.winners)

    def as_text(self) -> str:
        power = ", ".join(f"{p} {v}" for p, v in self.power.items())
        won = " and ".join(self.winners) or "nobody (the game is not over)"
        return f"power: {power}\nwinners: {won}"


@dataclass(frozen=True)
class Record:
    settings: Settings
    moves: tuple[tuple[str, Submission], ...]
    result: Result | None = None


# --- writing ----------------------------------------------------------------------------


def record_to_json(
    settings: Settings, moves: Sequence[tuple[str, Submission]], result: Result | None = None
) -> dict[str, Any]:
    data: dict[str, Any] = {
        "format": FORMAT,
        "settings": settings_to_json(settings),
        "moves": [{"player": player, "move": format_move(move)} for player, move in moves],
    }
    if result is not None:
        data["result"] = result.to_json()
    return data


# --- reading ----------------------------------------------------------------------------


def read_record(text: str | bytes) -> Record:
    """Parse a record file's text; raises `RecordError` saying what is wrong and where."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RecordError(f"not JSON: {exc}") from None
    return record_from_json(data)


def record_from_json(data: Any) -> Record:
    if not isinstance(data, dict):
        raise RecordError("a record is a JSON object")
    if data.get("format") != FORMAT:
        raise RecordError(f"unknown format {data.get('format')!r}: expected {FORMAT!r}")
    settings = _settings(data.get("settings"))
    moves = data.get("moves")
    if not isinstance(moves, list):
        raise RecordError('"moves" must be a list of {"player": ..., "move": ...}')
    result = _result(data["result"]) if data.get("result") is not None else None
    return Record(settings, tuple(_move(m, i) for i, m in enumerate(moves)), result)


def _settings(data: Any) -> Settings:
    if not isinstance(data, dict):
        raise RecordError('"settings" must be an object')
    try:
        return settings_from_json(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise RecordError(f"settings: {exc}") from None


def _move(entry: Any, index: int) -> tuple[str, Submission]:
    if (
        not isinstance(entry, dict)
        or not isinstance(entry.get("player"), str)
        or not isinstance(entry.get("move"), str)
    ):
        raise RecordError(
            f'move {index}: expected {{"player": colour, "move": text}}, got {json.dumps(entry)}'
        )
    try:
        return entry["player"], parse_move(entry["move"])
    except NotationError as exc:
        raise RecordError(f"move {index} ({entry['player']}): {exc}") from None


def _result(data: Any) -> Result:
    power = data.get("power") if isinstance(data, dict) else None
    winners = data.get("winners") if isinstance(data, dict) else None
    if not isinstance(power, dict) or not all(
        isinstance(k, str) and type(v) is int for k, v in power.items()
    ):
        raise RecordError('"result" needs "power": {colour: whole number}')
    if not isinstance(winners, list) or not all(isinstance(w, str) for w in winners):
        raise RecordError('"result" needs "winners": [colour, ...]')
    return Result(power, winners)


# --- replaying ----------------------------------------------------------------------------


def replay_record(record: Record) -> GameState:
    """`engine.game.replay`, naming the first move the rules refuse (counting from 0)."""
    state = new_game(record.settings)
    for index, (player, move) in enumerate(record.moves):
        try:
            state, _ = submit(state, player, move)
        except IllegalMove as exc:
            raise RecordError(f"move {index} ({player} '{format_move(move)}'): {exc}") from None
    return state


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m engine.replay", description="Replay a Löwenherz game record."
    )
    parser.add_argument("record", help="the record file (JSON), or - for standard input")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    try:
        record = read_record(_read(args.record))
        result = Result.of(replay_record(record))
    except RecordError as exc:
        print(f"not a valid record: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result.to_json()) if args.json else result.as_text())
    if record.result is not None and not record.result.matches(result):
        print(
            f"the record says {json.dumps(record.result.to_json())}, "
            f"but the replay ends with {json.dumps(result.to_json())}",
            file=sys.stderr,
        )
        return 1
    return 0


def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        with open(path, "rb") as file:
            return file.read()
    except OSError as exc:
        raise RecordError(f"cannot read {path}: {exc.strerror}") from None


if __name__ == "__main__":
    sys.exit(main())
