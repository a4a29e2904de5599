"""Moves by email: a reply moves through services, or is refused with a sentence and
changes nothing; the pipe command, the SMTP listener and the webhook all get there.

alice (red), bob (ochre) and charlie (lilac) play a basic sealed game in its first
decision: the start player (`starter`, whoever the seed made it) chooses two decision
cards ('decide 1, 3'), the others one (RULES 3.2). The answers are recorded instead of
sent (`outbox`): the email bodies are built elsewhere.
"""

from __future__ import annotations

import base64
import io
import json
import os
import signal
import smtplib
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.parser import BytesHeaderParser
from email.utils import parseaddr
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import OperationalError, connection
from django.utils import timezone

from engine.notation import parse_move
from games import services
from games.mail import compose, inbound, replies
from games.mail.inbound import TOO_LARGE, UNKNOWN, USED, WRONG_SENDER, Verdict, handle_message
from games.mail.tokens import reply_address, token_of
from games.management.commands.run_smtpd import make_controller
from games.models import Event, Game, PendingSubmission, RecordEntry, ReplyToken, Seat

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = Path(__file__).parent / "mail_samples"


@dataclass
class Outbox:
    """The answers handle_message gave, in order."""

    move_replies: list[tuple[Seat, bool, list[str], str]] = field(default_factory=list)
    refusals: list[tuple[str, str]] = field(default_factory=list)


