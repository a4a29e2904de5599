"""Security issue 9: what a person or a mail server sends is bounded before it is read,
refusals never go to a forged sender, answers echo little, and the webhook answers a
malformed post with 400, not 500.

- D1: a move of many spaces froze the site (the game page, and email with a real token).
- D3: a reply with an unknown token was answered at its From: (backscatter).
- D8: malformed JSON, or a JSON list, posted to the webhook gave HTTP 500 inside anymail.
- Echoes: a 1000-line email was answered with every line; the page quoted a whole move.

No clock is asserted: a test that used to take minutes has a timeout (pytest-timeout)
far above what the bounded code needs.
"""

from __future__ import annotations

import io
import json
import smtplib
from email.message import EmailMessage

import pytest
from django.contrib.messages import get_messages
from django.core.management import call_command
from django.test import override_settings
from django.urls import reverse

from games.mail import inbound
from games.mail.inbound import OVER_LIMIT, TOO_LARGE, UNKNOWN, USED, Verdict, handle_message
from games.mail.receiver import MAX_WEBHOOK_BYTES
from games.management.commands import receive_email
from games.models import Game, OutgoingEmail, PendingSubmission
from tests.site import test_inbound as base
from tests.site.test_inbound import (
    SECRET,
    WEBHOOK,
    Outbox,
    address_of,
    basic_auth,
    email,
    pending,
    postmark_payload,
    snapshot,
)

# The fixtures of the inbound tests, under their names here.
fast_passwords, outbox, starter = base.fast_passwords, base.outbox, base.starter
smtp_port, webhook_secret = base.smtp_port, base.webhook_secret

pytestmark = pytest.mark.django_db

VICTIM = "victim@example.net"
FORGED_TOKEN = "play+madeUpToken123@localhost"


def rates(**changed: str):
    from django.conf import settings

    return override_settings(RATE_LIMITS={**settings.RATE_LIMITS, **changed})


# --- D1 and echoes on the game page -----------------------------------------------------------


def submit(client, user, game: Game, data: dict) -> list[str]:
    """POST to the submit view; the messages it queued for the next page."""
    client.force_login(user)
    # made for the current phase, as the page's forms are (a form for none is refused)
    data = {"phase": str(Game.objects.get(pk=game.pk).phase_number), **data}
    response = client.post(reverse("submit", args=[game.pk]), data)
    assert response.status_code == 302
    return [str(message) for message in get_messages(response.wsgi_request)]


@pytest.mark.timeout(10)
def test_a_huge_move_on_the_game_page_is_refused_before_it_is_read(client, game, alice):
    before = snapshot(game)
    [message] = submit(client, alice, game, {"move": "walls F7" + " " * 1_000_000 + "pass"})
    assert message == "Not accepted: a move is at most 500 characters, and this one has 1000012"
    assert snapshot(game) == before


def test_the_page_quotes_only_the_start_of_a_refused_move(client, game, alice):
    move = "decide 1 " + "9 " * 240  # within the limit; the error quotes the move
    [message] = submit(client, alice, game, {"move": move})
    assert message.startswith("Not accepted: 'decide 1 9 9") and "…" in message
    assert len(message) < 400 and PendingSubmission.objects.count() == 0


@pytest.mark.parametrize(
    ("data", "sentence"),
    [
        (
            {"form": "place", "castle": "F7 " * 100, "knight": "F8"},
            "Castle: Ensure this value has at most 200 characters (it has 299).",
        ),
        (
            {"form": "walls", "walls": "F7/F8 " * 100},
            "Walls, in the order placed: "
            "Ensure this value has at most 500 characters (it has 599).",
        ),
    ],
)
def test_every_text_field_of_the_play_forms_has_a_limit(client, game, alice, data, sentence):
    before = snapshot(game)
    assert submit(client, alice, game, data) == [f"Not accepted: {sentence}"]
    assert snapshot(game) == before


# --- D1 and echoes by email ----------------------------------------------------------------------


@pytest.mark.timeout(10)
def test_a_long_run_of_spaces_by_email_is_refused_before_it_is_read(game, outbox, starter):
    text = "walls F7" + " " * 60_000 + "x/\npass"
    address = address_of(game, starter.colour)
    before = snapshot(game)
    result = handle_message(email(text, to=address, sender=starter.email))
    assert result.verdict == Verdict.REFUSED and "a move is at most 500 characters" in result.reason
    [(_, accepted, commands, message)] = outbox.move_replies
    assert not accepted and len(message) < 1000 and sum(map(len, commands)) < 1000
    assert snapshot(game) == before


def test_a_thousand_line_email_is_answered_with_a_short_echo(game, starter):
    lines = [f"line {n}: not a command, just some words" for n in range(1000)]
    handle_message(
        email("\n".join(lines), to=address_of(game, starter.colour), sender=starter.email)
    )
    [answer] = OutgoingEmail.objects.all()
    assert answer.kind == "move_refused" and answer.to == starter.email
    assert "line 9: not a command" in answer.text and "line 10:" not in answer.text
    assert "… 990 more lines not shown" in answer.text
    assert len(answer.text) < 4000 and len(answer.html) < 8000


