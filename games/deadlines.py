"""Deadlines, absences and stand-ins (RULES 9): what the beat sweeper does every minute
(`games.tasks.sweep_once`; reminders are the email wing's, `games.mail.notify`), what
the table's vote does to a deadline (extends it, or pauses the phase: `games.votes`
decides whether), and a person taking their seat back from the computer standing in.

Deadlines are never ETA tasks (they can be days long): they are `Game.deadline` and
`Reminder.due_at`, both indexed, swept every minute. Every query of the sweep goes
through an index that holds only what may be due (running games by deadline, paused
games, people away, games owed work, unsent reminders, emails due), so a sweep costs what
is due, not what is running (issue 11). The reminders are armed where a deadline is set
or moved, in its transaction (`services.deadline_set`, received by `games.mail.notify`):
here when an absence or a pause ends or extends it, the table votes an extension or a
pause, or a person takes their seat back from the computer. Every step may run in two
sweeps at once and acts once: a game is changed only under its row lock, taken with
`skip_locked` (another sweep, or a resolve, holding it means the game is being dealt
with; the next sweep looks again), and reminders are claimed the same way, a seat at a
time.

Decisions:
- A pause (for an absence, or voted by the table) sets the deadline aside: `deadline`
  is None while paused, and the remaining time is kept in the "paused" event of the
  game's log (which players see); resuming restores exactly that time. A pause is lifted
  only by this module, and only if it made it (the game's last pause event is its own).
  A pause the table voted for (`Game.paused_until`) ends at that time, from which the
  remaining time runs (the deadline its emails told), or with its phase; absences wait
  for its end, then pause or extend as the game says.
- The deadline an email states is the one that holds: before a phase's emails are
  written, its absences are settled (`settle_before_telling`), not a minute later.
- Missed deadlines in a row: counted at a deadline for every awaited person without a
  submission (and a stand-in takes the seat at the game's limit; 0 means never); reset
  to 0 at a deadline for those who did submit, by taking the seat back, and by any
  submission a person makes (`services.submit`).
- Away means `away_until` is set and in the future, and `away_from` is unset or past.
- A deadline moved later (by the table's vote, or for an absence) or a phase paused by
  the table's vote is announced with
  `deadline_extended`, under the game's row lock and inside the transaction that moved
  it: the mail wing (`games.mail.compose`, which this module may not import) queues the
  emails that tell every player in the same commit, or none if it rolls back.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import (
    Case,
    Exists,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    When,
    prefetch_related_objects,
)
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
    away_q,
    fresh_mark,
    is_away,
)
from games.services import GameError

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


def submitted(seat_ref: Any, phase_ref: Any) -> Exists:
    return Exists(PendingSubmission.objects.filter(seat=seat_ref, phase_number=phase_ref))


def unanswered(game: Game) -> QuerySet[Seat]:
    """The seats the current phase waits for that have no submission stored."""
    return game.seats.filter(colour__in=game.waiting).filter(
        ~submitted(OuterRef("pk"), game.phase_number)
    )


def _in_waiting_order(game: Game, seats: Iterable[Seat]) -> list[Seat]:
    return sorted(seats, key=lambda s: game.waiting.index(s.colour))


# --- absences and pauses -------------------------------------------------------------------


def mark_absences_turning(now: datetime) -> None:
    """The games of the people whose absence began or ended since the sweep before (with
    a sweep's margin): their pages name them as away, or no longer, though no row of the
    game changed, so the games' live marks move on (`Game.live_mark`) as a write would."""
    since = now - timedelta(seconds=2 * settings.RECOVERY_INTERVAL_SECONDS)
    turning = Q(away_from__gt=since, away_from__lte=now) | Q(
        away_until__gt=since, away_until__lte=now
    )
    people = Notifications.objects.filter(turning).values("user_id")
    going = [Game.Status.OPEN, Game.Status.RUNNING]
    Game.objects.filter(status__in=going, seats__user_id__in=people).update()


def settle_absences(now: datetime) -> None:
    """The running games paused (for an absence, or by the table's vote: to resume) and
    those seating a person away now (to pause or extend): two indexed lookups
    (`game_paused`; the people away through `notifications_away`, then their seats),
    never a scan of the running games."""
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
        if game is not None:
            settle(game, now)


def settle(game: Game, now: datetime, *, announce: bool = True) -> None:
    """The game's pause and absences as they stand at `now` (the caller holds the game's
    row lock). A pause the table voted for ends at its time or with its phase; while it
    holds, absences wait. Then a person the phase waits for who is away (and has not
    submitted) pauses the game or extends its deadline (`Game.on_absence`), and a game
    paused for an absence resumes once nobody it waits for is away. `announce` False: an
    extension is noted in the log, not announced with `deadline_extended`, since the
    emails written next tell it (`settle_before_telling`)."""
    if game.status != Game.Status.RUNNING:
        return
    if game.paused_by_vote:
        if not _vote_pause_over(game, now):
            return
        _resume(game, now)
    away = list(away_and_awaited(game, now))
    if not away:
        _resume(game, now)
    elif game.on_absence == "pause":
        _pause(game, away, now)
    else:
        _extend_for_absence(game, away, now, announce=announce)


def settle_before_telling(game: Game, now: datetime) -> None:
    """Before the emails of a phase are written (games.mail.notify, under the game's row
    lock): what the sweep would settle a minute later is settled first, so that no email
    states a deadline that an absence, or the end of a pause, changes right after (issue
    24). The seats are the caller's, loaded with their people's absences and whether
    they submitted (`services.with_submitted`): no query unless the game is paused or a
    person it waits for is away."""
    if game.paused or any(_is_away_and_awaited(game, seat, now) for seat in game.seats.all()):
        settle(game, now, announce=False)


def away_and_awaited(game: Game, now: datetime) -> QuerySet[Seat]:
    """The seats the phase waits for whose person plays them, is away now and has not
    submitted: the absences that pause the game or extend its deadline."""
    people_away = Notifications.objects.filter(away_q(now))
    return (
        unanswered(game)
        .filter(IN_PERSON, user__notifications__in=people_away)
        .select_related("user__notifications")
    )


def _is_away_and_awaited(game: Game, seat: Seat, now: datetime) -> bool:
    """`away_and_awaited` of a loaded seat (not known to have submitted: it may have)."""
    return (
        seat.colour in game.waiting
        and seat.plays_in_person
        and not vars(seat).get("has_submitted", False)
        and is_away(seat.user, now)
    )


def _last_pause(game: Game) -> Event | None:
    """The game's last "paused" or "resumed" event: what a pause left of its phase's
    time, and in which phase it began."""
    return game.events.filter(kind__in=["paused", "resumed"]).order_by("-index").first()


def _vote_pause_over(game: Game, now: datetime) -> bool:
    """The table's pause has run its time, or its phase is over (the next phase has a
    deadline of its own)."""
    assert game.paused_until is not None  # paused by vote
    last = _last_pause(game)
    return now >= game.paused_until or last is None or last.phase_number != game.phase_number


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
    """The deadline runs again with the time the pause left of the phase: from the end of
    a pause the table voted for (the deadline its emails told), from now after an
    absence; a phase that began while paused keeps the deadline it has."""
    if not game.paused:
        return
    last = _last_pause(game)
    if last is None or last.kind != "paused":
        return  # not paused by this module: not ours to lift
    if game.deadline is None:
        start = min(game.paused_until, now) if game.paused_until is not None else now
        game.deadline = start + timedelta(seconds=last.data.get("remaining_seconds", 0))
    game.paused, game.paused_until = False, None
    game.save(update_fields=["paused", "paused_until", "deadline"])
    _note(game, "resumed", deadline=game.deadline.isoformat())
    services.deadline_set.send(sender=Game, game=game, now=now)


def _extend_for_absence(
    game: Game, away: list[Seat], now: datetime, *, announce: bool = True
) -> None:
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
    if announce:
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


# What a deadline falling due costs in SQL statements, whatever the size of the game
# (issue 25; tests/site/test_deadline_queries.py, `python -m bench --only deadline-queries`):
# BEGIN, the game's row locked, its seats with who submitted, the defaults (one INSERT),
# the log (one INSERT), the seats' counts of deadlines missed (one UPDATE), the game's row
# (one UPDATE), COMMIT. The lookup of the due games (one, whatever is due) is every
# sweep's, due or not.
DEADLINE_QUERIES = 8


def pass_deadlines(now: datetime) -> None:
    due = Game.objects.filter(**DEADLINE_DUE, deadline__lte=now)
    each(due.values_list("pk", flat=True), _pass_deadline, now)


def _pass_deadline(game_id: int, now: datetime) -> None:
    """RULES 9: the missing get the engine's default; the resolve is queued after the
    commit. A few statements whatever the game (`DEADLINE_QUERIES`): the defaults, the
    log and the seats are written at once, and the game's row once, at the end."""
    with transaction.atomic():
        game = _locked(Game.objects.filter(pk=game_id, **DEADLINE_DUE, deadline__lte=now))
        if game is None:
            return
        # The seats, and who submitted, read after the lock (`services.with_submitted`),
        # kept as the game's seats for what it owes (`services.keep_due`).
        seats = services.with_submitted(Seat.objects.all(), game.phase_number)
        prefetch_related_objects([game], Prefetch("seats", seats))
        awaited = _in_waiting_order(game, [s for s in game.seats.all() if s.colour in game.waiting])
        missing = [s for s in awaited if not vars(s)["has_submitted"]]
        state = game.engine_state
        if not missing or (not engine.is_simultaneous(state) and len(missing) < len(awaited)):
            return  # everything is in (or a move is being applied): the resolve is under way
        # In a phase that is not sealed the first submission is applied at once and ends
        # it (a negotiation's break-off): one default is all that fits.
        defaulted = missing if engine.is_simultaneous(state) else missing[:1]
        services.store_defaults(game, defaulted, state)
        notes = [{"kind": "deadline_missed", "players": [s.colour for s in missing]}]
        notes += _count_missed(game, [s for s in awaited if s.plays_in_person], missing)
        services.note_events(game, notes)
        submitted = services.submitted_of(game.seats.all()) | {s.colour for s in defaulted}
        game.live_mark = fresh_mark()  # the defaults, the log, the seats: every reader's
        work = services.keep_due(game, saving=["events_stored", "live_mark"], submitted=submitted)
        # What the deadline changed is the resolve, now owed (the rest was queued before).
        services.announce(replace(work, notify=False, computers=()))


def _count_missed(game: Game, people: list[Seat], missing: list[Seat]) -> list[dict[str, Any]]:
    """The deadlines missed in a row of the people awaited, counted on (missing) or
    reset (they submitted) in one UPDATE; the "standin" events of those who reach the
    game's limit."""
    notes: list[dict[str, Any]] = []
    for seat in people:
        seat.missed_deadlines = seat.missed_deadlines + 1 if seat in missing else 0
        if seat in missing and 0 < game.max_missed_deadlines <= seat.missed_deadlines:
            # From the next phase on, services._schedule_computers plays the seat.
            seat.standin = True
            notes.append(
                {"kind": "standin", "player": seat.colour, "missed": seat.missed_deadlines}
            )
    if people:
        Seat.objects.filter(pk__in=[s.pk for s in people]).update_before_game_write(
            missed_deadlines=Case(*(When(pk=s.pk, then=s.missed_deadlines) for s in people)),
            standin=Case(*(When(pk=s.pk, then=s.standin) for s in people)),
        )
    return notes


# --- what people do about deadlines -------------------------------------------------------


def extend_by_vote(game: Game, hours: int, now: datetime, *, player: str, by: User | None) -> None:
    """The table voted the current phase `hours` more (games.votes: the caller holds the
    game's row lock; the game has a deadline), from now if it has passed. `player`: the
    colour of who proposed it; `by`: the person whose vote passed it."""
    assert game.deadline is not None, "a paused game has no deadline to extend"
    game.deadline = max(game.deadline, now) + timedelta(hours=hours)
    game.save(update_fields=["deadline"])
    services.deadline_set.send(sender=Game, game=game, now=now)
    event = _note(
        game,
        "deadline_extended",
        reason="vote",
        hours=hours,
        player=player,
        deadline=game.deadline.isoformat(),
    )
    deadline_extended.send(sender=Game, game=game, event=event, by=by)


def pause_by_vote(game: Game, days: int, now: datetime, *, player: str, by: User | None) -> None:
    """The table voted to pause the current phase for `days` (games.votes: the caller
    holds the game's row lock; the game has a deadline): the deadline is set aside, and
    comes back when the pause ends (`settle`) with the time that was left, or the next
    phase begins with a deadline of its own. The announcement names the deadline that
    will then hold, for the emails (`deadline_extended`)."""
    assert game.deadline is not None, "a paused game is not paused again"
    remaining = max(game.deadline - now, timedelta(0))
    until = now + timedelta(days=days)
    game.paused, game.paused_until, game.deadline = True, until, None
    game.save(update_fields=["paused", "paused_until", "deadline"])
    services.deadline_set.send(sender=Game, game=game, now=now)  # no reminder while paused
    event = _note(
        game,
        "paused",
        reason="vote",
        days=days,
        player=player,
        until=until.isoformat(),
        remaining_seconds=int(remaining.total_seconds()),
        deadline=(until + remaining).isoformat(),
    )
    deadline_extended.send(sender=Game, game=game, event=event, by=by)


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
