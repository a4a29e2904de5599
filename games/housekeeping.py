"""Housekeeping (hourly, beat): what a server running for a season would otherwise keep
for ever, trimmed a batch at a time (a backlog is caught up over a few hours, and no
run holds a table for long). Each query reads a partial index that holds only the rows
still to trim, so a run costs what it trims, not what the tables hold.

- The bodies (text and HTML) of emails that left, or were told in another email, more
  than EMAIL_BODY_DAYS ago: about 7 KB an email, a few MB a game. The row stays: the
  outbox's ledger (who was told which phase: games.mail.notify) and its history read
  the kind, person, phase, status, summary and times, never an old body. (A reply is
  read beside the bodies sent with its address, to cut a quote of them: games.mail.
  replies; a reply that old is for a phase long gone, and has the other defences.)
- Magic links expired more than a day ago: a link can only be refused by then, and the
  page still says it expired (its signature carries its age: games.mail.views).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from games.models import MagicLink, OutgoingEmail

logger = logging.getLogger(__name__)
BATCH = 2000  # rows of each kind per run
Status = OutgoingEmail.Status
# Emails whose body is not needed once old: sent, sent in a digest, or told in another.
DONE = (Status.SENT, Status.DIGESTED, Status.FOLDED)
BODY_KEPT = Q(status__in=DONE) & ~Q(text="")  # the partial index `email_body_kept`
LINKS_KEPT = timedelta(days=1)  # past expiry: a click on the link shows "expired" either way


def tidy(now: datetime | None = None) -> dict[str, int]:
    """One run: how many rows of each kind it trimmed."""
    now = now or timezone.now()
    trimmed = {"email_bodies": clear_old_bodies(now), "magic_links": drop_expired_links(now)}
    if any(trimmed.values()):  # what the operator's log shows of it
        logger.info(
            "housekeeping: cleared %(email_bodies)d email bodies, deleted "
            "%(magic_links)d expired magic links",
            trimmed,
        )
    return trimmed


def clear_old_bodies(now: datetime) -> int:
    cutoff = now - timedelta(days=settings.EMAIL_BODY_DAYS)
    old = (
        OutgoingEmail.objects.filter(BODY_KEPT, created_at__lt=cutoff)
        .order_by("created_at")
        .values("pk")[:BATCH]
    )
    return OutgoingEmail.objects.filter(pk__in=old).update(text="", html="")


def drop_expired_links(now: datetime) -> int:
    old = MagicLink.objects.filter(expires_at__lt=now - LINKS_KEPT).values("pk")[:BATCH]
    return MagicLink.objects.filter(pk__in=old).delete()[0]
