"""Who is told what when a phase changes (play by email).

`phase_changed` runs in a Celery task after every resolved phase: it queues the
emails of that phase in the outbox (games.mail.compose):

- every person seated: the results of the phase (the events of this phase number they
  may see), unless nothing happened but "X has decided";
- every person the new phase waits for (not computers, not seats a computer stands in
  for): "the game waits for you";
- when the game is over, instead of both: the final scores.

A task may run twice (a redelivered message, or one the recovery pass queued again):
the game's `notified_phase` says which phases are told, under the game's row lock, and
an email already in the outbox for the same kind, person, game and phase is not queued
again (the unique constraint `one_email_per_phase` stands behind that check).

Reminders (every minute, from the sweeper):
- A reminder is armed only while it is still ahead: one whose time has passed when its
  deadline is set (a 24 h reminder for a 12 h deadline) is not sent. The "waits for you"
  email has just said the same thing.
- Reminder rows key on the deadline, so a moved deadline arms new rows; rows for a
  deadline that moved, a phase that is over or a seat that has submitted are deleted
  when they come due, unsent. Several due at once for one seat (the sweeper was down)
  make one email. Reminders are held while the person is away (`deadlines.is_away`).

Daily digests (hourly): the non-urgent emails the outbox held for people who chose the
digest, in one email at DIGEST_HOUR in their time zone.
"""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import OuterRef
from django.utils import timezone

from games.deadlines import each, is_away, is_person, submitted
from games.mail import compose
from games.mail.outbox import Status
from games.models import Game, Notifications, OutgoingEmail, Reminder, Seat
from games.presenter import present
from games.services import MAX_DEADLINE_HOURS, keep_due

DEFAULT_REMINDER_HOURS = (24, 2)
BATCH = 500  # reminders claimed per sweep; the rest wait a minute
DIGEST_HOUR = 7  # the daily digest leaves at 07:00 in the person's time zone


def phase_changed(game_id: int, phase_number: int) -> None:
    """Queue the emails of every phase up to `phase_number` not told yet (a lost task for
    an earlier phase is folded into a later one), then record it in the game's row."""
    with transaction.atomic():
        # The game's row lock makes twin runs take turns: the second finds the phase told.
        game = Game.objects.select_for_update().get(pk=game_id)
        if phase_number <= game.notified_phase or phase_number > game.phase_number:
            return  # told already (a redelivered or recovered task), or not yet begun
        people = list(game.seats.filter(user__isnull=False, is_computer=False)
                      .select_related("user__profile"))
        for number in range(game.notified_phase + 1, phase_number + 1):
            _tell(game, people, number)
        game.notified_phase = phase_number
        game.save(update_fields=["notified_phase"])
        keep_due(game, progressed=False)


def _tell(game: Game, people: list[Seat], phase_number: int) -> None:
    if game.is_finished and phase_number == game.phase_number:
        _each(people, game, phase_number, "game_over", lambda s: compose.game_over(game, s))
        return
    for seat in people:
        _results(game, seat, phase_number)
    if game.status == Game.Status.RUNNING and phase_number == game.phase_number:
        awaited = [s for s in people if s.colour in game.waiting and not s.standin]
        _each(awaited, game, phase_number, "your_turn", lambda s: compose.your_turn(game, s))


def _results(game: Game, seat: Seat, phase_number: int) -> None:
    if not compose.news(present(game, seat).events(phase_number=phase_number)):
        return  # nothing happened but "X has decided"
    _each([seat], game, phase_number, "results",
          lambda s: compose.results(game, s, phase_number))


def _each(seats: list[Seat], game: Game, phase_number: int, kind: str,
          send: Callable[[Seat], None]) -> None:
    for seat in seats:
        if not is_queued(kind, seat, game, phase_number):
            send(seat)


def is_queued(kind: str, seat: Seat, game: Game, phase_number: int) -> bool:
    """Whether this email of this phase is in the outbox already (in any state); the
    unique constraint `one_email_per_phase` stands behind this check."""
    return OutgoingEmail.objects.filter(kind=kind, user=seat.user_id, game=game,
                                        phase_number=phase_number).exists()


# --- reminders before a deadline ------------------------------------------------------------


def reminder_hours(chosen: object) -> list[int]:
    """The person's choice of hours before a deadline ([] or nonsense: 24 and 2)."""
    hours = {h for h in chosen if isinstance(h, int) and 1 <= h <= MAX_DEADLINE_HOURS} \
        if isinstance(chosen, list) else set()
    return sorted(hours or DEFAULT_REMINDER_HOURS, reverse=True)


