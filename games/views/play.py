"""The game page, its JSON twin, and submitting a move.

Everything shown comes from the viewer's `games.show.presenter.Presentation`: the engine's
view for my colour (None for spectators), the events I may read, my own pending
submission. The queries are a fixed handful, whatever the length of the game: the game,
its seats with users and profiles, my pending submission, who has submitted, and the
last events.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Prefetch, prefetch_related_objects
from django.http import HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.datastructures import MultiValueDict
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext, ngettext, pgettext_lazy
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from engine.errors import IllegalMove, NotationError
from engine.moves import Decide, EndAlliance, Submission
from engine.notation import MAX_MOVE_CHARS, parse_move
from engine.view import View
from games import chat, services
from games.context_processors import COUNTED
from games.forms import MessageForm
from games.kept import Kept
from games.models import Game, Seat, page_flags, with_pending
from games.play_forms import (
    FORMS,
    EndAllianceForm,
    MoveTextForm,
    PlayForm,
    form_from_post,
    forms_for,
    own_alliances,
)
from games.reversing import reverse_cached
from games.show.board_svg import render_board
from games.show.command_words import to_english
from games.show.help import help_for
from games.show.presenter import EventLine, Presentation, present, rows_key
from games.show.view_text import absence_policy, asked, deadline_text, examples, hand
from games.show.words import action_text, away_name, card_text, refusal_text
from games.views.chat import draft_of
from games.views.deadlines import deadline_context
from games.views.live import game_poll
from games.visibility import visible_game

EVENTS_SHOWN = 50
# What a pending submission waits for, as the page's "(you can change it until …)" ends.
UNTIL = {
    "decision": pgettext_lazy("you can change it until", "everyone has decided"),
    "duel": pgettext_lazy("you can change it until", "every bid is in"),
}
UNTIL_RESOLVED = pgettext_lazy("you can change it until", "the phase is resolved")
# The same, as the message after a submission says it.
CHANGE_UNTIL = {
    "decision": _("You can change it until everyone has decided."),
    "duel": _("You can change it until every bid is in."),
}


# --- loading -----------------------------------------------------------------------------------


def _load(request: HttpRequest, game_id: int) -> Presentation:
    """The game with its seats (users and profiles), as the requesting user sees it; an
    invite-only game they neither play nor were invited to is a 404 (`visible_game`,
    asked only of an invite-only game the person has no seat in: a public game, or a
    player's own, is visible without it)."""
    game = get_object_or_404(Game.objects.annotate(**page_flags()), pk=game_id)
    # Each seat with whether it has a move stored for the phase the game row says, and
    # the requester's own move: the page's pending moves read with the seats.
    seats = with_pending(
        Seat.objects.select_related("user__profile", "user__notifications"),
        game.phase_number,
        request.user,
    )
    prefetch_related_objects([game], Prefetch("seats", queryset=seats))
    seat = game.seat_for(request.user)
    if game.invite_only and seat is None:
        visible_game(request, Game.objects.only("pk"), pk=game_id)
    return present(game, seat)


# --- the page ----------------------------------------------------------------------------------


def game_page(request: HttpRequest, game_id: int) -> HttpResponse:
    # The version first: a change made while the page is drawn makes the page fetch
    # itself once more, never leaves it behind (games/static/games/live.js).
    poll, counted, _ = game_poll(request, game_id)
    setattr(request, COUNTED, counted)  # the navigation's count, from the same query
    version = poll["version"]
    shown = _load(request, game_id)
    game, seat, v = shown.game, shown.seat, shown.view
    context: dict[str, Any] = {
        "game": game,
        "seat": seat,
        "v": v,
        "names": shown.names,
        "seats": list(game.seats.all()),
        "free_seats": max(game.player_count - len(game.seats.all()), 0),
        "invite_url": "",
        "live_version": version,
        "absence_policy": absence_policy(game),
    }
    if seat is not None and game.status == Game.Status.OPEN:  # the link to share, as the lobby
        context["invite_url"] = request.build_absolute_uri(
            reverse("invite", args=[game.invite_token])
        )
    if v is not None:
        kept = _kept_input(request, game) if seat is not None else None
        reader = request.user if request.user.is_authenticated else None
        context.update(_play_context(shown, v, kept), deadline=deadline_text(game, reader))
        context.update(deadline_context(game, seat, shown.names))
    context["chat"] = _chat_context(request, game, seat)
    return render(request, "games/game.html", context)


def _chat_context(request: HttpRequest, game: Game, seat: Seat | None) -> dict[str, Any] | None:
    """The table talk the viewer reads, the form to write (while the game is open or
    running) and the players they may mute; None for a spectator, who reads none."""
    if seat is None:
        return None
    lines = [
        {
            "pk": m.pk,
            "heading": chat.heading(m, seat),
            "turn": m.turn,
            "text": m.text,
            "when": m.created_at,
            "colour": m.sender.colour,
            "private": m.to_seat_id is not None,
            "mine": m.sender_id == seat.pk,
        }
        for m in chat.for_page(game, seat)
    ]
    seats = list(game.seats.all())
    form = None
    if game.status in chat.OPEN_FOR_TALK and seat.is_person:
        draft = draft_of(request, game)
        form = MessageForm(seats, seat, initial=draft) if draft else MessageForm(seats, seat)
    muted = set(seat.muted_colours) if isinstance(seat.muted_colours, list) else set()
    others = [
        {"colour": s.colour, "name": s.display_name, "muted": s.colour in muted}
        for s in seats
        if s.pk != seat.pk and s.is_person
    ]
    return {"messages": lines, "form": form, "others": others}


def _play_context(
    shown: Presentation, v: View, kept: MultiValueDict | None = None
) -> dict[str, Any]:
    return {
        "board": mark_safe(  # render_board escapes every text it writes
            render_board(v, interactive=bool(v.get("ask")), element_id="board")
        ),
        "players": _players(shown, v),
        "phase_sentence": shown.phase_sentence(),
        "card_text": card_text(v.get("card")),
        "help": help_for(v) if shown.seat is not None else [],
        "decisions": shown.decisions(),
        "neutral": sorted({c[2] for c in v["castles"]} - set(v["players"])),
        "hand": hand(v) if v["viewer"] else None,
        # What is asked and replies that would do: the sentences the emails say.
        "asked": asked(v, shown.names),
        "examples": examples(v),
        "pending": shown.my_pending(),
        "pending_until": UNTIL.get(v["phase"]["kind"], UNTIL_RESOLVED),
        **_forms(shown.game, shown.seat, v, kept),
        "log": _log(shown),
    }


# A line of the log: its turn, what happened, and a badge if only its reader reads it.
LOG_LINE = '<li class="log-line{}"><span class="text-muted">{}</span> · {}{}</li>'
PRIVATE_LINE = " private"  # the line's class beside log-line, for a private event


# The log's lines kept per process (`_log`): the page writes the same fifty on every request.
LOGS_KEPT = 256  # some 10 KB each
_logs: Kept[tuple[str, tuple[Any, ...]], SafeString] = Kept(LOGS_KEPT)


def _log(shown: Presentation) -> SafeString:
    """The last events the reader may read, newest first, as the lines of the log's list
    (`_log_lines`); kept by everything they are made of: those events' rows, read for this
    reader, and what their sentences are worded by (`Presentation.wording_key`: the
    names, the reader, the time zone, the language, which the headings are in too)."""
    rows = shown.newest_rows(EVENTS_SHOWN)
    key = (rows_key(rows), shown.wording_key())
    return _logs.get_or_make(
        key, lambda: _log_lines([shown.row_line(row) for row in reversed(rows)])
    )


def _log_lines(events: list[EventLine]) -> SafeString:
    """The events, oldest first, as the log's lines, newest first: written here rather
    than by the template, where its fifty lines were half the page's template work; each
    word translated, and each turn's heading escaped, once for all the lines. What
    format_html_join would write, without escaping the constant class and badge again on
    each line (a tenth of the page's time went to it)."""
    turn = gettext("Turn %(turn)s")
    only_you = format_html(' <span class="badge text-bg-light">{}</span>', gettext("only you"))
    headings: dict[int, str] = {}
    lines = []
    for line in reversed(events):
        heading = headings.get(line.turn)
        if heading is None:
            heading = headings[line.turn] = conditional_escape(turn % {"turn": line.turn})
        lines.append(
            LOG_LINE.format(
                PRIVATE_LINE if line.private else "",
                heading,
                conditional_escape(line.text),
                only_you if line.private else "",
            )
        )
    return mark_safe("".join(lines))  # every text in it escaped above


def _forms(
    game: Game, seat: Seat | None, v: View, kept: MultiValueDict | None = None
) -> dict[str, Any]:
    """The forms for what the engine asks of me, the text fallback, ending an alliance;
    each made for the current phase. The one a refused submission came from is bound to
    what was typed and ticked in it (`kept`), so that it can be corrected."""
    if seat is None or game.status != Game.Status.RUNNING or game.needs_repair:
        return {"forms": [], "text_form": None, "end_alliance": None}
    action, number = reverse_cached("submit", game.pk), game.phase_number
    again = form_from_post(v, kept, action, number) if kept else None
    kind = again.kind if again is not None else ""

    def shown(form: PlayForm) -> PlayForm:
        return again if again is not None and form.kind == kind else form

    return {
        "forms": [shown(form) for form in forms_for(v, action, number)],
        "text_form": shown(MoveTextForm(view=v, action=action, phase_number=number)),
        "end_alliance": shown(EndAllianceForm(view=v, action=action)) if own_alliances(v) else None,
    }


# --- a refused submission's input, kept for the page it redirects to ---------------------------

KEPT = "refused_input"  # session key: {"game": id, "data": {field: [values]}}
KEPT_VALUES = 20  # per field: more than any form has boxes to tick
KEPT_CHARS = MAX_MOVE_CHARS  # per value: what a field may hold


def _keep_input(request: HttpRequest, game: Game) -> None:
    """Remember what was typed and ticked in a refused form, for one page view; bounded,
    since a POST may hold anything."""
    kind = "move" if "move" in request.POST else request.POST.get("form", "")
    form_class = FORMS.get(kind)
    if form_class is None:
        return
    fields = [*form_class.base_fields, "treasure"]  # setup() adds the Treasure boxes
    data = {
        name: [value[:KEPT_CHARS] for value in request.POST.getlist(name)[:KEPT_VALUES]]
        for name in fields
        if name in request.POST
    }
    request.session[KEPT] = {"game": game.pk, "data": {**data, "form": [kind]}}


def _kept_input(request: HttpRequest, game: Game) -> MultiValueDict | None:
    """The refused form's input for this game, once (None if there is none)."""
    kept = request.session.pop(KEPT, None)
    if not isinstance(kept, dict) or kept.get("game") != game.pk:
        return None
    data = kept.get("data")
    return MultiValueDict(data) if isinstance(data, dict) else None


def _players(shown: Presentation, v: View) -> list[dict]:
    """The power track: every player in seat order, with what the view shows of them."""
    top = max([p["power"] for p in v["players"].values()] + [1])
    waiting, submitted = v["phase"]["waiting"], shown.has_submitted()
    return [
        {
            "colour": colour,
            "name": shown.name(colour),
            "ducats": None,
            **data,
            "counts": _counts(data),
            "bar": round(100 * data["power"] / top),
            "is_me": colour == v["viewer"],
            "is_start": colour == v["start_player"],
            "waiting": colour in waiting,
            # "Bob (away)" where the game waits for them while they are away (issue 24).
            "waiting_name": away_name(shown.name(colour))
            if colour in shown.away
            else shown.name(colour),
            "submitted": colour in submitted,
        }
        for colour, data in v["players"].items()
    ]


def _counts(player: Mapping[str, Any]) -> str:
    """What the power track says a player holds: "12 ducats · 3 politics · 5 knights left"
    (ducats only where the view shows them)."""
    n = {"n": player["hand_size"]}
    parts = [ngettext("%(n)s politics", "%(n)s politics", n["n"]) % n]
    n = {"n": player["knights_in_supply"]}
    parts.append(ngettext("%(n)s knight left", "%(n)s knights left", n["n"]) % n)
    if player.get("ducats") is not None:
        n = {"n": player["ducats"]}
        parts.insert(0, ngettext("%(n)s ducat", "%(n)s ducats", n["n"]) % n)
    return " · ".join(parts)


# --- JSON ----------------------------------------------------------------------------------------


def game_json(request: HttpRequest, game_id: int) -> JsonResponse:
    shown = _load(request, game_id)
    game = shown.game
    return JsonResponse(
        {
            "game": {
                "id": game.pk,
                "name": game.name,
                "status": game.status,
                "phase_number": game.phase_number,
                "turn": game.turn,
                "deadline": game.deadline.isoformat() if game.deadline else None,
                # Paused for repair (its moves failed to apply): when, never the error.
                "paused_for_repair": game.needs_repair,
                "repair_since": game.needs_repair_since.isoformat()
                if game.needs_repair_since
                else None,
                "seats": [
                    {"colour": s.colour, "name": s.display_name, "computer": s.is_computer}
                    for s in game.seats.all()
                ],
            },
            "viewer": shown.colour,
            "view": shown.view,
            "my_submission": shown.my_pending(),
            "events": [
                {
                    "index": e.index,
                    "turn": e.turn,
                    "kind": e.kind,
                    "data": e.data,
                    "private": e.private,
                    "text": e.text,
                }
                for e in shown.events(last=EVENTS_SHOWN)
            ],
        }
    )


# --- submitting ----------------------------------------------------------------------------------


class _FormProblem(ValueError):
    """A form that does not make a submission; the message says why."""


@login_required
@require_POST
def submit(request: HttpRequest, game_id: int) -> HttpResponse:
    """Hand the typed text, or the text a form builds, to the engine via services."""
    shown = _load(request, game_id)
    game, seat = shown.game, shown.seat
    if seat is None:
        messages.error(request, gettext("You have no seat in this game."))
        return redirect("game", game_id=game.pk)
    phase_number = _phase_of(request.POST)
    try:
        move = _submission(request, shown, phase_number)
        outcome = services.submit(game.pk, seat.pk, move, phase_number=phase_number)
    except services.PhaseGone as gone:  # the page it redirects to has the new phase's forms
        messages.error(request, str(gone))
    except (NotationError, IllegalMove, services.GameError, _FormProblem) as error:
        reason = (
            refusal_text(error, seat.colour)
            if isinstance(error, NotationError | IllegalMove)
            else error
        )
        messages.error(request, gettext("Not accepted: %(reason)s") % {"reason": reason})
        _keep_input(request, game)
    else:
        messages.success(request, _meaning(outcome, shown))
    return redirect("game", game_id=game.pk)


def _phase_of(post: QueryDict) -> int:
    """The phase the form was made for (its hidden field); `UNKNOWN_PHASE` if it says none,
    which services refuse as a phase gone by (an old page, from before the field)."""
    value = post.get("phase", "")
    return (
        int(value)
        if value.isascii() and value.isdigit() and len(value) <= 9
        else services.UNKNOWN_PHASE
    )


def _submission(request: HttpRequest, shown: Presentation, phase_number: int) -> Submission:
    """The move, read once where it comes in: the notation field, or a form's fields."""
    if "move" in request.POST:
        text = request.POST["move"]
        if len(text) > MAX_MOVE_CHARS:  # before reading: the form's limit, enforced here too
            raise _FormProblem(
                gettext("a move is at most %(most)s characters, and this one has %(count)s")
                % {"most": MAX_MOVE_CHARS, "count": len(text)}
            )
        return parse_move(to_english(text))
    form = form_from_post(shown.view or {}, request.POST, "")
    if form is None:
        raise _FormProblem(gettext("choose what to submit"))
    if form.for_a_phase:
        # Said before the form's own checks, which judge it by the new phase's choices;
        # services.submit checks again under the game's row lock.
        gone = services.phase_problem(shown.game, phase_number)
        if gone is not None:
            raise gone
    if not form.is_valid():
        raise _FormProblem(" ".join(_form_errors(form)))
    return form.submission()


def _form_errors(form: PlayForm) -> list[str]:
    return [
        f"{message}" if name == "__all__" else f"{form.fields[name].label}: {message}"
        for name, errors in form.errors.items()
        for message in errors
    ]


def _meaning(outcome: services.Outcome, shown: Presentation) -> str:
    """What the stored submission means, in words."""
    if isinstance(outcome.move, EndAlliance):
        return gettext("Done: %(move)s.") % {"move": outcome.text}
    actions = _actions(outcome.move, shown)
    if len(actions) == 2:
        said = gettext("Your submission: %(move)s (%(first)s and %(second)s).") % {
            "move": outcome.text,
            "first": actions[0],
            "second": actions[1],
        }
    elif len(actions) == 1:
        said = gettext("Your submission: %(move)s (%(action)s).") % {
            "move": outcome.text,
            "action": actions[0],
        }
    else:
        said = gettext("Your submission: %(move)s.") % {"move": outcome.text}
    if outcome.ready:
        then = gettext("It is being applied.")
    else:
        until = CHANGE_UNTIL.get(shown.game.phase_kind or "")
        then = str(until) if until is not None else gettext("You can change it until then.")
    return f"{said} {then}"


def _actions(move: Submission, shown: Presentation) -> list[str]:
    """The actions a decision chose, in words (one or two); none for any other move."""
    if not isinstance(move, Decide) or shown.view is None:
        return []
    card = (shown.view.get("card") or "").split()
    return [action_text(card[n - 1]) for n in move.cards if n <= len(card)]
