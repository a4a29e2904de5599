"""Every email the site sends: one small function per kind, each queuing a row in the
outbox (games.mail.outbox) built from three templates in templates/emails/
(<kind>-subject.txt, <kind>-body.txt, <kind>-body.html).

What an email shows of a game comes from the reader's `games.show.presenter.Presentation`
(the engine's view for their colour, the events they may read): never from the state
itself, so an email cannot hold another player's secrets.
"""

from __future__ import annotations

import functools
import inspect
import logging
import re
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar

from django.conf import settings
from django.contrib.auth.models import User
from django.dispatch import receiver
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import dateformat, timezone, translation
from django.utils.timesince import timeuntil
from django.utils.translation import gettext as _
from django.utils.translation import ngettext, pgettext, pgettext_lazy

from engine.game import is_simultaneous
from engine.view import View
from games import chat, deadlines, limits, services, signals, votes
from games.links import absolute_url
from games.mail import kinds, outbox, push, tokens
from games.mail.replies import SIGNATURE, reply_marker, talk_words, without_marker
from games.models import (
    PERSON,
    DeadlineVote,
    Event,
    Game,
    MessageEmails,
    OutgoingEmail,
    PushChoice,
    Seat,
    language_of,
)
from games.show.command_words import vote_to_reader
from games.show.presenter import EventLine, Presentation, present
from games.show.textboard import board_text
from games.show.view_text import (
    asked,
    deadline_text,
    display_name,
    examples,
    hand,
    moment_text,
    phase_name,
    scores,
    sealed_text,
    time_zone_of,
)
from games.show.vote_text import majority_text, proposal_text
from games.show.words import Names, card_text, clean_text, labelled, name_of, names_list

log = logging.getLogger(__name__)

# No news by themselves: "X has decided", a vote cast, a vote that lapsed (what a vote
# decides is news: the extension or the pause, and a rejection).
TRIVIAL_EVENTS = frozenset({"decided", "bid_made", "vote_cast", "vote_expired"})
EVENTS_SHOWN = 12
NEWS_SHOWN = 40  # lines of "what happened since our last email"; the game page has the rest
NEWS_PHASES = 60  # phases looked through for them (in one query)
KIND_HEADER = "X-Lowenherz-Kind"
PHASE_HEADER = "X-Lowenherz-Phase"  # "<game id>/<phase number>": notify's duplicate check
GAME_HEADER = "X-Lowenherz-Game"

Composer = TypeVar("Composer", bound=Callable[..., Any])


# --- in the reader's language ---------------------------------------------------------------------
#
# Every email is written in its reader's language (Profile.language: `language_of`), also
# when the worker writes it (no request) and when people of several languages share a
# table: the whole composition, its sentences and the rendering, runs in that language
# (dates in it too: the date filter and `dateformat` follow the active language).


