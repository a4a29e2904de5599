"""Deadlines, absences and stand-ins (RULES 9): what the beat sweeper does every minute
(`games.tasks.sweep_once`; reminders are the email wing's, `games.mail.notify`), and the
two things people do about deadlines (the creator extends one; a person takes their
seat back from the computer standing in).

Deadlines are never ETA tasks (they can be days long): they are `Game.deadline` and
`Reminder.due_at`, both indexed, swept every minute. Every query of the sweep goes
through an index that holds only what may be due (running games by deadline, paused
games, people away, games owed work, unsent reminders, emails due), so a sweep costs what
is due, not what is running (issue 11). The reminders are armed where a deadline is set
or moved, in its transaction (`services.deadline_set`, received by `games.mail.notify`):
here when an absence ends or extends it, the creator extends it, or a person takes their
seat back from the computer. Every step may run in two sweeps at once and acts once: a
game is changed only under its row lock, taken with `skip_locked` (another sweep, or a
resolve, holding it means the game is being dealt with; the next sweep looks again), and
reminders are claimed the same way, a seat at a time.

Decisions:
- A pause for an absence sets the deadline aside: `deadline` is None while paused, and
  the remaining time is kept in the "paused" event of the game's log (which players
  see); resuming restores exactly that time. A pause is lifted only by this module, and
  only if it made it (the game's last pause event is its own).
- Missed deadlines in a row: counted at a deadline for every awaited person without a
  submission (and a stand-in takes the seat at the game's limit; 0 means never); reset
  to 0 at a deadline for those who did submit, by taking the seat back, and by any
  submission a person makes (`services.submit`).
- Away means `away_until` is set and in the future, and `away_from` is unset or past.
- A deadline moved later (by the creator, or for an absence) is announced with
  `deadline_extended`, under the game's row lock and inside the transaction that moved
  it: the mail wing (`games.mail.compose`, which this module may not import) queues the
  emails that tell every player in the same commit, or none if it rolls back.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any, TypeVar

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.dispatch import Signal
from django.utils import timezone
from django.utils.translation import gettext as _

from engine import game as engine
from games import services
from games.models import (
    IN_PERSON,
    Event,
    Game,
    Notifications,
    PendingSubmission,
    Seat,
)
from games.services import MAX_DEADLINE_HOURS, GameError

logger = logging.getLogger(__name__)

# The longest absence counted: the preferences form refuses a longer one, and a value
# stored anyway (by hand, or before the form checked) is cut to it, or the date
# arithmetic below would overflow near the year 9999.
MAX_ABSENCE = timedelta(days=366)

T = TypeVar("T")

# game (its row locked, the new deadline saved), event (the "deadline_extended" Event: by
# whom, until when), by (the User who extended it; None for an absence). Received by
# games.mail.compose: every person seated is told by email.
deadline_extended = Signal()


def each(items: Iterable[T], act: Callable[[T, datetime], Any], now: datetime) -> None:
    """One game's trouble must not stall the others: log it, go on, retry next minute."""
    for item in list(items):
        try:
            act(item, now)
        except Exception:
            logger.exception("sweep: %s failed for %r", act.__name__, item)


def _locked(games: QuerySet[Game]) -> Game | None:
    """The game's row, locked; None if another sweep or a resolve holds it."""
    return games.select_for_update(skip_locked=True).first()


def _note(game: Game, kind: str, **data: Any) -> Event:
    """An event in the game's log (the game's row is locked, so the index is ours)."""
    return services.note_event(game, kind, **data)


def away_q(now: datetime) -> Q:
    return Q(away_until__gt=now) & (Q(away_from__isnull=True) | Q(away_from__lte=now))


def is_away(user: User | None, now: datetime) -> bool:
    """The same test as `_away_q`, on a loaded row."""
    n = getattr(user, "notifications", None)
    return (
        n is not None
        and n.away_until is not None
        and now < n.away_until
        and (n.away_from is None or n.away_from <= now)
    )


def submitted(seat_ref: Any, phase_ref: Any) -> Exists:
    return Exists(PendingSubmission.objects.filter(seat=seat_ref, phase_number=phase_ref))


