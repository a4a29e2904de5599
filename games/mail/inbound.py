"""Moves by email: what becomes of one reply to a "the game waits for you" email.

Every way in (the pipe command `receive_email`, the SMTP listener `run_smtpd`, the
provider webhook in `games.mail.receiver`) hands the raw message to `handle_message`.
It finds the token of the reply address (`play+TOKEN@REPLY_DOMAIN`), checks it (known,
sent by the seat's player, unused, for the game's current phase) and gives each command,
parsed once by `replies.commands`, to `services.submit`, the only way a move enters.
The outcome is answered by email (`compose.move_reply`, `compose.refusal`: a refusal at
once, an acceptance in the person's next email of the game, or alone soon after), but
only ever to the seat's registered address, never to the `From:` of an email that is not
the seat's player's: a forged or unknown token, or a stranger's email, is logged and left
unanswered (no backscatter to a forged sender). Auto-replies and bounces are ignored (by
their headers, or an out-of-office subject: `out_of_office`), so that the site and a
robot never mail each other forever.

Limits (`games.limits`): emails handled per hour ("inbound"), refusals per registered
address per day ("refusal"); over either, nothing is sent, and the log says so. Whose
"inbound" an email spends is decided by its token, never by its `From:`, which anyone
may write: an email with a live token of the sender's own seat (known, the seat's
player's address in `From:`, the game running) spends that person's (keyed by account);
any other (no token, an unknown one, another player's, a finished game's) spends its
origin's, where it really came from as the way in saw it (`origin`: the connecting
server's address, or the provider's data). So a stranger's forged emails in a player's
name never drop that player's reply. A player's own reply dropped over the limit is
told to them, at most once a day ("reply_dropped"): the player would otherwise wait for
an answer that never comes.

A token is used up only by an accepted reply. A refused one (a typo, an illegal move)
leaves it usable, so that the player corrects the move by replying again. The token is
claimed (`used_at` from NULL to now) before the moves, in one transaction with them and
the answer, under the game's row lock: two deliveries of one email act once, no phase
resolves between the check and the moves, and a crash undoes the claim with the moves
(the mail server delivers again).
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from email import policy
from email.message import Message
from email.parser import BytesHeaderParser, BytesParser
from email.utils import getaddresses, parseaddr
from enum import StrEnum

from django.conf import settings
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from engine.errors import IllegalMove
from engine.moves import EndAlliance
from games import chat, limits, services, votes
from games.links import absolute_url
from games.mail import compose, out_of_office, outbox, replies, tokens
from games.models import Game, ReplyToken, Seat, language_of
from games.show import command_words
from games.show.vote_text import counted_text

logger = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 1024 * 1024
MAX_HEADER_BYTES = 64 * 1024  # of an email, read for its headers: the rest is body
# Where the reply address may be after the envelope: the headers mail servers add, then
# those the sender's client wrote.
RECIPIENT_HEADERS = ("X-Original-To", "Delivered-To", "To", "Cc")
AUTO_REPLY_HEADERS = ("X-Autoreply", "X-Autorespond", "X-Autoresponder")
AUTOMATIC_PRECEDENCE = frozenset({"bulk", "junk", "list", "auto_reply"})
ROBOTS = frozenset({"mailer-daemon", "postmaster"})

# What a refusal says, in English (the log's); translated where an answer says it
# (`gettext(USED)`: the player's language, `handle_message`).
UNKNOWN = gettext_noop(
    "this reply address is not known here (it may have been mistyped): reply to the "
    "latest email from the game"
)
USED = gettext_noop("this reply address was already used; reply to the latest email")
WRONG_SENDER = gettext_noop(
    "this reply address belongs to a player whose account has another email "
    "address, and a forwarded email cannot move for someone else. If it is your "
    "seat, reply from the address your account uses (see your profile)."
)
_TOO_LARGE = gettext_noop(
    "your email is larger than %(kb)s KB: reply with the commands only, without attachments"
)
TOO_LARGE = _TOO_LARGE % {"kb": MAX_MESSAGE_BYTES // 1024}
UNREADABLE = gettext_noop(
    "your email could not be read as text: reply with the commands in plain text"
)
OVER_LIMIT = gettext_noop(
    "over the limit of emails read per player (or per origin, for emails that are no "
    "player's own): not read, not answered"
)


class Verdict(StrEnum):
    ACCEPTED = "accepted"
    REFUSED = "refused"  # answered only to a seat's registered address, within the limit
    IGNORED = "ignored"  # an automatic email: not answered


@dataclass(frozen=True)
class InboundResult:
    verdict: Verdict
    reason: str = ""  # what the answer said, or why nothing was answered
    accepted: tuple[str, ...] = ()  # the moves that entered, in the engine's notation


def handle_message(
    raw: bytes,
    *,
    envelope_to: list[str] | None = None,
    envelope_from: str | None = None,
    origin: str = "",
) -> InboundResult:
    """Act on one email (RFC 822 bytes) and answer it. `envelope_to` and `envelope_from`
    are the SMTP envelope when the way in knows it ("" is a bounce's null sender);
    `origin` where it came from (`origin_of`), "" if the way in cannot tell. Database
    errors propagate: the caller tells its sender to try again later."""
    # Only the start is read for headers; the body only once the token and sender are good.
    headers = BytesHeaderParser().parsebytes(raw[:MAX_HEADER_BYTES])
    sender = sender_of(headers)
    if is_automatic(headers, envelope_from) or not sender or is_ours(sender):
        return _done(InboundResult(Verdict.IGNORED, "an automatic email, or no one to answer"))
    reply = _reply_token(token_in(headers, envelope_to or []))
    if not _within_limit(reply, sender, origin):
        return _unanswered(OVER_LIMIT, sender, reply.seat if reply else None)
    if reply is None:  # forged, mistyped or no token: the From: may be anyone's
        return _unanswered(UNKNOWN, sender)
    # What the answer says, in the language of the player the address is for.
    with translation.override(language_of(reply.seat.user)):
        return _handle(raw, reply, sender)


def _handle(raw: bytes, reply: ReplyToken, sender: str) -> InboundResult:
    """`handle_message` once the reply address is known."""
    seat = reply.seat
    problem = _sender_problem(seat, sender)
    if problem:  # a stranger (or a forged From:) with a player's address: nobody is told
        return _unanswered(problem, sender, seat)
    if len(raw) > MAX_MESSAGE_BYTES:
        return _refuse(seat, _(_TOO_LARGE) % {"kb": MAX_MESSAGE_BYTES // 1024})
    text = _reply_text(raw, reply)
    if text is None:
        return _refuse(seat, _(UNREADABLE))
    read = replies.commands(text)
    if read.submissions:  # a move is for the phase the email asked it for
        problem = _token_problem(reply, seat.game)
        if problem:
            return _refuse(seat, problem)
    if read.vote:  # a vote too: a proposal lives in its phase (games.votes)
        problem = _phase_problem(reply, seat.game)
        if problem:
            return _refuse(seat, problem)
    if read.errors or not (read.submissions or read.said or read.vote):
        return _refuse_move(seat, list(read.submissions), _reading_problem(read))
    if not read.submissions:
        return _talk(seat, read)
    return _play(reply, read)


def _reply_text(raw: bytes, reply: ReplyToken) -> str | None:
    """The reply's new text, without a quote of the emails sent with its address; None
    if the email cannot be read. The standard library's email package raises a zoo of
    exceptions on malformed MIME (ValueError, LookupError, AttributeError,
    HeaderParseError...); none of them is a reason for a 500 or a retry, and nothing has
    changed yet, so any of them means "unreadable"."""
    sent = outbox.sent_with(
        tokens.address_of(reply.token), reply.seat.user_id, reply.seat.game_id, replies.SENT_EMAILS
    )
    try:
        return replies.reply_text(
            BytesParser(policy=policy.default).parsebytes(raw), replies.originals(sent)
        )
    except Exception:
        logger.warning("inbound email: its body could not be read", exc_info=True)
        return None


# --- who wrote, to which address -------------------------------------------------------------


def sender_of(headers: Message) -> str:
    return parseaddr(str(headers.get("From", "")))[1].strip()


def is_automatic(headers: Message, envelope_from: str | None) -> bool:
    """An auto-reply, a bounce or a list's message: never answered (RFC 3834). An
    out-of-office reply without a header that says so is known by its subject."""
    auto = str(headers.get("Auto-Submitted", "")).strip().lower() or "no"
    precedence = str(headers.get("Precedence", "")).strip().lower()
    robot = any(
        address.partition("@")[0].lower() in ROBOTS
        for address in (sender_of(headers), envelope_from or "")
    )
    return (
        envelope_from == ""
        or str(headers.get("Return-Path", "")).strip() == "<>"
        or auto != "no"
        or precedence in AUTOMATIC_PRECEDENCE
        or robot
        or any(name in headers for name in AUTO_REPLY_HEADERS)
        or headers.get_content_type() == "multipart/report"
        or out_of_office.is_out_of_office(str(headers.get("Subject", "")))
    )


def is_ours(address: str) -> bool:
    """One of the site's own addresses: answering it would mail ourselves in a loop."""
    own = parseaddr(settings.DEFAULT_FROM_EMAIL)[1].lower()
    return address.lower() == own or tokens.token_of(address) is not None


def is_reply_address(address: str) -> bool:
    """`play+TOKEN@REPLY_DOMAIN`, in form (whether the token exists is not asked)."""
    domain = address.strip().strip("<>").rpartition("@")[2]
    return tokens.token_of(address) is not None and domain.lower() == settings.REPLY_DOMAIN.lower()


def token_in(headers: Message, envelope_to: Iterable[str]) -> str | None:
    """The first token in the envelope's recipients, else in the recipient headers."""
    values = [str(value) for name in RECIPIENT_HEADERS for value in headers.get_all(name, [])]
    addresses = [*envelope_to, *(address for _, address in getaddresses(values))]
    return next((token for token in map(tokens.token_of, addresses) if token), None)


def _reply_token(token: str | None) -> ReplyToken | None:
    if not token:
        return None
    return (
        ReplyToken.objects.select_related("seat__game", "seat__user__profile")
        .filter(token=token)
        .first()
    )


def _within_limit(reply: ReplyToken | None, sender: str, origin: str) -> bool:
    """Spend one "inbound" of the sender's account if the token is theirs and live, else
    one of the origin's (see above). A player's own reply over the limit is told."""
    if reply is None or not _is_live_and_own(reply, sender):
        return limits.spend("inbound", f"origin:{origin or 'unknown'}")
    if limits.spend("inbound", f"user:{reply.seat.user_id}"):
        return True
    if limits.spend("reply_dropped", f"user:{reply.seat.user_id}"):
        compose.reply_dropped(reply.seat)
    return False


def _is_live_and_own(reply: ReplyToken, sender: str) -> bool:
    """A token that only the seat's player holds (it came in an email to them), sent from
    their address, of a game still running: any of its phases, used or not (talk may
    answer any email of the game, and a stale move earns an answer that says so)."""
    return (
        _sender_problem(reply.seat, sender) is None
        and reply.seat.game.status == Game.Status.RUNNING
    )


def origin_of(way: str, address: str | None) -> str:
    """Where an email came from, for the "inbound" limit: the way in ("smtp", "pipe",
    "postmark"), and the network address of the server that handed it over, as the way
    in saw it (not a header the sender wrote). An IPv6 address counts by its /64, which
    one machine may hold whole."""
    text = (address or "").strip()
    try:
        ip = ipaddress.ip_address(text.strip("[]"))
    except ValueError:
        return f"{way}:{text[:100]}" if text else way  # one origin for all it cannot tell
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is None:
        return f"{way}:{ipaddress.ip_network((ip, 64), strict=False)}"
    return f"{way}:{getattr(ip, 'ipv4_mapped', None) or ip}"


def _sender_problem(seat: Seat, sender: str) -> str | None:
    email = seat.user.email if seat.user else ""
    return (
        None if email and email.lower() == sender.lower() else WRONG_SENDER
    )  # never answered: the log's English


def _token_problem(reply: ReplyToken, game: Game) -> str | None:
    if reply.used_at is not None:
        return _(USED)
    return _phase_problem(reply, game)


def _phase_problem(reply: ReplyToken, game: Game) -> str | None:
    """Whether the reply answers an email of the game's current phase, which a move and
    a vote must (an address used for a move still takes a vote: it is no move)."""
    if game.status == Game.Status.FINISHED:
        return _("the game is over: see the final scores on %(url)s") % {"url": game_url(game)}
    if game.status != Game.Status.RUNNING or reply.phase_number != game.phase_number:
        return _(
            "the game has moved on since that email: reply to the latest email, or play "
            "on the game's page: %(url)s"
        ) % {"url": game_url(game)}
    return None


def game_url(game: Game) -> str:
    return absolute_url("game", game.pk)


# --- the moves ----------------------------------------------------------------------------------


def _play(reply: ReplyToken, read: replies.Commands) -> InboundResult:
    seat = reply.seat
    with transaction.atomic():
        # The game's row lock first, as services takes it: resolving waits for us.
        game = Game.objects.select_for_update().get(pk=seat.game_id)
        problem = _token_problem(reply, game)  # again: the phase may have moved on
        if problem is None and not _claim(reply):
            problem = _(USED)  # another delivery of this email came first
        if problem:
            return _refuse(seat, problem)
        try:  # the messages first: one that may not go stops the whole reply
            for said in read.said:
                chat.check(game, seat.user_id, said.text, said.to)
        except services.GameError as error:
            _release(reply)
            return _refuse_move(seat, list(read.submissions), _talk_problem(error))
        accepted, refusal = _submit_all(game, seat, read)
        if refusal is None:
            if all(isinstance(move, EndAlliance) for move in read.moves):
                # Ending an alliance (RULES 7.1) is no move of the phase: the player's
                # move is still to come, by a reply to the same address.
                _release(reply)
            return _accept(seat, accepted, read, [*_say_all(seat, read), *_vote(seat, read)])
        _release(reply)  # refused: the player may correct the move with the same address
        unsent = (
            " " + _("Your message was not sent either: send it again with the corrected move.")
            if read.said
            else ""
        )
        return _refuse_move(
            seat, list(read.submissions), _refusal_text(refusal, accepted) + unsent, accepted
        )


def _claim(reply: ReplyToken) -> bool:
    """Mark the token used if nobody did: one row changes for one delivery only."""
    return ReplyToken.objects.filter(pk=reply.pk, used_at=None).update(used_at=timezone.now()) == 1


def _release(reply: ReplyToken) -> None:
    ReplyToken.objects.filter(pk=reply.pk).update(used_at=None)


def _submit_all(
    game: Game, seat: Seat, read: replies.Commands
) -> tuple[list[services.Outcome], tuple[str, str] | None]:
    """Submit in order; stop at the first refusal, returned as (command, sentence)."""
    accepted: list[services.Outcome] = []
    for text, move in zip(read.submissions, read.moves, strict=True):
        try:
            accepted.append(services.submit(game.pk, seat.pk, move))
        except (IllegalMove, services.GameError) as error:
            return accepted, (text, str(error))
    return accepted, None


# --- answers ------------------------------------------------------------------------------------


def _accept(
    seat: Seat, accepted: list[services.Outcome], read: replies.Commands, talk: list[str]
) -> InboundResult:
    texts = [outcome.text for outcome in accepted]
    # The move in the reader's words, as the emails show moves; stored as the site reads it.
    lines = [_("Accepted: %(move)s.") % {"move": command_words.to_reader(text)} for text in texts]
    if accepted[-1].ready:
        lines.append(_("It is being applied; the next email tells what happened."))
    else:
        lines.append(_("It stays sealed until the other players have submitted theirs."))
    lines.extend(talk)
    lines.extend(_ignored_lines(read))
    message = "\n".join(lines)
    # Rides in the person's next email of the game if one follows within
    # EMAIL_COALESCE_SECONDS (the phase resolving: "your move" or the results), else
    # goes alone then (games.mail.notify.flush_due). A refusal goes at once.
    compose.move_reply(seat, True, texts, message)
    return _done(InboundResult(Verdict.ACCEPTED, message, tuple(texts)))


def _talk(seat: Seat, read: replies.Commands) -> InboundResult:
    """A reply with messages, or a vote, and no move: any phase's reply address will do
    for talk (it is no move of a phase), the current phase's for a vote. All are done, or
    none; the next email of the game shows the messages (no answer of its own: that
    would be one more email); a vote is confirmed as a move is."""
    commands = [read.vote[0]] if read.vote else []
    try:
        with transaction.atomic():
            for said in read.said:
                chat.post(seat.game_id, seat.user_id, said.text, said.to, via=chat.BY_EMAIL)
            counted = _cast(seat, read.vote)
    except services.GameError as error:
        return _refuse_move(seat, commands, _talk_problem(error))
    lines = [
        *([_("Sent: %(messages)s") % {"messages": _talk_lines(read)}] if read.said else []),
        *counted,
    ]
    if read.vote:
        compose.move_reply(seat, True, commands, "\n".join(lines), code="vote_accepted")
    return _done(InboundResult(Verdict.ACCEPTED, "\n".join(lines)))


def _talk_lines(read: replies.Commands) -> str:
    return "; ".join(_talk_line(said) for said in read.said)


def _cast(seat: Seat, vote: tuple[str, bool] | None) -> list[str]:
    """The reply's vote on the table's open proposal, if it has one (GameError if it may
    not be cast); what the answer says of it."""
    if vote is None:
        return []
    assert seat.user is not None  # a reply comes from a person's seat (`_sender_problem`)
    proposal = votes.cast(seat.game_id, seat.user, vote[1])
    return [counted_text(proposal, vote[1])]


def _vote(seat: Seat, read: replies.Commands) -> list[str]:
    """A vote beside an accepted move: cast after it; a vote that may not be cast leaves
    the move in force, and the answer says why."""
    try:
        return _cast(seat, read.vote)
    except services.GameError as error:
        return [_("Your vote was not counted: %(reason)s.") % {"reason": str(error).rstrip(".")}]


def _say_all(seat: Seat, read: replies.Commands) -> list[str]:
    """Post a reply's messages beside its accepted move (checked before the move); the
    lines its answer says of them."""
    lines = []
    for said in read.said:
        try:
            chat.post(seat.game_id, seat.user_id, said.text, said.to, via=chat.BY_EMAIL)
            lines.append(_("Sent: %(message)s.") % {"message": _talk_line(said)})
        except services.GameError as error:  # over the limit of messages, meanwhile
            lines.append(
                _("Not sent: %(message)s: %(reason)s.")
                % {"message": _talk_line(said), "reason": str(error).rstrip(".")}
            )
    return lines


def _talk_line(said: replies.Said) -> str:
    text = replies.cut(said.text, 60)
    if said.to:
        return _("your message to %(colour)s only ('%(text)s')") % {
            "colour": compose.colour_word(said.to),
            "text": text,
        }
    return _("your message to everyone ('%(text)s')") % {"text": text}


def _talk_problem(error: services.GameError) -> str:
    return _("Nothing was applied or sent: %(reason)s.") % {"reason": str(error).rstrip(".")}


def _refusal_text(refusal: tuple[str, str], accepted: list[services.Outcome]) -> str:
    command, sentence = refusal
    refused = _("Not accepted: '%(command)s': %(reason)s.") % {
        "command": replies.cut(command),
        "reason": sentence.rstrip("."),
    }
    if not accepted:
        return refused
    before = ", ".join(f"'{outcome.text}'" for outcome in accepted)
    kept = _("Accepted before it, and in force: %(moves)s.") % {"moves": before}
    return f"{refused} {kept}"


def _reading_problem(read: replies.Commands) -> str:
    if read.errors:
        errors = "; ".join(error.rstrip(".") for error in replies.shown(read.errors, chars=400))
        return _("Nothing was applied: %(errors)s.") % {"errors": errors}
    ignored = "\n".join(_ignored_lines(read))
    found = _(
        "No command was found in your reply: write each command on a line of its own, "
        "like '%(example)s', above the quoted email."
    ) % {"example": "decide 1, 3"}
    return f"{found}\n{ignored}".strip()


def _ignored_lines(read: replies.Commands) -> list[str]:
    if not read.ignored:
        return []
    return [
        _("These lines were not read as commands:"),
        *(f"  {line}" for line in replies.shown(read.ignored)),
    ]


def _refuse_move(
    seat: Seat, commands: list[str], message: str, accepted: list[services.Outcome] | None = None
) -> InboundResult:
    if _may_refuse(seat):
        compose.move_reply(seat, False, replies.shown(commands), message)
    texts = tuple(outcome.text for outcome in accepted or [])
    return _done(InboundResult(Verdict.REFUSED, message, texts))


def _refuse(seat: Seat, reason: str) -> InboundResult:
    """Tell the seat's player, at the address of their account (which the sender check
    found equal to the From:), never an address the email itself names."""
    if _may_refuse(seat):
        compose.refusal(registered_address(seat), reason)
    return _done(InboundResult(Verdict.REFUSED, reason))


def registered_address(seat: Seat) -> str:
    return seat.user.email if seat.user else ""


def _may_refuse(seat: Seat) -> bool:
    """Within the day's refusals to this address: a sender cannot make the site mail a
    player (or itself) without end."""
    address = registered_address(seat)
    if address and limits.spend("refusal", address):
        return True
    logger.warning(
        "inbound email: refusal to seat %s not sent (no address, or over the "
        "limit of refusals per day)",
        seat.pk,
    )
    return False


def _unanswered(reason: str, sender: str, seat: Seat | None = None) -> InboundResult:
    """Refused, and nobody answered: the sender may be forged (backscatter). A known
    token from another sender is worth a warning; unknown ones are mostly spam."""
    logger.log(
        logging.WARNING if seat else logging.INFO,
        "inbound email from %r refused without an answer (seat %s): %s",
        replies.cut(sender, 100),
        seat.pk if seat else "unknown",
        reason.partition("\n")[0],
    )
    return InboundResult(Verdict.REFUSED, reason)


def _done(result: InboundResult) -> InboundResult:
    logger.info("inbound email %s: %s", result.verdict, result.reason.partition("\n")[0])
    return result