@pytest.fixture(autouse=True)
def fast_passwords(settings) -> None:
    """The players' passwords hashed in no time (Argon2 takes a second each here)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def outbox(monkeypatch) -> Outbox:
    box = Outbox()
    monkeypatch.setattr(
        compose,
        "move_reply",
        lambda seat, accepted, commands, message: box.move_replies.append(
            (seat, accepted, commands, message)
        ),
    )
    monkeypatch.setattr(compose, "refusal", lambda to, reason: box.refusals.append((to, reason)))
    return box


@dataclass(frozen=True)
class Player:
    colour: str
    email: str


@pytest.fixture
def starter(game) -> Player:
    """The start player, who chooses two decision cards in this decision."""
    colour = game.engine_state.start_player
    return Player(colour, seat_of(game, colour).user.email)


@pytest.fixture
def other(game, starter) -> Player:
    """A player who is not the start player."""
    seat = game.seats.exclude(colour=starter.colour).select_related("user").first()
    return Player(seat.colour, seat.user.email)


def seat_of(game: Game, colour: str) -> Seat:
    return game.seats.select_related("user").get(colour=colour)


def address_of(game: Game, colour: str) -> str:
    """The Reply-To of the "waits for you" email for this phase."""
    return reply_address(seat_of(game, colour), game.phase_number)


def email(text: str, *, to: str, sender: str, headers: dict[str, str] | None = None) -> bytes:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = "Re: Test game: the game waits for your decision"
    for name, value in (headers or {}).items():
        message[name] = value
    message.set_content(text)
    return message.as_bytes()


def sample(name: str, address: str, sender: str) -> bytes:
    """A sample reply, sent by `sender` to this reply address."""
    raw = (SAMPLES / name).read_bytes()
    written_by = parseaddr(BytesHeaderParser().parsebytes(raw)["From"])[1]
    token = token_of(address)
    assert token
    return raw.replace(b"{token}", token.encode()).replace(written_by.encode(), sender.encode())


def snapshot(game: Game) -> tuple:
    """Everything a reply could change."""
    game.refresh_from_db()
    return (
        game.phase_number,
        game.state,
        game.status,
        sorted(PendingSubmission.objects.values_list("seat__colour", "text")),
        RecordEntry.objects.count(),
        Event.objects.count(),
        sorted(ReplyToken.objects.values_list("token", "used_at")),
    )


def pending(game: Game) -> dict[str, str]:
    return dict(
        PendingSubmission.objects.filter(game=game, phase_number=game.phase_number).values_list(
            "seat__colour", "text"
        )
    )


def is_used(address: str) -> bool:
    return ReplyToken.objects.get(token=token_of(address)).used_at is not None


# --- accepted --------------------------------------------------------------------------------


def test_a_legal_move_is_stored_and_confirmed_and_uses_the_address(game, outbox, starter):
    address = address_of(game, starter.colour)
    result = handle_message(email("decide 1, 3\n\nThanks!", to=address, sender=starter.email))
    assert result.verdict == Verdict.ACCEPTED and result.accepted == ("decide 1, 3",)
    assert pending(game) == {starter.colour: "decide 1, 3"}
    [(seat, accepted, commands, message)] = outbox.move_replies
    assert (seat.colour, accepted, commands) == (starter.colour, True, ["decide 1, 3"])
    assert "Accepted: decide 1, 3." in message and "sealed" in message
    assert "Thanks!" in message  # the prose is reported as not read
    assert outbox.refusals == [] and is_used(address)


@pytest.mark.parametrize(
    ("name", "move"),
    [
        ("gmail_top_posted.eml", "decide 1, 3"),
        ("apple_mail.eml", "decide 2, 3"),
        ("iphone.eml", "decide 1, 2"),
        ("outlook_desktop.eml", "decide 1, 3"),
        ("outlook_web.eml", "decide 2, 3"),
        ("outlook_ios.eml", "decide 1, 2"),
        ("thunderbird.eml", "decide 2, 3"),
        ("german.eml", "decide 1, 3"),
    ],
)
def test_a_reply_from_each_mail_client_moves(game, outbox, starter, name, move):
    raw = sample(name, address_of(game, starter.colour), starter.email)
    result = handle_message(raw)
    assert result.verdict == Verdict.ACCEPTED, result.reason
    assert pending(game) == {starter.colour: move}


def test_the_sender_is_compared_without_case(game, outbox, other):
    raw = email(
        "decide 2", to=address_of(game, other.colour), sender=f"Someone <{other.email.upper()}>"
    )
    assert handle_message(raw).verdict == Verdict.ACCEPTED


# --- refused moves: the engine's sentence, nothing changed, the address still works ----------


def test_an_illegal_move_is_refused_with_the_engines_sentence_and_changes_nothing(
    game, outbox, starter
):
    address = address_of(game, starter.colour)
    before = snapshot(game)
    result = handle_message(email("decide 2", to=address, sender=starter.email))
    assert result.verdict == Verdict.REFUSED
    [(seat, accepted, commands, message)] = outbox.move_replies
    assert (seat.colour, accepted, commands) == (starter.colour, False, ["decide 2"])
    # Told to the starter, whose colour it is: "you choose", not "red chooses" (issue 24).
    assert "Not accepted: 'decide 2': you choose 2 decision cards this turn." in message
    assert snapshot(game) == before and not is_used(address)


def test_a_refused_move_can_be_corrected_by_replying_again_to_the_same_address(
    game, outbox, starter
):
    address = address_of(game, starter.colour)
    handle_message(email("decide 2", to=address, sender=starter.email))
    result = handle_message(email("decide 1, 3", to=address, sender=starter.email))
    assert result.verdict == Verdict.ACCEPTED
    assert pending(game) == {starter.colour: "decide 1, 3"}


def test_a_command_line_that_does_not_parse_applies_nothing_from_the_email(game, outbox, starter):
    address = address_of(game, starter.colour)
    before = snapshot(game)
    handle_message(email("decide 1, 3\nbid five\n", to=address, sender=starter.email))
    [(_, accepted, commands, message)] = outbox.move_replies
    assert not accepted and commands == ["decide 1, 3", "bid five"]
    assert "Nothing was applied: 'bid five': after 'bid' write an amount of ducats" in message
    assert snapshot(game) == before


def test_the_first_refused_command_stops_the_ones_after_it(game, outbox, starter):
    address = address_of(game, starter.colour)
    before = snapshot(game)
    handle_message(email("break alliance C3 H5\ndecide 1, 3\n", to=address, sender=starter.email))
    [(_, accepted, _, message)] = outbox.move_replies
    assert not accepted
    assert "'break alliance C3 H5': the regions at C3 and H5 are not allied" in message
    assert snapshot(game) == before  # 'decide 1, 3' was not submitted


def test_a_reply_without_a_command_is_answered_and_changes_nothing(game, outbox, starter):
    address = address_of(game, starter.colour)
    before = snapshot(game)
    handle_message(email("Not sure yet, give me a day.\n", to=address, sender=starter.email))
    [(_, accepted, commands, message)] = outbox.move_replies
    assert (accepted, commands) == (False, [])
    assert message.startswith("No command was found") and "Not sure yet" in message
    assert snapshot(game) == before


# --- refused addresses -------------------------------------------------------------------------


@pytest.mark.parametrize("to", ["play+madeUpToken123@localhost", "games@localhost"])
def test_a_forged_or_missing_token_is_refused_and_changes_nothing(game, outbox, starter, to):
    address_of(game, starter.colour)
    before = snapshot(game)
    result = handle_message(email("decide 1, 3", to=to, sender=starter.email))
    assert (result.verdict, result.reason) == (Verdict.REFUSED, UNKNOWN)
    # Not answered (issue 9, D3): the From: of an unknown token may be forged.
    assert outbox == Outbox()
    assert snapshot(game) == before


def test_an_address_of_a_phase_gone_by_is_refused_with_a_link(game, outbox, starter):
    address = address_of(game, starter.colour)
    for seat in game.seats.all():
        decision = "decide 1, 3" if seat.colour == starter.colour else "decide 2"
        services.submit(game.pk, seat.pk, parse_move(decision))
    assert services.resolve(game.pk, game.phase_number)
    before = snapshot(game)
    handle_message(email("decide 1, 3", to=address, sender=starter.email))
    [(to, reason)] = outbox.refusals
    assert to == starter.email
    assert reason.startswith("the game has moved on") and f"/games/{game.pk}/" in reason
    assert snapshot(game) == before and outbox.move_replies == []


def test_an_address_of_a_finished_game_is_refused(game, outbox, starter):
    address = address_of(game, starter.colour)
    Game.objects.filter(pk=game.pk).update(status=Game.Status.FINISHED)
    handle_message(email("decide 1, 3", to=address, sender=starter.email))
    [(_, reason)] = outbox.refusals
    assert reason.startswith("the game is over")
    assert pending(game) == {}


def test_a_used_address_is_refused_and_the_accepted_move_stays(game, outbox, starter):
    address = address_of(game, starter.colour)
    handle_message(email("decide 1, 3", to=address, sender=starter.email))
    before = snapshot(game)
    result = handle_message(email("decide 2, 3", to=address, sender=starter.email))
    assert result.verdict == Verdict.REFUSED
    assert outbox.refusals == [(starter.email, USED)]
    assert snapshot(game) == before and pending(game) == {starter.colour: "decide 1, 3"}


def test_the_same_email_delivered_twice_acts_once(game, outbox, starter):
    raw = email("decide 1, 3", to=address_of(game, starter.colour), sender=starter.email)
    verdicts = [handle_message(raw).verdict, handle_message(raw).verdict]
    assert verdicts == [Verdict.ACCEPTED, Verdict.REFUSED]
    assert [accepted for _, accepted, _, _ in outbox.move_replies] == [True]


@pytest.mark.django_db(transaction=True)
def test_two_deliveries_of_an_email_at_the_same_time_act_once(on_postgresql, game, outbox, starter):
    raw = email("decide 1, 3", to=address_of(game, starter.colour), sender=starter.email)
    start = threading.Barrier(2)
    verdicts: list[Verdict] = []

    def deliver() -> None:
        start.wait()
        try:
            verdicts.append(handle_message(raw).verdict)
        finally:
            connection.close()

    threads = [threading.Thread(target=deliver) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(verdicts) == [Verdict.ACCEPTED, Verdict.REFUSED]
    assert outbox.refusals == [(starter.email, USED)]


def test_a_delivery_that_loses_the_claim_to_another_changes_nothing(
    game, outbox, starter, monkeypatch
):
    """Another delivery claims the token after this one checked it, before it moved."""
    address = address_of(game, starter.colour)
    read_commands = replies.commands

    def claimed_meanwhile(text: str) -> replies.Commands:
        ReplyToken.objects.filter(token=token_of(address)).update(used_at=timezone.now())
        return read_commands(text)

    monkeypatch.setattr(replies, "commands", claimed_meanwhile)
    handle_message(email("decide 1, 3", to=address, sender=starter.email))
    assert outbox.refusals == [(starter.email, USED)] and pending(game) == {}


def test_a_phase_that_resolves_while_the_email_is_read_is_not_moved_in(
    game, outbox, starter, monkeypatch
):
    """The phase moves on after the address was checked, before the moves: the check is
    made again under the game's lock."""
    address = address_of(game, starter.colour)
    read_commands = replies.commands

    def resolved_meanwhile(text: str) -> replies.Commands:
        for seat in game.seats.all():
            decision = "decide 1, 3" if seat.colour == starter.colour else "decide 2"
            services.submit(game.pk, seat.pk, parse_move(decision))
        services.resolve(game.pk, game.phase_number)
        return read_commands(text)

    monkeypatch.setattr(replies, "commands", resolved_meanwhile)
    handle_message(email("decide 1, 3", to=address, sender=starter.email))
    [(_, reason)] = outbox.refusals
    assert reason.startswith("the game has moved on") and not is_used(address)
    assert outbox.move_replies == []


