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

Reminders (armed where a deadline is set or moved; sent by the sweeper, every minute):
- A reminder is armed (a Reminder row) in the transaction that sets or moves a deadline
  (`services.deadline_set`: a new phase, an absence ending or extending it, the creator
  extending it, a seat taken back from the computer), when a person mutes or unmutes the
  game, and when they choose other hours. The sweep only sends the rows due, through the
  partial index `reminder_due`: it never scans the running games (issue 11).
- A reminder is armed only while it is still ahead: one whose time has passed when its
  deadline is set (a 24 h reminder for a 12 h deadline) is not sent. The "waits for you"
  email has just said the same thing.
- Reminder rows key on the deadline, so a moved deadline arms new rows (and deletes the
  old ones not due yet); rows for a deadline that moved, a phase that is over, an hour no
  longer chosen or a seat that has submitted are deleted when they come due, unsent.
  Several due at once for one seat (the sweeper was down) make one email. Reminders are
  held while the person is away (`deadlines.is_away`).

Daily digests (hourly): the non-urgent emails the outbox held for people who chose the
digest, in one email at DIGEST_HOUR in their time zone.
"""

from __future__ import annotations

import operator
import zoneinfo
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial, reduce
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.db.models import Max, Q
from django.db.models.signals import post_save
from django.dispatch import receiver
from django.utils import timezone, translation

from games import chat, deadlines, watching
from games.deadlines import each, is_away
from games.mail import compose, kinds, outbox, rows, tokens
from games.mail.outbox import Status
from games.models import (
    Game,
    Message,
    MessageEmails,
    Notifications,
    OutgoingEmail,
    PendingSubmission,
    Profile,
    Reminder,
    Seat,
    language_of,
)
from games.services import (
    MAX_DEADLINE_HOURS,
    deadline_set,
    keep_due,
    submitted_of,
)
from games.show.presenter import Presentation, present, read_together

DEFAULT_REMINDER_HOURS = (24, 2)
OWED_ASK = "your_turn_owed"  # a watcher's "waits for you", held (`_defer_ask`)
EXTENDED = compose.EXTENDED
# Held rows told as a sentence at the top of the email they ride in (`told_in_lines`).
TOLD_IN_LINES = ("move_accepted", EXTENDED)
# Held rows whose news the game's page shows: a look at it after they were held tells
# them (`_unless_seen`).
TOLD_BY_THE_PAGE = ("results", "message_owed", EXTENDED, OWED_ASK)
# Of a person's phase emails, those that tell its news (`told_up_to`): not a held one,
# nor an ask that gave way to a newer one unsent (`outbox.supersede_asks`).
TELLS = ~Q(status=Status.COALESCING) & ~Q(status=Status.FOLDED, kind__in=kinds.ASKS)
BATCH = 500  # reminders claimed per sweep; the rest wait a minute
DIGEST_HOUR = 7  # the daily digest leaves at 07:00 in the person's time zone


def phase_changed(game_id: int, phase_number: int) -> None:
    """Queue the emails of every phase up to `phase_number` not told yet (a lost task for
    an earlier phase is folded into a later one), then record it in the game's row.

    Each person's view of the game (`present`) is computed once, for all the phases told
    and every email of them; the seats come with their people in one query, and which
    emails of a phase are in the outbox already in one query per phase."""
    with transaction.atomic():
        # The game's row lock makes twin runs take turns: the second finds the phase told.
        game = _locked(game_id)
        if phase_number <= game.notified_phase or phase_number > game.phase_number:
            return  # told already (a redelivered or recovered task), or not yet begun
        # The deadline the emails state is the one that holds: an away person's absence
        # (or the end of a pause) is settled now, not by the sweep a minute later.
        deadlines.settle_before_telling(game, timezone.now())
        seats = game.seats.all()
        people = [s for s in seats if s.is_person]
        shown = {seat.pk: present(game, seat) for seat in people}
        newest = chat.newest(seats)
        for number in range(game.notified_phase + 1, phase_number + 1):
            # A phase's emails in one INSERT: its ledger is read under the row lock (_tell),
            # and the next phase's reads them.
            with outbox.batched():
                _tell(game, people, number, shown, newest)
        game.notified_phase = phase_number
        keep_due(game, progressed=False, saving=["notified_phase"], submitted=submitted_of(seats))


def _locked(game_id: int) -> Game:
    """The game under its row lock, with its seats, their people and what they chose;
    each seat with whether it has submitted in the current phase and the game's newest
    message. The seats come in a statement after the one that took the lock, so they
    see every submission and message stored before: both take that lock first (services,
    chat.post), and none is stored while notify holds it."""
    game = _game_locked(game_id)
    seats = _seats_told(game)
    found = Game.seats.rel.cache_name  # as prefetch_related stores them
    listed: Any = game.seats.all()
    listed._result_cache, listed._prefetch_done = seats, True
    vars(game)["_prefetched_objects_cache"] = {found: listed}
    return game


_GAME_LOCKED = f"SELECT {rows.columns(Game, 'g')} FROM {Game._meta.db_table} g WHERE g.id = %s"


def _game_locked(game_id: int) -> Game:
    """`Game.objects.select_for_update().get(pk=game_id)` as SQL (the ORM's building of
    it cost more CPU than the query: issue 25)."""
    with connection.cursor() as cursor:
        # The embedded default (SQLite) has no row locks: its writes are serialised anyway.
        lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
        cursor.execute(_GAME_LOCKED + lock, [game_id])
        row = cursor.fetchone()
    if row is None:
        raise Game.DoesNotExist(f"no game {game_id}")
    game: Game = rows.read(Game, row)
    return game


# `_locked`'s seats query as SQL: the ORM's building of its joins and subqueries cost
# more CPU than the query (issue 25). What `select_related("user__profile",
# "user__notifications")` reads, with `has_submitted` (as `services.with_submitted`) and
# `game_newest_message` (`chat.newest`).
_TOLD_MODELS = (Seat, User, Profile, Notifications)


_SEATS_TOLD = f"""SELECT {rows.columns(Seat, "s")}, {rows.columns(User, "u")},
  {rows.columns(Profile, "p")}, {rows.columns(Notifications, "n")},
  EXISTS (SELECT 1 FROM {PendingSubmission._meta.db_table} m
    WHERE m.seat_id = s.id AND m.phase_number = %s),
  COALESCE((SELECT max(t.id) FROM {Message._meta.db_table} t WHERE t.game_id = %s), 0)
