"""What happens to a game: creating, joining, starting, submitting, resolving.

The only module that calls the engine's `submit`. Every change to a game runs
in a transaction holding the game's row lock (`select_for_update`), so two
requests or two workers never apply the same phase twice.

What must follow a change (resolve a phase, tell the players, let a computer move)
is announced after the commit by the signals below; `games.tasks`, the roof,
connects receivers that queue the Celery tasks. So this module never imports the
tasks that call it.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from typing import Any, Literal, TypedDict, TypeVar

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.db.models import Exists, F, OuterRef, QuerySet
from django.dispatch import Signal
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from engine import game as engine
from engine.ai import PLAYERS, RandomPlayer, SearchPlayer
from engine.errors import IllegalMove
from engine.events import Event
from engine.moves import EndAlliance, Submission
from engine.notation import format_move
from engine.position import COLOURS
from engine.reasons import Reason, ReasonJson
from engine.serialize import move_from_json, move_to_json
from engine.setup import Settings
from games import people, ratings
from games.models import (
    COMPUTER_KINDS,
    Game,
    PendingSubmission,
    RecordEntry,
    Seat,
    Snapshot,
    events_told,
    marked,
)
from games.models import Event as EventRow
from games.show.words import colour_word, phase_label, phase_moved_on, refusal_text

logger = logging.getLogger(__name__)

MAX_DEADLINE_HOURS = 720
MAX_MISSED_DEADLINES = 10  # a computer stands in after at most this many in a row (0: never)
ABSENCE_POLICIES = ("extend", "pause")  # Game.on_absence: what games.deadlines does for one
T = TypeVar("T")

# Sent after the commit that makes them true, with the ids as keyword arguments.
phase_ready = Signal()  # game_id, phase_number: every awaited submission is in
phase_began = Signal()  # game_id, phase_number: a new phase (or the end) to tell about
computer_awaited = Signal()  # game_id, phase_number, seat_id: a computer's move is wanted
# Sent inside the transaction, under the game's row lock: game (its new deadline saved),
# now. A deadline was set or moved (or who it reminds changed, games.deadlines): the
# reminders before it are armed then (games.mail.notify), never by scanning every game.
deadline_set = Signal()
# Sent inside the transaction that marks the game, under its row lock: game. Its stored
# moves failed to apply RESOLVE_MAX_ATTEMPTS times; the mail wing queues the email that
# tells the site's operators in the same commit (games.mail.compose).
repair_needed = Signal()


class GameError(ValueError):
    """Something a person asked for that cannot be done; the message says why."""


class MovesBroke(Exception):
    """The engine raised while applying a phase's stored moves: not a refusal (that is
    `IllegalMove`, told to its player) but a bug, or a stored move it cannot apply. The
    engine's exception is the `__cause__`."""


PAUSED_FOR_REPAIR = gettext_lazy(
    "this game is paused for repair: applying its moves failed, and the "
    "site's operators have been told; moves are taken again once it is "
    "repaired"
)


class Refusal(IllegalMove, GameError):
    """The engine's refusal of a person's move (`IllegalMove`, its `reason` a code and
    values), told in the reader's language: its message is worded when it is read
    (games.show.words.refusal_text), in the language active then, to `mover`, the colour
    of the player whose move it was (the one it is told to)."""

    def __init__(self, reason: Reason, mover: str | None = None) -> None:
        super().__init__(reason)
        self.mover = mover

    def __str__(self) -> str:
        return refusal_text(self, self.mover)


class PhaseGone(GameError):
    """A form made for a phase gone by (or for no phase it says): nothing was applied.
    The message is a whole sentence: which phase it was for, which one is now."""


UNKNOWN_PHASE = 0  # what a form that says no phase was made for (an old page) passes


@dataclass(frozen=True)
class Outcome:
    """What became of a submission: stored (waiting for others) or being applied."""

    move: Submission
    ready: bool

    @property
    def text(self) -> str:
        return format_move(self.move)


# --- lobby ---------------------------------------------------------------------------


def create_game(
    creator: User,
    *,
    name: str,
    player_count: int,
    setup: str,
    decisions: str,
    money: str,
    deadline_hours: int,
    invite_only: bool,
    colour: str,
    computer_colours: list[str],
    on_absence: str = "extend",
    max_missed_deadlines: int = 3,
    computer_level: str = "normal",
) -> Game:
    """A new game of the creator's with these settings; `on_absence` and
    `max_missed_deadlines` are its absence policy (games.deadlines); `computer_level`
    how every computer of it plays (`computer_player`)."""
    _check_options(player_count, setup, decisions, money, deadline_hours)
    _check_absences(on_absence, max_missed_deadlines)
    if computer_level not in COMPUTER_KINDS:
        raise GameError(_("a computer's level is easy, normal or hard"))
    _check_colours([colour, *computer_colours])
    if colour in computer_colours or len(computer_colours) >= player_count:
        raise GameError(_("leave at least your own seat to a person"))
    with transaction.atomic():
        game = Game.objects.create(
            name=name,
            creator=creator,
            player_count=player_count,
            setup=setup,
            decisions=decisions,
            money=money,
            deadline_hours=deadline_hours,
            invite_only=invite_only,
            on_absence=on_absence,
            max_missed_deadlines=max_missed_deadlines,
            computer_level=computer_level,
        )
        Seat.objects.create(game=game, colour=colour, position=0, user=creator)
        for i, computer in enumerate(computer_colours, start=1):
            Seat.objects.create(game=game, colour=computer, position=i, is_computer=True)
        _start_if_full(game)
    return game


