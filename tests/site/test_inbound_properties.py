"""Property tests (hypothesis) of the ways in by email (security issue 9): whatever the
bytes of an email or the body of a webhook post, the answer is a verdict or a 4xx with a
sentence, never an exception or a 500; a refusal changes nothing; and no email goes to
anyone but a seat's registered address.

The examples of one test share its database transaction: each compares what it changed
with a snapshot taken just before it. The rate limits are raised, or the examples would
soon be refused for being many (test_inbound_bounds tests the limits).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from email.message import EmailMessage

import pytest
from django.conf import settings as django_settings
from django.test import override_settings
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from games.mail import replies
from games.mail.inbound import Verdict, handle_message
from games.models import OutgoingEmail, PendingSubmission
from tests.site import test_inbound as base
from tests.site.test_inbound import WEBHOOK, address_of, basic_auth, snapshot

pytestmark = pytest.mark.django_db

fast_passwords, starter, webhook_secret = base.fast_passwords, base.starter, base.webhook_secret

EXAMPLES = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@pytest.fixture(autouse=True)
def many_allowed() -> Iterator[None]:
    limits = {**django_settings.RATE_LIMITS, "inbound": "100000/h", "refusal": "100000/d"}
    with override_settings(RATE_LIMITS=limits):
        yield


def registered_addresses() -> set[str]:
    from django.contrib.auth.models import User

    return set(User.objects.values_list("email", flat=True))


def check_outcome(result, before: tuple, game, emails_before: int) -> None:
    """A verdict; a refusal changes no game; any answer goes to a registered address."""
    assert result.verdict in set(Verdict)
    event(f"{result.verdict}: {result.reason[:30]}")  # --hypothesis-show-statistics
    if result.verdict != Verdict.ACCEPTED:
        assert snapshot(game)[:6] == before[:6]  # the reply tokens aside: answers make them
    new = OutgoingEmail.objects.order_by("pk")[emails_before:]
    assert len(new) <= 1 and {email.to for email in new} <= registered_addresses()


# --- what a person may write ----------------------------------------------------------------

LINES = st.sampled_from(
    [
        "decide 1, 3",
        "decide 2",
        "pass",
        "walls F7 / F8",
        "knight F7",
        "expand G7 G8",
        "treasure 10",
        "> decide 2",
        "On Monday, Löwenherz wrote:",
        "-- ",
        "Sent from my iPhone",
        "From: x Sent: y",
        "________________",
        "1. decide 1",
        "<div>",
        "x" * 1200,
        " " * 3000,
        "am " + " schrieb" * 200,
        "décidé",
        "\u200b",
        "\r",
        "",
    ]
)
BODIES = st.one_of(
    st.lists(st.one_of(LINES, st.text(max_size=80)), max_size=40).map("\n".join),
    st.text(max_size=3000),
)


@EXAMPLES
@given(text=BODIES)
def test_any_text_reads_as_commands_ignored_lines_or_errors(text: str) -> None:
    read = replies.commands(replies.strip_quoted(text))
    assert read.moves == () or not read.errors
    assert all(len(line) <= replies.MAX_LINE_CHARS + 1 for line in read.ignored)


@EXAMPLES
@given(
    html=st.one_of(
        st.text(max_size=2000),
        st.lists(
            st.sampled_from(
                [
                    "<div>",
                    "</div>",
                    "<blockquote>",
                    "</blockquote>",
                    "<br>",
                    "<p>",
                    "decide 1, 3",
                    "<div id=divRplyFwdMsg>",
                    "<div style='border-top:solid'>",
                    "&nbsp;",
                    "<pre>",
                    "<!--",
                    "<script>",
                    "</span>",
                    "<",
                ]
            ),
            max_size=200,
        ).map("".join),
    )
)
def test_any_html_reads_as_text(html: str) -> None:
    assert isinstance(replies.html_text(html), str)


@EXAMPLES
@given(
    body=st.one_of(BODIES.map(str.encode), st.binary(max_size=3000)),
    content_type=st.sampled_from(
        [
            "text/plain; charset=utf-8",
            "text/plain; charset=x-unknown",
            "text/html",
            "text/plain; format=flowed; delsp=yes",
            "multipart/alternative; boundary=b",
            "multipart/mixed",
            "application/octet-stream",
            'text/plain; charset="',
        ]
    ),
    encoding=st.sampled_from(["8bit", "base64", "quoted-printable", "x-unknown"]),
)
def test_any_body_from_the_seats_player_is_answered_or_accepted(
    game, starter, body: bytes, content_type: str, encoding: str
) -> None:
    raw = (
        f"From: {starter.email}\r\nTo: {address_of(game, starter.colour)}\r\n"
        f"Subject: Re: your move\r\nMIME-Version: 1.0\r\nContent-Type: {content_type}\r\n"
        f"Content-Transfer-Encoding: {encoding}\r\n\r\n"
    ).encode() + body
    before, emails = snapshot(game), OutgoingEmail.objects.count()
    check_outcome(handle_message(raw), before, game, emails)
    PendingSubmission.objects.all().delete()  # an accepted move: the next example starts over


@EXAMPLES
@given(
    raw=st.one_of(
        st.binary(max_size=2000),
        st.text(max_size=2000).map(lambda t: t.encode("utf-8", "surrogatepass")),
    )
)
def test_any_bytes_are_handled_and_answer_nobody(game, raw: bytes) -> None:
    before, emails = snapshot(game), OutgoingEmail.objects.count()
    result = handle_message(raw)
    assert result.verdict in (Verdict.IGNORED, Verdict.REFUSED)
    assert snapshot(game) == before and OutgoingEmail.objects.count() == emails


# --- the webhook ------------------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=12,
)
FIELD_NAMES = [
    "RawEmail",
    "FromFull",
    "ToFull",
    "CcFull",
    "BccFull",
    "Headers",
    "Attachments",
    "Subject",
    "TextBody",
    "HtmlBody",
    "OriginalRecipient",
    "RecordType",
    "Date",
    "ReplyTo",
    "MessageID",
]


def raw_reply(to: str, sender: str, text: str) -> str:
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = sender, to, "Re: your move"
    message.set_content(text)
    return message.as_string()


@st.composite
def postmark_like(draw, address: str, sender: str) -> dict:
    """Postmark's fields, some well formed (a real reply to a real address), some not."""
    good = {
        "RawEmail": raw_reply(address, sender, draw(BODIES)),
        "FromFull": {"Email": sender, "Name": draw(st.text(max_size=20))},
        "ToFull": [{"Email": address, "Name": ""}],
        "OriginalRecipient": address,
        "Headers": [{"Name": "Return-Path", "Value": f"<{sender}>"}],
        "TextBody": draw(BODIES),
        "Subject": draw(st.text(max_size=40)),
    }
    payload = {}
    for name in draw(st.lists(st.sampled_from(FIELD_NAMES), unique=True, max_size=8)):
        payload[name] = good[name] if name in good and draw(st.booleans()) else draw(JSON)
    return payload


