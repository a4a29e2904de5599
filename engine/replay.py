"""The game record as a file, and replaying it: `python -m engine.replay record.json`.

A record is the settings (with the seed that draws every shuffle), every accepted
submission in notation, every event the game wrote and how it ended (the format is
documented in docs/record-format.md):

    {"format": "lowenherz-record/2",
     "players": {"red": "Anna", "ochre": "Bruno"},
     "settings": {...engine.serialize.settings_to_json...},
     "moves": [{"player": "red", "move": "place C3 D3"}, {"player": "ochre", ...}],
     "events": [{"kind": "placed", "turn": 0, ...}, ...],
     "result": {"power": {"red": 31, "ochre": 27}, "ducats": {"red": 4, "ochre": 9},
                "winners": ["red"]}}

Format /1 (no events, no names, no ducats) is still read. Like `chess/pgn.py` beside
the board, this module is the file format only: the game itself is `engine.game`. The
command prints each player's final power and ducats and the winners (`--json`: the
result as JSON). Exit status 0: replayed, and the events and result given match; 1: the
replay writes other events or ends with another result than the record says; 2: the
input is not a valid record, or a move in it is malformed or illegal (one line on
stderr, nothing on stdout).

A record is bounded (`MAX_BYTES`, `MAX_MOVES`, `MAX_EVENTS`) so that a hostile file is
refused before any work that grows with it: one step of a replay is one submission,
well under a millisecond, so `MAX_MOVES` bounds the time a replay can take.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from engine.errors import IllegalMove, NotationError
from engine.game import GameState, start_game, submit
from engine.moves import Submission
from engine.notation import format_move, parse_move
from engine.serialize import settings_from_json, settings_to_json
from engine.setup import Settings

FORMAT = "lowenherz-record/2"
FORMATS = ("lowenherz-record/1", FORMAT)  # read; /2 written
MAX_BYTES = 512 * 1024  # a 4-player game's record is about 70 KB (with its events)
MAX_MOVES = 5000  # a 4-player game takes about 250 submissions
MAX_EVENTS = 20000  # a game writes about two events per submission
MAX_NAME = 40  # a player's name in `players` (the site's display names are as long)
MAX_GAME_NAME = 80  # the game's `name` (as long as the site's)
MAX_SEED = 2**63  # a seed is a 64-bit signed number, as the site stores it


class RecordError(ValueError):
    """Input that is not a valid record, or a move that is not legal in it (exit 2).

    `code` says which (for a reader's language: the site words each code), `index` the
    move it is about, and `cause` the engine's refusal of that move, if any."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        index: int | None = None,
        cause: IllegalMove | NotationError | None = None,
    ) -> None:
        super().__init__(message)
        self.code, self.index, self.cause = code, index, cause


class RecordMismatch(ValueError):
    """A record that replays, but to other events or another result than it says (exit 1).
    `code` is "events" or "result"; `index` the first event that differs."""

    def __init__(self, code: str, message: str, index: int | None = None) -> None:
        super().__init__(message)
        self.code, self.index = code, index


@dataclass(frozen=True)
class Result:
    """How a game ended: each player's power and ducats, and who won (in seat order).
    `ducats` is None in a /1 record, which did not say."""

    power: dict[str, int]
    winners: list[str]
    ducats: dict[str, int] | None = None

    @classmethod
    def of(cls, state: GameState) -> Result:
        players = state.pos.players
        return cls(
            {p: players[p].power for p in state.players},
            list(state.winners),
            {p: players[p].ducats for p in state.players},
        )

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"power": dict(self.power), "winners": list(self.winners)}
        if self.ducats is not None:
            data["ducats"] = dict(self.ducats)
        return data

    def matches(self, other: Result) -> bool:
        """The same power and winners, and the same ducats where both say them."""
        ducats = self.ducats is None or other.ducats is None or self.ducats == other.ducats
        return (
            self.power == other.power and sorted(self.winners) == sorted(other.winners) and ducats
        )

    def as_text(self) -> str:
        power = ", ".join(f"{p} {v}" for p, v in self.power.items())
        won = " and ".join(self.winners) or "nobody (the game is not over)"
        lines = [f"power: {power}"]
        if self.ducats is not None:
            lines.append("ducats: " + ", ".join(f"{p} {v}" for p, v in self.ducats.items()))
        return "\n".join([*lines, f"winners: {won}"])


@dataclass(frozen=True)
class Record:
    settings: Settings
    moves: tuple[tuple[str, Submission], ...]
    result: Result | None = None
    events: tuple[dict[str, Any], ...] | None = None  # None: the record does not say them
    players: dict[str, str] | None = None  # colour → name, as the game showed it
    name: str | None = None  # the game's name