def test_only_the_start_of_a_long_email_is_read_and_a_cut_applies_nothing(game, outbox, starter):
    text = "decide 1, 3\n" + "words\n" * 3000  # the quote may hide the rest of a move
    result = handle_message(email(text, to=address_of(game, starter.colour), sender=starter.email))
    assert result.reason.startswith("Nothing was applied: only the first 2000 lines")
    assert PendingSubmission.objects.count() == 0


@pytest.mark.parametrize("line", ["decide 1" + " " * 2000 + ", 3", "decide 1, 3" + "." * 995])
def test_a_line_too_long_to_read_is_refused_not_cut_to_a_shorter_move(game, outbox, starter, line):
    result = handle_message(email(line, to=address_of(game, starter.colour), sender=starter.email))
    assert "a move is at most 500 characters" in result.reason
    assert PendingSubmission.objects.count() == 0


def test_a_thousand_moves_in_one_email_are_refused_with_a_short_echo(game, starter):
    handle_message(
        email("decide 1\n" * 1000, to=address_of(game, starter.colour), sender=starter.email)
    )
    [answer] = OutgoingEmail.objects.all()
    assert (
        "one move per reply, please: this reply has 'decide 1' and 'decide 1' and "
        "'decide 1' and 997 more" in answer.text
    )
    assert "… 990 more lines not shown" in answer.text and len(answer.text) < 4000
    assert PendingSubmission.objects.count() == 0


@pytest.mark.timeout(10)
def test_a_deep_html_email_is_read_in_bounded_time(game, outbox, starter):
    message = EmailMessage()
    message["From"], message["To"] = starter.email, address_of(game, starter.colour)
    # Under MAX_HTML_CHARS; each end tag used to search all the open ones (27 s here).
    message.set_content("<a>" * 40_000 + "decide 1, 3" + "</b>" * 19_000, subtype="html")
    result = handle_message(message.as_bytes())
    assert result.verdict == Verdict.ACCEPTED


# --- D3: no backscatter --------------------------------------------------------------------------


def forged(n: int) -> bytes:
    return email(f"decide 1, 3 ({n})", to=FORGED_TOKEN, sender=VICTIM)


def test_fifty_forged_replies_send_no_email(game):
    before = snapshot(game)
    verdicts = {handle_message(forged(n)).verdict for n in range(50)}
    assert verdicts == {Verdict.REFUSED}
    assert OutgoingEmail.objects.count() == 0 and snapshot(game) == before


def test_forged_replies_by_the_pipe_send_no_email(game):
    for n in range(5):
        out = io.StringIO()
        call_command("receive_email", stdin=io.BytesIO(forged(n)), stdout=out)
        assert out.getvalue().startswith("receive_email: refused: this reply address is not")
    assert OutgoingEmail.objects.count() == 0


def test_forged_replies_over_smtp_send_no_email(game, smtp_port):
    with smtplib.SMTP("127.0.0.1", smtp_port) as client:
        for n in range(5):
            client.sendmail(VICTIM, [FORGED_TOKEN], forged(n))
    assert OutgoingEmail.objects.count() == 0


def test_forged_replies_through_the_webhook_send_no_email(client, game, webhook_secret):
    for n in range(5):
        payload = postmark_payload(forged(n), FORGED_TOKEN, VICTIM, with_raw_email=True)
        response = client.post(
            WEBHOOK,
            json.dumps(payload),
            content_type="application/json",
            HTTP_AUTHORIZATION=basic_auth(webhook_secret),
        )
        assert response.status_code == 200
    assert OutgoingEmail.objects.count() == 0


def test_a_stranger_with_a_players_address_gets_no_email_nor_does_the_player(game, starter):
    handle_message(email("decide 1, 3", to=address_of(game, starter.colour), sender=VICTIM))
    assert OutgoingEmail.objects.count() == 0 and PendingSubmission.objects.count() == 0


def huge(to: str, sender: str) -> bytes:
    message = EmailMessage()
    message["From"], message["To"] = sender, to
    message.set_content("decide 1, 3\n" + "x" * (inbound.MAX_MESSAGE_BYTES + 1))
    return message.as_bytes()


def test_a_large_email_with_an_unknown_token_gets_no_email(game):
    assert handle_message(huge(FORGED_TOKEN, VICTIM)).verdict == Verdict.REFUSED
    assert OutgoingEmail.objects.count() == 0


def test_a_refusal_goes_to_the_registered_address_not_the_from_header(game, outbox, starter):
    shouted = starter.email.upper()  # the same person, as the sender check sees it
    handle_message(huge(address_of(game, starter.colour), shouted))
    assert outbox.refusals == [(starter.email, TOO_LARGE)]