def arm_reminders(now: datetime) -> None:
    """A Reminder row for each (awaited person, deadline, hour) still ahead."""
    wanted = [Reminder(seat_id=row["pk"], phase_number=row["game__phase_number"],
                       deadline=row["game__deadline"], hours_before=hours,
                       due_at=row["game__deadline"] - timedelta(hours=hours))
              for row in _seats_to_remind(now)
              for hours in reminder_hours(row["user__notifications__reminder_hours"])]
    wanted = [r for r in wanted if r.due_at > now]
    known = set(Reminder.objects.filter(seat_id__in={r.seat_id for r in wanted},
                                        deadline__gt=now)
                .values_list("seat_id", "phase_number", "deadline", "hours_before"))
    Reminder.objects.bulk_create(  # a concurrent sweep's same rows: the unique key drops them
        [r for r in wanted if (r.seat_id, r.phase_number, r.deadline, r.hours_before)
         not in known], ignore_conflicts=True)


def _seats_to_remind(now: datetime) -> list[Mapping[str, Any]]:
    rows = (Seat.objects
            .filter(game__status=Game.Status.RUNNING, game__paused=False,
                    game__deadline__gt=now, is_computer=False, standin=False,
                    user__isnull=False)
            .filter(~submitted(OuterRef("pk"), OuterRef("game__phase_number")))
            .values("pk", "colour", "game__waiting", "game__phase_number", "game__deadline",
                    "user__notifications__reminder_hours"))
    return [row for row in rows if row["colour"] in row["game__waiting"]]


def send_reminders(now: datetime) -> None:
    due = Reminder.objects.filter(due_at__lte=now, sent_at__isnull=True)
    each(set(due.values_list("seat_id", flat=True)[:BATCH]), _remind, now)


def _remind(seat_id: int, now: datetime) -> None:
    """Claim the seat (a concurrent sweep skips it: the claim is per seat, not per row,
    so that two reminders due at once are one email), then send what is still wanted."""
    with transaction.atomic():
        seat = (Seat.objects.select_for_update(no_key=True, skip_locked=True, of=("self",))
                .select_related("game", "user__notifications").filter(pk=seat_id).first())
        if seat is None:
            return
        due = Reminder.objects.filter(seat=seat, due_at__lte=now, sent_at__isnull=True)
        due.exclude(**_reminding(seat, now)).delete()  # moot: deadline moved, phase over, ...
        if due.exists() and not is_away(seat.user, now):  # held until the person is back
            compose.reminder(seat.game, seat)
            due.update(sent_at=now)


def _reminding(seat: Seat, now: datetime) -> dict[str, Any]:
    """The phase and deadline a reminder to the seat is for now (none: {"pk": None})."""
    game = seat.game
    if (game.status != Game.Status.RUNNING or game.paused or game.deadline is None
            or now >= game.deadline or seat.colour not in game.waiting or not is_person(seat)
            or seat.pending.filter(phase_number=game.phase_number).exists()):
        return {"pk": None}
    return {"phase_number": game.phase_number, "deadline": game.deadline}


# --- the daily digest ------------------------------------------------------------------------


def digest_moment(now: datetime, zone: str) -> datetime:
    """The latest DIGEST_HOUR o'clock in `zone` at or before `now`."""
    local = now.astimezone(zoneinfo.ZoneInfo(zone))
    moment = local.replace(hour=DIGEST_HOUR, minute=0, second=0, microsecond=0)
    return moment if moment <= local else moment - timedelta(days=1)


def send_digests(now: datetime | None = None) -> int:
    """Hourly: one digest per person whose held emails waited for today's digest time.
    Returns how many digests were queued."""
    now = now or timezone.now()
    holders = OutgoingEmail.objects.filter(status=Status.HELD).values("user")
    users = User.objects.filter(pk__in=holders).select_related("profile")
    return sum(_send_digest(user, now) for user in users)


def _send_digest(user: User, now: datetime) -> bool:
    profile = getattr(user, "profile", None)
    moment = digest_moment(now, profile.time_zone if profile else "UTC")
    with transaction.atomic():
        Notifications.objects.get_or_create(user=user)
        # One digest run per person at a time: two hourly runs at once send one digest.
        Notifications.objects.select_for_update().get(user=user)
        if OutgoingEmail.objects.filter(user=user, kind="digest",
                                        created_at__gte=moment).exists():
            return False  # today's digest has left; later emails wait for tomorrow's
        held = list(OutgoingEmail.objects.filter(user=user, status=Status.HELD,
                                                 created_at__lte=moment).order_by("created_at"))
        if not held:
            return False
        digest = compose.digest(user, held)
        note = "" if digest else "not sent: the person unsubscribed before the digest"
        OutgoingEmail.objects.filter(id__in=[e.pk for e in held], status=Status.HELD).update(
            status=Status.DIGESTED, last_error=note)
    return digest is not None
