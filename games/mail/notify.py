"""Who is told what when a phase changes (play by email).

`phase_changed` runs in a Celery task after every resolved phase: it queues the
emails of that phase in the outbox (games.mail.compose). At most one email per person
and phase change that needs them (issue 10), with everything since their last email of
the game folded in:

- every person the new phase waits for (not computers, not seats a computer stands in
  for): "the game waits for you", with what happened since their last email of the game
  and the confirmation of their move by email, if it waits (COALESCING) to ride along;
- every other person: the results of the phase are owed (unless nothing happened but
  "X has decided"): a COALESCING row, due EMAIL_RESULTS_HOLD_SECONDS later, told in
  their next email of the game, or, once due, in one email of their own (`flush_due`, in
  every sweep), which carries every phase and confirmation owed. A chain of computer
  moves thus makes no email of its own, and a move's confirmation (due after
  EMAIL_COALESCE_SECONDS) rides in the email that follows it;
- when the game is over: the final scores, with all that was owed;
- a person who muted the game (`Seat.mail_muted`) gets nothing but the final scores:
  no results, no "your move", no reminders. Answers to their own emails still come.

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

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Max, OuterRef, Q
from django.dispatch import receiver
from django.utils import timezone

from games import chat
from games.deadlines import each, is_away, is_person, submitted
from games.mail import compose, outbox
from games.mail.outbox import Status
from games.models import (
    PHASE_EMAILS,
    Game,
    Message,
    MessageEmails,
    Notifications,
    OutgoingEmail,
    Reminder,
    Seat,
)
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
    final = game.is_finished and phase_number == game.phase_number
    current = game.status == Game.Status.RUNNING and phase_number == game.phase_number
    for seat in people:
        if final:
            _tell_now(game, seat, phase_number, "game_over", compose.game_over)
        elif seat.mail_muted:
            continue  # nothing but the final scores
        elif current and seat.colour in game.waiting and not seat.standin:
            outbox.supersede_asks(seat.user, game, phase_number)
            _tell_now(game, seat, phase_number, "your_turn", compose.your_turn)
        else:
            _owe_results(game, seat, phase_number)


def _tell_now(game: Game, seat: Seat, phase_number: int, kind: str,
              write: Callable[..., OutgoingEmail | None]) -> None:
    """One email of this phase, with everything owed to the person folded in."""
    if is_queued(kind, seat, game, phase_number):
        return
    owed = outbox.held(seat.user, game)
    email = write(game, seat, since=told_up_to(seat, game),
                  confirmations=[e.summary for e in owed if e.kind == "move_accepted"])
    if email is not None:
        outbox.fold(owed, email)


def _owe_results(game: Game, seat: Seat, phase_number: int) -> None:
    if not compose.news(present(game, seat).events(phase_number=phase_number)):
        return  # nothing happened but "X has decided"
    if not is_queued("results", seat, game, phase_number):
        hold = timezone.now() + timedelta(seconds=settings.EMAIL_RESULTS_HOLD_SECONDS)
        compose.results(game, seat, phase_number, hold_until=hold)


def told_up_to(seat: Seat, game: Game) -> int:
    """The last phase whose news an email to the person told or tells (queued, sent or
    folded into one): their next email tells what happened after it. Not a held one, nor
    an ask that gave way to a newer one unsent (`outbox.supersede_asks`)."""
    told = (OutgoingEmail.objects
            .filter(user=seat.user_id, game=game, kind__in=PHASE_EMAILS,
                    phase_number__isnull=False)
            .exclude(Q(status=Status.COALESCING) | Q(status=Status.FOLDED, kind__in=outbox.ASKS))
            .aggregate(last=Max("phase_number"))["last"])
    return told or 0


def flush_due(now: datetime | None = None) -> int:
    """Every sweep: the owed news that may not wait longer, one email per person and
    game (the sweep runs it, so nothing owed is lost with a task). How many were sent."""
    now = now or timezone.now()
    return sum(_flush(user_id, game_id, now) for user_id, game_id in outbox.due_to_flush(now))


def flush(user_id: int, game_id: int) -> bool:
    """What is owed to one person of one game, if it may not wait longer (a task queued
    for the due time; idempotent: told already, or not due yet, it does nothing)."""
    return _flush(user_id, game_id, timezone.now())


def _flush(user_id: int, game_id: int, now: datetime) -> bool:
    with transaction.atomic():
        # The game's row lock first, as phase_changed and inbound take it: one at a time.
        game = Game.objects.select_for_update().filter(pk=game_id).first()
        owed = outbox.held(user_id, game) if game else []
        if game is None or not any(e.next_attempt_at and e.next_attempt_at <= now
                                   for e in owed):
            return False  # told meanwhile in another email (or another sweep's)
        seat = game.seats.select_related("user__profile").filter(user_id=user_id).first()
        if seat is None:  # the person left the game: nothing more of it
            outbox.fold(owed, None)
            return False
        phases = [e.phase_number for e in owed if e.kind == "results" and e.phase_number]
        confirmations = [e for e in owed if e.kind == "move_accepted"]
        email = None
        if phases and not seat.mail_muted:
            email = compose.results(game, seat, None, since=told_up_to(seat, game),
                                    upto=max(phases),
                                    confirmations=[e.summary for e in confirmations],
                                    reply_to=_reply_to(game, confirmations))
        elif not seat.mail_muted and any(e.kind == "message_owed" for e in owed):
            email = compose.messages(game, seat,
                                     confirmations=[e.summary for e in confirmations],
                                     reply_to=_reply_to(game, confirmations))
        if email is None and confirmations:  # nothing else to tell: the answer alone
            email = confirmations[-1]
            outbox.release(email)
        outbox.fold(owed, email)
        return email is not None


def _reply_to(game: Game, confirmations: list[OutgoingEmail]) -> str:
    """A sealed move may still be changed by replying to its confirmation: so too when
    the confirmation rides in another email, while its phase lasts."""
    latest = confirmations[-1] if confirmations else None
    return latest.reply_to if latest and latest.phase_number == game.phase_number else ""


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
                    user__isnull=False, mail_muted=False)
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
            or seat.mail_muted
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


# --- muting one game -------------------------------------------------------------------------


def set_muted(seat: Seat, muted: bool) -> None:
    """Mute or unmute the seat's game for its person. Muting drops the results owed to
    them (answers to their own emailed moves still come)."""
    with transaction.atomic():
        game = Game.objects.select_for_update().get(pk=seat.game_id)  # as notify takes it
        Seat.objects.filter(pk=seat.pk).update(mail_muted=muted)
        if muted:
            outbox.fold([e for e in outbox.held(seat.user, game) if e.kind == "results"], None)


# --- the table's messages ----------------------------------------------------------------------


@receiver(chat.message_posted, dispatch_uid="games.mail.notify.message_posted")
def message_posted(sender: Any, message: Message, readers: list[Seat], **kwargs: Any) -> None:
    """In the transaction that stores the message (under the game's row lock): each
    reader who wants messages by email is owed one, told in their next email of the
    game or, once EMAIL_MESSAGES_HOLD_SECONDS have passed, in one of its own (flush_due);
    or at once, for a person who chose each message on its own."""
    game = message.game
    for seat in readers:
        mode = compose.chat_mode(seat.user)
        if seat.mail_muted or mode == MessageEmails.OFF:
            continue
        if mode == MessageEmails.EACH:
            compose.messages(game, seat)
        elif not any(e.kind == "message_owed" for e in outbox.held(seat.user, game)):
            hold = timezone.now() + timedelta(seconds=settings.EMAIL_MESSAGES_HOLD_SECONDS)
            compose.message_owed(game, seat, hold)