def test_someone_else_replying_with_a_players_address_is_refused(game, outbox, starter, other):
    address = address_of(game, starter.colour)
    before = snapshot(game)
    result = handle_message(email("decide 1, 3", to=address, sender=other.email))
    assert (result.verdict, result.reason) == (Verdict.REFUSED, WRONG_SENDER)
    assert outbox == Outbox()  # neither the stranger nor the seat's player is mailed
    assert snapshot(game) == before and not is_used(address)


def test_a_seat_whose_player_left_cannot_be_moved_by_email(game, outbox, starter):
    address = address_of(game, starter.colour)
    seat_of(game, starter.colour).user.delete()
    result = handle_message(email("decide 1, 3", to=address, sender=starter.email))
    assert (result.verdict, result.reason) == (Verdict.REFUSED, WRONG_SENDER)
    assert outbox == Outbox()


# --- where the token is --------------------------------------------------------------------------


def test_the_envelope_recipient_comes_before_the_headers(game, outbox, starter, other):
    # The To header names another player's address: read, it would be refused.
    raw = email("decide 1, 3", to=address_of(game, other.colour), sender=starter.email)
    result = handle_message(raw, envelope_to=[address_of(game, starter.colour)])
    assert result.verdict == Verdict.ACCEPTED
    assert pending(game) == {starter.colour: "decide 1, 3"}