def written_for(reader: Callable[[inspect.BoundArguments], str]) -> Callable[[Composer], Composer]:
    """Compose the email in the language `reader` names, from the call's arguments."""

    def decorate(compose: Composer) -> Composer:
        signature = inspect.signature(compose)

        @functools.wraps(compose)
        def composed(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            with translation.override(reader(bound)):
                return compose(*args, **kwargs)

        return composed  # type: ignore[return-value]

    return decorate


def _seat_reader(bound: inspect.BoundArguments) -> str:
    seat: Seat = bound.arguments["seat"]
    return language_of(seat.user)


def _user_reader(bound: inspect.BoundArguments) -> str:
    return language_of(bound.arguments["user"])


def language_at(address: str) -> str:
    """The language of the account an address belongs to, else the site's."""
    user = User.objects.filter(email__iexact=address).select_related("profile").first()
    return language_of(user)


for_seat = written_for(_seat_reader)
for_user = written_for(_user_reader)


# --- one function per kind --------------------------------------------------------------------


@for_seat
def your_turn(
    game: Game,
    seat: Seat,
    *,
    since: int | None = None,
    confirmations: Sequence[StoredSummary] = (),
    shown: Presentation | None = None,
    newest_message: int | None = None,
    links: tokens.Links | None = None,
) -> OutgoingEmail | None:
    """'The game waits for you': what is asked, the state as text, a magic link; with
    what happened after phase `since` (None: the last few events) and the confirmations
    of moves by email that ride in it (games.mail.notify folds them in). `shown`: the
    reader's presentation, if the caller has it already (computed once per phase);
    `newest_message`: the game's newest message id, if the caller knows it
    (`chat.unread_by_email`); `links`: the reply address and magic link, if the caller
    made them (for every player asked at once)."""
    by_push = push.wanted(seat.user)
    pushed = _push_ask(game, seat, shown, by_push)
    if pushed is not None and by_push == PushChoice.INSTEAD:
        return pushed  # what the email would tell is the page's (it rides in the push)
    if not can_mail(seat.user, "your_turn"):
        return None
    links = links or tokens.links(game, [seat])[seat.pk]
    context = {
        **_ask_context(game, seat, since, shown, links.magic_path),
        "confirmations": [summary_line(c) for c in confirmations],
    }
    return _send(
        "your_turn",
        seat.user,
        context,
        game=game,
        seat=seat,
        reply_to=links.reply_to,
        phase=game.phase_number,
        newest_message=newest_message,
        summary=summary("your_turn", phase=_phase_of(context["v"]), turn=context["v"]["turn"]),
    )


@for_seat
def results(
    game: Game,
    seat: Seat,
    phase_number: int | None,
    *,
    since: int | None = None,
    upto: int | None = None,
    confirmations: Sequence[StoredSummary] = (),
    hold_until: datetime | None = None,
    reply_to: str = "",
    shown: Presentation | None = None,
    newest_message: int | None = None,
) -> OutgoingEmail | None:
    """What a phase revealed: decisions, duels, scores. `since`/`upto`: what happened in
    the phases after `since` up to `upto`, in one email (phase_number None: several
    phases, told by notify); `hold_until`: held for the person's next email."""
    if not can_mail(seat.user, "results"):
        return None
    if _never_sent("results", seat.user, hold_until):
        return _owed(
            "results", game, seat, phase_number, hold_until, summary("results", turn=game.turn)
        )
    shown = shown or present(game, seat)
    v = shown.view
    assert v is not None, "a running game has a state"
    last = upto if upto is not None else phase_number or game.phase_number
    events = (
        news(shown.events(phase_number=last)) if since is None else news_since(shown, since, last)
    )
    context = {
        **_game_context(game, seat.user),
        "v": v,
        "events": events,
        "confirmations": [summary_line(c) for c in confirmations],
        "scores": scores(v, shown.labels),
        "phase_sentence": shown.phase_sentence(),
        "deadline": deadline_text(game, seat.user),
        "waiting": shown.waiting_text(),
    }
    return _send(
        "results",
        seat.user,
        context,
        game=game,
        phase=phase_number,
        header_phase=last,
        hold_until=hold_until,
        reply_to=reply_to or ("" if hold_until else _talk_address(game, seat)),
        seat=seat,
        newest_message=newest_message,
        summary=summary("results", turn=v["turn"]),
    )


@for_seat
def messages(
    game: Game, seat: Seat, *, confirmations: Sequence[StoredSummary] = (), reply_to: str = ""
) -> OutgoingEmail | None:
    """The table's messages since the reader's last email of the game, on their own (the
    owed ones, once due, or each at once for a person who chose that): games.mail.notify.
    None when nothing is left to tell."""
    if not can_mail(seat.user, "messages"):
        return None
    context = {
        **_game_context(game, seat.user),
        "confirmations": [summary_line(c) for c in confirmations],
    }
    return _send(
        "messages",
        seat.user,
        context,
        game=game,
        seat=seat,
        require_messages=True,
        reply_to=reply_to or _talk_address(game, seat),
        summary=summary("messages"),
    )


@for_seat
def message_owed(game: Game, seat: Seat, hold_until: datetime) -> OutgoingEmail | None:
    """A held row that says the person is owed the table's messages: never sent as it
    is, folded into their next email of the game, or replaced by `messages` once due."""
    if not can_mail(seat.user, "message_owed"):
        return None
    return _owed("message_owed", game, seat, None, hold_until, summary("message_owed"))


@for_seat
def your_turn_owed(game: Game, seat: Seat, hold_until: datetime) -> OutgoingEmail | None:
    """A held row that says the person, watching the game's page, is owed "the game
    waits for you" for its current phase: never sent as it is; games.mail.notify sends
    the ask once due, unless they looked at the game or moved meanwhile."""
    if not can_mail(seat.user, "your_turn"):
        return None
    owes = summary("your_turn_owed")
    return _owed("your_turn_owed", game, seat, game.phase_number, hold_until, owes)


def _push_ask(
    game: Game, seat: Seat, shown: Presentation | None, by_push: str, *, reminder: bool = False
) -> OutgoingEmail | None:
    """A push beside an ask (a "push" row of the outbox), if the person turned push on
    (`by_push`: push.wanted) in a browser: the game, the phase and its turn, the game's
    page. Only what their own view shows; the rest is on the page it opens."""
    user = seat.user
    if user is None or by_push == PushChoice.OFF:
        return None
    shown = shown or present(game, seat)
    if shown.view is None:
        return None
    words = {"phase": phase_name(shown.view["phase"]), "turn": shown.view["turn"]}
    body = (
        _("Your move is still missing: %(phase)s, turn %(turn)s.")
        if reminder
        else _("The game waits for your move: %(phase)s, turn %(turn)s.")
    ) % words
    payload = push.Payload(
        title=f"Löwenherz: {game.name}",
        body=body,
        url=reverse("game", args=[game.pk]),
        tag=f"game-{game.pk}",
    )
    return outbox.queue(
        "push",
        f"push:{user.pk}",
        payload.title,
        payload.as_text(),
        "",
        user=user,
        game=game,
        phase_number=game.phase_number,
        summary=summary("push"),
    )


def _talk_address(game: Game, seat: Seat) -> str:
    """Every email of a running game can be answered with a message (any phase's reply
    address will do for talk; a move in it is for the current phase)."""
    if game.status != Game.Status.RUNNING:
        return ""
    return tokens.reply_address(seat, game.phase_number)


def news(lines: list[EventLine]) -> list[str]:
    """The sentences worth an email: not "X has decided" (TRIVIAL_EVENTS)."""
    return [line.text for line in lines if line.kind not in TRIVIAL_EVENTS]


def news_from(since: int, upto: int) -> int:
    """The first phase `news_since` reads."""
    return max(since + 1, upto - NEWS_PHASES + 1)


def news_since(shown: Presentation, since: int, upto: int) -> list[str]:
    """The news of the phases after `since` up to `upto`, oldest first: at most
    NEWS_SHOWN lines (the newest), looked for in at most NEWS_PHASES phases."""
    found: list[str] = []
    first = news_from(since, upto)
    rows = shown.phase_rows(first, upto)  # one query at most; worded only as needed
    for number in range(upto, first - 1, -1):
        found = news([shown.row_line(row) for row in rows.get(number, [])]) + found
        if len(found) >= NEWS_SHOWN:
            break
    cut = (
        len(found) > NEWS_SHOWN
        or (len(found) >= NEWS_SHOWN and number > since + 1)
        or first > since + 1
    )
    return [_("(Earlier events: see the game page.)"), *found[-NEWS_SHOWN:]] if cut else found


@for_seat
def reminder(game: Game, seat: Seat) -> None:
    """A reminder before the deadline to a player whose submission is missing (by push
    too, or instead, as they chose)."""
    by_push = push.wanted(seat.user)
    pushed = _push_ask(game, seat, None, by_push, reminder=True)
    if pushed is not None and by_push == PushChoice.INSTEAD:
        return
    if not can_mail(seat.user, "reminder"):
        return
    context = {
        **_ask_context(game, seat),
        "time_left": timeuntil(game.deadline) if game.deadline else "",
    }
    _send(
        "reminder",
        seat.user,
        context,
        game=game,
        reply_to=tokens.reply_address(seat, game.phase_number),
        phase=game.phase_number,
    )


@for_seat
def game_over(
    game: Game,
    seat: Seat,
    *,
    since: int | None = None,
    confirmations: Sequence[StoredSummary] = (),
    shown: Presentation | None = None,
    newest_message: int | None = None,
) -> OutgoingEmail | None:
    """Final scores and a link to the archive; with how it ended: what happened after
    phase `since` (None: in the last phase)."""
    if not can_mail(seat.user, "game_over"):
        return None
    shown = shown or present(game, seat)
    v, names = shown.view, shown.names
    assert v is not None, "a finished game has a state"
    events = (
        news(shown.events(phase_number=game.phase_number))
        if since is None
        else news_since(shown, since, game.phase_number)
    )
    context = {
        **_game_context(game, seat.user),
        "v": v,
        "events": events,
        "confirmations": [summary_line(c) for c in confirmations],
        "scores": scores(v, shown.labels, ranked=True),
        "winners": [name_of(c, names) for c in v["winners"]],
        "won": seat.colour in v["winners"],
        "co_winners": [name_of(c, names) for c in v["winners"] if c != seat.colour],
        "winners_names": _and_names(name_of(c, names) for c in v["winners"]),
        "co_winners_names": _and_names(name_of(c, names) for c in v["winners"] if c != seat.colour),
        "archive_url": absolute_url("archive_game", game.pk),
    }
    return _send(
        "game_over",
        seat.user,
        context,
        game=game,
        seat=seat,
        phase=game.phase_number,
        newest_message=newest_message,
        summary=summary("game_over"),
    )


def _and_names(names: Iterable[str]) -> str:
    """Winners' names, each joined to the next by "and"."""
    return pgettext("between the names of winners", " and ").join(names)


def invitation(game: Game, to: str, inviter: User) -> None:
    """An invitation to join a game, with its join link: in the language of the account
    the address belongs to, else in the inviter's."""
    user = User.objects.filter(email__iexact=to).select_related("profile").first()
    if not outbox.is_wanted(user, "invitation"):
        return
    with translation.override(language_of(user if user is not None else inviter)):
        _invitation(game, to, inviter, user)


def _invitation(game: Game, to: str, inviter: User, user: User | None) -> None:
    seats = list(game.seats.select_related("user__profile"))
    context = {
        **_game_context(game, user),
        "inviter": display_name(inviter),
        "seats": [labelled(s.display_name, s.colour, computer=s.is_computer) for s in seats],
        "free_seats": game.player_count - len(seats),
        "colours": [colour_word(c) for c in game.free_colours()],
        "join_url": absolute_url("invite", game.invite_token),
    }
    _send("invitation", user, context, to=to, game=game, headers={GAME_HEADER: str(game.pk)})


@for_seat
def move_reply(
    seat: Seat,
    accepted: bool,
    commands: list[str],
    message: str,
    *,
    coalesce: bool = True,
    code: str = "",
) -> OutgoingEmail | None:
    """The answer to an emailed move: accepted (with what it means) or refused.
    An acceptance waits EMAIL_COALESCE_SECONDS to ride in the person's next email of the
    game (games.mail.notify; `coalesce=False`: at once); a refusal always goes at once.
    `code`: its summary's, if not the kind's ("vote_accepted": a vote counted)."""
    kind = "move_accepted" if accepted else "move_refused"
    if not can_mail(seat.user, kind):
        return None
    game = Game.objects.get(pk=seat.game_id)
    vote = code == "vote_accepted"  # a vote stands once cast: nothing to change by a reply
    may_reply = not vote and _may_reply_again(game, seat, accepted)
    context = {
        **_game_context(game, seat.user),
        "commands": commands,
        "message": message,
        "may_reply": may_reply,
        "vote": vote,
    }
    hold = (
        timezone.now() + timedelta(seconds=settings.EMAIL_COALESCE_SECONDS)
        if accepted and coalesce
        else None
    )
    return _send(
        kind,
        seat.user,
        context,
        game=game,
        reply_to=tokens.reply_address(seat, game.phase_number) if may_reply else "",
        phase=game.phase_number,
        hold_until=hold,
        summary=summary(code or kind, commands=commands),
    )


@written_for(lambda bound: language_at(bound.arguments["to"]))
def refusal(to: str, reason: str) -> None:
    """The answer to an email that cannot be tied to a player (bad or stale token): in
    the language of the account the address belongs to (a reason made lazily is worded
    in it too)."""
    _send("refusal", None, {"reason": reason, "site_url": settings.SITE_URL}, to=to)


@for_seat
def reply_dropped(seat: Seat) -> None:
    """To a player whose reply was not read: over the limit of emails read from one
    person (games.mail.inbound; the caller sends it at most once a day)."""
    game = Game.objects.get(pk=seat.game_id)
    context = {
        **_game_context(game, seat.user),
        "name": display_name(seat.user),
        "limit": limits.per_period("inbound"),
        "notices": limits.per_period("reply_dropped"),
    }
    _send("reply_dropped", seat.user, context, game=game)


@for_user
def digest(user: User, held: list[OutgoingEmail]) -> OutgoingEmail | None:
    """The held non-urgent emails of one person, in one email (games.mail.outbox)."""
    zone = time_zone_of(user)
    items = [
        {
            "subject": f"{e.subject}: {line}" if (line := summary_line(e.summary)) else e.subject,
            # A digest is read, not answered: no "reply above this line" in its items.
            "text": without_marker(e.text.split(SIGNATURE)[0].strip()).strip(),
            "when": dateformat.format(timezone.localtime(e.created_at, zone), "D j M, H:i"),
        }
        for e in held
    ]
    context = {"name": display_name(user), "items": items, "site_url": settings.SITE_URL}
    return _send("digest", user, context)


# --- the account's own emails (sent whatever the preferences: kinds.Kind.transactional) -------


@for_user
def email_changed(user: User, old_email: str) -> None:
    """To the old address: its account now has another; if that was not its owner, they
    learn it while they can still act (the new address would get any password reset)."""
    context = {
        "name": display_name(user),
        "username": user.get_username(),
        "old_email": old_email,
        "new_email": user.email,
        "when": dateformat.format(
            timezone.localtime(timezone.now(), time_zone_of(user)), "D j M Y, H:i T"
        ),
        "site_url": settings.SITE_URL,
    }
    _send("email_changed", user, context, to=old_email)


@for_user
def email_change_asked(user: User, new_email: str, confirm_url: str, holder: User | None) -> None:
    """A new address for the account: the link that proves it goes to that address (if
    another account has it, word that nothing changed goes there instead); the old one,
    still the account's, hears of it before anything changes."""
    if holder is not None:
        with translation.override(language_of(holder)):  # the other account's reader
            _email_change_taken(holder, new_email)
    else:
        _send(
            "email_confirm",
            user,
            {
                "name": display_name(user),
                "username": user.get_username(),
                "new_email": new_email,
                "confirm_url": confirm_url,
                "hours": settings.PASSWORD_RESET_TIMEOUT // 3600,
            },
            to=new_email,
        )
    _send(
        "email_change_asked",
        user,
        {
            "name": display_name(user),
            "username": user.get_username(),
            "old_email": user.email,
            "new_email": new_email,
            "site_url": settings.SITE_URL,
        },
    )


def _email_change_taken(holder: User, new_email: str) -> None:
    _send(
        "email_change_taken",
        holder,
        {
            "name": display_name(holder),
            "username": holder.get_username(),
            "reset_url": absolute_url("password_reset"),
        },
        to=new_email,
    )


@for_user
def signup_confirm(user: User, confirm_url: str) -> None:
    """The link that finishes signing up: proof that the address is its owner's."""
    _send(
        "signup_confirm",
        user,
        {"name": display_name(user), "username": user.get_username(), "confirm_url": confirm_url},
    )


@for_user
def signup_taken(user: User) -> None:
    """Someone signed up with an address that has an account: its owner hears, the page
    said nothing (it shows the same "check your email" either way)."""
    _send(
        "signup_taken",
        user,
        {
            "name": display_name(user),
            "username": user.get_username(),
            "login_url": absolute_url("login"),
            "reset_url": absolute_url("password_reset"),
        },
    )


def signup_name_taken(to: str, username: str, signup_url: str) -> None:
    """Someone signed up with this address and a username an account has: the page
    said nothing (it tells nobody which names exist), this email says to choose another.
    To the address only: the account with the name is nobody's business here. In the
    language active (the request's: the person signing up reads the site in it)."""
    _send(
        "signup_name_taken",
        None,
        {"username": username, "signup_url": signup_url, "login_url": absolute_url("login")},
        to=to,
    )


@receiver(signals.email_changed)
def _on_email_changed(sender: Any, user: User, old_email: str, **kwargs: Any) -> None:
    email_changed(user, old_email)


@receiver(signals.email_change_asked)
def _on_email_change_asked(
    sender: Any, user: User, new_email: str, confirm_url: str, holder: User | None, **kwargs: Any
) -> None:
    email_change_asked(user, new_email, confirm_url, holder)


@receiver(signals.signup_started)
def _on_signup_started(sender: Any, user: User, confirm_url: str, **kwargs: Any) -> None:
    signup_confirm(user, confirm_url)


@receiver(signals.signup_with_taken_name)
def _on_signup_with_taken_name(
    sender: Any, email: str, username: str, signup_url: str, **kwargs: Any
) -> None:
    signup_name_taken(email, username, signup_url)


@receiver(signals.signup_with_taken_email)
def _on_signup_with_taken_email(sender: Any, user: User, **kwargs: Any) -> None:
    signup_taken(user)


# --- rendering and queuing ----------------------------------------------------------------------


def render(kind: str, context: dict[str, Any]) -> tuple[str, str, str]:
    """Subject (one line), plain text and HTML of an email of this kind, in the language
    active (`written_for`)."""
    language = translation.get_language() or settings.LANGUAGE_CODE
    context = {
        "language": language,
        "reply_marker": reply_marker(language),
        **talk_words(language, context.get("talk_colour", "")),
        **context,
    }
    # Names and game names reach the Subject header: no control or bidi characters.
    subject = clean_text(render_to_string(f"emails/{kind}-subject.txt", context))
    text: str = render_to_string(f"emails/{kind}-body.txt", context)
    text = re.sub(r"\n[ \t]*(\n[ \t]*)+\n", "\n\n", text).strip() + "\n"  # the tags' blank lines
    return subject, text, render_to_string(f"emails/{kind}-body.html", context)


def _send(
    kind: str,
    user: User | None,
    context: dict[str, Any],
    *,
    to: str = "",
    game: Game | None = None,
    reply_to: str = "",
    headers: dict[str, str] | None = None,
    phase: int | None = None,
    header_phase: int | None = None,
    hold_until: datetime | None = None,
    summary: Summary | None = None,
    seat: Seat | None = None,
    require_messages: bool = False,
    newest_message: int | None = None,
) -> OutgoingEmail | None:
    """Render and queue; what the kind is (transactional, may wait for the digest,
    threaded ...) is games.mail.kinds'. `phase`: the game's phase the email is about
    (with `game`), the one it is kept for (`one_email_per_phase`); `header_phase`: the one
    its header names, if it is kept for none. `seat`: the reader's, whose unread messages
    an email of a kind that carries talk tells (`require_messages`: only if there are
    some). `newest_message`: the game's newest message id, if the caller knows it
    (`chat.unread_by_email`)."""
    talk, upto = _messages_context(kind, seat, hold_until, newest_message)
    if require_messages and not talk["messages"]:
        return None
    context = {**context, **talk, **_footer(kind, user, game)}
    subject, text, html = render(kinds.template(kind), context)
    shown_phase = phase if phase is not None else header_phase
    if game is not None and shown_phase is not None:
        headers = {**(headers or {}), **phase_headers(game, shown_phase)}
    if game is not None and kinds.of(kind).threaded:
        headers = {**(headers or {}), **thread_headers(game, kind)}
    return outbox.queue(
        kind,
        to or (user.email if user else ""),
        subject,
        text,
        html,
        user=user,
        game=game,
        reply_to=reply_to,
        headers=headers,
        phase_number=phase,
        hold_until=hold_until,
        summary=summary or {},
        messages_upto=upto,
        unsubscribe=context["unsubscribe_url"],
    )


def _owed(
    kind: str,
    game: Game,
    seat: Seat,
    phase_number: int | None,
    hold_until: datetime | None,
    owes: Summary,
    headers: dict[str, str] | None = None,
) -> OutgoingEmail | None:
    """A held row of owed news that is never sent as it is (`_never_sent`): nothing is
    rendered for it (issue 11: notifying a phase costs what its emails that go cost); its
    summary says what it owes (`owes`), for whoever reads the outbox."""
    user = seat.user
    line = summary_line(owes)
    return outbox.queue(
        kind,
        user.email if user else "",
        f"{line}: {game.name}",
        f"{line}: told in the next email of the game.\n",
        "",
        user=user,
        game=game,
        phase_number=phase_number,
        hold_until=hold_until,
        summary=owes,
        headers=headers,
    )


def _never_sent(kind: str, user: User | None, hold_until: datetime | None) -> bool:
    """Whether the row is held (COALESCING) as owed news that is never sent as it is:
    told in the person's next email, or composed afresh once due (games.mail.notify), so
    it is not rendered (`_owed`). A row held for the digest (HELD) is sent in it, and an
    answer to a move (move_accepted) may go alone: those are rendered."""
    return (
        hold_until is not None
        and kinds.of(kind).owed_news
        and outbox.status_for(user, kind) == outbox.Status.QUEUED
    )


def _messages_context(
    kind: str, seat: Seat | None, hold_until: datetime | None, newest_message: int | None = None
) -> tuple[dict[str, Any], int | None]:
    """The unread messages an email tells, and the newest one's id (None: it tells
    none, so the next email tells them): not in a held email (it may be folded unsent),
    nor to a person who muted the game or reads messages on the page only."""
    empty: dict[str, Any] = {"messages": [], "messages_cut": False}
    if (
        not kinds.of(kind).carries_talk
        or seat is None
        or hold_until is not None
        or seat.mail_muted
        or chat_mode(seat.user) == MessageEmails.OFF
    ):
        return empty, None
    unread, cut = chat.unread_by_email(seat, newest=newest_message)
    if not unread:
        return empty, None
    shown = [
        {
            "heading": chat.heading(m, seat),
            "turn": m.turn,
            "text": m.text,
            "lines": m.text.split("\n"),
        }
        for m in unread
    ]
    return {"messages": shown, "messages_cut": cut}, unread[-1].pk


def chat_mode(user: User | None) -> str:
    """How the person wants the table's messages by email (MessageEmails)."""
    notifications = getattr(user, "notifications", None) if user is not None else None
    return notifications.messages if notifications else MessageEmails.NEXT


def thread_root(game: Game) -> str:
    return f"<game-{game.pk}-{game.mail_thread}@{settings.REPLY_DOMAIN}>"


def thread_headers(game: Game, kind: str) -> dict[str, str]:
    """One thread per game: every email refers to the game's root (its own Message-ID,
    the outbox's, is the same on every attempt to send it)."""
    return {"In-Reply-To": thread_root(game), "References": thread_root(game), KIND_HEADER: kind}


def _footer(kind: str, user: User | None, game: Game | None) -> dict[str, str]:
    if user is None or kinds.of(kind).transactional:
        return {"prefs_url": outbox.preferences_url(), "unsubscribe_url": "", "mute_url": ""}
    muting = game is not None and kinds.of(kind).mute_link
    return {
        "prefs_url": outbox.preferences_url(),
        "unsubscribe_url": outbox.unsubscribe_url(user),
        "mute_url": outbox.mute_url(user, game) if muting and game else "",
    }


# The colours as the emails name them (the engine's names are English codes).
COLOUR_WORDS = {
    "red": pgettext_lazy("colour", "red"),
    "ochre": pgettext_lazy("colour", "ochre"),
    "lilac": pgettext_lazy("colour", "lilac"),
    "grey": pgettext_lazy("colour", "grey"),
}


def colour_word(colour: str) -> str:
    return str(COLOUR_WORDS.get(colour, colour))


def can_mail(user: User | None, kind: str) -> bool:
    """Checked before making tokens and links for an email that would not be sent."""
    return user is not None and bool(user.email) and outbox.is_wanted(user, kind)


def phase_headers(game: Game, phase_number: int) -> dict[str, str]:
    return {GAME_HEADER: str(game.pk), PHASE_HEADER: f"{game.pk}/{phase_number}"}


def _may_reply_again(game: Game, seat: Seat, accepted: bool) -> bool:
    """A refused move may be sent again; an accepted one changed only in a sealed phase,
    where a new submission replaces the stored one until everybody is in."""
    if game.status != Game.Status.RUNNING or seat.colour not in game.waiting:
        return False
    return not accepted or is_simultaneous(game.engine_state)


# --- what the emails say ------------------------------------------------------------------------


def _game_context(game: Game, user: User | None) -> dict[str, Any]:
    return {
        "game": game,
        "name": display_name(user) if user else "",
        "site_url": settings.SITE_URL,
        "game_url": absolute_url("game", game.pk),
        "talk_colour": _talk_colour(game, user),
    }


def _talk_colour(game: Game, user: User | None) -> str:
    """The colour the reader's example of a message to one player names: the first other
    person at the table ("": the reader has nobody to write to, or no seat)."""
    seats = list(game.seats.all())  # the caller's, with their people, where it read them
    mine = next((s for s in seats if user is not None and s.user_id == user.pk), None)
    others = chat.addressees(seats, mine) if mine is not None else []
    return others[0].colour if others else ""


def _ask_context(
    game: Game,
    seat: Seat,
    since: int | None = None,
    shown: Presentation | None = None,
    magic_path: str = "",
) -> dict[str, Any]:
    """Everything a player needs to move without opening the site: what is asked, the
    board, their hand, the scores, what happened (after phase `since`, or the last few
    events), the deadline, a link and a reply."""
    shown = shown or present(game, seat)
    v, names = shown.view, shown.names
    assert v is not None, "a running game has a state"
    return {
        **_game_context(game, seat.user),
        "v": v,
        "phase_label": phase_name(v["phase"]),
        "phase_sentence": shown.phase_sentence(),
        "asked": asked(v, names),
        "examples": examples(v),
        "board": board_text(v),
        "card": v.get("card") or "",
        "card_text": card_text(v.get("card")),
        "hand": hand(v),
        "scores": scores(v, shown.labels),
        "decisions": [f"{d.name}: {d.cards} ({d.actions})" for d in shown.decisions()],
        "sealed": sealed_text(v),
        "events": [line.text for line in shown.events(last=EVENTS_SHOWN)]
        if since is None
        else news_since(shown, since, game.phase_number),
        "since_last_email": since is not None,
        "deadline": deadline_text(game, seat.user),
        "waiting": shown.waiting_text(),
        "magic_url": absolute_url(
            magic_path or tokens.magic_link_path(seat, game, game.phase_number)
        ),
    }


# --- a deadline extended: told in each person's next email ------------------------------------
#
# `games.deadlines` announces an extension (by the creator, or for an absence) under the
# game's row lock, in the transaction that moved the deadline: what it owes are rows of
# the same commit. Decisions:
# - Never told to whoever caused it: the one who extended it (`by`), nor, for an
#   absence, the people away. Every other person seated (not computers) is told; not a
#   person who muted the game, nor one who unsubscribed.
# - Told in the person's next email of the game (issue 24: a notice is no email of its
#   own): a held row (owed news, COALESCING) whose sentence rides at the top of their
#   next "waits for you", results, messages or final email (games.mail.notify), or, if
#   none comes within EMAIL_RESULTS_HOLD_SECONDS, in one extension email of its own
#   (`extensions_owed`), which tells every extension owed and asks again whoever the
#   phase still waits for. A person watching the game's page reads it there.
# - A digest reader finds it in the digest, rendered now (not urgent; not answered).
# - Told once: each row names the deadline it tells (DEADLINE_HEADER); a second call for
#   the same deadline queues nothing (the row lock makes twin calls take turns).

EXTENDED = "deadline_extended"
DEADLINE_HEADER = "X-Lowenherz-Deadline"  # the deadline (ISO) an extension email tells
UNSENT = (OutgoingEmail.Status.QUEUED, OutgoingEmail.Status.RETRYING, OutgoingEmail.Status.HELD)


@receiver(deadlines.deadline_extended)
def _on_deadline_extended(
    sender: Any, game: Game, event: Event, by: User | None = None, **kwargs: Any
) -> None:
    deadline_extended(game, event.data, by=by)


def deadline_extended(
    game: Game, extension: dict[str, Any], *, by: User | None = None
) -> list[OutgoingEmail]:
    """Owe every person seated but whoever caused it the news that the deadline moved:
    by whom, until when (in their own time zone, once told). `extension`: the
    "deadline_extended" event's data; `by`: who extended it (None: the site, for an
    absence). The caller holds the game's row lock. Returns the rows queued."""
    deadline = str(extension["deadline"])
    people = list(
        game.seats.filter(PERSON, mail_muted=False)
        .select_related("user__profile")
        .order_by("position")
    )
    queued = []
    for seat in people:
        user = seat.user
        if (
            caused(extension, seat, by)
            or not can_mail(user, EXTENDED)
            or _extension_told(seat, game, deadline)
        ):
            continue
        assert user is not None  # can_mail
        with translation.override(language_of(user)):
            email = _owe_extension(game, seat, user, extension, by, deadline)
        if email is not None:
            queued.append(email)
    return queued


def caused(extension: dict[str, Any], seat: Seat, by: User | None) -> bool:
    """Whether the person of the seat caused the extension: is away, or cast the vote that
    passed it (they saw it pass; who voted before them learns it here)."""
    if by is not None and by.pk == seat.user_id:
        return True
    return extension.get("reason") == "away" and seat.colour in (extension.get("players") or [])


def _owe_extension(
    game: Game,
    seat: Seat,
    user: User,
    extension: dict[str, Any],
    by: User | None,
    deadline: str,
) -> OutgoingEmail | None:
    """The row that owes one person the extension (in their language): held for their
    next email of the game, or, for a digest reader, the email the digest will carry."""
    change = extension_values(extension, seat, present(game, seat).names, by)
    if outbox.status_for(user, EXTENDED) == outbox.Status.HELD:
        replaced = _replace_unsent_extensions(seat, game)
        changes = [*(c for e in replaced for c in _changes_of(e.summary)), change]
        return _extension_email(game, seat, changes, deadline, awaited=_awaited(game, seat))
    hold = timezone.now() + timedelta(seconds=settings.EMAIL_RESULTS_HOLD_SECONDS)
    owes = summary(EXTENDED, changes=[change])
    headers = {DEADLINE_HEADER: deadline}
    return _owed(EXTENDED, game, seat, game.phase_number, hold, owes, headers)


@for_seat
def extensions_owed(
    game: Game,
    seat: Seat,
    owed: Sequence[OutgoingEmail],
    *,
    confirmations: Sequence[StoredSummary] = (),
    reply_to: str = "",
) -> OutgoingEmail | None:
    """The extensions held for the person (`owed`, oldest first), told in one email of
    their own once due (games.mail.notify), asking again if the phase still waits for
    them; with the confirmations of moves by email that ride in it (`reply_to`: theirs,
    for a sealed move still open to change). None if there is none, or they no longer
    want it."""
    if not owed or not can_mail(seat.user, EXTENDED):
        return None
    changes = [change for e in owed for change in _changes_of(e.summary)]
    deadline = str(owed[-1].headers.get(DEADLINE_HEADER, ""))
    return _extension_email(
        game,
        seat,
        changes,
        deadline,
        awaited=_awaited(game, seat),
        confirmations=confirmations,
        reply_to=reply_to,
    )


def _awaited(game: Game, seat: Seat) -> bool:
    """Whether the current phase still waits for the seat's move."""
    return deadlines.unanswered(game).filter(pk=seat.pk).exists()


def _extension_email(
    game: Game,
    seat: Seat,
    changes: list[dict[str, Any] | str],
    deadline: str,
    *,
    awaited: bool,
    confirmations: Sequence[StoredSummary] = (),
    reply_to: str = "",
) -> OutgoingEmail | None:
    """The extension email to one person seated (in their language): every change it
    tells, the deadline now, and the ask again if the phase still waits for them (not in
    a digest: a digest is read, not answered)."""
    user = seat.user
    assert user is not None  # a person's seat
    shown = present(game, seat)
    awaited = awaited and seat.plays_in_person
    held = outbox.status_for(user, EXTENDED) == outbox.Status.HELD
    ask = awaited and not held
    context = {
        **(_ask_context(game, seat, shown=shown) if ask else _game_context(game, user)),
        "changes": [_change_line(change) for change in changes],
        "deadline": deadline_text(game, user),
        **_pause_context(game, changes[-1] if changes else {}, user),
        "awaited": awaited,
        "ask": ask,
        "phase_sentence": shown.phase_sentence(),
        "confirmations": [summary_line(c) for c in confirmations],
    }
    return _send(
        EXTENDED,
        user,
        context,
        game=game,
        reply_to=tokens.reply_address(seat, game.phase_number) if ask else reply_to,
        phase=game.phase_number,
        headers={DEADLINE_HEADER: deadline},
        summary=summary(EXTENDED, changes=changes),
    )


def _pause_context(game: Game, change: dict[str, Any] | str, user: User) -> dict[str, str]:
    """For a pause the table voted for (the newest change an email tells,
    `extension_values`), while it holds: until when, and the deadline that then holds
    (the time the phase had left runs from the pause's end), in the reader's zone."""
    if not game.paused_by_vote or not isinstance(change, dict):
        return {}
    if change.get("reason") != "vote_pause" or "until" not in change:
        return {}
    until = datetime.fromisoformat(str(change["until"]))
    after = datetime.fromisoformat(str(change["deadline"]))
    return {
        "paused_until": moment_text(until, time_zone_of(user)),
        "deadline_after": moment_text(after, time_zone_of(user)),
    }


def extension_sentence(extension: dict[str, Any], seat: Seat, names: Names, by: User | None) -> str:
    """Who extended the deadline, to the reader of the seat ("You" if it was them)."""
    return _change_line(extension_values(extension, seat, names, by))


def extension_values(
    extension: dict[str, Any], seat: Seat, names: Names, by: User | None
) -> dict[str, Any]:
    """What `_change_line` words of an extension (or a pause the table voted for), for
    the reader of the seat: who extended it (by their name as it is now), no words."""
    if extension.get("reason") == "vote" and extension.get("kind") == "paused":
        return {
            "reason": "vote_pause",
            "days": int(extension["days"]),
            "until": str(extension["until"]),
            "deadline": str(extension["deadline"]),
        }
    if extension.get("reason") == "vote":
        return {"reason": "vote", "hours": int(extension["hours"])}
    if extension.get("reason") == "creator":
        player = extension.get("player")  # the creator's colour, if they hold a seat
        return {
            "reason": "creator",
            "hours": int(extension["hours"]),
            "you": by is not None and by.pk == seat.user_id,
            "who": name_of(player, names) if player else display_name(by),
        }
    away = [str(c) for c in extension.get("players") or []]
    return {
        "reason": "away",
        "away": away,
        "names": {c: name_of(c, names) for c in away},
        "reader": seat.colour,
    }


def _change_line(change: dict[str, Any] | str) -> str:
    """An extension of the deadline (`extension_values`) in words; a string is a line
    stored before summaries were codes, shown as it is."""
    if isinstance(change, str):
        return change
    if change["reason"] == "vote":
        hours = int(change["hours"])
        return ngettext(
            "The table voted to extend the deadline by %(hours)s hour.",
            "The table voted to extend the deadline by %(hours)s hours.",
            hours,
        ) % {"hours": hours}
    if change["reason"] == "vote_pause":
        days = int(change["days"])
        return ngettext(
            "The table voted to pause the phase for %(days)s day.",
            "The table voted to pause the phase for %(days)s days.",
            days,
        ) % {"days": days}
    if change["reason"] == "creator":
        hours = int(change["hours"])
        if change["you"]:
            return ngettext(
                "You extended the deadline by %(hours)s hour.",
                "You extended the deadline by %(hours)s hours.",
                hours,
            ) % {"hours": hours}
        if change["who"]:
            return ngettext(
                "%(who)s, the game's creator, extended the deadline by %(hours)s hour.",
                "%(who)s, the game's creator, extended the deadline by %(hours)s hours.",
                hours,
            ) % {"who": change["who"], "hours": hours}
        return ngettext(
            "The game's creator extended the deadline by %(hours)s hour.",
            "The game's creator extended the deadline by %(hours)s hours.",
            hours,
        ) % {"hours": hours}
    away, reader = change["away"], change["reader"]
    if away == [reader]:
        return _("The deadline was extended while you are away.")
    if len(away) == 1:
        return _("The deadline was extended while %(name)s is away.") % {
            "name": name_of(away[0], change["names"])
        }
    you = pgettext("the reader, in a list of names", "you")
    return _("The deadline was extended while %(names)s are away.") % {
        "names": names_list(away, {**change["names"], reader: you})
    }


def _changes_of(stored: StoredSummary) -> list[dict[str, Any] | str]:
    """The extensions an extension email's summary tells (a line stored before summaries
    were codes: that line)."""
    if isinstance(stored, str):
        return [stored] if stored else []
    return list(stored.get("values", {}).get("changes", []))


# --- the table is asked to vote ------------------------------------------------------------------
#
# `games.votes` announces a proposal still open after its proposer's yes (with one person
# seated it passed at once) under the game's row lock, in the transaction that stores it.
# Every other person who votes is asked, in their language, with a reply address of the
# current phase (a vote by email answers it: `vote yes`, `vote no`, in their words); not
# the proposer (their yes is in), nor a person who muted the game or unsubscribed.

VOTE = "vote_proposed"


@receiver(votes.vote_proposed, dispatch_uid="games.mail.compose.vote_proposed")
def _on_vote_proposed(sender: Any, game: Game, vote: DeadlineVote, **kwargs: Any) -> None:
    vote_proposed(game, vote)


def vote_proposed(game: Game, vote: DeadlineVote) -> list[OutgoingEmail]:
    """Ask every other person who votes to vote on the proposal. Returns the emails."""
    seats = list(game.seats.select_related("user__profile"))
    result = votes.tally(vote, seats)
    asked = [
        seat
        for seat in seats
        if votes.is_voter(seat)
        and not seat.mail_muted
        and seat.pk != vote.proposer_id
        and can_mail(seat.user, VOTE)
    ]
    queued = []
    for seat in asked:
        with translation.override(language_of(seat.user)):
            email = _vote_email(game, vote, seat, result)
        if email is not None:
            queued.append(email)
    return queued


def _vote_email(
    game: Game, vote: DeadlineVote, seat: Seat, result: votes.Tally
) -> OutgoingEmail | None:
    """The call to vote to one person (in their language)."""
    shown = present(game, seat)
    language = translation.get_language()
    context = {
        **_game_context(game, seat.user),
        "proposal": proposal_text(vote, shown.name(vote.proposer.colour)),
        "majority": majority_text(result.needed, result.voters),
        "open_until": moment_text(vote.expires_at, time_zone_of(seat.user)),
        "deadline": deadline_text(game, seat.user),
        "waiting": shown.waiting_text(),
        "vote_yes": vote_to_reader(True, language),
        "vote_no": vote_to_reader(False, language),
    }
    return _send(
        VOTE,
        seat.user,
        context,
        game=game,
        reply_to=tokens.reply_address(seat, game.phase_number),
        phase=game.phase_number,
        summary=summary(VOTE, kind=vote.kind, amount=vote.amount),
    )


# --- what an email says in one line (OutgoingEmail.summary) ------------------------------------
#
# Stored as a code and its values, worded when read: in the digest's items, in the
# confirmations a later email carries, in the extension email that replaces another.

Summary = dict[str, Any]  # {"code": ..., "values": {...}}
StoredSummary = Summary | str  # a string: a line stored before summaries were codes


def summary(code: str, **values: Any) -> Summary:
    """An email's summary: one of `SUMMARY_LINES`' codes, with its values."""
    assert code in SUMMARY_LINES, code
    return {"code": code, "values": values}


def summary_line(stored: StoredSummary | None) -> str:
    """A stored summary in words ("" for none); a string is shown as it was stored."""
    if not stored:
        return ""
    if isinstance(stored, str):
        return stored
    return SUMMARY_LINES[stored["code"]](stored.get("values") or {})


def _phase_of(v: View) -> dict[str, Any]:
    """What `phase_label` reads of the view's phase."""
    return {"kind": v["phase"].get("kind"), "action": v["phase"].get("action")}


# Worded in the language active when read (the reader's: `written_for`).
SUMMARY_LINES: dict[str, Callable[[dict[str, Any]], str]] = {
    "your_turn": lambda v: (
        _("Your move: %(phase)s, turn %(turn)s")
        % {"phase": phase_name(v["phase"]), "turn": v["turn"]}
    ),
    "results": lambda v: _("What happened (turn %(turn)s)") % {"turn": v["turn"]},
    "messages": lambda v: _("Messages"),
    "message_owed": lambda v: _("New messages at the table"),
    "your_turn_owed": lambda v: _("The game waits for your move"),
    "push": lambda v: _("A push notification"),
    "game_over": lambda v: _("The game is over"),
    "move_accepted": lambda v: (
        _("Your move by email was accepted: %(commands)s.") % {"commands": "; ".join(v["commands"])}
    ),
    "move_refused": lambda v: (
        _("Your move by email was refused: %(commands)s.") % {"commands": "; ".join(v["commands"])}
    ),
    "vote_accepted": lambda v: (
        _("Your vote by email was counted: %(commands)s.") % {"commands": "; ".join(v["commands"])}
    ),
    EXTENDED: lambda v: " ".join(_change_line(change) for change in v["changes"]),
    VOTE: lambda v: (
        (
            ngettext(
                "A vote: pause the phase for %(count)s day?",
                "A vote: pause the phase for %(count)s days?",
                v["amount"],
            )
            if v["kind"] == "pause"
            else ngettext(
                "A vote: extend the deadline by %(count)s hour?",
                "A vote: extend the deadline by %(count)s hours?",
                v["amount"],
            )
        )
        % {"count": v["amount"]}
    ),
}


def _extension_told(seat: Seat, game: Game, deadline: str) -> bool:
    """Whether an email to the person tells this deadline already (in any state)."""
    return any(
        headers.get(DEADLINE_HEADER) == deadline
        for headers in OutgoingEmail.objects.filter(
            kind=EXTENDED, user=seat.user_id, game=game
        ).values_list("headers", flat=True)
    )


def _replace_unsent_extensions(seat: Seat, game: Game) -> list[OutgoingEmail]:
    """The person's extension emails of the game not sent yet, which the new one replaces
    (each claimed here; one a worker claimed meanwhile is sent, and not replaced)."""
    replaced = []
    for email in OutgoingEmail.objects.filter(
        kind=EXTENDED, user=seat.user_id, game=game, status__in=UNSENT
    ).order_by("created_at", "pk"):
        if OutgoingEmail.objects.filter(pk=email.pk, status__in=UNSENT).update(
            status=OutgoingEmail.Status.FOLDED,
            last_error="replaced by the email of a later extension",
        ):
            replaced.append(email)
    return replaced


# --- a game paused for repair: the site's operators are told ------------------------------------
#
# `games.services.note_broken` announces it under the game's row lock, in the transaction
# that marks the game: the emails are rows of the same commit, sent by the outbox like
# every other (retried while the SMTP server is down, never twice). One to each of ADMINS,
# with the error (for operators only: it may quote a player's secret move) and the command
# that retries the game; none if ADMINS is empty (the error in the log still says it).

REPAIR = "repair_needed"


@receiver(services.repair_needed, dispatch_uid="games.mail.compose.repair_needed")
def _on_repair_needed(sender: Any, game: Game, **kwargs: Any) -> None:
    repair_needed(game)


@written_for(lambda bound: settings.LANGUAGE_CODE)  # the operators read English
def repair_needed(game: Game) -> list[OutgoingEmail]:
    """Tell each of the site's operators that the game is paused for repair. Returns the
    emails queued."""
    if not settings.ADMINS:
        log.warning("game %s needs repair; no ADMINS are set to email about it", game.pk)
        return []
    context = {
        "game": game,
        "game_url": absolute_url("game", game.pk),
        "since": game.needs_repair_since,
        "attempts": game.resolve_failures,
        "error": game.resolve_error,
        "error_line": (game.resolve_error.strip().splitlines() or [""])[-1],
    }
    queued = [
        _send(REPAIR, None, {**context, "name": name}, to=address, game=game)
        for name, address in settings.ADMINS
    ]
    return [email for email in queued if email is not None]