def _check_options(
    player_count: int, setup: str, decisions: str, money: str, deadline_hours: int
) -> None:
    """The engine's own settings check, so that a bad game is refused before it exists."""
    colours = tuple(COLOURS[:player_count]) if 2 <= player_count <= 4 else COLOURS * 2
    try:
        Settings(players=colours, setup=setup, decisions=decisions, money=money)
    except ValueError as exc:
        raise GameError(str(exc)) from None
    if not 1 <= deadline_hours <= MAX_DEADLINE_HOURS:
        raise GameError(_("a phase deadline is 1 to %(most)s hours") % {"most": MAX_DEADLINE_HOURS})


def _check_absences(on_absence: str, max_missed_deadlines: int) -> None:
    if on_absence not in ABSENCE_POLICIES:
        raise GameError(_("an absence extends the deadline or pauses the game"))
    if not 0 <= max_missed_deadlines <= MAX_MISSED_DEADLINES:
        raise GameError(
            _("a computer stands in after 0 (never) to %(most)s missed deadlines")
            % {"most": MAX_MISSED_DEADLINES}
        )


def _check_colours(colours: list[str]) -> None:
    unknown = [c for c in colours if c not in COLOURS]
    if unknown:
        raise GameError(
            _("%(colour)r is not a colour: choose %(colours)s")
            % {"colour": unknown[0], "colours": ", ".join(colour_word(c) for c in COLOURS)}
        )
    if len(set(colours)) != len(colours):
        raise GameError(_("each seat needs a colour of its own"))


def join_game(game_id: int, user: User, colour: str) -> Game:
    _check_colours([colour])
    with transaction.atomic():
        game = Game.objects.select_for_update().get(pk=game_id)
        seats = list(game.seats.all())
        if game.status == Game.Status.CANCELLED:
            raise GameError(_("this game was cancelled by its creator"))
        if game.status != Game.Status.OPEN:
            raise GameError(_("this game has already started"))
        if any(s.user_id == user.pk for s in seats):
            raise GameError(_("you already have a seat in this game"))
        if any(s.colour == colour for s in seats):
            raise GameError(
                _("%(colour)s is taken; choose another colour") % {"colour": colour_word(colour)}
            )
        Seat.objects.create(
            game=game, colour=colour, user=user, position=max(s.position for s in seats) + 1
        )
        _start_if_full(game)
    return game


def _start_if_full(game: Game) -> None:
    seats = list(game.seats.order_by("position"))
    if len(seats) < game.player_count:
        return
    state, log = engine.start_game(game.settings_for(tuple(s.colour for s in seats)))
    game.status, game.started_at = Game.Status.RUNNING, timezone.now()
    _store(game, state, log, records=[])


# --- running a table: cancelling, leaving, conceding ----------------------------------------


def cancel_game(game_id: int, user: User) -> Game:
    """The creator calls off a game that has not started; it leaves the lobby."""
    with transaction.atomic():
        game = Game.objects.select_for_update().get(pk=game_id)
        if game.creator_id != user.pk:
            raise GameError(_("only the game's creator can cancel it"))
        if game.status != Game.Status.OPEN:
            raise GameError(
                _(
                    "only a game that has not started can be cancelled; "
                    "a player of a running game can concede instead"
                )
            )
        game.status = Game.Status.CANCELLED
        game.save(update_fields=["status"])
    return game


def leave_game(game_id: int, user: User) -> Game:
    """A player gives up their seat before the game starts; the colour is free again."""
    with transaction.atomic():
        game = Game.objects.select_for_update().get(pk=game_id)
        if game.status != Game.Status.OPEN:
            raise GameError(_("the game has started: concede instead, and a computer plays on"))
        if game.creator_id == user.pk:
            raise GameError(_("you created this game: cancel it instead"))
        seat = seat_of(game, user)
        seat.delete()
    return game


def concede(game_id: int, user: User) -> Seat:
    """A player gives up a running game for good: a computer plays the seat to the end
    (the others play on), and taking the seat back is refused (games.deadlines)."""
    with transaction.atomic():
        game = Game.objects.select_for_update().get(pk=game_id)
        if game.status != Game.Status.RUNNING:
            raise GameError(_("this game is not running"))
        seat = seat_of(game, user)
        if seat.conceded:
            raise GameError(_("you have conceded this game already"))
        seat.conceded, seat.standin = True, True
        seat.save(update_fields=["conceded", "standin"])
        note_event(game, "conceded", player=seat.colour)
        _hand_to_computer(game, seat)
    return seat


def note_event(game: Game, kind: str, **data: Any) -> EventRow:
    """An event of the site's in the game's log (the caller holds the game's row lock).
    Its index is the game's count of events, moved on in the same UPDATE that counts it
    and read back: another object of the game's row may have moved it in this
    transaction. (Several events at once, from a game's row read under its lock:
    `note_events`.)"""
    Game.objects.filter(pk=game.pk).update(events_stored=F("events_stored") + 1)
    game.events_stored = Game.objects.values_list("events_stored", flat=True).get(pk=game.pk)
    row = _event_row(game, game.events_stored - 1, kind, data)
    row.save()
    return row