@pytest.mark.parametrize("header", ["Delivered-To", "X-Original-To", "Cc"])
def test_the_token_is_found_in_the_headers_mail_servers_add(game, outbox, starter, header):
    raw = email(
        "decide 1, 3",
        to="Game list <games@localhost>",
        sender=starter.email,
        headers={header: address_of(game, starter.colour)},
    )
    assert handle_message(raw).verdict == Verdict.ACCEPTED


# --- never answered: automatic emails ------------------------------------------------------------


@pytest.mark.parametrize(
    "headers",
    [
        {"Auto-Submitted": "auto-replied"},
        {"Auto-Submitted": "auto-generated"},
        {"X-Autoreply": "yes"},
        {"Precedence": "bulk"},
        {"Precedence": "auto_reply"},
        {"Return-Path": "<>"},
    ],
)
def test_auto_replies_are_ignored_without_an_answer(game, outbox, starter, headers):
    raw = email(
        "decide 1, 3", to=address_of(game, starter.colour), sender=starter.email, headers=headers
    )
    before = snapshot(game)
    assert handle_message(raw).verdict == Verdict.IGNORED
    assert outbox == Outbox() and snapshot(game) == before


@pytest.mark.parametrize("name", ["auto_reply.eml", "bounce.eml"])
def test_a_vacation_reply_and_a_bounce_are_ignored(game, outbox, starter, name):
    raw = sample(name, address_of(game, starter.colour), starter.email)
    before = snapshot(game)
    assert handle_message(raw).verdict == Verdict.IGNORED
    assert outbox == Outbox() and snapshot(game) == before