def test_the_pipe_reads_a_huge_email_only_as_far_as_it_needs(game, outbox, starter):
    raw = huge(address_of(game, starter.colour), starter.email) + b"x" * 5_000_000
    stream = io.BytesIO(raw)
    assert len(receive_email.read_bounded(stream)) == inbound.MAX_MESSAGE_BYTES + 1
    assert stream.read() == b""  # the rest was drained, not left in the pipe
    call_command("receive_email", stdin=io.BytesIO(raw), stdout=io.StringIO())
    assert outbox.refusals == [(starter.email, TOO_LARGE)]


# --- rate limits ---------------------------------------------------------------------------------


def test_refusals_to_one_address_are_limited_per_day(game, outbox, starter):
    address = address_of(game, starter.colour)
    handle_message(email("decide 1, 3", to=address, sender=starter.email))  # uses the address
    with rates(refusal="3/d"):
        results = [
            handle_message(email("decide 2", to=address, sender=starter.email)) for _ in range(5)
        ]
    assert [r.reason for r in results] == [USED] * 5  # refused each time...
    assert outbox.refusals == [(starter.email, USED)] * 3  # ...answered three times


def test_move_refusals_count_against_the_same_limit(game, outbox, starter):
    address = address_of(game, starter.colour)
    with rates(refusal="2/d"):
        for _ in range(4):
            handle_message(email("wals F7/F8", to=address, sender=starter.email))
    assert [accepted for _, accepted, _, _ in outbox.move_replies] == [False, False]


def test_emails_from_one_sender_are_limited_per_hour(game, outbox, starter):
    address = address_of(game, starter.colour)
    with rates(inbound="2/h"):
        results = [
            handle_message(email("wals", to=address, sender=starter.email)) for _ in range(3)
        ]
        last = handle_message(email("decide 1, 3", to=address, sender=starter.email))
    assert [r.reason for r in results][2:] == [OVER_LIMIT] and last.reason == OVER_LIMIT
    assert len(outbox.move_replies) == 2 and pending(game) == {}


def test_forged_replies_count_against_their_origins_limit(game):
    """Not the limit of the address they claim (issue 21: test_inbound_origin)."""
    with rates(inbound="3/h"):
        reasons = [handle_message(forged(n)).reason for n in range(5)]
    assert reasons == [UNKNOWN] * 3 + [OVER_LIMIT] * 2


# --- D8: the webhook answers a malformed post with 400 -------------------------------------------


def post_webhook(client, body: bytes | str, secret: str = SECRET):
    return client.post(
        WEBHOOK, body, content_type="application/json", HTTP_AUTHORIZATION=basic_auth(secret)
    )


@pytest.mark.parametrize(
    ("body", "sentence"),
    [
        ("{not json", "the body is not JSON (UTF-8)"),
        (b"\xff\xfe{}", "the body is not JSON (UTF-8)"),
        ("[]", "the body must be one JSON object, not a list"),
        ('"RawEmail"', "the body must be one JSON object, not a string"),
        ("null", "the body must be one JSON object, not null"),
        ('{"RawEmail": 12}', "RawEmail must be a string, not a number"),
        ('{"FromFull": "me@example.org"}', "FromFull: must be an object, not a string"),
        ('{"ToFull": {"Email": "x@example.org"}}', "ToFull: must be a list, not an object"),
        ('{"Headers": ["Subject: hi"]}', "Headers: item 0: must be an object, not a string"),
        ('{"Headers": [{"Name": "Return-Path"}]}', "Headers: item 0: needs Value as a string"),
        ('{"Attachments": [{"ContentType": "image/png"}]}', "Attachments: item 0: needs Content"),
        (
            '{"RecordType": "Bounce"}',
            "RecordType must be Inbound: this address takes inbound emails only",
        ),
        (
            '{"Attachments": [{"ContentType": "text/plain", "Content": "not base64!"}]}',
            "the fields do not make an email (Error)",
        ),
        ('{"Subject": "two\\nlines"}', "the fields do not make an email (ValueError)"),
    ],
)
def test_a_malformed_post_is_answered_400_with_a_sentence(
    client, game, outbox, webhook_secret, body, sentence
):
    before = snapshot(game)
    response = post_webhook(client, body)
    assert (response.status_code, response.content.decode()) == (400, f"{sentence}\n")
    assert snapshot(game) == before and outbox == Outbox()


def test_a_malformed_post_without_the_secret_is_refused_for_the_secret(client, webhook_secret):
    response = post_webhook(client, "[]", secret="lowenherz:wrong")
    assert response.status_code == 400 and b"must be one JSON object" not in response.content


def test_a_post_over_the_size_limit_is_refused_before_it_is_read(client, game, webhook_secret):
    response = post_webhook(client, b" " * (MAX_WEBHOOK_BYTES + 1))
    assert response.status_code == 413
    assert response.content.decode() == f"the body is larger than {MAX_WEBHOOK_BYTES} bytes\n"
