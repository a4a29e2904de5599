"""Messages between players (issue 10): a game's table talk, to everyone or to one
player, written on the game page or in an emailed reply.

- Who may write: a person seated in a game that is open or running (a seat a computer
  stands in for too: the person is still at the table; a conceded seat too). A finished
  or cancelled game's talk is over: its messages to everyone are in the archive.
- To whom: everyone at the table, or one other seated person (not a computer, which
  reads nothing).
- Who reads what: `Message.objects.visible_to` (models), the one rule: to everyone, to
  me, from me; not from the colours I muted. Spectators of a running game read none;
  the archive of a finished game shows the messages to everyone, never private ones.
- Limits: MESSAGE_CHARS a message; `settings.RATE_LIMITS["message"]` per person (the
  limit counts every try, as games.limits does).
- By email: `message_posted` is sent inside the transaction that stores the message,
  so that the mail wing (games.mail.notify) owes the readers an email in the same
  commit; each email of the game then tells the messages after the last one told
  (`unread_by_email`), so that a message is never lost with a task, only late.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction
from django.db.models import Max, Prefetch, prefetch_related_objects
from django.dispatch import Signal
from django.utils.translation import gettext as _

from games import limits
from games.models import MESSAGE_CHARS, TALK_HELD, Game, Message, OutgoingEmail, Seat, none_held
from games.services import GameError
from games.show.words import colour_word, labelled

# Sent inside the storing transaction: message (a Message), readers (the Seats of the
# persons who may read it, the sender aside).
message_posted = Signal()

BY_EMAIL = Message.Via.EMAIL
OPEN_FOR_TALK = (Game.Status.OPEN, Game.Status.RUNNING)
PAGE_MESSAGES = 200  # shown on the game page, the newest; the rest in the game's history
EMAIL_MESSAGES = 30  # told in one email, the newest; the page has the rest
# What the emails' outbox rows never tell: the held (told in another email, or not at
# all), the superseded, and the ones that could not be sent.
NOT_TOLD = (
    OutgoingEmail.Status.COALESCING,
    OutgoingEmail.Status.FOLDED,
    OutgoingEmail.Status.FAILED,
)


def clean_message(text: str) -> str:
    """The message as it is kept: lines without control or format characters (which
    could turn the text around or hide part of it), no trailing spaces, at most two
    blank lines in a row."""
    lines = [
        "".join(c for c in line if c == "\t" or c.isprintable()).rstrip()
        for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    ]
    kept: list[str] = []
    for line in lines:
        if line or (kept and (kept[-1] or len(kept) < 2 or kept[-2])):
            kept.append(line)
    return "\n".join(kept).strip()


def post(
    game_id: int, user_id: int | None, text: str, to_colour: str = "", via: str = Message.Via.WEB
) -> Message:
    """Store a message from the seat of the person `user_id` to everyone ("") or to the
    seat of `to_colour`. Raises GameError with a sentence when it cannot be sent; nothing
    is stored then."""
    with transaction.atomic():
        game = Game.objects.select_for_update().get(pk=game_id)  # as notify takes it
        seats = list(game.seats.select_related("user"))
        sender, to_seat, text = _validated(game, seats, user_id, text, to_colour)
        if not limits.spend("message", str(user_id)):
            raise GameError(
                _("you have sent many messages in a short time: wait a while, then try again")
            )
        message = Message.objects.create(
            game=game,
            sender=sender,
            to_seat=to_seat,
            text=text,
            phase_number=game.phase_number,
            turn=game.turn,
            via=via,
        )
        message_posted.send(
            sender=Message, message=message, readers=readers(seats, sender, to_seat)
        )
    return message


def check(game: Game, user_id: int | None, text: str, to_colour: str = "") -> None:
    """GameError if `post` would refuse the message (the limit of messages aside)."""
    _validated(game, list(game.seats.select_related("user")), user_id, text, to_colour)


def _validated(
    game: Game, seats: list[Seat], user_id: int | None, text: str, to_colour: str
) -> tuple[Seat, Seat | None, str]:
    """The sender's seat, the seat written to (None: everyone) and the text as kept."""
    text = clean_message(text)
    if not text:
        raise GameError(_("the message is empty"))
    if len(text) > MESSAGE_CHARS:
        raise GameError(
            _("a message holds at most %(most)s characters; this one has %(count)s")
            % {"most": MESSAGE_CHARS, "count": len(text)}
        )
    sender = next((s for s in seats if user_id is not None and s.user_id == user_id), None)
    to_seat = _check(game, seats, sender, to_colour)
    assert sender is not None, "_check refuses a person without a seat"
    return sender, to_seat, text