@dataclass(frozen=True)
class Replayed:
    """A record replayed: the final state, and every event the game wrote on the way."""

    state: GameState
    events: list[dict[str, Any]]

    @property
    def result(self) -> Result:
        return Result.of(self.state)


# --- writing ----------------------------------------------------------------------------


def record_to_json(
    settings: Settings,
    moves: Sequence[tuple[str, Submission]],
    result: Result | None = None,
    *,
    events: Sequence[dict[str, Any]] | None = None,
    players: dict[str, str] | None = None,
) -> dict[str, Any]:
    data: dict[str, Any] = {"format": FORMAT}
    if players is not None:
        data["players"] = dict(players)
    data["settings"] = settings_to_json(settings)
    data["moves"] = [{"player": player, "move": format_move(move)} for player, move in moves]
    if events is not None:
        data["events"] = [plain(event) for event in events]
    if result is not None:
        data["result"] = result.to_json()
    return data


def plain(event: Any) -> dict[str, Any]:
    """An event as JSON reads it back (tuples as lists): the form two events compare in."""
    value: dict[str, Any] = json.loads(json.dumps(event))
    return value


# --- reading ----------------------------------------------------------------------------


def read_record(text: str | bytes) -> Record:
    """Parse a record file's text; raises `RecordError` saying what is wrong and where."""
    size = len(text.encode() if isinstance(text, str) else text)
    if size > MAX_BYTES:
        raise RecordError("too_big", f"the file has {size} bytes, more than {MAX_BYTES}")
    try:
        data = json.loads(text)
    except RecursionError:  # "[[[[..." deeper than the parser goes
        raise RecordError("not_json", "not JSON: nested too deeply") from None
    except ValueError as exc:  # not JSON, not UTF-8, or a number of too many digits
        raise RecordError("not_json", f"not JSON: {exc}") from None
    return record_from_json(data)


def record_from_json(data: Any) -> Record:
    if not isinstance(data, dict):
        raise RecordError("shape", "a record is a JSON object")
    if data.get("format") not in FORMATS:
        raise RecordError(
            "format", f"unknown format {str(data.get('format'))[:40]!r}: expected {FORMAT!r}"
        )
    settings = _settings(data.get("settings"))
    moves = data.get("moves")
    if not isinstance(moves, list):
        raise RecordError("shape", '"moves" must be a list of {"player": ..., "move": ...}')
    if len(moves) > MAX_MOVES:
        raise RecordError("too_long", f"{len(moves)} moves, more than {MAX_MOVES}")
    second = data["format"] == FORMAT
    return Record(
        settings,
        tuple(_move(m, i) for i, m in enumerate(moves)),
        _result(data["result"], second) if data.get("result") is not None else None,
        _events(data["events"]) if second and data.get("events") is not None else None,
        _players(data["players"], settings) if second and "players" in data else None,
        _name(data["name"]) if second and data.get("name") is not None else None,
    )


def _settings(data: Any) -> Settings:
    if not isinstance(data, dict):
        raise RecordError("settings", '"settings" must be an object')
    seed = data.get("seed", 0)
    if type(seed) is not int or not 0 <= seed < MAX_SEED:
        raise RecordError(
            "settings", f"settings: the seed is a whole number from 0 to {MAX_SEED - 1}"
        )
    players = data.get("players")
    if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
        raise RecordError("settings", 'settings: "players" is a list of colours')
    try:
        return settings_from_json(data)
    except (KeyError, TypeError, ValueError, OverflowError, AttributeError) as exc:
        raise RecordError("settings", f"settings: {exc}") from None


def _move(entry: Any, index: int) -> tuple[str, Submission]:
    if (
        not isinstance(entry, dict)
        or not isinstance(entry.get("player"), str)
        or not isinstance(entry.get("move"), str)
    ):
        raise RecordError(
            "move_shape",
            f'move {index}: expected {{"player": colour, "move": text}}, '
            f"got {json.dumps(entry)[:80]}",
            index=index,
        )
    try:
        return entry["player"], parse_move(entry["move"])
    except NotationError as exc:
        raise RecordError(
            "notation",
            f"move {index} ({json.dumps(entry['player'][:10])}): {exc}",
            index=index,
            cause=exc,
        ) from None


def _whole_numbers(value: Any) -> TypeGuard[dict[str, int]]:
    return isinstance(value, dict) and all(
        isinstance(k, str) and type(v) is int for k, v in value.items()
    )


def _result(data: Any, second: bool) -> Result:
    power = data.get("power") if isinstance(data, dict) else None
    winners = data.get("winners") if isinstance(data, dict) else None
    ducats = data.get("ducats") if isinstance(data, dict) else None
    if not _whole_numbers(power):
        raise RecordError("result", '"result" needs "power": {colour: whole number}')
    if second and not _whole_numbers(ducats):
        raise RecordError("result", '"result" needs "ducats": {colour: whole number}')
    if not isinstance(winners, list) or not all(isinstance(w, str) for w in winners):
        raise RecordError("result", '"result" needs "winners": [colour, ...]')
    return Result(power, winners, ducats if second else None)


