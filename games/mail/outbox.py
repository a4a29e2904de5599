"""The outbox: every email is a row first (`OutgoingEmail`), then a task sends it.

Transport only: it stores, sends and retries what `games.mail.compose` wrote, and never
imports composition. After the commit that stores an email it sends `email_queued`;
`games.tasks` connects the receiver that queues the sending task.

    QUEUED ──▶ SENDING ──▶ SENT
                  │  ▲
     SMTP error   ▼  │  back-off: 1, 2, 4 ... minutes (send_due re-dispatches)
               RETRYING ──▶ FAILED (after MAX_ATTEMPTS, or a permanent refusal)
    HELD ──▶ DIGESTED (non-urgent emails of people who chose the daily digest)
    COALESCING ──▶ FOLDED (owed news of a game: told in the person's next email of the
                   game, or in one email of its own once due: games.mail.notify)

A person's emails leave in the order they were stored: `send` leaves an email queued
while an earlier one to the same address is still on its way, and sending one hands
the next of that address to a worker.

Like pretix's `mail_send_task` and healthchecks' `sendalerts`, a worker claims a row
with one conditional UPDATE (`filter(id=…, status__in=…).update(status=SENDING)`):
when two workers get the same id, one UPDATE changes the row and the other changes
nothing and returns, so an email is never sent twice by two workers. An SMTP failure
leaves the row RETRYING with its due time, so nothing is lost either. The only window
left is a worker dying between the SMTP server's "250 OK" and the UPDATE to SENT: the
row stays SENDING and is sent again after `stuck_after()` (a duplicate beats a loss).
A worker dying before the "250 OK" loses nothing: the server did not take the message.
"""

from __future__ import annotations

import logging
import smtplib
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core import signing
from django.core.mail import EmailMultiAlternatives
from django.db import IntegrityError, InterfaceError, OperationalError, connection, transaction
from django.db.models import Field, Max, Q
from django.dispatch import Signal
from django.utils import timezone

from games.links import absolute_url
from games.mail import kinds, push
from games.mail.rows import columns, read
from games.mail.rows import insert as insert_rows
from games.models import DeadlineVote, EmailPreference, Game, Notifications, OutgoingEmail

log = logging.getLogger(__name__)
Status = OutgoingEmail.Status

MAX_ATTEMPTS = 10
DUE_BATCH = 500
UNSUBSCRIBE_SALT = "lowenherz.unsubscribe"
MUTE_SALT = "lowenherz.mute"
UNSUBSCRIBE_DAYS = 60  # longer than any game; the email preferences page works ever after

email_queued = Signal()  # email_id: a row is QUEUED (sent after the commit that stored it)
# user_id, game_id, seconds: a row is COALESCING until then (the sweep sends it if the
# task this queues is lost: the due time is in the row)
email_held = Signal()


def _dispatch(email_id: int) -> None:
    email_queued.send(sender=OutgoingEmail, email_id=email_id)


def stuck_after() -> timedelta:
    """A row SENDING for longer than the longest a task may run (the workers' hard time
    limit) belongs to a dead worker."""
    return timedelta(seconds=settings.TASK_TIME_LIMIT_SECONDS + settings.RECOVERY_GRACE_SECONDS)


def redispatch_after() -> timedelta:
    """A queued email whose task never ran (a lost message) is dispatched again."""
    return timedelta(seconds=settings.RECOVERY_GRACE_SECONDS)


# --- who wants what ------------------------------------------------------------------------


def mode_of(user: User | None) -> str:
    if user is None:
        return EmailPreference.EVERY
    if User.notifications.is_cached(user):  # select_related by the caller (notify): no query
        notifications = getattr(user, "notifications", None)  # None: the user has no row
        return notifications.mode if notifications else EmailPreference.EVERY
    mode = Notifications.objects.filter(user=user).values_list("mode", flat=True).first()
    return mode or EmailPreference.EVERY


def is_wanted(user: User | None, kind: str) -> bool:
    """Whether an email of this kind would be queued at all (not for the unsubscribed)."""
    return kinds.of(kind).transactional or mode_of(user) != EmailPreference.OFF


def status_for(user: User | None, kind: str) -> str | None:
    """QUEUED, HELD for the digest, or None: not to be sent."""
    what = kinds.of(kind)
    if what.transactional or what.push:  # a push is no email: it follows PushChoice
        return Status.QUEUED
    mode = mode_of(user)
    if mode == EmailPreference.OFF:
        return None
    if mode == EmailPreference.DIGEST and what.digest and not what.ask:
        return Status.HELD
    return Status.QUEUED