def note_events(game: Game, notes: Sequence[dict[str, Any]]) -> None:
    """Events of the site's (each a dict of its "kind" and data) in the game's log, in one
    INSERT (`note_event` costs three statements each). The caller holds the game's row
    lock, read it in this transaction with nothing moving `events_stored` since, and
    saves the game's row next (`events_stored`, moved on here), a write that moves the
    game's live mark on: these events are everyone's (bulk_create sends no signal,
    `events_told`)."""
    EventRow.objects.bulk_create(
        _event_row(game, game.events_stored + i, note["kind"], note) for i, note in enumerate(notes)
    )
    game.events_stored += len(notes)


def _event_row(game: Game, index: int, kind: str, data: dict[str, Any]) -> EventRow:
    return EventRow(
        game=game,
        index=index,
        phase_number=game.phase_number,
        turn=game.turn,
        kind=kind,
        data={"kind": kind, **data},
    )


def _hand_to_computer(game: Game, seat: Seat) -> None:
    """The computer makes the seat's move of this phase too, unless one is stored."""
    state = game.engine_state
    if seat.colour in state.waiting and seat.colour not in _submitted(game):
        transaction.on_commit(partial(_dispatch_computer, game.pk, game.phase_number, seat.pk))
    keep_due(game)


# --- submitting -------------------------------------------------------------------------


def seat_of(game: Game, user: User) -> Seat:
    """The user's seat in the game (`Game.seat_for`); GameError if they hold none."""
    seat = game.seat_for(user)
    if seat is None:
        raise GameError(_("you have no seat in this game"))
    return seat


def submit(
    game_id: int, seat_id: int, move: Submission, phase_number: int | None = None
) -> Outcome:
    """A person's own move (parsed where it came in: a form, the notation field, an
    email). Checked by the engine and stored; nothing changes if it is refused
    (IllegalMove or GameError carry the sentence to show). `phase_number`: the phase the
    form was made for (`UNKNOWN_PHASE` if it says none); a move for another phase is
    refused with `PhaseGone`."""
    outcome = submit_move(game_id, seat_id, move, phase_number)
    # A person who answers is no longer missing deadlines in a row (deadline defaults go
    # through submit_move, so they keep counting).
    Seat.objects.filter(pk=seat_id, missed_deadlines__gt=0).update(missed_deadlines=0)
    return outcome


def submit_move(
    game_id: int, seat_id: int, move: Submission, phase_number: int | None = None
) -> Outcome:
    """Check a submission once, against the state it is made in, and store it."""
    with transaction.atomic():
        game = Game.objects.select_for_update().get(pk=game_id)
        seat = game.seats.get(pk=seat_id)
        # Under the row lock: a resolve that moves the phase on waits for us, or came first.
        # Ending an alliance is allowed at any time (RULES 7.1), so it is for no phase.
        if phase_number is not None and not isinstance(move, EndAlliance):
            gone = phase_problem(game, phase_number)
            if gone is not None:
                raise gone
        if game.status != Game.Status.RUNNING:
            raise GameError(_("this game is not running"))
        if game.needs_repair:  # frozen as it broke, for its operators to look at
            raise GameError(str(PAUSED_FOR_REPAIR))
        state = game.engine_state
        if isinstance(move, EndAlliance):  # RULES 7.1: at any time, applied at once
            new, log = _refused_in_words(engine.submit, state, seat.colour, move)
            _store(
                game,
                new,
                [*log, *_recheck_pending(game, new)],
                records=[(seat.colour, move)],
                new_phase=False,
            )
            return Outcome(move, ready=True)
        _refused_in_words(engine.check, state, seat.colour, move)  # raises Refusal
        PendingSubmission.objects.update_or_create(
            seat=seat,
            phase_number=game.phase_number,
            defaults={"game": game, "move": move_to_json(move), "text": format_move(move)},
        )
        ready = keep_due(game).resolve
        if ready:
            number = game.phase_number
            transaction.on_commit(lambda: _dispatch_resolve(game_id, number))
    return Outcome(move, ready=ready)


def store_defaults(game: Game, seats: Sequence[Seat], state: engine.GameState) -> None:
    """The engine's default move for each of `seats` (RULES 9: its deadline passed),
    checked and stored in one INSERT. The caller holds the game's row lock, has read
    that none of `seats` submitted in this phase, and writes the game's row next in the
    same transaction, which moves its live mark on (`Game.live_mark`: bulk_create sends
    no signal)."""
    moves = [(seat, engine.default_move(state, seat.colour)) for seat in seats]
    for seat, move in moves:
        _refused_in_words(engine.check, state, seat.colour, move)  # raises Refusal
    PendingSubmission.objects.bulk_create(
        PendingSubmission(
            game=game,
            seat=seat,
            phase_number=game.phase_number,
            move=move_to_json(move),
            text=format_move(move),
        )
        for seat, move in moves
    )


def _refused_in_words(
    check: Callable[[engine.GameState, str, Submission], T],
    state: engine.GameState,
    player: str,
    move: Submission,
) -> T:
    """The engine's `check` or `submit`, its `IllegalMove` raised as a `Refusal` (an
    IllegalMove and a GameError, told to `player` in their language)."""
    try:
        return check(state, player, move)
    except IllegalMove as exc:
        raise Refusal(exc.reason, mover=player) from None