@pytest.mark.parametrize("envelope_from", ["", "MAILER-DAEMON"])
def test_a_null_envelope_sender_is_a_bounce(game, outbox, starter, envelope_from):
    raw = email("decide 1, 3", to=address_of(game, starter.colour), sender=starter.email)
    assert handle_message(raw, envelope_from=envelope_from).verdict == Verdict.IGNORED
    assert outbox == Outbox()


def test_an_email_from_the_site_itself_is_not_answered(game, outbox, starter, settings):
    raw = email(
        "decide 1, 3", to=address_of(game, starter.colour), sender=settings.DEFAULT_FROM_EMAIL
    )
    assert handle_message(raw).verdict == Verdict.IGNORED and outbox == Outbox()


def test_a_large_email_is_refused_and_changes_nothing(game, outbox, starter):
    message = EmailMessage()
    message["From"], message["To"] = starter.email, address_of(game, starter.colour)
    message.set_content("decide 1, 3\n")
    message.add_attachment(
        os.urandom(inbound.MAX_MESSAGE_BYTES),
        maintype="image",
        subtype="jpeg",
        filename="board.jpg",
    )
    before = snapshot(game)
    handle_message(message.as_bytes())
    assert outbox.refusals == [(starter.email, TOO_LARGE)]
    assert snapshot(game) == before


# --- the pipe: manage.py receive_email -----------------------------------------------------------


def test_the_pipe_command_reads_an_email_on_standard_input(game, outbox, starter):
    out = io.StringIO()
    raw = sample("gmail_top_posted.eml", address_of(game, starter.colour), starter.email)
    call_command("receive_email", stdin=io.BytesIO(raw), stdout=out)
    assert out.getvalue().startswith("receive_email: accepted: Accepted: decide 1, 3.")
    assert pending(game) == {starter.colour: "decide 1, 3"}


def test_the_pipe_command_takes_the_envelope_from_the_mail_server(game, outbox, starter):
    raw = email("decide 1, 3", to="games@localhost", sender=starter.email)
    call_command(
        "receive_email",
        "--recipient",
        address_of(game, starter.colour),
        "--sender",
        starter.email,
        stdin=io.BytesIO(raw),
        stdout=io.StringIO(),
    )
    assert pending(game) == {starter.colour: "decide 1, 3"}


def test_the_pipe_command_asks_for_a_retry_when_the_database_fails(monkeypatch):
    def database_down(raw, **envelope):
        raise OperationalError("could not connect to server")

    monkeypatch.setattr(inbound, "handle_message", database_down)
    err = io.StringIO()
    with pytest.raises(SystemExit) as exit_:
        call_command("receive_email", stdin=io.BytesIO(b"Subject: hi\n\nhi\n"), stderr=err)
    assert exit_.value.code == 75
    assert err.getvalue() == (
        "receive_email: not handled, deliver again later: "
        "OperationalError: could not connect to server\n"
    )


def run_manage(*args: str, stdin: bytes, database_url: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "DATABASE_URL": database_url, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        input=stdin,
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )


