"""A finished game as a record file (docs/record-format.md) and back.

`game_record` writes what `python -m engine.replay` checks: the settings with the seed,
every accepted submission, every event the engine wrote (those once meant for one
player's eyes too, marked `to` them) and the final power and ducats. Only a finished
game has one: the seed tells the order of the deck and of the politics piles, the
moves tell sealed decisions and the events what was in a player's hand, and once the
game is over all of that is public (RULES: hands, sealed decisions and bids, the
deck), as the archive shows it. A running game has no record (its URLs are a 404).

`import_record` replays a record file with the engine and stores it as a finished,
imported game of the archive, or refuses it (`ImportRefused`, in the reader's language)
and stores nothing. What bounds the work: the file's size (`engine.replay.MAX_BYTES`)
and its count of moves (`MAX_MOVES`), each one engine step.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from engine.events import ENGINE_EVENT_KINDS
from engine.game import is_simultaneous, start_game, submit
from engine.moves import EndAlliance, Submission
from engine.notation import format_move
from engine.replay import (
    MAX_BYTES,
    MAX_EVENTS,
    MAX_MOVES,
    MAX_NAME,
    Record,
    RecordError,
    RecordMismatch,
    Result,
    compare,
    read_record,
    record_to_json,
    replay_events,
)
from engine.serialize import move_from_json, move_to_json, state_to_json
from engine.state import GameState
from games.models import COLOUR_WORDS, Event, Game, RecordEntry, Seat, Snapshot
from games.show.words import refusal_text

IMPORTED_NAME = 80  # a game's name, as `Game.name` holds it

# --- writing ------------------------------------------------------------------------------


def game_record(game: Game) -> dict[str, Any]:
    """The finished game as a record (`engine.replay.FORMAT`), its players named as the
    archive names them."""
    assert game.is_finished, "a running game's record would tell its secrets"
    seats = list(game.seats.select_related("user__profile").order_by("position"))
    colours = tuple(seat.colour for seat in seats)
    moves = [
        (colour, move_from_json(move))
        for colour, move in game.record.order_by("index").values_list("colour", "move")
    ]
    data = record_to_json(
        game.settings_for(colours),
        moves,
        Result.of(game.engine_state),
        events=engine_events(game),
        players={seat.colour: seat.display_name[:MAX_NAME] for seat in seats},  # importable
    )
    meta = {
        "name": game.name,
        "finished_at": game.finished_at.isoformat() if game.finished_at else None,
    }
    return {"format": data.pop("format"), **meta, **data}


def engine_events(game: Game) -> list[dict[str, Any]]:
    """The game's log as the engine wrote it: the site's own notes (a missed deadline, a
    refused move) left out, the mark of a private event put back."""
    rows = game.events.filter(kind__in=ENGINE_EVENT_KINDS).order_by("index")
    return [
        {**data, "to": to} if to else data for data, to in rows.values_list("data", "to_colour")
    ]


def record_filename(game: Game, extension: str) -> str:
    return f"lowenherz-game-{game.pk}.{extension}"


# --- reading: an import ---------------------------------------------------------------------


class ImportRefused(ValueError):
    """A record the site will not import; the message is a sentence in the reader's
    language."""


def import_record(data: bytes, user: User) -> Game:
    """Check the record file and store it as a finished, imported game; `ImportRefused`
    saying why, with nothing stored, if it is not one that replays to what it says."""
    record = _read(data)
    try:
        replayed = replay_events(record)
        if not replayed.state.is_over:
            raise ImportRefused(
                _("The record's game is not over: only finished games are imported.")
            )
        compare(record, replayed)
    except RecordError as exc:
        raise ImportRefused(_refusal(exc)) from None
    except RecordMismatch as exc:
        raise ImportRefused(_mismatch(exc)) from None
    return _store(record, user)


def _read(data: bytes) -> Record:
    if len(data) > MAX_BYTES:
        raise ImportRefused(too_big_text())
    try:
        record = read_record(data)
    except RecordError as exc:
        raise ImportRefused(_refusal(exc)) from None
    if record.events is None or record.result is None:
        raise ImportRefused(
            _("The record must say every event and the final scores (format lowenherz-record/2).")
        )
    colours = record.settings.players
    standard = Game(
        setup=record.settings.setup,
        decisions=record.settings.decisions,
        money=record.settings.money,
        seed=record.settings.seed,
    ).settings_for(colours)
    if standard != record.settings:
        raise ImportRefused(
            _(
                "The record sets out its own tiles, deck or neutral colour, "
                "which this site does not play."
            )
        )
    return record


def too_big_text() -> str:
    return _("The file is larger than %(size)s KB: no game's record is that long.") % {
        "size": MAX_BYTES // 1024
    }


def _refusal(exc: RecordError) -> str:
    """Why a record cannot be read or does not replay, in the reader's language."""
    if exc.code == "too_big":
        return too_big_text()
    if exc.code == "too_long":
        return _(
            "The record is longer than any game: more than %(moves)s moves or %(events)s events."
        ) % {"moves": MAX_MOVES, "events": MAX_EVENTS}
    if exc.code in ("notation", "illegal") and exc.cause is not None and exc.index is not None:
        return _("Move %(number)s of the record cannot be played: %(reason)s") % {
            "number": exc.index + 1,
            "reason": refusal_text(exc.cause),
        }
    if exc.code == "move_shape" and exc.index is not None:
        return _(
            'Move %(number)s of the record is not of the form {"player": colour, "move": text}.'
        ) % {"number": exc.index + 1}
    sentences = {
        "not_json": _("The file is not a JSON document (or it is nested too deeply)."),
        "format": _("The file is not a Löwenherz game record (format lowenherz-record/2)."),
        "settings": _(
            "The record's settings are not those of a game: two to four different colours, "
            "a setup, a mode of decisions and money, and a seed from 0 to 2^63 - 1."
        ),
        "players": _(
            "The record's player names must name each colour that plays, "
            "in at most 40 characters each."
        ),
        "name": _("The record's game name must be a text of at most 80 characters."),
        "result": _("The record's final scores are not of the form the format describes."),
    }
    sentence = sentences.get(exc.code, _("The file is not a game record of the documented form."))
    return sentence