def unanswered(game: Game) -> QuerySet[Seat]:
    """The seats the current phase waits for that have no submission stored."""
    return game.seats.filter(colour__in=game.waiting).filter(
        ~submitted(OuterRef("pk"), game.phase_number)
    )


def _in_waiting_order(game: Game, seats: Iterable[Seat]) -> list[Seat]:
    return sorted(seats, key=lambda s: game.waiting.index(s.colour))


# --- absences ------------------------------------------------------------------------------


def settle_absences(now: datetime) -> None:
    """The running games paused for an absence (to resume) and those seating a person
    away now (to pause or extend): two indexed lookups (`game_paused`; the people away
    through `notifications_away`, then their seats), never a scan of the running games."""
    paused = Game.objects.filter(status=Game.Status.RUNNING, paused=True)
    away = Seat.objects.filter(
        game__status=Game.Status.RUNNING,
        user__in=Notifications.objects.filter(away_q(now)).values("user_id"),
    )
    games = {*paused.values_list("pk", flat=True), *away.values_list("game_id", flat=True)}
    each(sorted(games), _settle_absence, now)


def _settle_absence(game_id: int, now: datetime) -> None:
    with transaction.atomic():
        game = _locked(Game.objects.filter(pk=game_id, status=Game.Status.RUNNING))
        if game is None:
            return
        away = list(
            unanswered(game)
            .filter(IN_PERSON, user__notifications__in=Notifications.objects.filter(away_q(now)))
            .select_related("user__notifications")
        )
        if not away:
            _resume(game, now)
        elif game.on_absence == "pause":
            _pause(game, away, now)
        else:
            _extend_for_absence(game, away, now)


def _pause(game: Game, away: list[Seat], now: datetime) -> None:
    if game.paused and game.deadline is None:
        return
    # A phase that began while paused (the away player answered) has a deadline again.
    remaining = (
        max(game.deadline - now, timedelta(0))
        if game.deadline
        else timedelta(hours=game.deadline_hours)
    )
    game.paused, game.deadline = True, None
    game.save(update_fields=["paused", "deadline"])
    _note(
        game,
        "paused",
        players=[s.colour for s in away],
        remaining_seconds=int(remaining.total_seconds()),
    )


def _resume(game: Game, now: datetime) -> None:
    if not game.paused:
        return
    last = game.events.filter(kind__in=["paused", "resumed"]).order_by("-index").first()
    if last is None or last.kind != "paused":
        return  # not paused for an absence: not ours to lift
    if game.deadline is None:
        game.deadline = now + timedelta(seconds=last.data.get("remaining_seconds", 0))
    game.paused = False
    game.save(update_fields=["paused", "deadline"])
    _note(game, "resumed", deadline=game.deadline.isoformat())
    services.deadline_set.send(sender=Game, game=game, now=now)


def _extend_for_absence(game: Game, away: list[Seat], now: datetime) -> None:
    """The deadline moves to a whole phase's time after the last awaited person is back."""
    if game.paused:
        return
    back = min(max(_away_until(seat) for seat in away), now + MAX_ABSENCE)
    target = back + timedelta(hours=game.deadline_hours)
    if game.deadline is not None and game.deadline >= target:
        return
    game.deadline = target
    game.save(update_fields=["deadline"])
    services.deadline_set.send(sender=Game, game=game, now=now)
    event = _note(
        game,
        "deadline_extended",
        players=[s.colour for s in away],
        reason="away",
        deadline=target.isoformat(),
    )
    deadline_extended.send(sender=Game, game=game, event=event, by=None)


def _away_until(seat: Seat) -> datetime:
    """When the person of a seat in `away` (`_settle_absence`: a user, away now) is back."""
    assert seat.user is not None
    until = seat.user.notifications.away_until
    assert until is not None  # `away_q`: away_until > now
    return until


# --- deadlines -----------------------------------------------------------------------------


# A game paused for repair (games.services.note_broken) is frozen as it broke: no default
# moves are stored for it (services would refuse them) until an operator retries it.
DEADLINE_DUE = {"status": Game.Status.RUNNING, "paused": False, "needs_repair_since__isnull": True}


