"""Housekeeping (games.housekeeping, hourly): old email bodies are cleared, their rows kept;
expired magic links are deleted, and still say they expired.

alice (red), bob (ochre) and charlie (lilac) play the `game` fixture.
"""

from __future__ import annotations

import time
from datetime import timedelta
from unittest import mock

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from games import housekeeping
from games.mail import compose, notify
from games.models import MagicLink, OutgoingEmail, Seat
from tests.site.test_magic_links import emailed_link

Status = OutgoingEmail.Status
DAYS = timedelta(days=settings.EMAIL_BODY_DAYS)


def an_email(game, user, status: str, age: timedelta) -> OutgoingEmail:
    """A "waits for you" email of the game's phase, `age` old, in `status`."""
    email = compose.your_turn(game, Seat.objects.get(game=game, user=user))
    assert email is not None and email.text and email.html
    OutgoingEmail.objects.filter(pk=email.pk).update(status=status, created_at=timezone.now() - age)
    return OutgoingEmail.objects.get(pk=email.pk)


@pytest.mark.parametrize("status", [Status.SENT, Status.DIGESTED, Status.FOLDED])
def test_the_body_of_an_email_told_long_ago_is_cleared_and_its_row_kept(game, alice, status):
    old = an_email(game, alice, status, DAYS + timedelta(hours=1))
    seat = Seat.objects.get(game=game, user=alice)
    told = notify.told_up_to(seat, game)
    assert housekeeping.tidy() == {"email_bodies": 1, "magic_links": 0}
    kept = OutgoingEmail.objects.get(pk=old.pk)
    assert (kept.text, kept.html) == ("", "")
    assert (kept.subject, kept.status, kept.phase_number, kept.summary) == (
        old.subject,
        old.status,
        old.phase_number,
        old.summary,
    )
    assert notify.told_up_to(seat, game) == told  # the ledger reads the row, not its body
    assert housekeeping.tidy()["email_bodies"] == 0  # cleared once


@pytest.mark.parametrize(
    "status",
    [Status.QUEUED, Status.HELD, Status.RETRYING, Status.FAILED, Status.SENDING, Status.COALESCING],
)
def test_an_email_still_to_send_or_to_look_into_keeps_its_body(game, alice, status):
    old = an_email(game, alice, status, DAYS * 2)
    housekeeping.tidy()
    assert OutgoingEmail.objects.get(pk=old.pk).text == old.text


def test_the_log_says_what_a_run_trimmed(game, alice, caplog):
    an_email(game, alice, Status.SENT, DAYS * 2)
    with caplog.at_level("INFO", logger="games.housekeeping"):
        housekeeping.tidy()
        housekeeping.tidy()  # nothing left: nothing logged
    assert [r.getMessage() for r in caplog.records] == [
        "housekeeping: cleared 1 email bodies, deleted 0 expired magic links"
    ]


def test_a_recent_email_keeps_its_body(game, alice):
    recent = an_email(game, alice, Status.SENT, DAYS - timedelta(hours=1))
    assert housekeeping.tidy()["email_bodies"] == 0
    assert OutgoingEmail.objects.get(pk=recent.pk).html == recent.html


def test_a_run_trims_a_batch_the_next_the_rest(game, alice, bob, charlie, monkeypatch):
    monkeypatch.setattr(housekeeping, "BATCH", 2)
    for user in (alice, bob, charlie):
        an_email(game, user, Status.SENT, DAYS * 2)
    assert housekeeping.tidy()["email_bodies"] == 2
    assert housekeeping.tidy()["email_bodies"] == 1
    assert not OutgoingEmail.objects.exclude(text="").exists()


def test_magic_links_expired_over_a_day_ago_are_deleted(game, alice, bob):
    emailed_link(game, alice)
    emailed_link(game, bob)
    now = timezone.now()
    MagicLink.objects.filter(user=alice).update(expires_at=now - timedelta(days=1, minutes=1))
    MagicLink.objects.filter(user=bob).update(expires_at=now - timedelta(hours=23))
    assert housekeeping.tidy(now)["magic_links"] == 1
    assert list(MagicLink.objects.values_list("user", flat=True)) == [bob.pk]


def test_a_link_whose_row_was_tidied_away_still_says_it_expired(client, game, alice):
    made = time.time() - (settings.MAGIC_LINK_HOURS + 25) * 3600
    with mock.patch("django.core.signing.time.time", return_value=made):
        path = emailed_link(game, alice)
    MagicLink.objects.update(expires_at=timezone.now() - timedelta(hours=25))
    housekeeping.tidy()
    assert not MagicLink.objects.exists()
    response = client.post(path)
    assert response.status_code == 410 and "has expired" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_a_link_never_made_is_still_not_valid(client, game, alice):
    path = emailed_link(game, alice)
    MagicLink.objects.all().delete()  # signed by us, recent, but no such link
    response = client.post(path)
    assert response.status_code == 400 and "is not valid" in response.content.decode()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the partial indexes")
def test_each_query_reads_the_index_of_the_rows_still_to_trim(game, alice):
    an_email(game, alice, Status.SENT, DAYS * 2)
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")  # a handful of rows: ask for the plan
        try:
            with CaptureQueriesContext(connection) as captured:
                housekeeping.tidy()
            plans = []
            for query in captured.captured_queries:
                cursor.execute("EXPLAIN " + query["sql"])
                plans.append("\n".join(row[0] for row in cursor.fetchall()))
        finally:
            cursor.execute("SET enable_seqscan = on")
    joined = "\n".join(plans)
    assert "email_body_kept" in joined and "magic_link_expiry" in joined, joined


def test_the_beat_runs_it_hourly_on_the_sweep_queue():
    entry = settings.CELERY_BEAT_SCHEDULE["housekeeping"]
    assert entry["task"] == "games.tasks.tidy" and entry["schedule"] == 3600.0
    from games import tasks

    assert tasks.tidy.name == "games.tasks.tidy"