def unsubscribe_url(user: User) -> str:
    signed = signing.dumps(user.pk, salt=UNSUBSCRIBE_SALT)  # time-stamped
    return absolute_url("unsubscribe", signed)


def mute_url(user: User, game: Game) -> str:
    """A link that mutes one game's emails for its reader (games.mail.views.mute_game)."""
    signed = signing.dumps([user.pk, game.pk], salt=MUTE_SALT)
    return absolute_url("mute_game", game.pk, query={"s": signed})


def mute_user_id(signed: str, game_id: int) -> int | None:
    """The user a mute link of this game is for, or None (tampered, another game's)."""
    try:
        value = signing.loads(signed, salt=MUTE_SALT)
    except signing.BadSignature:
        return None
    if (
        isinstance(value, list)
        and len(value) == 2
        and value[1] == game_id
        and isinstance(value[0], int)
    ):
        return value[0]
    return None


def preferences_url() -> str:
    return absolute_url("email_preferences")


def unsubscribe_user_id(signed: str) -> int | None:
    """The user an unsubscribe link is for, or None if it was tampered with or is older
    than UNSUBSCRIBE_DAYS (a link found in an old email must not work forever)."""
    try:
        value = signing.loads(
            signed, salt=UNSUBSCRIBE_SALT, max_age=timedelta(days=UNSUBSCRIBE_DAYS)
        )
    except signing.BadSignature:  # SignatureExpired is one
        return None
    return value if isinstance(value, int) else None


# Microsoft's mail servers and Outlook send no out-of-office or other automatic reply to
# an email that asks so. Not "All": delivery failures (NDR) still reach the operator's
# bounce address, where a dead player address is learned of.
AUTO_RESPONSE_SUPPRESS = "OOF, AutoReply"


