"""Issue 21 item 1: forged mail must not silence a player.

The "inbound" limit (emails read per hour) used to be spent on the `From:` address before
the token was looked at: sixty forged emails in a player's name, with made-up tokens,
dropped that player's own reply for the hour, and nobody told them. Now an email with a
live token of the sender's own seat spends that person's limit (by account); any other
spends the limit of its origin, where it really came from: the connecting server
(run_smtpd), the client address the mail server passes (receive_email), the provider's
Received-SPF (the webhook). A player's own reply over the limit is told to them, once a
day, through the outbox.
"""

from __future__ import annotations

import io
import json
import logging
import smtplib

import pytest
from anymail.inbound import AnymailInboundMessage
from django.conf import settings
from django.core.management import call_command

from games.mail.inbound import (
    OVER_LIMIT,
    UNKNOWN,
    WRONG_SENDER,
    Verdict,
    handle_message,
    origin_of,
)
from games.mail.receiver import provider_origin
from games.models import Game, OutgoingEmail
from tests.site import test_inbound as base
from tests.site.test_inbound import (
    SECRET,
    WEBHOOK,
    address_of,
    basic_auth,
    email,
    pending,
    postmark_payload,
    snapshot,
)
from tests.site.test_inbound_bounds import rates

fast_passwords, outbox, starter, other = base.fast_passwords, base.outbox, base.starter, base.other
smtp_port, webhook_secret = base.smtp_port, base.webhook_secret

pytestmark = pytest.mark.django_db

FORGER = "smtp:203.0.113.66"  # one server sends all the forged emails of a test
STRANGER = "mallory@example.net"


def forged(n: int, victim: str) -> bytes:
    """An email in the victim's name to a made-up reply address."""
    return email(f"decide 1, 3 ({n})", to=f"play+madeUpToken{n:03d}@localhost", sender=victim)


def reasons(results) -> list[str]:
    return [result.reason for result in results]


def dropped_notices() -> list[OutgoingEmail]:
    return list(OutgoingEmail.objects.filter(kind="reply_dropped").order_by("pk"))


# --- the case --------------------------------------------------------------------------


def test_sixty_forged_emails_in_a_players_name_do_not_drop_their_reply(game, outbox, starter):
    count = int(settings.RATE_LIMITS["inbound"].split("/")[0])
    results = [handle_message(forged(n, starter.email), origin=FORGER) for n in range(count + 1)]
    assert reasons(results) == [UNKNOWN] * count + [OVER_LIMIT]  # the forger is stopped
    # ...and the player, even sending through the very same server, is not.
    move = handle_message(
        email("decide 1, 3", to=address_of(game, starter.colour), sender=starter.email),
        origin=FORGER,
    )
    assert move.verdict == Verdict.ACCEPTED and pending(game) == {starter.colour: "decide 1, 3"}
    assert dropped_notices() == [] and outbox.refusals == []


# --- what counts by origin -----------------------------------------------------------------------


def test_emails_without_a_live_token_of_their_own_count_by_their_origin(game, starter):
    with rates(inbound="2/h"):
        first = [handle_message(forged(n, starter.email), origin=FORGER) for n in range(3)]
        elsewhere = handle_message(forged(3, starter.email), origin="smtp:198.51.100.7")
    assert reasons(first) == [UNKNOWN, UNKNOWN, OVER_LIMIT]
    assert elsewhere.reason == UNKNOWN  # another origin's limit


def test_a_players_token_from_a_stranger_spends_no_limit_of_the_player(game, outbox, starter):
    address = address_of(game, starter.colour)
    with rates(inbound="2/h"):
        stolen = [
            handle_message(email("decide 1, 3", to=address, sender=STRANGER), origin=FORGER)
            for _ in range(3)
        ]
        move = handle_message(email("decide 1, 3", to=address, sender=starter.email), origin=FORGER)
    assert reasons(stolen) == [WRONG_SENDER, WRONG_SENDER, OVER_LIMIT]
    assert move.verdict == Verdict.ACCEPTED and outbox.refusals == []


