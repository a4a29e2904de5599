"""`manage.py run_smtpd`: a small SMTP server receiving replies, for self-hosters.

    manage.py run_smtpd --host 127.0.0.1 --port 2525

Let the mail server of REPLY_DOMAIN relay to it (or point the MX at it behind a
firewall's port 25). It accepts only recipients of the form `play+TOKEN@REPLY_DOMAIN`
(550 for any other: it relays nothing) and hands each email to
`games.mail.inbound.handle_message`, as the pipe command and the webhook do; an error there
answers 451, so the sending server tries again later. Runs until Ctrl-C or SIGTERM.

An email's origin (for the "inbound" limit of emails that are not a player's own) is the
address of the server that connected: behind a relaying mail server, that server's, which
all such emails then share (a player's own replies count by their account, whatever
their origin).
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session
from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from django.db import close_old_connections

from games.mail import inbound

logger = logging.getLogger(__name__)

# Larger emails are taken, and refused by handle_message (which reads only their headers,
# and answers only a seat's registered address); far larger ones the server refuses.
SMTP_SIZE_LIMIT = 10 * inbound.MAX_MESSAGE_BYTES


class ReplyHandler:
    """aiosmtpd's handler: reply addresses only; each email to handle_message."""

    async def handle_RCPT(
        self,
        server: SMTP,
        session: Session,
        envelope: Envelope,
        address: str,
        rcpt_options: list[str],
    ) -> str:
        if not inbound.is_reply_address(address):
            return "550 5.1.1 not a reply address of this game server"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        content = envelope.content
        raw = content if isinstance(content, bytes) else (content or "").encode()
        try:
            # The ORM is synchronous: a worker thread, not the event loop.
            result = await asyncio.to_thread(
                deliver, raw, list(envelope.rcpt_tos), envelope.mail_from or "", _peer(session)
            )
        except Exception:
            logger.exception("an email could not be handled; the sender will try again")
            return "451 4.3.0 temporary failure, try again later"
        return f"250 2.0.0 {result.verdict}"


def _peer(session: Session) -> str:
    """The connecting server's address. aiosmtpd types `peer` as a string; it holds the
    socket's peer name, (host, port, ...) over TCP."""
    peer: object = session.peer
    return str(peer[0]) if isinstance(peer, tuple) and peer else str(peer or "")


def deliver(
    raw: bytes, rcpt_tos: list[str], mail_from: str, peer: str = ""
) -> inbound.InboundResult:
    """handle_message with database connections checked as around a web request."""
    close_old_connections()
    try:
        return inbound.handle_message(
            raw,
            envelope_to=rcpt_tos,
            envelope_from=mail_from,
            origin=inbound.origin_of("smtp", peer),
        )
    finally:
        close_old_connections()


def make_controller(host: str, port: int) -> Controller:
    return Controller(
        ReplyHandler(),
        hostname=host,
        port=port,
        decode_data=False,
        data_size_limit=SMTP_SIZE_LIMIT,
        server_hostname=settings.REPLY_DOMAIN,
    )


class Command(BaseCommand):
    help = "Receive replies to play+TOKEN@REPLY_DOMAIN over SMTP; runs until Ctrl-C."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=2525)

    def handle(self, *args: Any, host: str, port: int, **options: Any) -> None:
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        controller = make_controller(host, port)
        controller.start()
        self.stdout.write(
            f"Receiving replies to {settings.REPLY_LOCAL_PART}+TOKEN@"
            f"{settings.REPLY_DOMAIN} on {host}:{port}; Ctrl-C stops."
        )
        try:
            stop.wait()
        except KeyboardInterrupt:
            pass
        finally:
            controller.stop()
            self.stdout.write("Stopped.")