def standard_headers(kind: str, user: User | None, unsubscribe: str = "") -> dict[str, str]:
    """`unsubscribe`: the person's unsubscribe link, if the caller made it already (the
    email's footer gives it: signed once, not twice)."""
    # RFC 3834: an out-of-office reply to play+TOKEN@ would be read as a move and
    # answered with a refusal, which would be answered again: a loop. Responders that
    # honour RFC 3834 (and Exchange, its own header) do not answer us at all.
    transactional = kinds.of(kind).transactional
    headers = {
        "Auto-Submitted": "auto-replied" if transactional else "auto-generated",
        "X-Auto-Response-Suppress": AUTO_RESPONSE_SUPPRESS,
    }
    if user is not None and not transactional:
        headers["List-Unsubscribe"] = f"<{unsubscribe or unsubscribe_url(user)}>"
        headers["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"  # RFC 8058
    return headers


# --- what was sent with a reply address ----------------------------------------------------


def sent_with(
    reply_to: str, user_id: int | None, game_id: int, count: int
) -> list[tuple[str, str]]:
    """The bodies (text, HTML) of the emails to this person of this game that gave out
    this reply address: the newest of each kind (a reply may quote the ask after many
    refusals), then the newest others, `count` at most in all, newest first. A reply
    quotes one of them (games.mail.replies tells the quote from the person's lines).
    Bodies housekeeping has emptied are left out."""
    rows = OutgoingEmail.objects.filter(user=user_id, game=game_id, reply_to=reply_to).exclude(
        text=""
    )
    newest = set(rows.values("kind").annotate(newest=Max("pk")).values_list("newest", flat=True))
    chosen = sorted(newest, reverse=True)[:count]
    chosen += list(
        rows.exclude(pk__in=chosen)
        .order_by("-pk")
        .values_list("pk", flat=True)[: count - len(chosen)]
    )
    bodies = dict(
        (pk, (text, html))
        for pk, text, html in rows.filter(pk__in=chosen).values_list("pk", "text", "html")
    )
    return [bodies[pk] for pk in sorted(bodies, reverse=True)]


# --- queuing -------------------------------------------------------------------------------


def queue(
    kind: str,
    to: str,
    subject: str,
    text: str,
    html: str,
    *,
    user: User | None = None,
    game: Game | None = None,
    reply_to: str = "",
    headers: dict[str, str] | None = None,
    phase_number: int | None = None,
    hold_until: datetime | None = None,
    summary: dict[str, Any] | None = None,
    messages_upto: int | None = None,
    unsubscribe: str = "",
) -> OutgoingEmail | None:
    """Store an email and send it after the transaction commits; None if the person
    does not want it (unsubscribed), there is nobody to send it to, or this email of
    this phase is queued already (`one_email_per_phase`). `hold_until`: an email that
    would be queued is COALESCING instead, until then (`summary`: it in a line).
    `kind`: one of games.mail.kinds.KINDS (kinds.UnknownKind otherwise, nothing stored),
    which says whether it may wait for the digest. `unsubscribe`: the person's
    unsubscribe link, if the caller made it (`standard_headers`)."""
    status = status_for(user, kind)
    if status is None or not to:
        return None
    if status == Status.QUEUED and hold_until is not None:
        status = Status.COALESCING
    # PostgreSQL's text holds no NUL, which a person's quoted reply may carry.
    subject, text, html = (part.replace("\x00", "") for part in (subject, text, html))
    email = OutgoingEmail(
        kind=kind,
        user=user,
        game=game,
        to=to,
        subject=" ".join(subject.split())[:300],
        text=text,
        html=html,
        reply_to=reply_to,
        status=status,
        headers={**standard_headers(kind, user, unsubscribe), **(headers or {})},
        phase_number=phase_number,
        summary=summary or {},
        messages_upto=messages_upto,
        next_attempt_at=hold_until
        if status == Status.COALESCING
        else timezone.now() + redispatch_after()
        if status == Status.QUEUED
        else None,
    )
    batch = _BATCH.get()
    if batch is not None:
        batch.rows.append(email)  # inserted, and sent after the commit, when it ends
        return email
    if not _stored(email):
        log.warning(
            "not queued again: %s for user %s, game %s, phase %s",
            kind,
            user.pk if user else None,
            game.pk if game else None,
            phase_number,
        )
        return None
    _after_commit(email)
    return email


def _after_commit(email: OutgoingEmail) -> None:
    """Once the transaction that stored the email commits: a queued one is sent; a held
    one is flushed when due (`email_held`)."""
    if email.status == Status.QUEUED:
        pk = email.pk
        transaction.on_commit(lambda: _dispatch(pk))
    elif (
        email.status == Status.COALESCING
        and email.user_id is not None
        and email.game_id is not None
        and email.next_attempt_at is not None
    ):
        user_id, game_id = email.user_id, email.game_id
        seconds = max(0.0, (email.next_attempt_at - timezone.now()).total_seconds())
        transaction.on_commit(
            lambda: email_held.send(
                sender=OutgoingEmail, user_id=user_id, game_id=game_id, seconds=seconds
            )
        )


@dataclass
class Batch:
    """The emails `queue` collected within `batched`; what waits for their rows."""

    rows: list[OutgoingEmail] = field(default_factory=list)
    then: list[Callable[[], None]] = field(default_factory=list)


_BATCH: ContextVar[Batch | None] = ContextVar("outbox_batch", default=None)


@contextmanager
def batched() -> Iterator[None]:
    """Within: `queue` collects the emails, inserted in one INSERT when the block ends
    (they have no id before: `fold` into one waits for it), without a savepoint. For a
    caller that checked `one_email_per_phase` itself under the game's row lock, which
    every writer of a phase's emails takes first (games.mail.notify's ledger); a
    duplicate would still be refused by the constraint, failing the caller's transaction
    (and its task, tried again). Nothing is inserted if the block raises."""
    batch = Batch()
    token = _BATCH.set(batch)
    try:
        yield
    finally:
        _BATCH.reset(token)
    if connection.features.can_return_rows_from_bulk_insert:
        insert_rows(batch.rows)
    else:  # an SQLite before 3.35 would leave the rows without their ids
        for email in batch.rows:
            email.save(force_insert=True)
    for email in batch.rows:
        _after_commit(email)
    for then in batch.then:
        then()


def _stored(email: OutgoingEmail) -> bool:
    """Insert the row; False if `one_email_per_phase` refused it as a duplicate (the
    savepoint keeps the caller's transaction usable after the refusal)."""
    try:
        with transaction.atomic():
            email.save(force_insert=True)
    except IntegrityError:
        return False
    return True


# --- coalescing: owed news waits for the person's next email of the game ------------------


def held(user: User | int | None, game: Game) -> list[OutgoingEmail]:
    """The person's COALESCING emails of the game, oldest first (the caller holds the
    game's row lock, which every writer of these rows takes first)."""
    if user is None:
        return []
    user_id = user if isinstance(user, int) else user.pk
    return held_of([user_id], game).get(user_id, [])


def held_of(user_ids: list[int | None], game: Game) -> dict[int | None, list[OutgoingEmail]]:
    """`held` for several people of the game, in one query (as SQL: the ORM's building of
    it cost more CPU than the query, on every phase told: issue 25)."""
    found: dict[int | None, list[OutgoingEmail]] = {}
    people = [pk for pk in user_ids if pk is not None]
    if not people:
        return found
    # Not their bodies: a held email is told in another, or composed afresh (notify).
    # The columns left out are deferred: read if ever asked for.
    sql = f"""SELECT {_HELD_COLUMNS} FROM {OutgoingEmail._meta.db_table}
WHERE game_id = %s AND status = %s AND user_id IN ({", ".join(["%s"] * len(people))})
ORDER BY created_at, id"""
    with connection.cursor() as cursor:
        cursor.execute(sql, [game.pk, str(Status.COALESCING), *people])
        rows = cursor.fetchall()
    for row in rows:
        email = read(OutgoingEmail, row, _HELD_FIELDS)
        found.setdefault(email.user_id, []).append(email)
    return found


_HELD_FIELDS = [
    f for f in OutgoingEmail._meta.concrete_fields if f.name not in ("text", "html", "headers")
]
_HELD_COLUMNS = ", ".join(f'"{f.column}"' for f in _HELD_FIELDS)


def fold(emails: list[OutgoingEmail], into: OutgoingEmail | None, note: str = "") -> None:
    """Held emails told in `into` (None: in nothing, as the person no longer wants them,
    or `note` says why)."""
    told = [e.pk for e in emails if into is None or e.pk != into.pk]
    if not told:
        return  # (most asks fold nothing: not even a query to build)
    batch = _BATCH.get()
    if into is not None and into._state.adding and batch is not None:
        batch.then.append(lambda: fold(emails, into))  # once `into` has its row
        return
    note = f"told in email {into.pk}" if into else note or "not sent: no longer wanted"
    # As SQL: the ORM's building of this UPDATE cost notify more CPU than the statement
    # (issue 25), once an ask folds what its reader was owed.
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {OutgoingEmail._meta.db_table} SET status = %s, last_error = %s "
            f"WHERE id IN ({', '.join(['%s'] * len(told))}) AND status = %s",
            [str(Status.FOLDED), note, *told, str(Status.COALESCING)],
        )


