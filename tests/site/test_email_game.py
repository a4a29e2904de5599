"""A whole 3-player game played by email alone (issue 4): invitations, then every move
sent as a reply to a "your move" email, to the final scores.

Every email the site sends goes through a real SMTP server (aiosmtpd on 127.0.0.1), and
the test reads the players' mail from what that server received. Every move is a real
RFC 822 reply (From the player, To the Reply-To `play+TOKEN@…`, "Re:" subject,
In-Reply-To, the command on top and the quoted original below, as a mail client writes
it), delivered through `manage.py receive_email`: as a subprocess on PostgreSQL (the
test commits, so the subprocess sees the game), else through `call_command` in-process.
The test stands in for the players' brains: a `RandomPlayer` per player picks a legal
move from the game's state; the move itself only travels by email.

What a Celery worker would do (send each queued email, resolve a complete phase, queue
the next phase's emails) is done in-process, in order: `outbox.send`, `services.resolve`
and `notify.phase_changed`. No task reaches a broker, and no web request is made (the
players' one web step, joining a game from the invitation, is `services.join_game`).
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from datetime import timedelta
from email.message import EmailMessage
from email.utils import formatdate, getaddresses, make_msgid, parseaddr
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.signals import request_started
from django.utils import timezone

from engine.ai import RandomPlayer
from engine.moves import EndAlliance
from engine.notation import format_move
from games import services, tasks
from games.mail import compose, notify, outbox
from games.models import Game, OutgoingEmail
from games.show.presenter import present
from tests.site.conftest import database_url
from tests.site.test_outbox import SMTPServer

ROOT = Path(__file__).resolve().parents[2]
ON_POSTGRESQL = settings.DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql"
# On PostgreSQL the test commits, so that `manage.py receive_email` in a subprocess sees
# the game; SQLite's test database is in memory, out of a subprocess's reach.
pytestmark = pytest.mark.django_db(transaction=ON_POSTGRESQL)

GAME_SEED = 7  # a game with duels and negotiations (asserted below)
MAX_REPLIES = 400  # a basic game takes far fewer; more means the game is stuck
SUBPROCESS_EVERY = 12  # one reply in so many goes through a real `manage.py` process


@pytest.fixture(autouse=True)
def fast_password_hashing(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


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
def no_broker(monkeypatch) -> None:
    """Tasks are not sent anywhere: the test does the worker's part itself, in order."""
    for task in (tasks.send_email, tasks.resolve_phase, tasks.notify_phase, tasks.play_computer):
        monkeypatch.setattr(task, "delay", lambda *args, **kwargs: None)


@pytest.fixture
def no_web_requests():
    """Every request Django handles, here or in a live server (there should be none)."""
    requests: list[object] = []

    def record(sender, **kwargs):
        requests.append(kwargs.get("environ") or kwargs.get("scope") or sender)

    request_started.connect(record)
    yield requests
    request_started.disconnect(record)


class Mailboxes:
    """The players' inboxes: what the SMTP server received, read once each."""

    def __init__(self, smtp: SMTPServer) -> None:
        self.smtp = smtp
        self.read = 0

    def deliver(self) -> list[EmailMessage]:
        """The worker's part: send every queued email (through SMTP); the new messages."""
        for pk in (
            OutgoingEmail.objects.filter(status=OutgoingEmail.Status.QUEUED)
            .order_by("pk")
            .values_list("pk", flat=True)
        ):
            assert outbox.send(pk), f"email {pk} was not sent"
        assert not OutgoingEmail.objects.exclude(
            status__in=[
                OutgoingEmail.Status.SENT,
                OutgoingEmail.Status.COALESCING,  # held, or told in
                OutgoingEmail.Status.FOLDED,
            ]
        ).exists(), "an email was not sent"  # a later one
        new = self.smtp.messages[self.read :]
        self.read = len(self.smtp.messages)
        return new


def kind_of(message: EmailMessage) -> str:
    return str(message[compose.KIND_HEADER] or "")


def recipient(message: EmailMessage) -> str:
    return parseaddr(str(message["To"]))[1]


def text_of(message: EmailMessage) -> str:
    return message.get_body(("plain",)).get_content()