def test_the_pipe_exits_75_with_one_line_when_the_database_is_unreachable(tmp_path):
    raw = email("decide 1, 3", to="play+sometoken@localhost", sender="alice@example.org")
    missing = f"sqlite:///{tmp_path}/no/such/dir/db.sqlite3"
    done = run_manage("receive_email", stdin=raw, database_url=missing)
    assert done.returncode == 75, done.stderr
    assert done.stderr.decode().count("\n") == 1
    assert done.stderr.startswith(b"receive_email: not handled, deliver again later:")


def test_the_pipe_exits_0_on_an_auto_reply_without_touching_the_database(tmp_path):
    raw = email(
        "decide 1, 3",
        to="play+sometoken@localhost",
        sender="alice@example.org",
        headers={"Auto-Submitted": "auto-replied"},
    )
    missing = f"sqlite:///{tmp_path}/no/such/dir/db.sqlite3"
    done = run_manage("receive_email", stdin=raw, database_url=missing)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout.startswith(b"receive_email: ignored")


# --- the SMTP listener: manage.py run_smtpd ------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def smtp_port() -> Iterator[int]:
    """The listener run_smtpd runs, in a thread of its own (aiosmtpd's Controller)."""
    controller = make_controller("127.0.0.1", free_port())
    controller.start()
    yield controller.port
    controller.stop()


@pytest.mark.django_db(transaction=True)  # the listener's thread sees committed rows only
def test_a_reply_over_smtp_moves(game, outbox, starter, smtp_port):
    address = address_of(game, starter.colour)
    raw = sample("thunderbird.eml", address, starter.email).replace(b"\n", b"\r\n")
    with smtplib.SMTP("127.0.0.1", smtp_port) as client:
        client.sendmail(starter.email, [address], raw)  # bytes go as they are: CRLF
    assert pending(game) == {starter.colour: "decide 2, 3"}
    assert [accepted for _, accepted, _, _ in outbox.move_replies] == [True]


@pytest.mark.django_db(transaction=True)
def test_the_smtp_listener_answers_451_when_an_email_cannot_be_handled(
    game, starter, smtp_port, monkeypatch
):
    def database_down(raw, **envelope):
        raise OperationalError("database is locked")

    monkeypatch.setattr(inbound, "handle_message", database_down)
    address = address_of(game, starter.colour)
    with (
        smtplib.SMTP("127.0.0.1", smtp_port) as client,
        pytest.raises(smtplib.SMTPDataError) as refused,
    ):
        client.sendmail(
            starter.email, [address], email("decide 1, 3", to=address, sender=starter.email)
        )
    assert refused.value.smtp_code == 451


@pytest.mark.parametrize(
    "recipient", ["someone@localhost", "play@localhost", "play+sometoken@elsewhere.example"]
)
def test_the_smtp_listener_refuses_any_other_recipient(smtp_port, recipient):
    with (
        smtplib.SMTP("127.0.0.1", smtp_port) as client,
        pytest.raises(smtplib.SMTPRecipientsRefused) as refused,
    ):
        client.sendmail("alice@example.org", [recipient], b"Subject: hi\r\n\r\nhi\r\n")
    assert refused.value.recipients[recipient][0] == 550


def test_run_smtpd_listens_until_it_is_told_to_stop():
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "manage.py", "run_smtpd", "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        with connect_when_listening(port, process) as client:
            assert client.ehlo()[0] == 250
            assert client.docmd("MAIL FROM:<alice@example.org>")[0] == 250
            assert client.docmd("RCPT TO:<someone@localhost>")[0] == 550
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    assert b"on 127.0.0.1:%d; Ctrl-C stops." % port in out and out.endswith(b"Stopped.\n")


def connect_when_listening(port: int, process: subprocess.Popen) -> smtplib.SMTP:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        try:
            return smtplib.SMTP("127.0.0.1", port, timeout=10)
        except OSError:
            time.sleep(0.1)
    raise AssertionError("run_smtpd did not start listening")


# --- the webhook: anymail's Postmark inbound -----------------------------------------------------

WEBHOOK = "/anymail/postmark/inbound/"
SECRET = "lowenherz:a-shared-secret"