def phase_problem(game: Game, phase_number: int) -> PhaseGone | None:
    """A `PhaseGone` if the game is no longer in the phase a form was made for."""
    if phase_number == game.phase_number:
        return None
    then = (
        (
            game.snapshots.filter(phase_number=phase_number)
            .values_list("turn", "state__phase")
            .first()
        )
        if phase_number
        else None
    )
    current = phase_label((game.state or {}).get("phase"), game.turn)
    return PhaseGone(
        phase_moved_on(
            phase_number or None,
            phase_label(then[1], then[0]) if then else None,
            game.phase_number,
            current,
        )
    )


def _recheck_pending(game: Game, state: engine.GameState) -> SiteLog:
    """Keep true that every stored submission is legal in the current state (which
    `resolve` trusts): ending an alliance changed the state within the phase, so a
    stored submission it made illegal is dropped, and its player told why."""
    log: SiteLog = []
    for item in game.pending.filter(phase_number=game.phase_number).select_related("seat"):
        try:
            engine.check(state, item.seat.colour, move_from_json(item.move))
        except IllegalMove as exc:
            log.append(_refused(item, exc, state.turn))
            item.delete()
    return log


def _submitted(game: Game) -> set[str]:
    """The colours with a submission stored for the current phase."""
    return set(
        game.pending.filter(phase_number=game.phase_number).values_list("seat__colour", flat=True)
    )


def with_submitted(seats: QuerySet[Seat], phase_number: int) -> QuerySet[Seat]:
    """The seats of a game, each with whether it has a submission stored for the game's
    current phase, `phase_number` (`has_submitted`): the `submitted` of `owed`, in a
    query that reads the seats anyway. Read under the game's row lock, in a statement
    after the one that took it (and read the phase): its snapshot then holds every
    submission, as each takes that lock to be stored."""
    moves = PendingSubmission.objects.filter(seat=OuterRef("pk"), phase_number=phase_number)
    return seats.annotate(has_submitted=Exists(moves))


def submitted_of(seats: Iterable[Seat]) -> set[str]:
    """The colours with a submission stored for the current phase, of seats read
    `with_submitted`."""
    return {seat.colour for seat in seats if vars(seat)["has_submitted"]}


def _is_ready(game: Game, state: engine.GameState, submitted: set[str] | None = None) -> bool:
    """Every awaited submission is in (a phase that is not sealed ends with the first)."""
    submitted = _submitted(game) if submitted is None else submitted
    if not engine.is_simultaneous(state):
        return bool(submitted & set(state.waiting))
    return set(state.waiting) <= submitted


# --- what the queue owes a game (games.recovery finds it again if a message is lost) ------


@dataclass(frozen=True)
class Owed:
    """The tasks a game is owed now: its phase's emails, a resolve, computers' moves."""

    game_id: int
    phase_number: int
    notify: bool = False
    resolve: bool = False
    computers: tuple[int, ...] = ()  # seat ids

    def __bool__(self) -> bool:
        return self.notify or self.resolve or bool(self.computers)


def owed(game: Game, submitted: Collection[str] | None = None) -> Owed:
    """What must still happen to the game (read under its row lock). `submitted`: the
    colours with a submission stored for the current phase, if the caller read them
    under the lock (`with_submitted`)."""
    notify = game.notified_phase < game.phase_number
    if game.status != Game.Status.RUNNING or game.needs_repair:
        return Owed(game.pk, game.phase_number, notify=notify)
    state = game.engine_state
    submitted = _submitted(game) if submitted is None else set(submitted)
    computers = tuple(
        s.pk
        for s in game.seats.all()
        if s.computer_plays and s.colour in state.waiting and s.colour not in submitted
    )
    return Owed(
        game.pk,
        game.phase_number,
        notify=notify,
        resolve=_is_ready(game, state, submitted),
        computers=computers,
    )


def keep_due(
    game: Game,
    progressed: bool = True,
    saving: Sequence[str] = (),
    submitted: Collection[str] | None = None,
) -> Owed:
    """Record in the game's row since when a task is owed to it (None: nothing is), under
    its row lock. `progressed`: the game just changed, so the recovery pass gives the
    tasks this change queued a grace period from now before it queues them again.
    `saving`: other fields of the game's row changed by the caller, saved in the same
    UPDATE. `submitted`: as `owed`'s."""
    work = owed(game, submitted)
    since = (
        (timezone.now() if progressed or game.work_due_since is None else game.work_due_since)
        if work
        else None
    )
    if since != game.work_due_since or saving:
        game.work_due_since = since
        update_game(game.pk, {"work_due_since": since, **{n: getattr(game, n) for n in saving}})
    return work


_GAME_FIELDS: dict[str, Any] = {f.name: f for f in Game._meta.concrete_fields}