def release(email: OutgoingEmail) -> None:
    """A held email goes as it is, alone: queued and sent after the commit."""
    if OutgoingEmail.objects.filter(id=email.pk, status=Status.COALESCING).update(
        status=Status.QUEUED, next_attempt_at=timezone.now() + redispatch_after()
    ):
        pk = email.pk
        transaction.on_commit(lambda: _dispatch(pk))


def stale_asks(phase_number: int) -> Q:
    """The asks that an ask of `phase_number` supersedes: of an earlier phase, not sent
    yet."""
    return Q(
        kind__in=kinds.ASKS,
        phase_number__lt=phase_number,
        status__in=[Status.QUEUED, Status.RETRYING],
    )


def supersede_asks(user_ids: list[int | None], game: Game, phase_number: int) -> None:
    """An ask of an earlier phase not sent yet is stale: the newer one goes instead (to
    each of these people, in one UPDATE)."""
    OutgoingEmail.objects.filter(stale_asks(phase_number), user__in=user_ids, game=game).update(
        status=Status.FOLDED, last_error="superseded by the ask of a later phase"
    )


def due_to_flush(now: datetime) -> list[tuple[int, int]]:
    """(user id, game id) of the people owed news of a game that may not wait longer."""
    rows = (
        OutgoingEmail.objects.filter(
            status=Status.COALESCING,
            next_attempt_at__lte=now,
            user__isnull=False,
            game__isnull=False,
        )
        .order_by("next_attempt_at")
        .values_list("user_id", "game_id")[:DUE_BATCH]
    )
    return list(
        dict.fromkeys(
            (user_id, game_id)
            for user_id, game_id in rows
            if user_id is not None and game_id is not None
        )
    )


# --- sending -------------------------------------------------------------------------------