FROM {Seat._meta.db_table} s
LEFT JOIN {User._meta.db_table} u ON u.id = s.user_id
LEFT JOIN {Profile._meta.db_table} p ON p.user_id = u.id
LEFT JOIN {Notifications._meta.db_table} n ON n.user_id = u.id
WHERE s.game_id = %s ORDER BY s.position"""


def _seats_told(game: Game) -> list[Seat]:
    """The game's seats as `_locked` reads them: its subqueries name the game's id and
    phase, read under the lock. Each seat's game is `game`; a person's profile and
    choices are None where they have none (as select_related leaves them)."""
    with connection.cursor() as cursor:
        cursor.execute(_SEATS_TOLD, (game.phase_number, game.pk, game.pk))
        rows = cursor.fetchall()
    return [_seat_of(game, row) for row in rows]


def _seat_of(game: Game, row: tuple[Any, ...]) -> Seat:
    parts: list[Any] = []
    start = 0
    for model in _TOLD_MODELS:
        width = len(model._meta.concrete_fields)
        parts.append(rows.read(model, row[start : start + width]))
        start += width
    seat, user, profile, choices = parts
    Seat.game.field.set_cached_value(seat, game)
    Seat.user.field.set_cached_value(seat, user)
    if user is not None:
        for model, got in ((Profile, profile), (Notifications, choices)):
            field = model._meta.get_field("user")
            field.remote_field.set_cached_value(user, got)
            if got is not None:
                field.set_cached_value(got, user)
    vars(seat).update(has_submitted=row[start], game_newest_message=row[start + 1])
    return seat


def _tell(
    game: Game, people: list[Seat], phase_number: int, shown: dict[int, Presentation], newest: int
) -> None:
    final = game.is_finished and phase_number == game.phase_number
    current = game.status == Game.Status.RUNNING and phase_number == game.phase_number
    asked = [
        seat
        for seat in people
        if not final
        and not seat.mail_muted
        and current
        and seat.colour in game.waiting
        and seat.plays_in_person
    ]
    queued, told, stale = _ledger(game, people, phase_number)
    superseding = [seat.user_id for seat in asked if seat.user_id in stale]
    if superseding:  # one UPDATE for them: their asks of earlier phases unsent are stale
        outbox.supersede_asks(superseding, game, phase_number)
        queued, told, stale = _ledger(game, people, phase_number)  # a superseded ask tells none
    # Who watches the game's page now is told by it: their ask waits (`_defer_ask`).
    watchers = _watching(game, asked)
    asked_now = [seat for seat in asked if seat.pk not in watchers]
    told_now = [seat for seat in people if final or seat in asked_now]
    held = outbox.held_of([seat.user_id for seat in told_now], game) if told_now else {}
    # Every person's news of the phase (and an asked one's since their last email) in
    # one query: each keeps what it may read.
    first = min(
        [compose.news_from(told.get(seat.user_id, 0), phase_number) for seat in told_now],
        default=phase_number,
    )
    read_together(
        [shown[seat.pk] for seat in people if final or not seat.mail_muted],
        min(first, phase_number),
        phase_number,
    )
    links = tokens.links(
        game,
        [
            seat
            for seat in asked_now
            if ("your_turn", seat.user_id) not in queued
            and compose.can_mail(seat.user, "your_turn")
        ],
        new_phase=True,
    )
    for seat in people:
        # Each person's email in their own language, its news worded for them too (their
        # Presentation keeps the lines it words: `_owe_results` reads them first).
        with translation.override(language_of(seat.user)):
            if final:
                _tell_now(
                    game,
                    seat,
                    "game_over",
                    compose.game_over,
                    queued,
                    shown[seat.pk],
                    told.get(seat.user_id, 0),
                    newest,
                    held.get(seat.user_id, []),
                )
            elif seat.pk in watchers:
                _defer_ask(game, seat, queued)
            elif seat in asked:
                ask = partial(compose.your_turn, links=links.get(seat.pk))
                _tell_now(
                    game,
                    seat,
                    "your_turn",
                    ask,
                    queued,
                    shown[seat.pk],
                    told.get(seat.user_id, 0),
                    newest,
                    held.get(seat.user_id, []),
                )
            elif not seat.mail_muted:  # muted: nothing but the final scores
                _owe_results(game, seat, phase_number, queued, shown[seat.pk])


def _watching(game: Game, asked: list[Seat]) -> set[int]:
    """The seats of the people asked who have the game's page open and visible now
    (games.watching: one cache read for them all)."""
    if not asked:
        return set()
    now = timezone.now()
    seen = watching.seen_of(game.pk, [seat.user_id for seat in asked])
    return {seat.pk for seat in asked if watching.is_watching(seen.get(seat.user_id), now)}


def _defer_ask(game: Game, seat: Seat, queued: set[tuple[str, int]]) -> None:
    """A person watching the game's page is told by it that the phase needs them: their
    "waits for you" is a held row (`your_turn_owed`), due EMAIL_WATCHING_SECONDS later,
    when `_flush` sends it only if they have not looked at the game since (nor moved).
    What else they are owed waits with it, to ride in it or go when due."""
    if ("your_turn", seat.user_id) in queued:
        return
    compose.your_turn_owed(game, seat, timezone.now() + watching.window())


def _ledger(
    game: Game, people: list[Seat], phase_number: int
) -> tuple[set[tuple[str, int]], dict[int | None, int], set[int | None]]:
    """What the outbox holds of the people's phase emails and asks of the game, in one
    query: the (kind, user) of this phase's (in any state), each person's last phase told
    (`told_up_to`), and who has an ask that an ask of this phase supersedes (most often
    nobody: their emails went out long before the phase ended)."""
    with connection.cursor() as cursor:
        cursor.execute(*_ledger_sql(game, people, phase_number))
        rows = cursor.fetchall()
    queued: set[tuple[str, int]] = set()
    told: dict[int | None, int] = {}
    stale: set[int | None] = set()
    for user_id, kind, last, now, asks in rows:
        if asks:
            stale.add(user_id)
        if not kinds.of(kind).one_per_phase:
            continue  # a reminder tells no news
        if now:
            queued.add((kind, user_id))
        told[user_id] = max(told.get(user_id, 0), last or 0)
    return queued, told, stale


def _ledger_sql(game: Game, people: list[Seat], phase_number: int) -> tuple[str, list[Any]]:
    """`_ledger`'s query as SQL (the ORM's building of its filtered aggregates cost more
    CPU than the query: issue 25). Per (user, kind): the last phase told (`TELLS`: not
    held, not an ask folded unsent), this phase's rows, and the stale asks
    (`outbox.stale_asks`: an ask of an earlier phase, queued or retrying)."""
    users = [seat.user_id for seat in people]
    wanted = [*kinds.ONE_PER_PHASE, *kinds.ASKS]
    asks, unsent = list(kinds.ASKS), [Status.QUEUED, Status.RETRYING]
    sql = f"""SELECT user_id, kind,
  max(CASE WHEN status <> %s AND NOT (status = %s AND kind IN ({_marks(asks)}))
      THEN phase_number END),
  sum(CASE WHEN phase_number = %s THEN 1 ELSE 0 END),
  sum(CASE WHEN kind IN ({_marks(asks)}) AND phase_number < %s AND status IN ({_marks(unsent)})
      THEN 1 ELSE 0 END)