def update_game(game_id: int, values: dict[str, Any]) -> None:
    """`Game.objects.filter(pk=game_id).update(**values)` as SQL, the live mark moved on as
    that moves it (`models.marked`): the ORM's building of the UPDATE cost the notify
    task more CPU than the statement (issue 25). Each value goes through its field as
    the ORM sends it (a datetime's zone, a JSON field's adapter)."""
    fields = [(_GAME_FIELDS[name], value) for name, value in marked(values).items()]
    sets = ", ".join(f'"{field.column}" = %s' for field, _ in fields)
    params = [field.get_db_prep_save(value, connection) for field, value in fields]
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {Game._meta.db_table} SET {sets} WHERE id = %s", [*params, game_id])


def announce(work: Owed) -> None:
    """Queue, after the commit, every task the game is owed (each one is idempotent)."""
    game_id, number = work.game_id, work.phase_number
    if work.notify:
        transaction.on_commit(lambda: _dispatch_notify(game_id, number))
    if work.resolve:
        transaction.on_commit(lambda: _dispatch_resolve(game_id, number))
    # One task plays every computer the phase awaits (play_computers), as _schedule_computers.
    for seat_id in work.computers[:1]:
        transaction.on_commit(partial(_dispatch_computer, game_id, number, seat_id))


def _dispatch_resolve(game_id: int, phase_number: int) -> None:
    phase_ready.send(sender=Game, game_id=game_id, phase_number=phase_number)


# --- resolving ----------------------------------------------------------------------------


def resolve(game_id: int, phase_number: int) -> bool:
    """Apply the phase's pending submissions; exactly once: a second run, or a run for a
    phase already resolved, finds the phase number moved on and does nothing. If the
    engine raises while applying them, nothing is applied and the attempt is counted
    (`note_broken`)."""
    try:
        return _resolve(game_id, phase_number)
    except MovesBroke as broke:
        note_broken(game_id, phase_number, broke)
        return False


def _resolve(game_id: int, phase_number: int) -> bool:
    with transaction.atomic():
        game, rows = _locked_for_resolving(game_id)
        if (
            game.phase_number != phase_number
            or game.status != Game.Status.RUNNING
            or game.needs_repair
        ):
            return False
        state = game.engine_state
        pending = _pending(game)
        if not _is_ready(game, state, {p.seat.colour for p in pending}):
            return False
        state, log, records = _applied(state, pending)
        if not records:
            return False
        _store(game, state, log, records, rows=rows)
    return True


def _locked_for_resolving(game_id: int) -> tuple[Game, Rows]:
    """The game under its row lock, with its seats, and how many record and event rows
    it has (kept in its row)."""
    game = Game.objects.select_for_update(of=("self",)).prefetch_related("seats").get(pk=game_id)
    return game, Rows.of(game)


def _pending(game: Game) -> list[PendingSubmission]:
    """The current phase's stored submissions, in the order they came, each with its
    seat from those read with the game's row lock (no join)."""
    seats = {seat.pk: seat for seat in game.seats.all()}
    pending = list(
        game.pending.filter(phase_number=game.phase_number).order_by("submitted_at", "id")
    )
    for item in pending:
        item.seat = seats[item.seat_id]
    return pending


class Refused(TypedDict):
    """The site's own event: a stored submission that no longer fits, told its player."""

    kind: Literal["refused"]
    to: str
    move: str
    reason: ReasonJson  # a code and its values: worded when read (games.show.event_text)
    turn: int


SiteLog = list[Event | Refused]


def _refused(item: PendingSubmission, exc: IllegalMove, turn: int) -> Refused:
    return {
        "kind": "refused",
        "to": item.seat.colour,
        "move": item.text,
        "reason": exc.reason.as_json(),
        "turn": turn,
    }


def _applied(
    state: engine.GameState, pending: list[PendingSubmission]
) -> tuple[engine.GameState, SiteLog, list[tuple[str, Submission]]]:
    """`_apply_pending`, whose failure is `MovesBroke`. Only this is counted as a broken
    move: it reads no database and no broker (the rows are read before it), so what it
    raises comes from decoding and applying the moves, never from a connection that a
    retry would mend (those reach the task's autoretry instead)."""
    try:
        return _apply_pending(state, pending)
    except (MemoryError, SoftTimeLimitExceeded):
        raise  # the worker's trouble (its memory, a computers' task's time), not the game's
    except Exception as exc:
        raise MovesBroke(f"{type(exc).__name__}: {exc}") from exc


def _apply_pending(
    state: engine.GameState, pending: list[PendingSubmission]
) -> tuple[engine.GameState, SiteLog, list[tuple[str, Submission]]]:
    """Sealed phases in seat order; others in the order submitted. Every submission was
    checked against this state when it was stored (`submit_move`, `_recheck_pending`), so
    it is applied as a trusted step; in a sealed phase one player's choice does not change
    what another may choose. Where a first submission changed the state (a phase that is
    not sealed), a later one is checked again, and dropped with a private event if it no
    longer fits."""
    sealed = engine.is_simultaneous(state)
    if sealed:
        rank = {c: i for i, c in enumerate(state.players)}
        pending.sort(key=lambda p: rank[p.seat.colour])
    log: SiteLog = []
    records: list[tuple[str, Submission]] = []
    for item in pending:
        colour, move = item.seat.colour, move_from_json(item.move)
        if colour not in state.waiting:
            continue
        step = engine.apply if sealed or not records else engine.submit
        try:
            state, events = step(state, colour, move)
        except IllegalMove as exc:
            log.append(_refused(item, exc, state.turn))
            continue
        log.extend(events)
        records.append((colour, move))
    return state, log, records


