"""The outbox (games.mail.outbox): emails go through a real SMTP server (aiosmtpd on
127.0.0.1), are never lost when it is down and never sent twice; the daily digest.

alice (Europe/Berlin), bob (America/New_York) and charlie (UTC) play the `game` fixture.
"""

from __future__ import annotations

import email
import email.policy
import smtplib
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.test import Client
from django.utils import timezone

from games import tasks
from games.mail import compose, notify, outbox
from games.mail.replies import REPLY_MARKER
from games.models import EmailPreference, Game, Notifications, OutgoingEmail, Seat
from lowenherz_site.celery import app as celery_app

Status = OutgoingEmail.Status
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def fast_password_hashing(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


# --- a real SMTP server -------------------------------------------------------------------------


@dataclass
class Collector:
    """An aiosmtpd handler keeping every message it accepts; `refuse` answers RCPT with it."""

    messages: list[EmailMessage] = field(default_factory=list)
    refuse: str = ""

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options) -> str:
        if self.refuse:
            return self.refuse
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope) -> str:
        self.messages.append(
            email.message_from_bytes(envelope.content, policy=email.policy.default)
        )
        return "250 Message accepted for delivery"


class SMTPServer:
    """aiosmtpd on a free port of 127.0.0.1; `stop()` and `start()` take it down and up."""

    def __init__(self) -> None:
        self.collector = Collector()
        self.port = free_port()
        self.controller: Controller | None = None

    def start(self) -> None:
        self.controller = Controller(self.collector, hostname="127.0.0.1", port=self.port)
        self.controller.start()

    def stop(self) -> None:
        if self.controller is not None:
            self.controller.stop()
            self.controller = None

    @property
    def messages(self) -> list[EmailMessage]:
        return self.collector.messages


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def smtp(settings):
    server = SMTPServer()
    server.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", server.port
    settings.EMAIL_HOST_USER = settings.EMAIL_HOST_PASSWORD = ""
    settings.EMAIL_USE_TLS = settings.EMAIL_USE_SSL = False
    settings.EMAIL_TIMEOUT = 5
    yield server
    server.stop()


@pytest.fixture
def eager():
    """Tasks run where they are sent (`delay` calls the task at once), as a worker would."""
    conf = celery_app.conf
    before = conf.task_always_eager, conf.task_eager_propagates
    conf.task_always_eager = conf.task_eager_propagates = True
    yield
    conf.task_always_eager, conf.task_eager_propagates = before


# --- helpers ------------------------------------------------------------------------------------


def seat(game, user) -> Seat:
    return Seat.objects.select_related("user__profile").get(game=game, user=user)


def ask(game, user) -> OutgoingEmail:
    compose.your_turn(game, seat(game, user))
    return OutgoingEmail.objects.filter(user=user, kind="your_turn").latest("id")


def results(game, user, phase_number: int | None = None) -> OutgoingEmail | None:
    """A results email (one per person and phase: `one_email_per_phase`)."""
    compose.results(game, seat(game, user), phase_number or game.phase_number)
    return OutgoingEmail.objects.filter(user=user, kind="results").order_by("id").last()


def row(email_row: OutgoingEmail) -> OutgoingEmail:
    return OutgoingEmail.objects.get(pk=email_row.pk)


def soon(minutes: float) -> datetime:
    return timezone.now() + timedelta(minutes=minutes)


# --- sending ------------------------------------------------------------------------------------