FROM {OutgoingEmail._meta.db_table}
WHERE game_id = %s AND user_id IN ({_marks(users)}) AND kind IN ({_marks(wanted)})
  AND phase_number IS NOT NULL
GROUP BY user_id, kind"""
    params = [Status.COALESCING, Status.FOLDED, *asks, phase_number]
    params += [*asks, phase_number, *unsent, game.pk, *users, *wanted]
    return sql, [str(p) if isinstance(p, Status) else p for p in params]


def _marks(values: list[Any]) -> str:
    """Placeholders for `values` in an IN (...); none: a list that holds nothing."""
    return ", ".join(["%s"] * len(values)) or "NULL"


def _tell_now(
    game: Game,
    seat: Seat,
    kind: str,
    write: Callable[..., OutgoingEmail | None],
    queued: set[tuple[str, int]],
    shown: Presentation,
    since: int,
    newest: int,
    owed: list[OutgoingEmail],
) -> None:
    """One email of this phase, with everything owed to the person folded in. `queued`:
    the (kind, user) of the phase's emails in the outbox already (`_ledger`, for all);
    `since`: the last phase told them (`told_up_to`); `newest`: the game's newest message
    (`chat.unread_by_email`); `owed`: their held emails of the game (`outbox.held`)."""
    if (kind, seat.user_id) in queued:
        return
    email = write(
        game,
        seat,
        since=since,
        confirmations=told_in_lines(owed),
        shown=shown,
        newest_message=newest,
    )
    if email is not None:
        outbox.fold(owed, email)


def _owe_results(
    game: Game, seat: Seat, phase_number: int, queued: set[tuple[str, int]], shown: Presentation
) -> None:
    if not compose.news(shown.events(phase_number=phase_number)):
        return  # nothing happened but "X has decided"
    if ("results", seat.user_id) not in queued:
        hold = timezone.now() + timedelta(seconds=settings.EMAIL_RESULTS_HOLD_SECONDS)
        compose.results(game, seat, phase_number, hold_until=hold, shown=shown)


def told_up_to(seat: Seat, game: Game) -> int:
    """The last phase whose news an email to the person told or tells (queued, sent or
    folded into one): their next email tells what happened after it. Not a held one, nor
    an ask that gave way to a newer one unsent (`outbox.supersede_asks`)."""
    told = OutgoingEmail.objects.filter(
        TELLS,
        user=seat.user_id,
        game=game,
        kind__in=kinds.ONE_PER_PHASE,
        phase_number__isnull=False,
    ).aggregate(last=Max("phase_number"))["last"]
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
        if game is None or not _due(owed, now):
            return False  # told meanwhile in another email (or another sweep's)
        seat = game.seats.select_related("user__profile").filter(user_id=user_id).first()
        if seat is None:  # the person left the game: nothing more of it
            outbox.fold(owed, None)
            return False
        owed = _unless_seen(game, seat, owed)
        asks = [e for e in owed if e.kind == OWED_ASK]
        if _due(asks, now):
            if _send_owed_ask(game, seat, owed, asks):
                return True
            owed = [e for e in owed if e.kind != OWED_ASK]
        if not _due(owed, now):
            return False  # the rest may wait longer
        email = _news_owed(game, seat, owed)
        outbox.fold(owed, email)
        return email is not None


def _due(owed: list[OutgoingEmail], now: datetime) -> bool:
    return any(e.next_attempt_at and e.next_attempt_at <= now for e in owed)


def _unless_seen(game: Game, seat: Seat, owed: list[OutgoingEmail]) -> list[OutgoingEmail]:
    """The owed news the person has not seen on the game's page: what was held before
    their last look there (games.watching) is told by the page, and folded unsent. Not
    a move's confirmation: the answer to their own email still comes."""
    seen = watching.seen_at(game.pk, seat.user_id) if owed else None
    if seen is None:
        return owed
    read = [e for e in owed if e.kind in TOLD_BY_THE_PAGE and e.created_at <= seen]
    outbox.fold(read, None, note="not sent: seen on the game page")
    return [e for e in owed if e not in read]