def reply(original: EmailMessage, sender: str, name: str, commands: list[str]) -> bytes:
    """What a mail client sends on "Reply": top-posted commands, the original quoted."""
    answer = EmailMessage()
    answer["From"] = f"{name} <{sender}>"
    answer["To"] = str(original["Reply-To"])
    answer["Subject"] = f"Re: {original['Subject']}"
    answer["Date"] = formatdate(localtime=True)
    answer["Message-ID"] = make_msgid(domain="example.org")
    answer["In-Reply-To"] = answer["References"] = str(original["Message-ID"])
    quoted = "\n".join(f"> {line}".rstrip() for line in text_of(original).splitlines())
    answer.set_content(
        "\n".join(commands) + f"\n\nOn {original['Date']}, {original['From']} wrote:\n{quoted}\n"
    )
    return answer.as_bytes()


def receive_in_subprocess(raw: bytes, tmp_path: Path) -> str:
    """`manage.py receive_email` as a mail server's pipe runs it, on the test database.
    Its own task dispatches go to a broker folder of its own (no Redis queue is touched);
    the emails it queues are sent by the test like the others."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url(settings.DATABASES["default"]),
        "REDIS_URL": "",
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "lowenherz_site.settings",
        "LOWENHERZ_VAR": str(tmp_path),
    }
    (tmp_path / "broker").mkdir(exist_ok=True)
    (tmp_path / "broker-control").mkdir(exist_ok=True)
    done = subprocess.run(
        [sys.executable, "manage.py", "receive_email"],
        input=raw,
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    return done.stdout.decode()


def receive_in_process(raw: bytes) -> str:
    out = io.StringIO()
    call_command("receive_email", stdin=io.BytesIO(raw), stdout=out)
    return out.getvalue()


def test_a_whole_three_player_game_is_played_by_email_alone(
    alice, bob, charlie, smtp, no_broker, no_web_requests, tmp_path
):
    inbox = Mailboxes(smtp)
    people = {u.email: u for u in (alice, bob, charlie)}

    # --- the invitations ----------------------------------------------------------------
    game = services.create_game(
        alice,
        name="Mail game",
        player_count=3,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=True,
        colour="red",
        computer_colours=[],
    )
    Game.objects.filter(pk=game.pk).update(seed=GAME_SEED)
    game.refresh_from_db()
    for friend in (bob, charlie):
        compose.invitation(game, friend.email, alice)
    invitations = inbox.deliver()
    assert sorted(map(recipient, invitations)) == [bob.email, charlie.email]
    for message in invitations:
        assert str(message["Subject"]) == "Alice invites you to play Löwenherz: Mail game"
        assert f"/invite/{game.invite_token}/" in text_of(message) or game.invite_token in text_of(
            message
        )
    # Joining is the one web step (the join link); done here through the service.
    services.join_game(game.pk, bob, "ochre")
    services.join_game(game.pk, charlie, "lilac")
    game.refresh_from_db()
    assert game.status == Game.Status.RUNNING
    colour_of = {s.user.email: s.colour for s in game.seats.select_related("user")}
    brains = {colour: RandomPlayer(f"mail/{GAME_SEED}/{colour}") for colour in colour_of.values()}

    # --- the game: "your move" emails answered by replies --------------------------------
    notify.phase_changed(game.pk, game.phase_number)  # what the worker does at the start
    asks: list[EmailMessage] = []
    sent: list[str] = []  # every command sent by email
    phases_seen: set[str] = set()
    replies = 0
    stale_refused = False
    carried: list[EmailMessage] = []  # delivered at the end of the last round
    while True:
        new, carried = carried + inbox.deliver(), []
        asks.extend(m for m in new if kind_of(m) == "your_turn")
        game = Game.objects.get(pk=game.pk)  # not refresh_from_db: engine_state is cached
        if game.status == Game.Status.FINISHED:
            break
        assert asks, f"the game waits for {game.waiting} but nobody was asked by email"
        ask = asks.pop(0)
        to = recipient(ask)
        colour, user = colour_of[to], people[to]
        assert str(ask["Subject"]) == "Löwenherz: Mail game"  # one thread per game
        assert colour in game.waiting, f"{to} was asked but the game does not wait for them"
        reply_address = parseaddr(str(ask["Reply-To"]))[1]
        assert reply_address.startswith("play+") and reply_address.endswith(
            f"@{settings.REPLY_DOMAIN}"
        )
        assert [a for _, a in getaddresses([str(ask["To"])])] == [user.email]

        # The player's brain: a legal move from where they sit.
        state = game.engine_state
        for _ in range(20):
            move = brains[colour].choose(state, colour)
            if not isinstance(move, EndAlliance):
                break
        else:
            pytest.fail("the computer brain only wants to end an alliance")
        command = format_move(move)
        phases_seen.add(game.phase_kind)
        raw = reply(ask, user.email, user.profile.display_name, [command])
        replies += 1
        assert replies <= MAX_REPLIES, f"no end after {MAX_REPLIES} replies: {sent[-20:]}"
        if ON_POSTGRESQL and replies % SUBPROCESS_EVERY == 1:
            said = receive_in_subprocess(raw, tmp_path)
        else:
            said = receive_in_process(raw)
        assert said.startswith(f"receive_email: accepted: Accepted: {command}."), said
        sent.append(command)

        # The confirmation rides in the person's next email (issue 10): checked below.
        answers = inbox.deliver()
        assert not [m for m in answers if recipient(m) == to], "not at once: it waits"
        confirmed = f"Your move by email was accepted: {command}."

        # The worker's part when the phase is complete: resolve it, tell everybody.
        number = game.phase_number
        if services.resolve(game.pk, number):
            game = Game.objects.get(pk=game.pk)
            assert game.phase_number == number + 1
            # An ask of the phase gone by is stale now: in a negotiation both sides are
            # asked, and the first to answer moves the game on.
            assert all(str(m[compose.PHASE_HEADER]) == f"{game.pk}/{number}" for m in asks)
            if asks and not stale_refused:  # answering one anyway is refused, by email
                late = people[recipient(asks[0])]
                said = receive_in_process(reply(asks[0], late.email, "Late", ["pass"]))
                assert said.startswith("receive_email: refused: the game has moved on"), said
                refusals = inbox.deliver()
                assert [recipient(m) for m in refusals] == [late.email]
                assert "moved on" in text_of(refusals[0])
                stale_refused = True
            asks = []
            notify.phase_changed(game.pk, game.phase_number)
        # The sweep, once the confirmation may not wait longer (the next move is slow).
        told = inbox.deliver()
        notify.flush_due(timezone.now() + timedelta(seconds=settings.EMAIL_COALESCE_SECONDS + 1))
        told += inbox.deliver()
        confirmations = [
            m
            for m in told
            if recipient(m) == to
            and (
                confirmed in text_of(m)
                or (kind_of(m) == "move_accepted" and f"    {command}" in text_of(m))
            )
        ]  # alone: the acceptance as it was written
        assert len(confirmations) == 1, [text_of(m)[:300] for m in told]
        carried = told

    # --- what was played, all by email ------------------------------------------------
    assert any(c.startswith("decide") for c in sent)
    assert any(c.startswith("bid") for c in sent), f"no duel bid in {sent}"
    assert any(c.startswith(("offer", "accept", "break")) for c in sent), (
        f"no negotiation in {sent}"
    )
    assert any(
        c.startswith(("walls", "knight", "expand", "swords", "pile", "take")) for c in sent
    ), f"no action in {sent}"
    assert not asks
    assert phases_seen >= {"decision", "negotiation", "duel", "perform", "crown"}, phases_seen
    assert stale_refused, "no stale reply address was tried"
    print(f"{replies} replies by email: {sent}")

    # --- the final scores, by email, matching the game --------------------------------
    final = game.engine_state
    assert final.is_over
    over = [m for m in new if kind_of(m) == "game_over"]
    assert sorted(map(recipient, over)) == sorted(people)
    names = present(game).names
    for message in over:
        body = text_of(message)
        assert "FINAL SCORES" in body
        for colour, player in final.pos.players.items():
            assert f"{names[colour]} ({colour})" in body
            line = next(
                line
                for line in body.splitlines()
                if line.strip().startswith(f"{names[colour]} ({colour})")
            )
            assert f"power {player.power}," in line, line
    assert not no_web_requests, "a web request was made"
    assert OutgoingEmail.objects.filter(status=OutgoingEmail.Status.SENT).count() == len(
        smtp.messages
    )