def test_a_queued_email_is_sent_after_commit_through_smtp_once(
    game, alice, smtp, eager, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        queued = ask(game, alice)
        assert row(queued).status == Status.QUEUED and smtp.messages == []  # not before commit
    assert len(callbacks) == 1
    sent = row(queued)
    assert sent.status == Status.SENT and sent.attempts == 1 and sent.sent_at is not None
    (message,) = smtp.messages
    assert message["To"] == "alice@example.org" and message["Subject"] == sent.subject
    assert message["Reply-To"] == sent.reply_to and sent.reply_to.startswith("play+")
    assert message["List-Unsubscribe"].strip() == f"<{outbox.unsubscribe_url(alice)}>"
    assert message["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert message["Auto-Submitted"] == "auto-generated"
    assert message["Message-ID"].startswith(f"<lowenherz.{sent.pk}.")
    assert message["From"] == settings.DEFAULT_FROM_EMAIL
    text = message.get_body(("plain",)).get_content()
    html = message.get_body(("html",)).get_content()
    assert "WHAT IS ASKED" in text and "/m/" in text and "<pre" in html


def test_an_email_is_sent_once_however_often_its_task_runs(game, alice, smtp):
    queued = ask(game, alice)
    assert outbox.send(queued.pk) is True
    assert outbox.send(queued.pk) is False
    tasks.send_email(queued.pk)  # the task itself, as a redelivered message runs it
    assert len(smtp.messages) == 1 and row(queued).attempts == 1


def test_an_email_waits_while_an_earlier_one_to_its_address_is_on_its_way(
    game, alice, bob, smtp, monkeypatch
):
    """A person's emails leave in the order they were stored: the later one is not even
    claimed while the earlier one is queued; sending the earlier one hands it on."""
    handed: list[int] = []
    monkeypatch.setattr(outbox, "_dispatch", handed.append)
    first, later, other = ask(game, alice), results(game, alice), ask(game, bob)
    assert outbox.send(later.pk) is False
    assert row(later).status == Status.QUEUED and row(later).attempts == 0
    assert outbox.send(other.pk) is True  # another address waits for nobody
    assert outbox.send(first.pk) is True and handed == [later.pk]
    assert outbox.send(later.pk) is True
    assert [m["Subject"] for m in smtp.messages] == [
        row(other).subject,
        row(first).subject,
        row(later).subject,
    ]


def test_answers_to_moves_carry_no_unsubscribe_header(game, alice, smtp):
    compose.move_reply(seat(game, alice), False, ["decide 9"], "There is no card 9.")
    refused = OutgoingEmail.objects.get(kind="move_refused")
    outbox.send(refused.pk)
    (message,) = smtp.messages
    assert message["List-Unsubscribe"] is None and message["Auto-Submitted"] == "auto-replied"


def test_every_email_asks_responders_not_to_answer_it(game, alice, smtp):
    """Issue 21: an out-of-office reply to a game's email is stopped at its source: RFC
    3834's Auto-Submitted for the responders that honour it, X-Auto-Response-Suppress for
    Exchange and Outlook. Both kinds: an ask (generated) and an answer (replied)."""
    asked = ask(game, alice)
    compose.move_reply(seat(game, alice), False, ["decide 9"], "There is no card 9.")
    refused = OutgoingEmail.objects.get(kind="move_refused")
    for email_row in (asked, refused):
        assert outbox.send(email_row.pk) is True
    assert [(m["Auto-Submitted"], m["X-Auto-Response-Suppress"]) for m in smtp.messages] == [
        ("auto-generated", "OOF, AutoReply"),
        ("auto-replied", "OOF, AutoReply"),
    ]


# --- SMTP down -----------------------------------------------------------------------------------


def test_smtp_down_keeps_the_email_for_a_retry_and_sends_it_once_when_back(
    game, alice, bob, smtp, eager
):
    smtp.stop()
    queued = [ask(game, alice), ask(game, bob)]
    for email_row in queued:
        assert outbox.send(email_row.pk) is False
    for email_row in map(row, queued):
        assert email_row.status == Status.RETRYING and email_row.attempts == 1
        assert soon(0.5) < email_row.next_attempt_at < soon(1.5)  # back-off: 1 minute
        assert "Connection refused" in email_row.last_error or "Errno" in email_row.last_error
    assert outbox.send_due() == 0  # not due yet
    smtp.start()
    assert outbox.send_due(now=soon(2)) == 2
    assert outbox.send_due(now=soon(2)) == 0 and outbox.send_due(now=soon(60)) == 0
    assert sorted(m["To"] for m in smtp.messages) == ["alice@example.org", "bob@example.org"]
    assert all(row(e).status == Status.SENT and row(e).attempts == 2 for e in queued)


def test_retries_back_off_exponentially_then_fail(game, alice, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", free_port(), 2
    queued = ask(game, alice)
    waits = []
    for _ in range(outbox.MAX_ATTEMPTS):
        before = timezone.now()
        outbox.send(queued.pk)
        if row(queued).next_attempt_at:
            waits.append(round((row(queued).next_attempt_at - before).total_seconds() / 60))
    assert waits == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    failed = row(queued)
    assert failed.status == Status.FAILED and failed.attempts == outbox.MAX_ATTEMPTS
    assert outbox.send(queued.pk) is False and outbox.send_due(now=soon(10_000)) == 0


def test_a_refused_mailbox_fails_at_once(game, alice, smtp):
    smtp.collector.refuse = "550 5.1.1 No such mailbox"
    queued = ask(game, alice)
    outbox.send(queued.pk)
    assert row(queued).status == Status.FAILED and "No such mailbox" in row(queued).last_error


def test_a_lost_dispatch_is_sent_by_the_sweeper(game, alice, smtp, eager):
    queued = ask(game, alice)  # its on-commit dispatch never ran (no commit in this test)
    assert outbox.send_due() == 0
    assert outbox.send_due(now=soon(outbox.redispatch_after().total_seconds() / 60 + 1)) == 1
    assert row(queued).status == Status.SENT and len(smtp.messages) == 1


def test_an_email_left_sending_by_a_dead_worker_is_sent_again(game, alice, smtp, eager):
    queued = ask(game, alice)
    OutgoingEmail.objects.filter(pk=queued.pk).update(
        status=Status.SENDING, attempts=1, next_attempt_at=soon(10)
    )
    assert outbox.send_due(now=soon(5)) == 0  # still within stuck_after(): maybe sending
    assert outbox.send_due(now=soon(11)) == 1
    assert row(queued).status == Status.SENT and len(smtp.messages) == 1


def test_two_workers_at_once_send_an_email_once(
    on_postgresql, transactional_db, alice, bob, charlie, smtp
):
    from tests.site.conftest import three_player_game

    game = three_player_game(alice, bob, charlie)
    queued = [ask(game, user) for user in (alice, bob, charlie)]
    start = threading.Barrier(2 * len(queued))
    outcomes: list[bool] = []

    def worker(email_id: int) -> None:
        try:
            start.wait()
            outcomes.append(outbox.send(email_id))
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(e.pk,)) for e in queued for _ in (1, 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(outcomes) == [False] * 3 + [True] * 3
    assert sorted(m["To"] for m in smtp.messages) == [u.email for u in (alice, bob, charlie)]


def test_the_worker_registers_the_send_email_task():
    """What `celery worker` imports (the autodiscovered games.tasks) registers the task."""
    code = (
        "import django; django.setup(); from lowenherz_site.celery import app; "
        "app.loader.import_default_modules(); print(sorted(app.tasks))"
    )
    found = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={
            "DJANGO_SETTINGS_MODULE": "lowenherz_site.settings",
            "DEBUG": "true",  # dev secrets
            "PATH": "/usr/bin:/bin",
        },
    )
    assert "'games.tasks.send_email'" in found.stdout, found.stderr
    assert "'games.tasks.send_digests'" in found.stdout
    assert "'games.tasks.flush_held'" in found.stdout  # a held email, when due


# --- preferences: every email, a digest, or none ------------------------------------------------


def prefer(user, mode: str) -> None:
    Notifications.objects.update_or_create(user=user, defaults={"mode": mode})


def test_the_digest_holds_results_but_never_asks_for_moves(game, alice):
    prefer(alice, EmailPreference.DIGEST)
    assert results(game, alice).status == Status.HELD
    assert ask(game, alice).status == Status.QUEUED
    compose.reminder(game, seat(game, alice))
    assert OutgoingEmail.objects.get(kind="reminder").status == Status.QUEUED
    assert outbox.send_due(now=soon(60)) == 2  # the held one is not due: it waits


def test_every_email_mode_holds_nothing(game, alice):
    assert results(game, alice).status == Status.QUEUED


def test_unsubscribed_people_get_no_email_at_all(game, alice):
    prefer(alice, EmailPreference.OFF)
    assert results(game, alice) is None and not OutgoingEmail.objects.filter(user=alice).exists()
    compose.your_turn(game, seat(game, alice))
    assert not OutgoingEmail.objects.filter(user=alice).exists()


def berlin(day: int, hour: int) -> datetime:
    """Half past `hour` on a day of May 2030 in Berlin (summer time: UTC+2)."""
    return datetime.fromisoformat(f"2030-05-{day:02d}T{hour:02d}:30:00+02:00")


def test_the_digest_leaves_once_a_day_at_seven_in_the_persons_time_zone(
    game, alice, smtp, eager, django_capture_on_commit_callbacks
):
    prefer(alice, EmailPreference.DIGEST)
    first, second = results(game, alice, 1), results(game, alice, 2)
    OutgoingEmail.objects.filter(pk__in=[first.pk, second.pk]).update(created_at=berlin(1, 22))
    assert notify.send_digests(now=berlin(2, 6)) == 0  # 06:30 in Berlin: not yet
    with django_capture_on_commit_callbacks(execute=True):
        assert notify.send_digests(now=berlin(2, 7)) == 1
    assert notify.send_digests(now=berlin(2, 8)) == 0  # one a day
    digest = OutgoingEmail.objects.get(kind="digest")
    assert digest.user == alice and "2 emails" in digest.subject
    assert digest.text.count("Löwenherz: Test game: What happened") == 2
    assert digest.text.count("Unsubscribe:") == 1  # the held emails' footers are cut
    assert {row(first).status, row(second).status} == {Status.DIGESTED}
    (message,) = smtp.messages
    assert message["Subject"] == digest.subject and message["List-Unsubscribe"]
    later = results(game, alice, 3)
    OutgoingEmail.objects.filter(pk=later.pk).update(created_at=berlin(2, 9))
    OutgoingEmail.objects.filter(pk=digest.pk).update(created_at=berlin(2, 7))
    assert notify.send_digests(now=berlin(2, 23)) == 0  # waits for tomorrow's digest
    assert notify.send_digests(now=berlin(3, 7)) == 1


def test_the_digest_time_follows_the_time_zone():
    moment = notify.digest_moment(
        datetime.fromisoformat("2030-05-02T12:00:00+00:00"), "America/New_York"
    )
    assert moment.isoformat() == "2030-05-02T07:00:00-04:00"
    moment = notify.digest_moment(
        datetime.fromisoformat("2030-05-02T10:00:00+00:00"), "America/New_York"
    )
    assert moment.isoformat() == "2030-05-01T07:00:00-04:00"


def test_nobody_without_held_emails_gets_a_digest(game, alice, bob):
    prefer(alice, EmailPreference.DIGEST)
    results(game, bob)
    assert notify.send_digests(now=soon(60 * 25)) == 0


def test_unsubscribing_after_emails_were_held_sends_no_digest(game, alice):
    prefer(alice, EmailPreference.DIGEST)
    held = results(game, alice)
    prefer(alice, EmailPreference.OFF)
    assert notify.send_digests(now=soon(60 * 25)) == 0
    assert row(held).status == Status.DIGESTED and "unsubscribed" in row(held).last_error


# --- one-click unsubscribe through the header ---------------------------------------------------


def test_the_list_unsubscribe_header_unsubscribes_with_one_post(game, alice, smtp):
    outbox.send(results(game, alice).pk)
    header = str(smtp.messages[0]["List-Unsubscribe"]).strip().strip("<>")
    path = header.removeprefix(settings.SITE_URL)
    mail_provider = Client(enforce_csrf_checks=True)  # no cookie, no token: a bare POST
    response = mail_provider.post(
        path, "List-Unsubscribe=One-Click", content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code == 200  # RFC 8058: no login, no CSRF token, no redirect
    assert Notifications.objects.get(user=alice).mode == EmailPreference.OFF
    compose.results(game, seat(game, alice), game.phase_number)
    assert OutgoingEmail.objects.filter(user=alice).count() == 1  # nothing new queued


def test_smtp_errors_are_told_apart_from_permanent_refusals():
    assert outbox.is_permanent(smtplib.SMTPRecipientsRefused({"a@b": (550, b"no")}))
    assert not outbox.is_permanent(smtplib.SMTPRecipientsRefused({"a@b": (450, b"later")}))
    assert outbox.is_permanent(smtplib.SMTPDataError(554, b"spam"))
    assert not outbox.is_permanent(smtplib.SMTPServerDisconnected("bye"))
    assert not outbox.is_permanent(ConnectionRefusedError())


def test_waiting_for_a_retry_takes_no_worker(game, alice, settings):
    """Back-off is a due time swept every minute, not a sleeping task."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", free_port()
    started = time.monotonic()
    outbox.send(ask(game, alice).pk)
    assert time.monotonic() - started < 5


def test_a_digest_item_has_no_reply_marker(game, alice):
    """A digest is read, not answered: its items drop the "reply above" line."""
    prefer(alice, EmailPreference.DIGEST)
    held = results(game, alice)
    assert held.text.startswith(REPLY_MARKER)
    digest = compose.digest(alice, [held])
    assert digest is not None and REPLY_MARKER not in digest.text


def test_a_nul_in_a_quoted_reply_is_dropped_not_an_error(game, alice, on_postgresql):
    """PostgreSQL's text holds no NUL: a refusal quoting a reply that carries one is
    stored without it, and the caller's transaction goes on (found by hypothesis in
    test_inbound_properties)."""
    with transaction.atomic():
        email = outbox.queue(
            "move_refused",
            alice.email,
            "Re\x00fused",
            "you wrote: a\x00b\n",
            "<p>a\x00b</p>",
            user=alice,
            game=game,
        )
        assert email is not None and Game.objects.filter(pk=game.pk).exists()
    stored = OutgoingEmail.objects.get(pk=email.pk)
    assert (stored.subject, stored.text, stored.html) == ("Refused", "you wrote: ab\n", "<p>ab</p>")


def test_a_duplicate_phase_email_is_refused_and_inside_batched_fails_loudly(
    game, alice, on_postgresql
):
    """`one_email_per_phase`: a second "waits for you" of a phase is not queued. A caller
    that checked under the game's row lock (`outbox.batched`, notify) inserts without a
    savepoint; a duplicate there is a bug, and fails its transaction."""

    def ask() -> OutgoingEmail | None:
        return outbox.queue(
            "your_turn",
            alice.email,
            "S",
            "T\n",
            "<p>T</p>",
            user=alice,
            game=game,
            phase_number=game.phase_number,
        )

    assert ask() is not None
    with transaction.atomic():
        assert ask() is None  # refused within its savepoint; the transaction goes on
        assert Game.objects.filter(pk=game.pk).exists()
    with pytest.raises(IntegrityError), transaction.atomic(), outbox.batched():
        ask()
    assert OutgoingEmail.objects.filter(kind="your_turn", user=alice).count() == 1


@pytest.mark.parametrize("returning", [True, False], ids=["bulk", "one-by-one"])
def test_a_batch_inserts_its_emails_at_its_end_and_nothing_if_it_fails(
    game, alice, bob, django_capture_on_commit_callbacks, monkeypatch, returning
):
    """`outbox.batched` (notify, a phase's emails): the rows are inserted in one INSERT
    when the block ends (one by one where the database cannot return their ids: an
    SQLite before 3.35), a fold into one of them waits for its row, and each is sent
    after the commit; a block that raises inserts nothing."""
    monkeypatch.setattr(type(connection.features), "can_return_rows_from_bulk_insert", returning)
    held = outbox.queue(
        "results",
        bob.email,
        "Held",
        "T\n",
        "",
        user=bob,
        game=game,
        phase_number=1,
        hold_until=timezone.now() + timedelta(hours=1),
    )
    assert held is not None and held.status == Status.COALESCING

    def ask(user) -> OutgoingEmail | None:
        return outbox.queue(
            "your_turn",
            user.email,
            "S",
            "T\n",
            "<p>T</p>",
            user=user,
            game=game,
            phase_number=game.phase_number,
        )

    with pytest.raises(RuntimeError), transaction.atomic(), outbox.batched():
        ask(alice)
        raise RuntimeError("the phase could not be told")
    assert not OutgoingEmail.objects.filter(kind="your_turn").exists()
    with django_capture_on_commit_callbacks() as callbacks, transaction.atomic():
        with outbox.batched():
            emails = [ask(alice), ask(bob)]
            assert all(e is not None and e.pk is None for e in emails)
            outbox.fold([held], emails[1])
            assert OutgoingEmail.objects.get(pk=held.pk).status == Status.COALESCING
        assert all(e is not None and e.pk is not None for e in emails)
    folded = OutgoingEmail.objects.get(pk=held.pk)
    assert folded.status == Status.FOLDED and folded.last_error == f"told in email {emails[1].pk}"
    assert len(callbacks) >= 2  # each one sent after the commit
    assert OutgoingEmail.objects.filter(kind="your_turn", status=Status.QUEUED).count() == 2