def _send_owed_ask(
    game: Game, seat: Seat, owed: list[OutgoingEmail], asks: list[OutgoingEmail]
) -> bool:
    """The "waits for you" a watcher was owed (`_defer_ask`), due now: sent, with all
    they are owed folded in, if the phase it was for still waits for their move (they
    have not looked at the game since: `_unless_seen` took it else); else dropped."""
    email = None
    if _still_asked(game, seat, asks):
        email = compose.your_turn(
            game, seat, since=told_up_to(seat, game), confirmations=told_in_lines(owed)
        )
    moot = "not sent: the phase moved on, or the person moved"
    outbox.fold(owed if email else asks, email, note=moot)
    return email is not None


def _still_asked(game: Game, seat: Seat, asks: list[OutgoingEmail]) -> bool:
    """Whether the current phase is the one an owed ask was for, and still waits for
    the person's move (by their own hand: not muted, no computer standing in)."""
    return (
        game.status == Game.Status.RUNNING
        and any(e.phase_number == game.phase_number for e in asks)
        and seat.colour in game.waiting
        and seat.plays_in_person
        and not seat.mail_muted
        and not seat.pending.filter(phase_number=game.phase_number).exists()
    )


def _news_owed(game: Game, seat: Seat, owed: list[OutgoingEmail]) -> OutgoingEmail | None:
    """One email of what the person is owed, composed afresh: the results of the phases
    held (with the confirmations and notices), else the table's messages, else the
    extensions of the deadline, else the latest confirmation as it was written."""
    phases = [e.phase_number for e in owed if e.kind == "results" and e.phase_number]
    confirmations = [e for e in owed if e.kind == "move_accepted"]
    lines = told_in_lines(owed)
    email = None
    if phases and not seat.mail_muted:
        email = compose.results(
            game,
            seat,
            None,
            since=told_up_to(seat, game),
            upto=max(phases),
            confirmations=lines,
            reply_to=_reply_to(game, confirmations),
        )
    elif not seat.mail_muted and any(e.kind == "message_owed" for e in owed):
        email = compose.messages(
            game, seat, confirmations=lines, reply_to=_reply_to(game, confirmations)
        )
    if email is None and not seat.mail_muted:
        email = compose.extensions_owed(
            game,
            seat,
            [e for e in owed if e.kind == EXTENDED],
            confirmations=[e.summary for e in confirmations],
            reply_to=_reply_to(game, confirmations),
        )
    if email is None and confirmations:  # nothing else to tell: the answer alone
        email = confirmations[-1]
        outbox.release(email)
    return email