@pytest.fixture
def webhook_secret(settings) -> str:
    settings.ANYMAIL = {"WEBHOOK_SECRET": SECRET}
    return SECRET


def basic_auth(secret: str) -> str:
    return "Basic " + base64.b64encode(secret.encode()).decode()


def postmark_payload(raw: bytes, address: str, sender: str, *, with_raw_email: bool) -> dict:
    """What Postmark posts for an inbound email (RawEmail if the server is set to add it)."""
    payload = {
        "FromFull": {"Email": sender, "Name": "A player"},
        "ToFull": [{"Email": address, "Name": "Löwenherz", "MailboxHash": ""}],
        "CcFull": [],
        "BccFull": [],
        "OriginalRecipient": address,
        "Subject": "Re: Test game",
        "MessageID": "5e0c1d2a-77b4-4f0e-9c3b-1a2b3c4d5e6f",
        "TextBody": "decide 1, 3\n\nOn Monday, Löwenherz wrote:\n> decide 2\n",
        "HtmlBody": "",
        "StrippedTextReply": "decide 1, 3",
        "Headers": [{"Name": "Return-Path", "Value": f"<{sender}>"}],
        "Attachments": [],
    }
    if with_raw_email:
        payload["RawEmail"] = raw.decode()
    return payload


@pytest.mark.parametrize("with_raw_email", [True, False])
def test_a_reply_through_the_webhook_moves(
    client, game, outbox, starter, webhook_secret, with_raw_email
):
    address = address_of(game, starter.colour)
    raw = sample("gmail_top_posted.eml", address, starter.email)
    payload = postmark_payload(raw, address, starter.email, with_raw_email=with_raw_email)
    response = client.post(
        WEBHOOK,
        json.dumps(payload),
        content_type="application/json",
        HTTP_AUTHORIZATION=basic_auth(webhook_secret),
    )
    assert response.status_code == 200
    assert pending(game) == {starter.colour: "decide 1, 3"}
    assert [accepted for _, accepted, _, _ in outbox.move_replies] == [True]


@pytest.mark.parametrize(
    "authorization",
    [None, basic_auth("lowenherz:wrong"), basic_auth("someone:else")],
    ids=["no secret", "wrong password", "wrong user"],
)
def test_the_webhook_refuses_a_post_without_the_secret(
    client, game, outbox, starter, webhook_secret, authorization
):
    address = address_of(game, starter.colour)
    raw = sample("gmail_top_posted.eml", address, starter.email)
    payload = postmark_payload(raw, address, starter.email, with_raw_email=True)
    before = snapshot(game)
    extra = {"HTTP_AUTHORIZATION": authorization} if authorization else {}
    response = client.post(WEBHOOK, json.dumps(payload), content_type="application/json", **extra)
    assert response.status_code == 400  # anymail: SuspiciousOperation, "invalid basic auth"
    assert snapshot(game) == before and outbox == Outbox()


def test_ending_an_alliance_by_email_leaves_the_address_for_the_phases_move(
    game, outbox, starter, other
):
    from engine.notation import format_cell
    from engine.serialize import state_from_json, state_to_json

    state = state_from_json(game.state)
    castles = {
        c: cell for cell, c in state.pos.castles.items() if c in (starter.colour, other.colour)
    }
    mine, theirs = castles[starter.colour], castles[other.colour]
    state.pos.alliances.add(
        (mine, theirs) if (mine[1], mine[0]) <= (theirs[1], theirs[0]) else (theirs, mine)
    )
    Game.objects.filter(pk=game.pk).update(state=state_to_json(state))
    address = address_of(game, starter.colour)
    text = f"break alliance {format_cell(mine)} {format_cell(theirs)}"
    result = handle_message(email(text, to=address, sender=starter.email))
    assert result.verdict == Verdict.ACCEPTED
    assert not is_used(address)
    again = handle_message(email("decide 1, 3", to=address, sender=starter.email))
    assert again.verdict == Verdict.ACCEPTED and pending(game)[starter.colour] == "decide 1, 3"
