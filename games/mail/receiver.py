"""Replies through an email provider's inbound webhook (django-anymail).

Anymail's view for the provider checks the shared secret (HTTP basic auth against
ANYMAIL's WEBHOOK_SECRET, "user:password") and parses the post; this receiver hands
the message to `games.mail.inbound.handle_message`, the code behind every way in. If that
raises, the webhook answers 500 and the provider delivers again later.

Connected when this module is imported (GamesConfig.ready); the provider posts to
e.g. `https://USER:PASSWORD@HOST/anymail/postmark/inbound/`.

`PostmarkInbound` is anymail's view with the post checked before anymail reads it
(routed in front of `anymail.urls`): a body over `MAX_WEBHOOK_BYTES` is refused (413)
before it is read; after the secret is checked, a body that is not one JSON object of
Postmark's shape, or does not make an email, is refused (400) with a short sentence and
nothing changed, where anymail would answer 500 (and the provider would retry).

An email's origin, for the "inbound" limit of emails that are not a player's own, is
the address of the server that handed it to the provider: the `client-ip` of the
Received-SPF header the provider adds. A sender may write one of those too; with more
than one, or none, the email counts as the provider's, an origin all such emails share
(a player's own replies count by their account either way).
"""

from __future__ import annotations

import json
import logging
import re
from email.message import Message
from typing import Any

from anymail.signals import AnymailInboundEvent, inbound
from anymail.webhooks.postmark import PostmarkInboundWebhookView
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse

from games.mail.inbound import MAX_MESSAGE_BYTES, handle_message, origin_of

logger = logging.getLogger(__name__)

# Postmark sends an email's text more than once (RawEmail, TextBody, HtmlBody): room for
# an email of MAX_MESSAGE_BYTES, which handle_message then refuses if too large.
MAX_WEBHOOK_BYTES = 2 * MAX_MESSAGE_BYTES
TEXT_FIELDS = (
    "RawEmail",
    "From",
    "To",
    "Cc",
    "Bcc",
    "Subject",
    "Date",
    "ReplyTo",
    "TextBody",
    "HtmlBody",
    "StrippedTextReply",
    "OriginalRecipient",
    "MailboxHash",
    "MessageID",
    "Tag",
    "RecordType",
)
ADDRESS_LISTS = ("ToFull", "CcFull", "BccFull")
CLIENT_IP = re.compile(r"\bclient-ip=([0-9A-Fa-f:.]+)")


class BadPayload(ValueError):
    """A post that is no inbound email; the message says why, in a sentence."""


class PostmarkInbound(PostmarkInboundWebhookView):
    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if _declared_length(request) > MAX_WEBHOOK_BYTES:
            return _plain(413, f"the body is larger than {MAX_WEBHOOK_BYTES} bytes")
        try:
            return super().post(request, *args, **kwargs)  # checks the secret first
        except BadPayload as error:
            logger.info("inbound webhook: refused a post: %s", error)
            return _plain(400, str(error))

    def parse_events(self, request: HttpRequest) -> list[AnymailInboundEvent]:
        if len(request.body) > MAX_WEBHOOK_BYTES:  # a body sent without its length
            raise BadPayload(f"the body is larger than {MAX_WEBHOOK_BYTES} bytes")
        payload = read_payload(request.body)
        try:
            event = self.esp_to_anymail_event(payload)
            if event.message is not None:
                event.message.as_bytes()  # what receive_reply will need
        except Exception as error:
            # Building an email from posted fields: no database yet, nothing changed. The
            # email package raises many kinds (ValueError, HeaderParseError, ...).
            raise BadPayload(f"the fields do not make an email ({type(error).__name__})") from error
        return [event]


def read_payload(body: bytes) -> dict[str, Any]:
    """The post as Postmark's inbound JSON object, or BadPayload saying what is wrong."""
    try:
        payload = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise BadPayload("the body is not JSON (UTF-8)") from None
    if not isinstance(payload, dict):
        raise BadPayload(f"the body must be one JSON object, not {_kind(payload)}")
    problem = shape_problem(payload)
    if problem:
        raise BadPayload(problem)
    return payload


def shape_problem(payload: dict[str, Any]) -> str | None:
    """The first field anymail would trip on, or None."""
    for name in TEXT_FIELDS:
        if payload.get(name) is not None and not isinstance(payload[name], str):
            return f"{name} must be a string, not {_kind(payload[name])}"
    if payload.get("RecordType", "Inbound") != "Inbound":
        return "RecordType must be Inbound: this address takes inbound emails only"
    if payload.get("FromFull") is not None:
        problem = _address_problem(payload["FromFull"])
        if problem:
            return f"FromFull: {problem}"
    for name in ADDRESS_LISTS:
        problem = _list_problem(payload.get(name), _address_problem)
        if problem:
            return f"{name}: {problem}"
    problem = _list_problem(payload.get("Headers"), _header_problem)
    if problem:
        return f"Headers: {problem}"
    problem = _list_problem(payload.get("Attachments"), _attachment_problem)
    return f"Attachments: {problem}" if problem else None


def _list_problem(value: object, item_problem: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, list):
        return f"must be a list, not {_kind(value)}"
    return next((f"item {n}: {p}" for n, p in enumerate(map(item_problem, value)) if p), None)


def _address_problem(value: object) -> str | None:
    return _fields_problem(value, required=(), optional=("Email", "Name", "MailboxHash"))


def _header_problem(value: object) -> str | None:
    return _fields_problem(value, required=("Name", "Value"), optional=())


def _attachment_problem(value: object) -> str | None:
    problem = _fields_problem(
        value, required=("ContentType",), optional=("Content", "Data", "Name", "ContentID")
    )
    if problem or not isinstance(value, dict):
        return problem
    return None if value.get("Content") or value.get("Data") else "needs Content"


def _fields_problem(
    value: object, required: tuple[str, ...], optional: tuple[str, ...]
) -> str | None:
    if not isinstance(value, dict):
        return f"must be an object, not {_kind(value)}"
    for name in required:
        if not isinstance(value.get(name), str):
            return f"needs {name} as a string"
    for name in optional:
        if value.get(name) is not None and not isinstance(value[name], str):
            return f"{name} must be a string"
    return None


def _kind(value: object) -> str:
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "true or false",
        type(None): "null",
    }.get(type(value), "a number")


def _declared_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def _plain(status: int, text: str) -> HttpResponse:
    return HttpResponse(f"{text}\n", status=status, content_type="text/plain; charset=utf-8")


@receiver(inbound, dispatch_uid="games.mail.receiver.receive_reply")
def receive_reply(sender: type, event: AnymailInboundEvent, esp_name: str, **kwargs: Any) -> None:
    message = event.message
    if message is None:
        return
    recipient = message.envelope_recipient
    handle_message(
        message.as_bytes(),
        envelope_to=[recipient] if recipient else None,
        envelope_from=message.envelope_sender,
        origin=provider_origin(message, esp_name),
    )


def provider_origin(message: Message, esp_name: str) -> str:
    """Where the provider got the email from, by its Received-SPF header (see above)."""
    found = [
        match.group(1)
        for value in message.get_all("Received-SPF", [])
        if (match := CLIENT_IP.search(str(value)))
    ]
    return origin_of(esp_name.lower(), found[0] if len(found) == 1 else "")