# --- moves that fail to apply: counted, then the game is paused for repair -----------------

ERROR_CHARS = 8000  # of the traceback kept in the game's row: its end, where the cause is


def note_broken(game_id: int, phase_number: int, broke: MovesBroke) -> None:
    """Count an attempt whose stored moves failed to apply (its transaction was rolled
    back), in the game's row: neither a worker's restart nor a task queued again forgets
    it. The recovery pass tries again after its grace (`keep_due`); the attempt that
    makes RESOLVE_MAX_ATTEMPTS pauses the game for repair: nothing is resolved, played
    or queued for it any more (`owed`), its players see why, and its operators are told
    (an error in the log, and `repair_needed`: an email)."""
    with transaction.atomic():
        game = Game.objects.select_for_update().filter(pk=game_id).first()
        if (
            game is None
            or game.phase_number != phase_number
            or game.status != Game.Status.RUNNING
            or game.needs_repair
        ):
            return  # it moved on meanwhile, or is marked already
        game.resolve_failures += 1
        game.resolve_error = error_text(broke)
        marked = game.resolve_failures >= settings.RESOLVE_MAX_ATTEMPTS
        if marked:
            game.needs_repair_since = timezone.now()
        keep_due(game, saving=("resolve_failures", "resolve_error", "needs_repair_since"))
        if marked:
            repair_needed.send(sender=Game, game=game)
    _log_broken(game, broke, marked)


def _log_broken(game: Game, broke: MovesBroke, marked: bool) -> None:
    cause = broke.__cause__ or broke
    exc_info = (type(cause), cause, cause.__traceback__)
    if marked:
        logger.error(
            "game %s (%s) needs repair: the moves of phase %s failed to apply %s "
            "times; it is paused until an operator retries it (manage.py "
            "repair_games)",
            game.pk,
            game.name,
            game.phase_number,
            game.resolve_failures,
            exc_info=exc_info,
        )
    else:
        logger.warning(
            "game %s: the moves of phase %s failed to apply (attempt %s of %s); "
            "the recovery pass tries again",
            game.pk,
            game.phase_number,
            game.resolve_failures,
            settings.RESOLVE_MAX_ATTEMPTS,
            exc_info=exc_info,
        )


def error_text(broke: MovesBroke) -> str:
    """The engine's traceback, for the operators (never shown to players: it may quote a
    secret move)."""
    cause = broke.__cause__ or broke
    return "".join(traceback.format_exception(cause))[-ERROR_CHARS:]


def retry_repair(game_id: int) -> Owed:
    """An operator's retry of a game paused for repair (its cause mended, or to try
    again): the mark and its count cleared, and what it is owed queued after the commit
    (the resolve, if its moves are all in). GameError if it is not paused for repair."""
    with transaction.atomic():
        game = Game.objects.select_for_update().filter(pk=game_id).first()
        if game is None:
            raise GameError(f"there is no game {game_id}")
        if not game.needs_repair:
            raise GameError(f"game {game_id} ({game.name}) is not paused for repair")
        game.needs_repair_since, game.resolve_failures, game.resolve_error = None, 0, ""
        work = keep_due(game, saving=("resolve_failures", "resolve_error", "needs_repair_since"))
        announce(work)
    logger.warning("game %s (%s): retried by an operator after a repair", game.pk, game.name)
    return work


@dataclass
class Rows:
    """The game's record, event and snapshot rows being written: how many record and
    event rows it has (the index of the next one), and the new rows not inserted yet.
    For a stretch of phases stored under one row lock (`play_computers`) they are
    counted once and inserted together at the end, with the game's row saved once."""

    records: int
    events: int
    new: dict[type[RecordEntry | EventRow | Snapshot], list] = field(default_factory=dict)

    @classmethod
    def of(cls, game: Game) -> Rows:
        """The counts kept in the game's row (read under its row lock)."""
        return cls(game.records_stored, game.events_stored)

    def add(self, rows: Sequence[RecordEntry | EventRow | Snapshot]) -> None:
        if rows:
            self.new.setdefault(type(rows[0]), []).extend(rows)

    def insert(self) -> None:
        for model, rows in self.new.items():
            model.objects.bulk_create(rows)
            if model is EventRow:  # bulk_create sends no signal: their readers are told here
                events_told(rows[0].game_id, [row.pk for row in rows])
        self.new.clear()


