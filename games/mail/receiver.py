"""Replies through an email provider's inbound webhook (django-anymail).

Anymail's view for the provider checks the shared secret (HTTP basic auth against
ANYMAIL's WEBHOOK_SECRET, "user:password") and parses the post; this receiver hands
the message to `games.mail.inbound.handle_message`, the code behind every way in. If that
raises, the webhook answers 500 and the provider delivers again later.

Connected when this module is imported (GamesConfig.ready); the provider posts to
e.g. `https://USER:PASSWORD@HOST/anymail/postmark/inbound/`.
"""

from __future__ import annotations

from typing import Any

from anymail.signals import AnymailInboundEvent, inbound
from django.dispatch import receiver

from games.mail.inbound import handle_message


@receiver(inbound, dispatch_uid="games.mail.receiver.receive_reply")
def receive_reply(sender: type, event: AnymailInboundEvent, esp_name: str,
                  **kwargs: Any) -> None:
    message = event.message
    if message is None:
        return
    recipient = message.envelope_recipient
    handle_message(message.as_bytes(), envelope_to=[recipient] if recipient else None,
                   envelope_from=message.envelope_sender)