def _mismatch(exc: RecordMismatch) -> str:
    if exc.code == "events" and exc.index is not None:
        return _(
            "The record does not replay to what it says: "
            "its event %(number)s differs from the one the rules write."
        ) % {"number": exc.index + 1}
    return _("The record does not replay to what it says: the final scores differ.")


# --- storing an imported game ------------------------------------------------------------------


@dataclass
class _Rows:
    """The rows of an imported game, built as its record is replayed once more."""

    game: Game
    phase: int = 1  # as the site numbers a game's phases: its start is phase 1
    entries: list[RecordEntry] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    snapshots: list[Snapshot] = field(default_factory=list)

    def add_events(self, log: list[Any]) -> None:
        self.events += [
            Event(
                game=self.game,
                index=len(self.events) + i,
                phase_number=self.phase,
                turn=e["turn"],
                kind=e["kind"],
                data={k: v for k, v in e.items() if k != "to"},
                to_colour=str(e.get("to") or ""),
            )
            for i, e in enumerate(log)
        ]

    def add_move(self, player: str, move: Submission) -> None:
        self.entries.append(
            RecordEntry(
                game=self.game,
                index=len(self.entries),
                colour=player,
                move=move_to_json(move),
                text=format_move(move),
                phase_number=self.phase,
            )
        )

    def snapshot(self, state: GameState) -> None:
        self.snapshots.append(
            Snapshot(
                game=self.game,
                phase_number=self.phase,
                turn=state.turn,
                phase_kind=state.phase.kind,
                state=state_to_json(state),
                power={c: p.power for c, p in state.pos.players.items()},
            )
        )


def _same_phase(before: GameState, after: GameState) -> bool:
    """Whether the site would store this move without a new phase: an alliance broken
    (at any time, RULES 7.1), or a sealed submission others still owe (RULES 3.2, 4.2)."""
    return (
        is_simultaneous(before)
        and after.phase.kind == before.phase.kind
        and bool(after.waiting)
        and set(after.waiting) < set(before.waiting)
    )


def _store(record: Record, user: User) -> Game:
    names = record.players or {c: str(COLOUR_WORDS.get(c, c)) for c in record.settings.players}
    settings = record.settings
    with transaction.atomic():
        game = Game.objects.create(
            name=(record.name or _("Imported game"))[:IMPORTED_NAME],
            creator=user,
            player_count=len(settings.players),
            setup=settings.setup,
            decisions=settings.decisions,
            money=settings.money,
            seed=settings.seed,
            imported=True,
            status=Game.Status.FINISHED,
        )
        Seat.objects.bulk_create(
            Seat(game=game, colour=c, position=i, imported_name=names[c])
            for i, c in enumerate(settings.players)
        )
        rows = _Rows(game)
        state, log = start_game(settings)
        rows.add_events(list(log))
        rows.snapshot(state)
        waiting: list[Any] = []  # the events of a sealed phase's moves, told at its end
        for player, move in record.moves:
            before = state
            state, log = submit(state, player, move)  # replayed once already: legal
            rows.add_move(player, move)
            waiting += log
            if isinstance(move, EndAlliance) and len(waiting) == len(log):
                rows.add_events(waiting)  # in the phase it was made in, as the site does
            elif not _same_phase(before, state):
                rows.phase += 1
                rows.snapshot(state)
                rows.add_events(waiting)
            else:
                continue
            waiting = []
        RecordEntry.objects.bulk_create(rows.entries)
        Event.objects.bulk_create(rows.events)
        Snapshot.objects.bulk_create(rows.snapshots)
        now = timezone.now()
        game.set_state(state)
        game.status, game.winners = Game.Status.FINISHED, list(state.winners)
        game.started_at = game.finished_at = now
        game.phase_number = game.notified_phase = rows.phase
        game.records_stored, game.events_stored = len(rows.entries), len(rows.events)
        game.deadline = game.work_due_since = None
        game.save()
    return game