def told_in_lines(owed: list[OutgoingEmail]) -> list[compose.StoredSummary]:
    """What the held rows that ride as a sentence say (a move's confirmation, an
    extension of the deadline), oldest first: the email they are folded into tells them
    at its top."""
    return [e.summary for e in owed if e.kind in TOLD_IN_LINES]


def _reply_to(game: Game, confirmations: list[OutgoingEmail]) -> str:
    """A sealed move may still be changed by replying to its confirmation: so too when
    the confirmation rides in another email, while its phase lasts."""
    latest = confirmations[-1] if confirmations else None
    return latest.reply_to if latest and latest.phase_number == game.phase_number else ""


# --- reminders before a deadline ------------------------------------------------------------


def reminder_hours(chosen: object) -> list[int]:
    """The person's choice of hours before a deadline ([] or nonsense: 24 and 2)."""
    hours = (
        {h for h in chosen if isinstance(h, int) and 1 <= h <= MAX_DEADLINE_HOURS}
        if isinstance(chosen, list)
        else set()
    )
    return sorted(hours or DEFAULT_REMINDER_HOURS, reverse=True)


@receiver(deadline_set, dispatch_uid="games.mail.notify.deadline_set")
def _deadline_set(sender: Any, game: Game, now: datetime, **kwargs: Any) -> None:
    """A deadline set or moved (services, games.deadlines), under the game's row lock and
    in the transaction that saved it: its reminders are armed in that same commit."""
    arm_reminders(now, game, moved=True)