def send(email_id: int) -> bool:
    """Send one queued or retrying email, if this call is the one that claims it, and
    no earlier email to the same address is still on its way (order: see above)."""
    # One UPDATE claims it, unless an earlier email to the same address is still on its
    # way (the earlier one's send hands this one on, or send_due, later): no query before.
    email = _claim(email_id)
    if email is None:
        return False  # sent, being sent, held or failed: someone else's or nobody's
    if kinds.of(email.kind).asks_vote and not _vote_still_asks(email):
        _finish(email, Status.FOLDED, last_error=MOOT_VOTE, next_attempt_at=None)
        _hand_on(email)
        return False
    note = ""
    try:
        if kinds.of(email.kind).push:
            note = push.deliver(email)
        else:
            message(email).send(fail_silently=False)
    except (smtplib.SMTPException, OSError) as exc:  # OSError: refused, reset, timed out
        _failed(email, exc)
        _hand_on(email)  # the next waits while this one is retried, not once it failed
        return False
    except Exception as exc:  # not the network: sending again would fail the same way
        log.exception("email %s cannot be sent", email_id)
        _finish(email, Status.FAILED, last_error=f"{type(exc).__name__}: {exc}")
        _hand_on(email)
        return False
    _finish(email, Status.SENT, sent_at=timezone.now(), last_error=note, next_attempt_at=None)
    _hand_on(email)
    return True


MOOT_VOTE = "moot: the vote was decided, or its reader voted, before it left"


def _vote_still_asks(email: OutgoingEmail) -> bool:
    """Whether the game's vote still waits for the reader of a call to vote."""
    if email.game_id is None or email.user_id is None:
        return False
    still_open = DeadlineVote.objects.filter(game_id=email.game_id, status=DeadlineVote.Status.OPEN)
    return still_open.exclude(ballots__seat__user_id=email.user_id).exists()


UNDERWAY = (Status.QUEUED, Status.SENDING, Status.RETRYING)
_TABLE = OutgoingEmail._meta.db_table

# `send`'s claim and `_hand_on`'s look as SQL: the ORM's building of the claim's UPDATE
# with its subquery, the row's read after it and the look for the next cost the sending
# worker more CPU than the statements (issue 25). The claim takes the row from QUEUED or
# RETRYING to SENDING and returns it, in one statement, unless an email to the same
# address stored before it (by created_at, then id) is still on its way (not given up
# on): while one is, this one waits its turn.
_CLAIM = f"""UPDATE {_TABLE} AS e SET status = %s, attempts = e.attempts + 1, next_attempt_at = %s
WHERE e.id = %s AND e.status IN (%s, %s) AND e.attempts < %s
  AND NOT EXISTS (SELECT 1 FROM {_TABLE} b
    WHERE b."to" = e."to" AND b.status IN (%s, %s, %s) AND b.attempts < %s
      AND (b.created_at < e.created_at OR (b.created_at = e.created_at AND b.id < e.id)))
RETURNING {columns(OutgoingEmail)}"""

_FOLLOWING = f"""SELECT id FROM {_TABLE} WHERE "to" = %s AND status = %s AND id <> %s
ORDER BY created_at, id LIMIT 1"""


def _claim(email_id: int) -> OutgoingEmail | None:
    """The email, claimed for this send (SENDING, one attempt more, not due again before
    `stuck_after`), if it was queued or retrying, not tried too often, and no earlier
    email to its address is on its way; else None."""
    params: list[Any] = [
        Status.SENDING,
        timezone.now() + stuck_after(),
        email_id,
        Status.QUEUED,
        Status.RETRYING,
        MAX_ATTEMPTS,
        *UNDERWAY,
        MAX_ATTEMPTS,
    ]
    with connection.cursor() as cursor:
        cursor.execute(_CLAIM, [str(p) if isinstance(p, Status) else p for p in params])
        row = cursor.fetchone()
    return None if row is None else read(OutgoingEmail, row)


def _hand_on(email: OutgoingEmail) -> None:
    """The next queued email to the same address: its send may have waited for this one."""
    with connection.cursor() as cursor:
        cursor.execute(_FOLLOWING, [email.to, str(Status.QUEUED), email.pk])
        following = cursor.fetchone()
    if following is not None:
        _dispatch(following[0])