def pass_deadlines(now: datetime) -> None:
    due = Game.objects.filter(**DEADLINE_DUE, deadline__lte=now)
    each(due.values_list("pk", flat=True), _pass_deadline, now)


def _pass_deadline(game_id: int, now: datetime) -> None:
    """RULES 9: the missing get the engine's default; services dispatches the resolve."""
    with transaction.atomic():
        game = _locked(Game.objects.filter(pk=game_id, **DEADLINE_DUE, deadline__lte=now))
        if game is None:
            return
        awaited = list(game.seats.filter(colour__in=game.waiting))
        missing = _in_waiting_order(game, unanswered(game))
        state = game.engine_state
        if not missing or (not engine.is_simultaneous(state) and len(missing) < len(awaited)):
            return  # everything is in (or a move is being applied): the resolve is under way
        # In a phase that is not sealed the first submission is applied at once and ends
        # it (a negotiation's break-off): one default is all that fits.
        for seat in missing if engine.is_simultaneous(state) else missing[:1]:
            services.submit_move(game.pk, seat.pk, engine.default_move(state, seat.colour))
        _note(game, "deadline_missed", players=[s.colour for s in missing])
        _count_missed(game, [s for s in awaited if s.plays_in_person], {s.pk for s in missing})


def _count_missed(game: Game, people: list[Seat], missing: set[int]) -> None:
    for seat in people:
        seat.missed_deadlines = seat.missed_deadlines + 1 if seat.pk in missing else 0
        if seat.pk in missing and 0 < game.max_missed_deadlines <= seat.missed_deadlines:
            # From the next phase on, services._schedule_computers plays the seat.
            seat.standin = True
            _note(game, "standin", player=seat.colour, missed=seat.missed_deadlines)
        seat.save(update_fields=["missed_deadlines", "standin"])


# --- what people do about deadlines -------------------------------------------------------


def extend_deadline(game_id: int, user: User, hours: int) -> Game:
    """The creator gives the current phase `hours` more (from now, if it has passed)."""
    if not 1 <= hours <= MAX_DEADLINE_HOURS:
        raise GameError(
            _("a deadline is extended by 1 to %(most)s hours") % {"most": MAX_DEADLINE_HOURS}
        )
    with transaction.atomic():
        game = Game.objects.select_for_update().get(pk=game_id)
        if game.creator_id != user.pk:
            raise GameError(_("only the game's creator can extend its deadline"))
        if game.status != Game.Status.RUNNING:
            raise GameError(_("this game is not running"))
        if game.deadline is None:
            raise GameError(_("the game is paused: its deadline is set aside until it resumes"))
        now = timezone.now()
        game.deadline = max(game.deadline, now) + timedelta(hours=hours)
        game.save(update_fields=["deadline"])
        services.deadline_set.send(sender=Game, game=game, now=now)
        # Who extended it (the creator's colour, if they still hold a seat) and until when.
        seat = game.seat_for(user)
        event = _note(
            game,
            "deadline_extended",
            hours=hours,
            reason="creator",
            player=seat.colour if seat else None,
            deadline=game.deadline.isoformat(),
        )
        deadline_extended.send(sender=Game, game=game, event=event, by=user)
    return game


def take_seat_back(game_id: int, user: User) -> Seat:
    """The person plays their seat again; the computer standing in stops."""
    with transaction.atomic():
        game = Game.objects.select_for_update().get(pk=game_id)
        seat = services.seat_of(game, user)
        if game.status != Game.Status.RUNNING:
            raise GameError(_("this game is not running"))
        if not seat.standin:
            raise GameError(_("no computer is playing your seat"))
        if seat.conceded:
            raise GameError(_("you conceded this game: the computer plays your seat to the end"))
        seat.standin, seat.missed_deadlines = False, 0
        seat.save(update_fields=["standin", "missed_deadlines"])
        _note(game, "seat_taken_back", player=seat.colour)
        if game.deadline is not None:  # the person is reminded before it again
            services.deadline_set.send(sender=Game, game=game, now=timezone.now())
    return seat