@receiver(post_save, sender=Notifications, dispatch_uid="games.mail.notify.reminder_hours")
def _hours_chosen(
    sender: Any, instance: Notifications, update_fields: Any = None, **kwargs: Any
) -> None:
    """A person chose other hours: their reminders before the deadlines running now follow
    (each game under its row lock, as a deadline moving takes it)."""
    if update_fields is None or "reminder_hours" in update_fields:
        games = (
            Seat.objects.filter(user=instance.user_id, game__status=Game.Status.RUNNING)
            .order_by("game_id")
            .values_list("game_id", flat=True)
        )
        for game_id in list(games):
            _arm_locked(game_id, timezone.now())


def arm_reminders(now: datetime, game: Game | None = None, *, moved: bool = False) -> None:
    """A Reminder row for each (awaited person, deadline, hour) still ahead, of `game` (its
    row locked by the caller, in the transaction that set or moved its deadline), or,
    without one, of every running game, each under its row lock (a repair, run by hand:
    the sweep never scans the games). Rows not yet due that the game's deadline no longer
    wants (another deadline, phase or hour; a seat a computer plays now, or muted) are
    deleted at once; those due already are the sweep's to judge (`_reminding`). `moved`:
    the deadline was just set or moved (`deadline_set`, as every new phase does), so no
    row keys on it yet: only the rows of other deadlines are deleted, without naming the
    wanted rows' keys (that DELETE was a sixth of a resolution's CPU: issue 11). A row of this
    deadline that is not wanted (the same deadline set twice) is judged when it is due."""
    if game is None:
        running = Game.objects.filter(status=Game.Status.RUNNING, deadline__isnull=False)
        for game_id in list(running.order_by("pk").values_list("pk", flat=True)):
            _arm_locked(game_id, now)
        return
    wanted = [
        r
        for seat_id, chosen in _seats_to_remind(game, now)
        for r in _reminders(game, seat_id, chosen)
        if r.due_at > now
    ]
    # One DELETE of the rows not due yet that are not wanted (rather than read, then delete).
    ahead = Reminder.objects.filter(
        seat__in=[seat.pk for seat in game.seats.all()], sent_at__isnull=True, due_at__gt=now
    )
    if moved and game.deadline is not None:
        ahead.exclude(phase_number=game.phase_number, deadline=game.deadline).delete()
    else:
        ahead.exclude(_any_of(wanted)).delete()
    # Armed twice (a repair beside a deadline moving): the unique key drops the second.
    Reminder.objects.bulk_create(wanted, ignore_conflicts=True)


def _any_of(reminders: list[Reminder]) -> Q:
    """A condition that holds for the rows with the key of one of `reminders` (none: for
    no row)."""
    keys = [
        Q(
            seat_id=r.seat_id,
            phase_number=r.phase_number,
            deadline=r.deadline,
            hours_before=r.hours_before,
        )
        for r in reminders
    ]
    return reduce(operator.or_, keys) if keys else Q(pk__in=[])