def post(client, body: bytes):
    return client.post(
        WEBHOOK, body, content_type="application/json", HTTP_AUTHORIZATION=basic_auth(base.SECRET)
    )


def check_webhook(client, game, body: bytes) -> None:
    before, emails = snapshot(game), OutgoingEmail.objects.count()
    response = post(client, body)
    event(f"{response.status_code}: {response.content[:40]!r}")
    assert response.status_code in (200, 400), response.content[:300]
    if response.status_code == 400:
        assert 0 < len(response.content) < 300  # a sentence
        assert snapshot(game) == before and OutgoingEmail.objects.count() == emails
    else:
        new = OutgoingEmail.objects.order_by("pk")[emails:]
        assert {email.to for email in new} <= registered_addresses()
    PendingSubmission.objects.all().delete()


@EXAMPLES
@given(body=st.one_of(st.binary(max_size=500), JSON.map(lambda v: json.dumps(v).encode())))
def test_any_body_posted_to_the_webhook_is_200_or_400(
    client, game, webhook_secret, body: bytes
) -> None:
    check_webhook(client, game, body)


@EXAMPLES
@given(data=st.data())
def test_any_postmark_like_post_is_200_or_400(client, game, starter, webhook_secret, data) -> None:
    payload = data.draw(postmark_like(address_of(game, starter.colour), starter.email))
    check_webhook(client, game, json.dumps(payload).encode())