def test_another_players_token_in_a_players_name_spends_no_limit_of_either(
    game, outbox, starter, other
):
    """The From: of the starter, the token of the other player: foreign to both."""
    with rates(inbound="2/h"):
        foreign = [
            handle_message(
                email("decide 2", to=address_of(game, other.colour), sender=starter.email),
                origin=FORGER,
            )
            for _ in range(3)
        ]
        moves = [
            handle_message(
                email(text, to=address_of(game, player.colour), sender=player.email), origin=FORGER
            )
            for text, player in (("decide 1, 3", starter), ("decide 2", other))
        ]
    assert reasons(foreign) == [WRONG_SENDER, WRONG_SENDER, OVER_LIMIT]
    assert [move.verdict for move in moves] == [Verdict.ACCEPTED] * 2


def test_a_finished_games_token_counts_by_origin(game, outbox, starter):
    address = address_of(game, starter.colour)
    Game.objects.filter(pk=game.pk).update(status=Game.Status.FINISHED)
    with rates(inbound="1/h"):
        here = [
            handle_message(email("decide 1, 3", to=address, sender=starter.email), origin=FORGER)
            for _ in range(2)
        ]
        elsewhere = handle_message(
            email("decide 1, 3", to=address, sender=starter.email), origin="smtp:198.51.100.7"
        )
    assert here[0].reason.startswith("the game is over") and here[1].reason == OVER_LIMIT
    assert elsewhere.reason.startswith("the game is over")  # not the player's account's
    assert dropped_notices() == []


# --- a player's own replies ----------------------------------------------------------------------


def test_a_players_own_replies_count_by_account_whatever_their_origin(game, outbox, starter):
    address = address_of(game, starter.colour)
    with rates(inbound="2/h"):
        results = [
            handle_message(
                email("wals", to=address, sender=starter.email), origin=f"smtp:198.51.100.{n}"
            )
            for n in range(3)
        ]
    assert [r.verdict for r in results][:2] == [Verdict.REFUSED] * 2
    assert results[2].reason == OVER_LIMIT


def test_a_player_whose_reply_is_dropped_is_told_once_a_day(game, outbox, starter):
    address = address_of(game, starter.colour)
    with rates(inbound="2/h"):
        results = [
            handle_message(email("wals", to=address, sender=starter.email), origin=FORGER)
            for _ in range(5)
        ]
        [notice] = dropped_notices()  # three dropped, one notice
    assert reasons(results)[2:] == [OVER_LIMIT] * 3
    user = game.seats.get(colour=starter.colour).user
    assert (notice.to, notice.user, notice.game_id) == (starter.email, user, game.pk)
    assert notice.status == OutgoingEmail.Status.QUEUED
    assert "were not read" in notice.subject and game.name in notice.subject
    assert "than the site reads from one player (2 per hour)" in notice.text
    assert f"/games/{game.pk}/" in notice.text and "limited to 1 per day" in notice.text
    assert notice.headers["Auto-Submitted"] == "auto-replied"
    assert "List-Unsubscribe" not in notice.headers  # the answer to the player's own email


def test_a_strangers_dropped_emails_tell_nobody(game, outbox, starter):
    with rates(inbound="1/h"):
        for n in range(3):
            handle_message(forged(n, starter.email), origin=FORGER)
            handle_message(
                email("decide 1, 3", to=address_of(game, starter.colour), sender=STRANGER),
                origin=FORGER,
            )
    assert dropped_notices() == [] and outbox.refusals == []


# --- where an email comes from, by the way in ----------------------------------------------------


@pytest.mark.parametrize(
    ("address", "origin"),
    [
        ("203.0.113.5", "smtp:203.0.113.5"),
        ("::ffff:203.0.113.5", "smtp:203.0.113.5"),
        ("2001:db8:1:2:3:4:5:6", "smtp:2001:db8:1:2::/64"),  # one machine may hold a /64
        ("[2001:db8:1:2::9]", "smtp:2001:db8:1:2::/64"),
        ("", "smtp"),
        (None, "smtp"),  # one origin for all the way in cannot tell apart
    ],
)
def test_an_origin_is_the_way_in_and_the_network_address(address, origin):
    assert origin_of("smtp", address) == origin


def spf(ip: str) -> str:
    return (
        f"Pass (sender SPF authorized) identity=mailfrom; client-ip={ip}; "
        "helo=mail.example.org; envelope-from=alice@example.org; receiver=play@localhost"
    )