def _arm_locked(game_id: int, now: datetime) -> None:
    with transaction.atomic():
        game = Game.objects.select_for_update().filter(pk=game_id).first()
        if game is not None:
            arm_reminders(now, game)


def _reminders(game: Game, seat_id: int, chosen: object) -> list[Reminder]:
    deadline = game.deadline
    assert deadline is not None  # _seats_to_remind: a deadline ahead
    return [
        Reminder(
            seat_id=seat_id,
            phase_number=game.phase_number,
            deadline=deadline,
            hours_before=hours,
            due_at=deadline - timedelta(hours=hours),
        )
        for hours in reminder_hours(chosen)
    ]


def _seats_to_remind(game: Game, now: datetime) -> list[tuple[int, object]]:
    """(seat id, chosen hours) of the seats a person plays that the game awaits before a
    deadline still ahead. Whether they have submitted, are away or the game is paused is
    judged when a reminder is due."""
    if game.status != Game.Status.RUNNING or game.deadline is None or game.deadline <= now:
        return []
    # The seats as the caller read them (a resolution, with the game's row lock), and
    # their people's hours in a query that joins nothing.
    seats = [
        seat
        for seat in game.seats.all()
        if seat.colour in game.waiting and seat.plays_in_person and not seat.mail_muted
    ]
    chosen = Notifications.objects.filter(user__in=[seat.user_id for seat in seats])
    hours: dict[int | None, object] = dict(chosen.values_list("user_id", "reminder_hours"))
    return [(seat.pk, hours.get(seat.user_id)) for seat in seats]


def send_reminders(now: datetime) -> None:
    """Every sweep: the seats with a reminder due (the partial index `reminder_due` holds
    only the unsent rows: the cost grows with what is due, not with the running games)."""
    due = Reminder.objects.filter(due_at__lte=now, sent_at__isnull=True)
    each(set(due.order_by("due_at").values_list("seat_id", flat=True)[:BATCH]), _remind, now)


def _remind(seat_id: int, now: datetime) -> None:
    """Claim the seat (a concurrent sweep skips it: the claim is per seat, not per row,
    so that two reminders due at once are one email), then send what is still wanted."""
    with transaction.atomic():
        seat = (
            Seat.objects.select_for_update(no_key=True, skip_locked=True, of=("self",))
            .select_related("game", "user__notifications")
            .filter(pk=seat_id)
            .first()
        )
        if seat is None:
            return
        due = Reminder.objects.filter(seat=seat, due_at__lte=now, sent_at__isnull=True)
        due.exclude(**_reminding(seat, now)).delete()  # moot: deadline moved, phase over, ...
        if due.exists() and not is_away(seat.user, now):  # held until the person is back
            compose.reminder(seat.game, seat)
            due.update(sent_at=now)


def _reminding(seat: Seat, now: datetime) -> dict[str, Any]:
    """The phase, deadline and hours a reminder to the seat is for now (none: {"pk": None})."""
    game = seat.game
    if (
        game.status != Game.Status.RUNNING
        or game.paused
        or game.deadline is None
        or now >= game.deadline
        or seat.colour not in game.waiting
        or not seat.plays_in_person
        or seat.mail_muted
        or seat.pending.filter(phase_number=game.phase_number).exists()
    ):
        return {"pk": None}
    chosen = getattr(seat.user, "notifications", None)
    return {
        "phase_number": game.phase_number,
        "deadline": game.deadline,
        "hours_before__in": reminder_hours(chosen.reminder_hours if chosen else None),
    }


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
        if OutgoingEmail.objects.filter(user=user, kind="digest", created_at__gte=moment).exists():
            return False  # today's digest has left; later emails wait for tomorrow's
        held = list(
            OutgoingEmail.objects.filter(
                user=user, status=Status.HELD, created_at__lte=moment
            ).order_by("created_at")
        )
        if not held:
            return False
        digest = compose.digest(user, held)
        note = "" if digest else "not sent: the person unsubscribed before the digest"
        OutgoingEmail.objects.filter(id__in=[e.pk for e in held], status=Status.HELD).update(
            status=Status.DIGESTED, last_error=note
        )
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
        arm_reminders(timezone.now(), game)  # muted: none; unmuted: those still ahead


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