def _check(game: Game, seats: list[Seat], sender: Seat | None, to_colour: str) -> Seat | None:
    """The seat the message goes to (None: everyone); GameError if it may not go."""
    if sender is None or not sender.is_person:
        raise GameError(_("only the players of a game can write to its table"))
    if game.status not in OPEN_FOR_TALK:
        if game.status == Game.Status.FINISHED:
            raise GameError(_("the game is finished: its table talk is over"))
        if game.status == Game.Status.CANCELLED:
            raise GameError(_("the game is cancelled: its table talk is over"))
        raise GameError(
            _("the game is %(status)s: its table talk is over")
            % {"status": game.get_status_display().lower()}
        )
    if not to_colour:
        return None
    to_seat = next((s for s in seats if s.colour == to_colour), None)
    if to_seat is None:
        raise GameError(
            _("nobody plays %(colour)s in this game") % {"colour": colour_word(to_colour)}
        )
    if to_seat == sender:
        raise GameError(_("that is your own colour: write to another player, or to everyone"))
    if not to_seat.is_person:
        raise GameError(
            _("%(colour)s is played by the computer, which reads no messages")
            % {"colour": colour_word(to_colour)}
        )
    return to_seat


def addressees(seats: Iterable[Seat], sender: Seat) -> list[Seat]:
    """The seats `sender` may write to alone (`_check`): the other persons at the table
    (a computer reads no messages)."""
    return [s for s in seats if s != sender and s.is_person]


def readers(seats: list[Seat], sender: Seat, to_seat: Seat | None) -> list[Seat]:
    """The persons who read the message, the sender aside (not those who muted them)."""
    wanted = [to_seat] if to_seat is not None else [s for s in seats if s != sender]
    return [s for s in wanted if s.is_person and not _mutes(s, sender.colour)]


def _mutes(seat: Seat, colour: str) -> bool:
    return isinstance(seat.muted_colours, list) and colour in seat.muted_colours


# --- reading ------------------------------------------------------------------------------------


def for_page(game: Game, seat: Seat | None) -> list[Message]:
    """The messages the page shows the viewer, oldest first (the newest PAGE_MESSAGES).
    One query: their sender and addressee are the game's seats, taken from the seats the
    page prefetched with their users' profiles (read here if it did not)."""
    if none_held(game, TALK_HELD):  # the page read that nobody has written at this table
        return []
    found = Message.objects.filter(game_id=game.pk).visible_to(seat).order_by("-pk")
    shown = list(found[:PAGE_MESSAGES])
    _attach(shown, _seats_of(game))
    return list(reversed(shown))


def for_history(game: Game, seat: Seat | None, first: int, last: int | None) -> list[Message]:
    """The messages the viewer reads of the phases `first` to `last` (None: to the newest),
    oldest first, for the whole log (games.views.history): a player's as the game page
    shows them, a spectator's once the game is over as the archive does, else none."""
    rows = Message.objects.filter(game_id=game.pk, phase_number__gte=first)
    if last is not None:
        rows = rows.filter(phase_number__lte=last)
    shown = list(rows.visible_to(seat, archive=seat is None and game.is_finished).order_by("pk"))
    _attach(shown, _seats_of(game))
    return shown


def for_archive(game: Game) -> list[Message]:
    """A finished game's messages to everyone (private ones stay private)."""
    return list(
        Message.objects.filter(game=game)
        .visible_to(None, archive=True)
        .select_related("sender__user__profile")
    )