def _events(data: Any) -> tuple[dict[str, Any], ...]:
    if not isinstance(data, list) or not all(
        isinstance(e, dict) and isinstance(e.get("kind"), str) for e in data
    ):
        raise RecordError("shape", '"events" must be a list of {"kind": ..., ...}')
    if len(data) > MAX_EVENTS:
        raise RecordError("too_long", f"{len(data)} events, more than {MAX_EVENTS}")
    return tuple(data)


def _players(data: Any, settings: Settings) -> dict[str, str]:
    if (
        not isinstance(data, dict)
        or set(data) != set(settings.players)
        or not all(isinstance(n, str) and 0 < len(n.strip()) <= MAX_NAME for n in data.values())
    ):
        raise RecordError(
            "players", f'"players" names each colour that plays, in at most {MAX_NAME} characters'
        )
    return {colour: name.strip() for colour, name in data.items()}


def _name(data: Any) -> str:
    if not isinstance(data, str) or not 0 < len(data.strip()) <= MAX_GAME_NAME:
        raise RecordError(
            "name", f'"name" is the game\'s name, in at most {MAX_GAME_NAME} characters'
        )
    return data.strip()


# --- replaying ----------------------------------------------------------------------------


def replay_record(record: Record) -> GameState:
    """`engine.game.replay`, naming the first move the rules refuse (counting from 0)."""
    return replay_events(record).state


def replay_events(record: Record) -> Replayed:
    """The record replayed, with every event the game writes; a refused move is a
    `RecordError` naming it. At most `MAX_MOVES` steps (`record_from_json`)."""
    state, log = start_game(record.settings)
    events = list(log)
    for index, (player, move) in enumerate(record.moves):
        try:
            state, log = submit(state, player, move)
        except IllegalMove as exc:
            raise RecordError(
                "illegal",
                f"move {index} ({json.dumps(player[:10])} '{format_move(move)}'): {exc}",
                index=index,
                cause=exc,
            ) from None
        events.extend(log)
    return Replayed(state, [plain(e) for e in events])


def check_record(record: Record) -> Replayed:
    """Replay the record and compare it with what it says: a `RecordError` if it does
    not replay, a `RecordMismatch` if it replays to other events or another result."""
    replayed = replay_events(record)
    compare(record, replayed)
    return replayed


def compare(record: Record, replayed: Replayed) -> None:
    """A `RecordMismatch` where the replay wrote other events or ended otherwise than the
    record says (what it does not say is not compared)."""
    if record.events is not None:
        _compare_events(list(record.events), replayed.events)
    if record.result is not None and not record.result.matches(replayed.result):
        raise RecordMismatch(
            "result",
            f"the record says {json.dumps(record.result.to_json())}, "
            f"but the replay ends with {json.dumps(replayed.result.to_json())}",
        )


def _compare_events(said: list[dict[str, Any]], found: list[dict[str, Any]]) -> None:
    for index, (one, other) in enumerate(zip(said, found, strict=False)):
        if one != other:
            raise RecordMismatch(
                "events",
                f"event {index}: the record says {json.dumps(one)[:200]}, "
                f"but the replay writes {json.dumps(other)[:200]}",
                index,
            )
    if len(said) != len(found):
        raise RecordMismatch(
            "events",
            f"the record has {len(said)} events, but the replay writes {len(found)}",
            min(len(said), len(found)),
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m engine.replay", description="Replay a Löwenherz game record."
    )
    parser.add_argument("record", help="the record file (JSON), or - for standard input")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    try:
        record = read_record(_read(args.record))
        replayed = replay_events(record)
    except RecordError as exc:
        print(f"not a valid record: {exc}", file=sys.stderr)
        return 2
    result = replayed.result
    print(json.dumps(result.to_json()) if args.json else result.as_text())
    try:
        compare(record, replayed)
    except RecordMismatch as exc:
        print(str(exc), file=sys.stderr)
        return 1
    return 0


def _read(path: str) -> bytes:
    """The file's bytes, at most one more than `MAX_BYTES` (`read_record` refuses more)."""
    try:
        if path == "-":
            return sys.stdin.buffer.read(MAX_BYTES + 1)
        with open(path, "rb") as file:
            return file.read(MAX_BYTES + 1)
    except OSError as exc:
        raise RecordError("unreadable", f"cannot read {path}: {exc.strerror}") from None


if __name__ == "__main__":
    sys.exit(main())
