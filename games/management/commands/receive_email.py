"""`manage.py receive_email`: act on one email read on standard input, for a mail server.

A mail server hands replies to `play+TOKEN@REPLY_DOMAIN` to this command through a pipe,
for example with Postfix (`recipient_delimiter = +`, and in master.cf):

    lowenherz unix - n n - - pipe flags=q user=lowenherz
      argv=/srv/lowenherz/.venv/bin/python /srv/lowenherz/manage.py receive_email
      --sender ${sender} --recipient ${original_recipient}
      --client-address ${client_address}

`--client-address` is the address of the server that handed the email to the mail server
(Postfix's ${client_address}, which no sender can write): the origin that counts emails
that are not a player's own for the "inbound" limit. Without it, all of those count as
one origin, "pipe" (a player's own replies count by their account either way).

Exit status 0: the email was handled (accepted, refused, or ignored as an automatic
reply; a refusal is answered only to a seat's registered address); 75 (EX_TEMPFAIL):
it could not be handled now, for example because the database is down, so the server
keeps it and delivers it again later. Either way the command writes one line, on stdout
or stderr.
"""

from __future__ import annotations

import sys
from typing import IO, Any

from django.core.management.base import BaseCommand, CommandParser

from games.mail import inbound

EX_TEMPFAIL = 75  # sysexits.h: mail servers retry later
CHUNK_BYTES = 64 * 1024


def read_bounded(stream: IO[bytes], limit: int = inbound.MAX_MESSAGE_BYTES) -> bytes:
    """At most `limit` + 1 bytes (enough for handle_message to know "too large"); the rest
    is read and dropped, so that memory stays bounded and the server's pipe is not cut."""
    raw = stream.read(limit + 1)
    if len(raw) > limit:
        while stream.read(CHUNK_BYTES):
            pass
    return raw


class Command(BaseCommand):
    help = "Act on one email (RFC 822) read on standard input: for a mail server's pipe."
    stealth_options = ("stdin",)  # call_command(..., stdin=a binary stream), for tests

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--recipient",
            action="append",
            default=[],
            help="an envelope recipient (the server's ${recipient}); repeatable",
        )
        parser.add_argument(
            "--sender",
            default=None,
            help="the envelope sender (empty or MAILER-DAEMON for a bounce)",
        )
        parser.add_argument(
            "--client-address",
            default="",
            help="the address of the server the email came from (Postfix's ${client_address})",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        raw = read_bounded(options.get("stdin") or sys.stdin.buffer)
        try:
            result = inbound.handle_message(
                raw,
                envelope_to=options["recipient"] or None,
                envelope_from=options["sender"],
                origin=inbound.origin_of("pipe", options["client_address"]),
            )
        except Exception as error:
            # Whatever went wrong, a retry may succeed; a lost move would not be noticed.
            if options.get("traceback"):
                raise
            text = " ".join(f"{type(error).__name__}: {error}".split())
            self.stderr.write(f"receive_email: not handled, deliver again later: {text}")
            sys.exit(EX_TEMPFAIL)
        first_line = result.reason.partition("\n")[0]
        self.stdout.write(f"receive_email: {result.verdict}: {first_line}")