def told_upto(seat: Seat) -> int:
    """The newest message an email of the game to the seat's person tells (queued, sent
    or in a digest): the next email tells those after it."""
    told = (
        OutgoingEmail.objects.filter(
            user=seat.user_id, game=seat.game_id, messages_upto__isnull=False
        )
        .exclude(status__in=NOT_TOLD)
        .aggregate(last=Max("messages_upto"))["last"]
    )
    return told or 0


def newest(seats: Iterable[Seat]) -> int:
    """The id of the game's newest message (0: none yet), from its seats read with it
    (`game_newest_message`, as games.mail.notify reads them)."""
    return max((vars(seat)["game_newest_message"] for seat in seats), default=0)


def unread_by_email(seat: Seat, *, newest: int | None = None) -> tuple[list[Message], bool]:
    """The messages the person's next email of the game tells, oldest first, and whether
    older ones were left out (EMAIL_MESSAGES at most). `newest`: the game's newest message
    id (`newest`), if the caller holds the game's row lock and knows it: no query at all
    when the game has none, one when none came after the last one told."""
    if not seat.is_person or newest == 0:
        return [], False
    told = told_upto(seat)
    if newest is not None and newest <= told:
        return [], False
    rows = Message.objects.filter(game=seat.game_id, pk__gt=told).visible_to(seat)
    if not Seat.game.is_cached(seat):  # no game loaded, nor its seats: joined
        rows = rows.select_related("sender__user__profile", "to_seat__user__profile")
    found = list(rows.order_by("-pk")[: EMAIL_MESSAGES + 1])
    if Seat.game.is_cached(seat):
        _attach(found, _seats_of(seat.game))
    return list(reversed(found[:EMAIL_MESSAGES])), len(found) > EMAIL_MESSAGES


def _seats_of(game: Game) -> dict[int, Seat]:
    """The game's seats by id, with their people: those prefetched with the game (no
    query), else read in one."""
    with_people = Seat.objects.select_related("user__profile")
    prefetch_related_objects([game], Prefetch("seats", queryset=with_people))
    return {s.pk: s for s in game.seats.all()}


def _attach(messages: list[Message], seats: dict[int, Seat]) -> None:
    """Each message's sender and addressee from the game's seats (a seat not found would
    still be read, lazily)."""
    for message in messages:
        if message.sender_id in seats:
            message.sender = seats[message.sender_id]
        if message.to_seat_id in seats:
            message.to_seat = seats[message.to_seat_id]


# --- muting a player ------------------------------------------------------------------------------


def set_player_muted(seat: Seat, colour: str, muted: bool) -> None:
    """The seat's person stops (or starts again) reading `colour`'s messages."""
    with transaction.atomic():
        locked = Seat.objects.select_for_update().get(pk=seat.pk)
        others = set(locked.game.seats.exclude(pk=seat.pk).values_list("colour", flat=True))
        if colour not in others:
            raise GameError(
                _("nobody else plays %(colour)s in this game") % {"colour": colour_word(colour)}
            )
        current = (
            [c for c in locked.muted_colours if c in others]
            if isinstance(locked.muted_colours, list)
            else []
        )
        changed = sorted({*current, colour}) if muted else [c for c in current if c != colour]
        Seat.objects.filter(pk=seat.pk).update(muted_colours=changed)
        seat.muted_colours = changed


def heading(message: Message, viewer: Seat | None) -> str:
    """'Bob (ochre) to everyone', 'You to Carol (lilac) only', 'Bob (ochre) to you only'
    (the archive's viewer is None: never 'you')."""

    def named(seat: Seat) -> str:
        return labelled(seat.display_name, seat.colour, computer=seat.is_computer)

    mine = viewer is not None and message.sender_id == viewer.pk
    if message.to_seat is None:
        if mine:
            return _("You to everyone")
        return _("%(sender)s to everyone") % {"sender": named(message.sender)}
    if viewer is not None and message.to_seat_id == viewer.pk:
        if mine:
            return _("You to you only")
        return _("%(sender)s to you only") % {"sender": named(message.sender)}
    if mine:
        return _("You to %(reader)s only") % {"reader": named(message.to_seat)}
    return _("%(sender)s to %(reader)s only") % {
        "sender": named(message.sender),
        "reader": named(message.to_seat),
    }