@pytest.mark.parametrize(
    ("headers", "origin"),
    [
        ([spf("192.0.2.10")], "postmark:192.0.2.10"),
        ([], "postmark"),
        ([spf("192.0.2.10"), spf("192.0.2.11")], "postmark"),  # the sender wrote one of them
        (["None (no SPF record)"], "postmark"),
    ],
)
def test_the_webhooks_origin_is_the_providers_received_spf(headers, origin):
    raw = (
        "".join(f"Received-SPF: {value}\r\n" for value in headers)
        + "From: alice@example.org\r\nSubject: hi\r\n\r\ndecide 1, 3\r\n"
    )
    assert provider_origin(AnymailInboundMessage.parse_raw_mime(raw), "postmark") == origin


def over_limit_logged(caplog) -> int:
    return sum(
        OVER_LIMIT in record.getMessage()
        for record in caplog.records
        if record.name == "games.mail.inbound"
    )


@pytest.mark.django_db(transaction=True)  # the listener's thread sees committed rows only
def test_the_smtp_listener_counts_forged_mail_by_the_connecting_address(
    game, outbox, starter, smtp_port, caplog
):
    caplog.set_level(logging.INFO, logger="games.mail.inbound")

    def send(source: str, raw: bytes, to: str) -> None:
        with smtplib.SMTP("127.0.0.1", smtp_port, source_address=(source, 0)) as client:
            client.sendmail(starter.email, [to], raw)

    with rates(inbound="2/h"):
        for n in range(3):
            send("127.0.0.2", forged(n, starter.email), f"play+madeUpToken{n:03d}@localhost")
        assert over_limit_logged(caplog) == 1
        send("127.0.0.3", forged(3, starter.email), "play+madeUpToken003@localhost")
        assert over_limit_logged(caplog) == 1  # another server: its own limit
        address = address_of(game, starter.colour)
        send("127.0.0.2", email("decide 1, 3", to=address, sender=starter.email), address)
    assert pending(game) == {starter.colour: "decide 1, 3"}


def test_the_pipe_counts_forged_mail_by_the_client_address(game, outbox, starter):
    def pipe(raw: bytes, client: str) -> str:
        out = io.StringIO()
        call_command("receive_email", "--client-address", client, stdin=io.BytesIO(raw), stdout=out)
        return out.getvalue().strip()

    with rates(inbound="2/h"):
        answers = [pipe(forged(n, starter.email), "192.0.2.1") for n in range(3)]
        elsewhere = pipe(forged(3, starter.email), "192.0.2.2")
        address = address_of(game, starter.colour)
        move = pipe(email("decide 1, 3", to=address, sender=starter.email), "192.0.2.1")
    assert answers[2] == f"receive_email: refused: {OVER_LIMIT}"
    assert answers[:2] == [f"receive_email: refused: {UNKNOWN}"] * 2
    assert elsewhere == f"receive_email: refused: {UNKNOWN}"
    assert move.startswith("receive_email: accepted: Accepted: decide 1, 3.")


def test_the_webhook_counts_forged_mail_by_the_providers_client_ip(
    client, game, outbox, starter, webhook_secret, caplog
):
    caplog.set_level(logging.INFO, logger="games.mail.inbound")

    def post(raw: bytes, to: str, ip: str) -> None:
        received = f"Received-SPF: {spf(ip)}\n".encode() + raw  # what the provider adds
        payload = postmark_payload(received, to, starter.email, with_raw_email=True)
        response = client.post(
            WEBHOOK,
            json.dumps(payload),
            content_type="application/json",
            HTTP_AUTHORIZATION=basic_auth(SECRET),
        )
        assert response.status_code == 200

    before = snapshot(game)
    with rates(inbound="2/h"):
        for n in range(3):
            post(forged(n, starter.email), f"play+madeUpToken{n:03d}@localhost", "192.0.2.1")
        assert over_limit_logged(caplog) == 1 and snapshot(game) == before
        post(forged(3, starter.email), "play+madeUpToken003@localhost", "192.0.2.2")
        assert over_limit_logged(caplog) == 1
        address = address_of(game, starter.colour)
        post(email("decide 1, 3", to=address, sender=starter.email), address, "192.0.2.1")
    assert pending(game) == {starter.colour: "decide 1, 3"}