def _store(
    game: Game,
    state: engine.GameState,
    log: Sequence[Event | Refused],
    records: list[tuple[str, Submission]],
    new_phase: bool = True,
    announce: bool = True,
    rows: Rows | None = None,
    stored: bool = True,
    later: bool = False,
) -> None:
    """Save the new state with its record, events and snapshot; schedule what follows
    (`announce` False: the caller does, once, for the last of several phases). `rows`:
    counted already; `stored` False: the phase has no pending rows to delete; `later`:
    the caller saves the game and inserts the rows (`_save`), once for a stretch."""
    rows = rows or Rows.of(game)
    rows.add(
        [
            RecordEntry(
                game=game,
                index=rows.records + i,
                colour=c,
                move=move_to_json(m),
                text=format_move(m),
                phase_number=game.phase_number,
            )
            for i, (c, m) in enumerate(records)
        ]
    )
    rows.records += len(records)
    if new_phase and stored:
        game.pending.filter(phase_number=game.phase_number).delete()
    if new_phase:
        game.phase_number += 1
        game.deadline = timezone.now() + timedelta(hours=game.deadline_hours)
    game.set_state(state)
    if state.is_over:
        game.status, game.finished_at, game.winners = (
            Game.Status.FINISHED,
            timezone.now(),
            state.winners,
        )
        game.deadline = None
        ratings.rate_game(game, state)  # once, in the transaction that ends the game
        ended = [seat.user_id for seat in game.seats.all()]
        transaction.on_commit(partial(people.forget, ended))  # their pages' figures
    if new_phase:  # its emails are owed now, at least (games.recovery)
        game.work_due_since = timezone.now()
        game.resolve_failures, game.resolve_error = 0, ""  # what failed before, mended
    _add_events(game, log, rows)
    if new_phase:
        rows.add(
            [
                Snapshot(
                    game=game,
                    phase_number=game.phase_number,
                    turn=state.turn,
                    phase_kind=state.phase.kind,
                    state=game.state,
                    power={c: p.power for c, p in state.pos.players.items()},
                )
            ]
        )
    if later:
        return
    if new_phase and announce:  # (before the rows: the snapshot is what the bench times)
        _announce_phase(game, state)
    _save(game, rows)
    if not new_phase:  # an alliance ended within the phase: what it owes may have changed
        keep_due(game)


def _save(game: Game, rows: Rows) -> None:
    game.records_stored, game.events_stored = rows.records, rows.events
    game.save()
    rows.insert()


def _announce_phase(game: Game, state: engine.GameState, computers: bool = True) -> None:
    """What a new phase owes (before its game's row is saved): the reminders before its
    deadline (armed now, in this transaction), its computers' moves and its emails
    (after the commit). A game nobody
    plays in person has no emails to queue: its phase is marked told at once, and no
    task is spent on it."""
    if game.deadline is not None:
        deadline_set.send(sender=Game, game=game, now=timezone.now())
    if computers:
        _schedule_computers(game, state)
    # A person is told the game by email (games.mail.notify), even while a computer
    # stands in for them.
    if any(s.is_person for s in game.seats.all()):
        number = game.phase_number
        transaction.on_commit(lambda: _dispatch_notify(game.pk, number))
    else:  # saved with the game's row, which the caller saves next
        game.notified_phase = game.phase_number


def _add_events(game: Game, log: Sequence[Event | Refused], rows: Rows) -> None:
    rows.add(
        [
            EventRow(
                game=game,
                index=rows.events + i,
                phase_number=game.phase_number,
                turn=e.get("turn", game.turn),
                kind=e["kind"],
                data={k: v for k, v in e.items() if k != "to"},
                to_colour=str(e.get("to") or ""),
            )
            for i, e in enumerate(log)
        ]
    )
    rows.events += len(log)


def _dispatch_notify(game_id: int, phase_number: int) -> None:
    phase_began.send(sender=Game, game_id=game_id, phase_number=phase_number)


def _schedule_computers(game: Game, state: engine.GameState) -> None:
    """One task for the computers a new phase awaits: it plays them all (play_computers).
    A stand-in plays the seat of a person who missed too many deadlines in a row."""
    seat = next((s for s in _computers_awaited(game, state)), None)
    if seat is not None:
        transaction.on_commit(partial(_dispatch_computer, game.pk, game.phase_number, seat.pk))


def _computers_awaited(
    game: Game, state: engine.GameState, submitted: Collection[str] = ()
) -> list[Seat]:
    """The seats a computer plays that the phase awaits and that have not moved, in the
    engine's order of the awaited."""
    seats = {s.colour: s for s in game.seats.all() if s.computer_plays}
    return [seats[c] for c in state.waiting if c in seats and c not in submitted]


def _dispatch_computer(game_id: int, phase_number: int, seat_id: int) -> None:
    computer_awaited.send(sender=Game, game_id=game_id, phase_number=phase_number, seat_id=seat_id)


# An all-computer stretch of a game is played on in one task up to this many phases, or
# until this long has passed (slow computer players); then the next task goes to the back
# of the queue, so that no game holds a worker for long and the others' moves come between.
COMPUTER_PHASES_PER_TASK = 25
COMPUTER_STRETCH_SECONDS = 0.5


def play_computers(game_id: int, phase_number: int, phases: int = COMPUTER_PHASES_PER_TASK) -> int:
    """Every computer the phase awaits moves, in one transaction under the game's row
    lock (issue 11: one task per phase, not one per seat and another to resolve). When
    their moves complete the phase, it is resolved in the same transaction, and so is
    each next phase that awaits computers only, up to `phases` phases. The phase's
    people still to move find the computers' moves stored, as if each had been
    submitted. How many phases were resolved."""
    try:
        return _play_computers(game_id, phase_number, phases)
    except MovesBroke as broke:  # the stretch is rolled back; the attempt counted
        note_broken(game_id, phase_number, broke)
        return 0


