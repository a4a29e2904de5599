"""What one viewer sees of one game: the only place that decides it.

Pages, the JSON view, the lobby rows, every email and the archive render a
`Presentation`; none of them reads `Game.state`, filters the event log or looks at
pending submissions itself. A viewer is a seat (a player), None (a spectator, or a
person with no seat), or `everything=True`: anyone, once the game has ended, in the
archive, where every secret is revealed.

- The state is seen only through `engine.view.view(state, colour)`.
- Events through `Event.objects.visible_to` (games.models), the one rule for who reads
  which event.
- Pending submissions: the viewer's own (its text), and who has submitted (never what).
- Names and sentences through games.show.words and games.show.event_text.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, fields
from datetime import tzinfo
from functools import cached_property
from itertools import starmap
from operator import attrgetter
from typing import Any

from django.db import connection
from django.db.models import Case, CharField, Value, When
from django.utils import timezone
from django.utils.translation import get_language

from engine.game import GameState
from engine.view import View, view
from games.kept import Kept
from games.models import (
    PERSON,
    Event,
    EventQuerySet,
    Game,
    PendingSubmission,
    Seat,
    away_q,
    is_away,
    readable_marks,
)
from games.show.event_text import describe
from games.show.view_text import time_zone_of
from games.show.words import (
    Names,
    action_text,
    choices_text,
    labelled,
    name_of,
    phase_text,
    waiting_names,
)


@dataclass(slots=True)  # (not frozen: that would cost ten times as much per row)
class EventRow:
    """What an EventLine reads of an event: its row, read as plain values (`rows_of`),
    no model each."""

    index: int
    turn: int
    phase_number: int
    kind: str
    data: dict[str, Any]
    to_colour: str


EVENT_ROW_FIELDS = tuple(f.name for f in fields(EventRow))
_row_values = attrgetter(*EVENT_ROW_FIELDS)


def rows_key(rows: Sequence[EventRow]) -> str:
    """Rows as text, every field of each: a key for what is made of them."""
    return repr([_row_values(row) for row in rows])


# An event's sentence, kept in this process for the next page that shows it: the game
# page words its last 50 events on every request, and an event, once written, says the
# same to the same reader whenever it is read again. Kept by everything the sentence is
# made of (`describe` reads nothing else): the event's fields, the players' names, the
# reader (only a private event's own reader is told "You"), the time zone and the
# language; so a kept sentence is never one another reader was told.
SENTENCES_KEPT = 4096  # a few hundred bytes each
_sentences: Kept[tuple[Any, ...], str] = Kept(SENTENCES_KEPT)


def worded(
    words: dict[str, Any],
    names: Names,
    names_key: tuple[tuple[str, str], ...],
    reader: str | None,
    zone: tzinfo | None,
) -> str:
    """`describe(words, names, reader, zone)`, kept (`names_key`: `names`' items)."""
    key = (repr(words), names_key, reader, zone or timezone.get_current_timezone(), get_language())
    return _sentences.get_or_make(key, lambda: describe(words, names, reader, zone))


def rows_of(events: EventQuerySet) -> Iterator[EventRow]:
    """The events as EventRows, read in one query."""
    return starmap(EventRow, events.values_list(*EVENT_ROW_FIELDS))


@dataclass(frozen=True)
class EventLine:
    """One event of the log as a viewer reads it."""

    index: int
    turn: int
    phase_number: int
    kind: str
    data: dict[str, Any]
    text: str
    to_colour: str  # "" for everyone; else the one player it was for

    @property
    def private(self) -> bool:
        return bool(self.to_colour)


@dataclass(frozen=True)
class DecisionLine:
    """A revealed decision of this turn: the cards, and the actions they chose."""

    colour: str
    name: str
    cards: str
    actions: str


class Presentation:
    """A game as one viewer may see it. Build it with `present`; everything is computed
    on first use and kept, so a page asks the database only for what it shows."""

    def __init__(
        self,
        game: Game,
        seat: Seat | None,
        *,
        everything: bool = False,
        state: GameState | None = None,
    ) -> None:
        self.game, self.seat, self.everything = game, seat, everything
        self._snapshot = state
        self._phase_lines: dict[int, list[EventLine]] = {}  # events(phase_number=...)
        self._phase_rows: dict[int, list[EventRow]] = {}  # read with others' (read_together)

    @property
    def colour(self) -> str | None:
        return self.seat.colour if self.seat is not None else None

    @cached_property
    def view(self) -> View | None:
        """The engine's view for this viewer (None before the game starts)."""
        state = self._snapshot
        if state is None:
            if self.game.state is None:
                return None
            state = self.game.engine_state
        return view(state, self.colour, reveal=self.everything)

    @cached_property
    def seats(self) -> list[Seat]:
        """The game's seats, read once (prefetch them with their users' profiles, and
        absences where `away` is asked, to keep a whole list to one query)."""
        return list(self.game.seats.all())

    @cached_property
    def names(self) -> Names:
        """Colour → the name shown."""
        return {s.colour: s.display_name for s in self.seats}

    @cached_property
    def _names_key(self) -> tuple[tuple[str, str], ...]:
        return tuple(self.names.items())

    @cached_property
    def zone(self) -> tzinfo | None:
        """The time zone the viewer reads times in: a seat's person's own (an email has no
        request to say it), else the active one (a page's: its reader's)."""
        user = self.seat.user if self.seat is not None else None
        return time_zone_of(user) if user is not None else None

    @cached_property
    def labels(self) -> Names:
        """Colour → the name with its colour, "Alice (red)" (`words.labelled`), for score
        lines and lists that name the colours."""
        return {
            s.colour: labelled(s.display_name, s.colour, computer=s.is_computer)
            for s in self.game.seats.all()
        }

    def name(self, colour: str | None) -> str:
        return name_of(colour, self.names)

    # --- the log -----------------------------------------------------------------------

    def events(
        self, *, phase_number: int | None = None, last: int | None = None
    ) -> list[EventLine]:
        """The events this viewer may read, oldest first: of one phase, or the last few.
        A phase's are kept: an email checks them for news, then tells them."""
        if phase_number is not None and last is None:
            return list(self._phase_events(phase_number))
        if phase_number is None and last is not None:  # the page's log, on every request
            return [self.row_line(row) for row in reversed(self.newest_rows(last))]
        rows = self.visible_events()
        if phase_number is not None:
            rows = rows.filter(phase_number=phase_number)
        if last is not None:  # the newest, read as plain rows (no model each)
            newest = list(rows_of(rows.order_by("-index")[:last]))
            return [self.row_line(row) for row in reversed(newest)]
        return [self.row_line(row) for row in rows_of(rows.order_by("index"))]

    def newest_rows(self, last: int) -> list[EventRow]:
        """The newest `last` events this viewer may read, newest first, as plain rows."""
        marks = None if self.everything else readable_marks(self.colour)
        return _newest_rows(self.game.pk, marks, last)

    def wording_key(self) -> tuple[Any, ...]:
        """Everything `row_line` words a row by besides the row itself (`worded`'s key
        without the event): the names, the reader, the time zone and the language."""
        reader = None if self.everything else self.colour
        zone = self.zone or timezone.get_current_timezone()
        return (self._names_key, reader, zone, get_language())

    def _phase_events(self, phase_number: int) -> list[EventLine]:
        if phase_number not in self._phase_lines:
            rows = self.phase_rows(phase_number, phase_number).get(phase_number, [])
            self._phase_lines[phase_number] = [self.row_line(row) for row in rows]
        return self._phase_lines[phase_number]

    def phase_rows(self, first: int, last: int) -> dict[int, list[EventRow]]:
        """The events this viewer may read of the phases `first` to `last`, as plain rows
        (`row_line` words each), by phase: in one query, or none if `read_together`
        read them."""
        wanted = range(first, last + 1)
        if all(number in self._phase_rows for number in wanted):
            return {number: self._phase_rows[number] for number in wanted}
        rows: dict[int, list[EventRow]] = {}
        for row in rows_of(
            self.visible_events().filter(phase_number__gte=first, phase_number__lte=last)
        ):
            rows.setdefault(row.phase_number, []).append(row)
        return rows

    def keep_rows(self, by_phase: dict[int, list[EventRow]]) -> None:
        """The events this viewer may read of some phases, read with other viewers'
        (`read_together`): `phase_rows` and `events` ask no query for them."""
        self._phase_rows.update(by_phase)

    def visible_events(self) -> EventQuerySet:
        """Every event this viewer may read, oldest first, as rows: for a page of them
        (`line` words each)."""
        # By the game's id: a query holding the game itself would copy it (and its
        # state) each time the query is cloned.
        return (
            Event.objects.filter(game_id=self.game.pk)
            .visible_to(self.colour, everything=self.everything)
            .order_by("index")
        )

    def line(self, event: Event) -> EventLine:
        e = event
        return self.row_line(EventRow(e.index, e.turn, e.phase_number, e.kind, e.data, e.to_colour))

    def row_line(self, row: EventRow) -> EventLine:
        """An event read as a plain row (`rows_of`), worded for this viewer."""
        words = {**row.data, "kind": row.kind, "to": row.to_colour}
        # "You" only to the reader a private event is for; the archive names them.
        reader = None if self.everything else self.colour
        return EventLine(
            index=row.index,
            turn=row.turn,
            phase_number=row.phase_number,
            kind=row.kind,
            data=row.data,
            text=worded(words, self.names, self._names_key, reader, self.zone),
            to_colour=row.to_colour,
        )

    # --- what is pending -----------------------------------------------------------------

    @cached_property
    def _stored(self) -> list[tuple[str, str | None]]:
        """The submissions stored for this phase, in one query: each one's colour, and
        its text for the viewer's own only (None for the others': it never leaves the
        database)."""
        own = (
            Value(None, output_field=CharField())
            if self.seat is None
            else Case(
                When(seat_id=self.seat.pk, then="text"), default=None, output_field=CharField()
            )
        )
        return list(
            PendingSubmission.objects.filter(
                game_id=self.game.pk, phase_number=self.game.phase_number
            )
            .annotate(own_text=own)
            .values_list("seat__colour", "own_text")
        )

    def my_pending(self) -> str | None:
        """The viewer's own submission stored for this phase, as text."""
        if self.seat is None:
            return None
        if "own_pending" in vars(self.seat):  # read with the seats (`models.with_pending`)
            return vars(self.seat)["own_pending"]
        return next((text for _, text in self._stored if text is not None), None)

    def submitted(self) -> set[str]:
        """Who has a submission stored for this phase (not what it is): from the seats if
        they were read with it (`services.with_submitted`, as notify reads them)."""
        seats = self._seats_loaded()
        if seats and all("has_submitted" in vars(s) for s in seats):
            return {s.colour for s in seats if vars(s)["has_submitted"]}
        return {colour for colour, _ in self._stored}

    def _seats_loaded(self) -> list[Seat] | None:
        """The game's seats if they are read already (prefetched, or by `seats`), else
        None: asking would cost a query."""
        if "seats" in self.__dict__:
            return self.seats
        prefetched = getattr(self.game, "_prefetched_objects_cache", {})
        return self.seats if "seats" in prefetched else None

    def has_submitted(self) -> set[str]:
        """Who has submitted for this phase, as the game page marks them: a stored
        submission, or a sealed choice the engine holds."""
        sealed = set(self.view.get("submitted", [])) if self.view is not None else set()
        return self.submitted() | sealed

    def still_waiting(self) -> list[str]:
        """The colours the phase still waits for (`Game.still_waiting`)."""
        return self.game.still_waiting(self.has_submitted()) if self.game.waiting else []

    @cached_property
    def away(self) -> frozenset[str]:
        """The colours whose person is away now (their absence under Notifications): named
        as away where the game waits for them (issue 24). From the seats if their people's
        absences were read with them, else in one query."""
        now = timezone.now()
        people = [s for s in self.seats if s.is_person]
        if all(_absence_loaded(s) for s in people):
            return frozenset(s.colour for s in people if is_away(s.user, now))
        away = Seat.objects.filter(PERSON, away_q(now, "user__notifications__"))
        return frozenset(away.filter(game_id=self.game.pk).values_list("colour", flat=True))

    def waiting_text(self) -> str:
        """Who the phase still waits for, by name, the away named as away: "Bob (away),
        Charlie"; "" if nobody (the game is not running)."""
        return waiting_names(self.still_waiting(), self.names, self.away)

    # --- sentences -----------------------------------------------------------------------

    def phase_sentence(self) -> str:
        reader = None if self.everything else self.colour
        return phase_text(self.view["phase"], self.names, reader) if self.view else ""

    def decisions(self) -> list[DecisionLine]:
        """This turn's revealed decisions, with the actions they chose."""
        v = self.view
        if v is None:
            return []
        card = (v.get("card") or "").split()
        lines = []
        for colour, choices in v.get("decisions", {}).items():
            cards = [c["card"] for c in choices]
            politics = [(c.get("politics") or {}).get("type", "").lower() or None for c in choices]
            actions = ", ".join(action_text(card[n - 1]) for n in cards if n <= len(card))
            lines.append(
                DecisionLine(colour, self.name(colour), choices_text(cards, politics), actions)
            )
        return lines


def _absence_loaded(seat: Seat) -> bool:
    """Whether the seat's person came with their absence (select_related
    "user__notifications"), so that reading it asks no query."""
    if seat.user_id is None:
        return True
    if "user" not in seat._state.fields_cache:
        return False
    return "notifications" in seat._state.fields_cache["user"]._state.fields_cache


def read_together(shown: Sequence[Presentation], first: int, last: int) -> None:
    """The events of the phases `first` to `last` for several viewers of one game, in one
    query (games.mail.notify tells every player of a phase at once): each viewer keeps
    the rows it may read (`readable_marks`), for `phase_rows` and `events`."""
    if not shown:
        return
    game_id = shown[0].game.pk
    assert all(p.game.pk == game_id and not p.everything for p in shown), "one game, players"
    marks = sorted({mark for p in shown for mark in readable_marks(p.colour)})
    rows = _rows_read(game_id, first, last, marks)
    for presentation in shown:
        readable = readable_marks(presentation.colour)
        by_phase: dict[int, list[EventRow]] = {n: [] for n in range(first, last + 1)}
        for row in rows:
            if row.to_colour in readable:
                by_phase[row.phase_number].append(row)
        presentation.keep_rows(by_phase)


def _rows_read(game_id: int, first: int, last: int, marks: list[str]) -> list[EventRow]:
    """`read_together`'s query as SQL (the ORM's building of it cost notify more CPU than
    the query: issue 25): the game's events of phases `first` to `last` marked with one
    of `marks` (`readable_marks`), in their order; `data` decoded as its field does."""
    sql = f"""SELECT {_EVENT_COLUMNS} FROM {Event._meta.db_table}
WHERE game_id = %s AND phase_number >= %s AND phase_number <= %s
  AND to_colour IN ({", ".join(["%s"] * len(marks))})
ORDER BY "index"
"""
    return _read(sql, [game_id, first, last, *marks])


def _newest_rows(game_id: int, marks: list[str] | None, last: int) -> list[EventRow]:
    """The game's newest `last` events marked with one of `marks` (`readable_marks`; None:
    all of them), newest first: the game page's log, as SQL (the ORM's building of it cost
    the page more than the query)."""
    readable = "" if marks is None else f"AND to_colour IN ({', '.join(['%s'] * len(marks))})"
    sql = f"""SELECT {_EVENT_COLUMNS} FROM {Event._meta.db_table}
WHERE game_id = %s {readable}
ORDER BY "index" DESC LIMIT %s
"""
    return _read(sql, [game_id, *(marks or []), last])


def _read(sql: str, params: list[Any]) -> list[EventRow]:
    """The rows of an event query of `EVENT_ROW_FIELDS`, `data` decoded as its field does."""
    data: Any = Event._meta.get_field("data")
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        found = cursor.fetchall()
    at = EVENT_ROW_FIELDS.index("data")
    decoded = (
        (*row[:at], data.from_db_value(row[at], None, connection), *row[at + 1 :]) for row in found
    )
    return list(starmap(EventRow, decoded))


def _column(name: str) -> str:
    field: Any = Event._meta.get_field(name)
    return f'"{field.column}"'


_EVENT_COLUMNS = ", ".join(_column(name) for name in EVENT_ROW_FIELDS)


def present(
    game: Game,
    seat: Seat | None = None,
    *,
    everything: bool = False,
    state: GameState | None = None,
) -> Presentation:
    """The game as `seat` sees it (None: a spectator). `everything` is for a finished
    game's archive only; `state` a snapshot to show instead of the current state."""
    if everything and not game.is_finished:
        raise ValueError("secrets are revealed only once the game is over")
    return Presentation(game, seat, everything=everything, state=state)
