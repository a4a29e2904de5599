"""The outbox: every email is a row first (`OutgoingEmail`), then a task sends it.

Transport only: it stores, sends and retries what `games.mail.compose` wrote, and never
imports composition. After the commit that stores an email it sends `email_queued`;
`games.tasks` connects the receiver that queues the sending task.

    QUEUED ──▶ SENDING ──▶ SENT
                  │  ▲
     SMTP error   ▼  │  back-off: 1, 2, 4 ... minutes (send_due re-dispatches)
               RETRYING ──▶ FAILED (after MAX_ATTEMPTS, or a permanent refusal)
    HELD ──▶ DIGESTED (non-urgent emails of people who chose the daily digest)

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
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core import signing
from django.core.mail import EmailMultiAlternatives
from django.db import IntegrityError, InterfaceError, OperationalError, connection, transaction
from django.db.models import F, Q
from django.dispatch import Signal
from django.urls import reverse
from django.utils import timezone

from games.models import EmailPreference, Game, Notifications, OutgoingEmail

log = logging.getLogger(__name__)
Status = OutgoingEmail.Status

# Answers to a person's own email: sent whatever their preferences, without unsubscribe.
TRANSACTIONAL = frozenset({"move_accepted", "move_refused", "refusal"})
# Asks for moves: never held for the digest, whatever the caller says.
ASKS = frozenset({"your_turn", "reminder"})
MAX_ATTEMPTS = 10
DUE_BATCH = 500
UNSUBSCRIBE_SALT = "lowenherz.unsubscribe"

email_queued = Signal()  # email_id: a row is QUEUED (sent after the commit that stored it)


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
    mode = Notifications.objects.filter(user=user).values_list("mode", flat=True).first()
    return mode or EmailPreference.EVERY


def is_wanted(user: User | None, kind: str) -> bool:
    """Whether an email of this kind would be queued at all (not for the unsubscribed)."""
    return kind in TRANSACTIONAL or mode_of(user) != EmailPreference.OFF


def status_for(user: User | None, kind: str, urgent: bool) -> str | None:
    """QUEUED, HELD for the digest, or None: not to be sent."""
    if kind in TRANSACTIONAL:
        return Status.QUEUED
    mode = mode_of(user)
    if mode == EmailPreference.OFF:
        return None
    if mode == EmailPreference.DIGEST and not urgent and kind not in ASKS:
        return Status.HELD
    return Status.QUEUED


def unsubscribe_url(user: User) -> str:
    signed = signing.dumps(user.pk, salt=UNSUBSCRIBE_SALT)
    return settings.SITE_URL + reverse("unsubscribe", args=[signed])


def preferences_url() -> str:
    return settings.SITE_URL + reverse("email_preferences")


def unsubscribe_user_id(signed: str) -> int | None:
    """The user an unsubscribe link is for, or None if it was tampered with."""
    try:
        value = signing.loads(signed, salt=UNSUBSCRIBE_SALT)
    except signing.BadSignature:
        return None
    return value if isinstance(value, int) else None


def standard_headers(kind: str, user: User | None) -> dict[str, str]:
    # RFC 3834: an out-of-office reply to play+TOKEN@ would be read as a move and
    # answered with a refusal, which would be answered again: a loop.
    headers = {"Auto-Submitted": "auto-replied" if kind in TRANSACTIONAL else "auto-generated"}
    if user is not None and kind not in TRANSACTIONAL:
        headers["List-Unsubscribe"] = f"<{unsubscribe_url(user)}>"
        headers["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"  # RFC 8058
    return headers


# --- queuing -------------------------------------------------------------------------------


def queue(kind: str, to: str, subject: str, text: str, html: str, *, user: User | None = None,
          game: Game | None = None, reply_to: str = "", headers: dict[str, str] | None = None,
          phase_number: int | None = None, urgent: bool = True) -> OutgoingEmail | None:
    """Store an email and send it after the transaction commits; None if the person
    does not want it (unsubscribed), there is nobody to send it to, or this email of
    this phase is queued already (`one_email_per_phase`)."""
    status = status_for(user, kind, urgent)
    if status is None or not to:
        return None
    try:
        with transaction.atomic():  # a savepoint: a duplicate leaves the caller's work intact
            email = OutgoingEmail.objects.create(
                kind=kind, user=user, game=game, to=to, subject=" ".join(subject.split())[:300],
                text=text, html=html, reply_to=reply_to, status=status,
                headers={**standard_headers(kind, user), **(headers or {})},
                phase_number=phase_number,
                next_attempt_at=timezone.now() + redispatch_after()
                if status == Status.QUEUED else None)
    except IntegrityError:
        log.warning("not queued again: %s for user %s, game %s, phase %s", kind,
                    user.pk if user else None, game.pk if game else None, phase_number)
        return None
    if status == Status.QUEUED:
        pk = email.pk
        transaction.on_commit(lambda: _dispatch(pk))
    return email


# --- sending -------------------------------------------------------------------------------


def send(email_id: int) -> bool:
    """Send one queued or retrying email, if this call is the one that claims it."""
    claimed = OutgoingEmail.objects.filter(
        id=email_id, status__in=[Status.QUEUED, Status.RETRYING], attempts__lt=MAX_ATTEMPTS,
    ).update(status=Status.SENDING, attempts=F("attempts") + 1,
             next_attempt_at=timezone.now() + stuck_after())
    if not claimed:
        return False  # sent, being sent, held or failed: someone else's or nobody's
    email = OutgoingEmail.objects.get(id=email_id)
    try:
        message(email).send(fail_silently=False)
    except (smtplib.SMTPException, OSError) as exc:  # OSError: refused, reset, timed out
        _failed(email, exc)
        return False
    except Exception as exc:  # not the network: sending again would fail the same way
        log.exception("email %s cannot be sent", email_id)
        _finish(email, Status.FAILED, last_error=f"{type(exc).__name__}: {exc}")
        return False
    _finish(email, Status.SENT, sent_at=timezone.now(), last_error="", next_attempt_at=None)
    return True


def message(email: OutgoingEmail) -> EmailMultiAlternatives:
    stamp = int(email.created_at.timestamp())
    headers = {**email.headers,
               "Message-ID": f"<lowenherz.{email.pk}.{stamp}@{settings.REPLY_DOMAIN}>"}
    mail = EmailMultiAlternatives(email.subject, email.text, settings.DEFAULT_FROM_EMAIL,
                                  [email.to], reply_to=[email.reply_to] if email.reply_to else None,
                                  headers=headers)
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
            # Only from SENDING (or RETRYING, if send_due took it for dead meanwhile).
            OutgoingEmail.objects.filter(
                id=email.pk, status__in=[Status.SENDING, Status.RETRYING],
            ).update(status=status, **fields)
            return
        except (OperationalError, InterfaceError):
            if attempt == FINISH_TRIES - 1 or not connection.get_autocommit():
                raise
            log.warning("email %s: recording %s failed; reconnecting", email.pk, status)
            connection.close()  # the next query opens a new connection
            time.sleep(0.2 * 2 ** attempt)


# --- the sweeper's part ----------------------------------------------------------------------


def send_due(now: datetime | None = None) -> int:
    """Every minute: hand the due emails (retries, lost dispatches, rows left SENDING by a
    dead worker) to the workers again. Returns how many were dispatched."""
    now = now or timezone.now()
    _recover_stuck(now)
    due = Q(status__in=[Status.QUEUED, Status.RETRYING]) & (
        Q(next_attempt_at__lte=now) | Q(next_attempt_at__isnull=True))
    ids = list(OutgoingEmail.objects.filter(due).order_by("next_attempt_at")
               .values_list("id", flat=True)[:DUE_BATCH])
    # Not due again before a worker had the time to take it: no pile of copies in the queue.
    OutgoingEmail.objects.filter(due, id__in=ids).update(next_attempt_at=now + redispatch_after())
    for email_id in ids:
        _dispatch(email_id)
    return len(ids)


def _recover_stuck(now: datetime) -> None:
    stuck = OutgoingEmail.objects.filter(status=Status.SENDING, next_attempt_at__lt=now)
    stuck.filter(attempts__gte=MAX_ATTEMPTS).update(
        status=Status.FAILED, last_error="the worker stopped while sending it, too often")
    stuck.update(status=Status.RETRYING, next_attempt_at=now,
                 last_error="the worker stopped while sending it; sending again")