def message(email: OutgoingEmail) -> EmailMultiAlternatives:
    stamp = int(email.created_at.timestamp())
    # The same on every attempt: a duplicate after a lost "250 OK" is recognisable. A
    # game's emails thread by In-Reply-To and References (games.mail.compose).
    headers = {
        **email.headers,
        "Message-ID": f"<lowenherz.{email.pk}.{stamp}@{settings.REPLY_DOMAIN}>",
    }
    mail = EmailMultiAlternatives(
        email.subject,
        email.text,
        settings.DEFAULT_FROM_EMAIL,
        [email.to],
        reply_to=[email.reply_to] if email.reply_to else None,
        headers=headers,
    )
    if email.html:
        mail.attach_alternative(email.html, "text/html")
    return mail


def _failed(email: OutgoingEmail, exc: Exception) -> None:
    error = f"{type(exc).__name__}: {exc}"[:2000]
    if is_permanent(exc) or email.attempts >= MAX_ATTEMPTS:
        _finish(email, Status.FAILED, last_error=error, next_attempt_at=None)
        return
    wait = timedelta(minutes=2 ** (email.attempts - 1))
    _finish(email, Status.RETRYING, last_error=error, next_attempt_at=timezone.now() + wait)


def is_permanent(exc: Exception) -> bool:
    """A 5xx answer about this message (unknown mailbox, refused content): retrying
    cannot help. Connection problems and 4xx answers are worth another try."""
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        return bool(exc.recipients) and all(code >= 500 for code, _ in exc.recipients.values())
    if isinstance(exc, smtplib.SMTPSenderRefused | smtplib.SMTPDataError):
        return exc.smtp_code >= 500
    return False


FINISH_TRIES = 5  # about 3 s: a database that fails over comes back within it


def _finish(email: OutgoingEmail, status: str, **fields: Any) -> None:
    """Record how the send went. After the SMTP server took the email, a lost database
    connection here would leave the row SENDING and the email sent twice: so reconnect
    and try again for a while before giving up (and leaving it to `_recover_stuck`)."""
    for attempt in range(FINISH_TRIES):
        try:
            _record(email.pk, status, fields)
            return
        except (OperationalError, InterfaceError):
            if attempt == FINISH_TRIES - 1 or not connection.get_autocommit():
                raise
            log.warning("email %s: recording %s failed; reconnecting", email.pk, status)
            connection.close()  # the next query opens a new connection
            time.sleep(0.2 * 2**attempt)


_FIELDS: dict[str, Field[Any, Any]] = {f.name: f for f in OutgoingEmail._meta.concrete_fields}


def _record(email_id: int, status: str, fields: dict[str, Any]) -> None:
    """The row's new status and `fields`, only from SENDING (or RETRYING, if send_due took
    it for dead meanwhile). As SQL, as the claim (its UPDATE built by the ORM cost more
    CPU than the statement); each value goes through its field as the ORM sends it."""
    values = {"status": str(status), **fields}
    found = [_FIELDS[name] for name in values]
    sets = ", ".join(f'"{field.column}" = %s' for field in found)
    params = [
        field.get_db_prep_save(value, connection)
        for field, value in zip(found, values.values(), strict=True)
    ]
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {_TABLE} SET {sets} WHERE id = %s AND status IN (%s, %s)",
            [*params, email_id, str(Status.SENDING), str(Status.RETRYING)],
        )


# --- the sweeper's part ----------------------------------------------------------------------


def send_due(now: datetime | None = None) -> int:
    """Every minute: hand the due emails (retries, lost dispatches, rows left SENDING by a
    dead worker) to the workers again. Returns how many were dispatched."""
    now = now or timezone.now()
    _recover_stuck(now)
    due = Q(status__in=[Status.QUEUED, Status.RETRYING]) & (
        Q(next_attempt_at__lte=now) | Q(next_attempt_at__isnull=True)
    )
    ids = list(
        OutgoingEmail.objects.filter(due)
        .order_by("next_attempt_at")
        .values_list("id", flat=True)[:DUE_BATCH]
    )
    # Not due again before a worker had the time to take it: no pile of copies in the queue.
    OutgoingEmail.objects.filter(due, id__in=ids).update(next_attempt_at=now + redispatch_after())
    for email_id in ids:
        _dispatch(email_id)
    return len(ids)


def _recover_stuck(now: datetime) -> None:
    stuck = OutgoingEmail.objects.filter(status=Status.SENDING, next_attempt_at__lt=now)
    stuck.filter(attempts__gte=MAX_ATTEMPTS).update(
        status=Status.FAILED, last_error="the worker stopped while sending it, too often"
    )
    stuck.update(
        status=Status.RETRYING,
        next_attempt_at=now,
        last_error="the worker stopped while sending it; sending again",
    )