def _play_computers(game_id: int, phase_number: int, phases: int) -> int:
    with transaction.atomic():
        game, rows = _locked_for_resolving(game_id)
        if (
            game.phase_number != phase_number
            or game.status != Game.Status.RUNNING
            or game.needs_repair
        ):
            return 0  # a redelivered or recovered task: the game moved on
        resolved, cut, until = 0, True, time.monotonic() + COMPUTER_STRETCH_SECONDS
        while game.status == Game.Status.RUNNING and resolved < phases:
            if not _computers_play(game, rows, fresh=resolved > 0):
                cut = False  # they moved, and the phase awaits a person
                break
            resolved += 1
            if time.monotonic() >= until:
                break
        if resolved:  # the computers of the phase it stopped in have moved, unless cut short
            _announce_phase(game, game.engine_state, computers=cut)
            _save(game, rows)
        keep_due(game)
    return resolved


def _computers_play(game: Game, rows: Rows, fresh: bool) -> bool:
    """The computers' moves of the current phase (the row locked): stored if the phase
    still awaits a person, else the phase resolved (not announced). Whether it was.
    `fresh`: the phase began in this transaction, so nothing is stored for it yet."""
    for _round in range(len(COLOURS) + 1):  # each ended alliance changes the state once
        state = game.engine_state
        pending = [] if fresh else _pending(game)
        if _is_ready(game, state, {p.seat.colour for p in pending}):
            return False  # the resolve task queued with the last person's move does it
        moves = _computer_moves(game, state, {p.seat.colour for p in pending})
        ended = next(((seat, m) for seat, m in moves if isinstance(m, EndAlliance)), None)
        if ended is None:
            break
        _end_alliance(game, *ended, rows)  # RULES 7.1: at once; then it chooses again
        fresh = False
    else:
        return False
    computers = [
        PendingSubmission(
            game=game,
            seat=seat,
            phase_number=game.phase_number,
            move=move_to_json(move),
            text=format_move(move),
        )
        for seat, move in moves
    ]
    if not _is_ready(game, state, {p.seat.colour for p in [*pending, *computers]}):
        PendingSubmission.objects.bulk_create(computers)
        Game.objects.filter(pk=game.pk).update()  # "waiting for" has changed (live mark)
        return False
    state, log, records = _applied(state, [*pending, *computers])
    if not records:
        return False
    _store(game, state, log, records, announce=False, rows=rows, stored=bool(pending), later=True)
    return True


def _computer_moves(
    game: Game, state: engine.GameState, submitted: set[str]
) -> list[tuple[Seat, Submission]]:
    """Each awaited computer's choice, checked like a person's; in a phase that is not
    sealed the first one ends it, so only the first computer chooses."""
    moves: list[tuple[Seat, Submission]] = []
    for seat in _computers_awaited(game, state, submitted):
        move = computer_player(game, game.phase_number, seat.colour).choose(state, seat.colour)
        if not isinstance(move, EndAlliance):
            engine.check(state, seat.colour, move)  # the computer is held to the rules too
        moves.append((seat, move))
        if isinstance(move, EndAlliance) or not engine.is_simultaneous(state):
            break
    return moves


def computer_player(game: Game, phase_number: int, colour: str) -> RandomPlayer:
    """The engine's player of the game's level (`Game.computer_level`, `COMPUTER_KINDS`)
    for one decision of a seat a computer plays: its own, one it stands in for, one
    conceded. Seeded by the game, the phase and the colour, so a phase played again gets
    the same move; the searching player ("hard") thinks COMPUTER_SEARCH_SECONDS (settings)
    a decision, and how far it gets in that time changes its move too."""
    kind = PLAYERS[COMPUTER_KINDS[game.computer_level]]
    seed = f"{game.seed}/{phase_number}/{colour}"
    if issubclass(kind, SearchPlayer):
        return kind(seed, budget=settings.COMPUTER_SEARCH_SECONDS)
    return kind(seed)


def _end_alliance(game: Game, seat: Seat, move: EndAlliance, rows: Rows) -> None:
    """A computer ends an alliance: applied at once, as a person's is (submit_move)."""
    new, log = engine.submit(game.engine_state, seat.colour, move)
    _store(
        game,
        new,
        [*log, *_recheck_pending(game, new)],
        records=[(seat.colour, move)],
        new_phase=False,
        rows=rows,
    )


def play_computer(game_id: int, phase_number: int, seat_id: int) -> bool:
    """One computer player's move, submitted like anybody's (the tasks play every
    computer of a phase at once: `play_computers`)."""
    game = Game.objects.get(pk=game_id)
    seat = game.seats.get(pk=seat_id)
    if game.phase_number != phase_number or game.status != Game.Status.RUNNING:
        return False
    state = game.engine_state
    if seat.colour not in state.waiting or not seat.computer_plays:
        return False
    if seat.pending.filter(phase_number=phase_number).exists():
        return False  # a redelivered or recovered task: this move is in already
    move = computer_player(game, phase_number, seat.colour).choose(state, seat.colour)
    try:
        submit_move(game_id, seat_id, move)
    except (IllegalMove, GameError):
        return False  # the game moved on meanwhile; the next phase schedules again
    if isinstance(move, EndAlliance):
        # Applied at once (RULES 7.1), and the phase still waits for this seat.
        transaction.on_commit(lambda: _dispatch_computer(game_id, phase_number, seat_id))
    return True


__all__ = ["GameError", "IllegalMove", "MovesBroke", "Outcome", "Owed", "PhaseGone", "Refusal"]
