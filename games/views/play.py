"""The game page, its JSON twin, and submitting a move.

Everything shown comes from `engine.view.view(state, my_colour)` (None for
spectators) and from the events addressed to everyone or to me. The queries are a
fixed handful, whatever the length of the game: the game, its seats with users and
profiles, my pending submission, who has submitted, and the last events.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_POST

from engine.errors import IllegalMove, NotationError
from engine.moves import Decide, EndAlliance
from engine.notation import parse_move
from engine.view import view
from games import services
from games.board_svg import render_board
from games.event_text import (
    action_text,
    card_text,
    choices_text,
    describe,
    name_of,
    phase_text,
)
from games.models import Event, Game, PendingSubmission, Seat
from games.play_forms import (
    EndAllianceForm,
    MoveTextForm,
    PlayForm,
    form_from_post,
    forms_for,
    own_alliances,
)

EVENTS_SHOWN = 50
UNTIL = {"decision": "everyone has decided", "duel": "every bid is in"}


# --- loading -----------------------------------------------------------------------------------


def _load(request: HttpRequest, game_id: int) -> tuple[Game, Seat | None]:
    """The game with its seats (users and profiles), and the requesting user's seat."""
    seats = Seat.objects.select_related("user__profile")
    game = get_object_or_404(
        Game.objects.prefetch_related(Prefetch("seats", queryset=seats)), pk=game_id)
    if not request.user.is_authenticated:
        return game, None
    try:
        return game, services.seat_of(game, request.user)
    except services.GameError:
        return game, None


def _colour(seat: Seat | None) -> str | None:
    return seat.colour if seat else None


def _view(game: Game, seat: Seat | None) -> dict[str, Any] | None:
    """The only way the page sees the game's state: the engine's view for this viewer."""
    return view(game.engine_state, _colour(seat)) if game.state is not None else None


def _names(game: Game) -> dict[str, str]:
    return {s.colour: s.display_name for s in game.seats.all()}


def _events(game: Game, colour: str | None) -> list[Event]:
    """The last events everyone may see, and those addressed to me; newest first."""
    to = ["", colour] if colour else [""]
    return list(game.events.filter(to_colour__in=to).order_by("-index")[:EVENTS_SHOWN])


def _my_pending(game: Game, seat: Seat | None) -> str | None:
    if seat is None:
        return None
    return (PendingSubmission.objects.filter(seat=seat, phase_number=game.phase_number)
            .values_list("text", flat=True).first())


def _submitted(game: Game) -> set[str]:
    """Who has a submission stored for this phase (not what it is)."""
    return set(PendingSubmission.objects.filter(game=game, phase_number=game.phase_number)
               .values_list("seat__colour", flat=True))


# --- the page ----------------------------------------------------------------------------------


def game_page(request: HttpRequest, game_id: int) -> HttpResponse:
    game, seat = _load(request, game_id)
    v, names = _view(game, seat), _names(game)
    context: dict[str, Any] = {"game": game, "seat": seat, "v": v, "names": names,
                               "seats": list(game.seats.all())}
    if v is not None:
        context.update(_play_context(game, seat, v, names))
    return render(request, "games/game.html", context)


def _play_context(game: Game, seat: Seat | None, v: dict[str, Any],
                  names: dict[str, str]) -> dict[str, Any]:
    return {
        "board": mark_safe(  # render_board escapes every text it writes
            render_board(v, interactive=bool(v.get("ask")), element_id="board")),
        "players": _players(v, names, _submitted(game)),
        "phase_sentence": phase_text(v["phase"], names),
        "card_text": card_text(v.get("card")),
        "decisions": _decisions(v, names),
        "neutral": sorted({c[2] for c in v["castles"]} - set(v["players"])),
        "my": v["players"].get(v["viewer"] or ""),
        "pending": _my_pending(game, seat),
        "pending_until": UNTIL.get(v["phase"]["kind"], "the phase is resolved"),
        **_forms(game, seat, v),
        "log": [_log_line(e, names) for e in _events(game, _colour(seat))],
    }


def _forms(game: Game, seat: Seat | None, v: dict[str, Any]) -> dict[str, Any]:
    """The forms for what the engine asks of me, the text fallback, ending an alliance."""
    if seat is None or game.status != Game.Status.RUNNING:
        return {"forms": [], "text_form": None, "end_alliance": None}
    action = reverse("submit", args=[game.pk])
    return {"forms": forms_for(v, action),
            "text_form": MoveTextForm(view=v, action=action),
            "end_alliance": EndAllianceForm(view=v, action=action) if own_alliances(v) else None}


def _players(v: dict[str, Any], names: dict[str, str], submitted: set[str]) -> list[dict]:
    """The power track: every player in seat order, with what the view shows of them."""
    top = max([p["power"] for p in v["players"].values()] + [1])
    waiting = v["phase"]["waiting"]
    return [{"colour": colour, "name": name_of(colour, names), "ducats": None, **data,
             "bar": round(100 * data["power"] / top), "is_me": colour == v["viewer"],
             "is_start": colour == v["start_player"], "waiting": colour in waiting,
             "submitted": colour in submitted or colour in v.get("submitted", [])}
            for colour, data in v["players"].items()]


def _decisions(v: dict[str, Any], names: dict[str, str]) -> list[dict[str, str]]:
    """The revealed decisions of this turn, with the actions they chose."""
    card = (v.get("card") or "").split()
    rows = []
    for colour, choices in v.get("decisions", {}).items():
        cards = [c["card"] for c in choices]
        politics = [(c.get("politics") or {}).get("type", "").lower() or None for c in choices]
        actions = ", ".join(action_text(card[n - 1]) for n in cards if n <= len(card))
        rows.append({"colour": colour, "name": name_of(colour, names),
                     "cards": choices_text(cards, politics), "actions": actions})
    return rows


def _log_line(event: Event, names: dict[str, str]) -> dict[str, Any]:
    return {"turn": event.turn, "text": describe({**event.data, "kind": event.kind}, names),
            "private": bool(event.to_colour)}


# --- JSON ----------------------------------------------------------------------------------------


def game_json(request: HttpRequest, game_id: int) -> JsonResponse:
    game, seat = _load(request, game_id)
    names = _names(game)
    events = reversed(_events(game, _colour(seat)))
    return JsonResponse({
        "game": {"id": game.pk, "name": game.name, "status": game.status,
                 "phase_number": game.phase_number, "turn": game.turn,
                 "deadline": game.deadline.isoformat() if game.deadline else None,
                 "seats": [{"colour": s.colour, "name": s.display_name,
                            "computer": s.is_computer} for s in game.seats.all()]},
        "viewer": _colour(seat),
        "view": _view(game, seat),
        "my_submission": _my_pending(game, seat),
        "events": [{"index": e.index, "turn": e.turn, "kind": e.kind, "data": e.data,
                    "private": bool(e.to_colour),
                    "text": describe({**e.data, "kind": e.kind}, names)} for e in events],
    })


# --- submitting ----------------------------------------------------------------------------------


class _FormProblem(ValueError):
    """A form that does not make a submission; the message says why."""


@login_required
@require_POST
def submit(request: HttpRequest, game_id: int) -> HttpResponse:
    """Hand the typed text, or the text a form builds, to the engine via services."""
    game, seat = _load(request, game_id)
    if seat is None:
        messages.error(request, "You have no seat in this game.")
        return redirect("game", game_id=game.pk)
    try:
        text = _submission_text(request, game, seat)
        outcome = services.submit_text(game.pk, seat.pk, text)
    except (NotationError, IllegalMove, services.GameError, _FormProblem) as error:
        messages.error(request, f"Not accepted: {error}")
    else:
        messages.success(request, _meaning(outcome, game))
    return redirect("game", game_id=game.pk)


def _submission_text(request: HttpRequest, game: Game, seat: Seat) -> str:
    if "move" in request.POST:
        return request.POST["move"]
    form = form_from_post(_view(game, seat) or {}, request.POST, "")
    if form is None:
        raise _FormProblem("choose what to submit")
    if not form.is_valid():
        raise _FormProblem(" ".join(_form_errors(form)))
    return form.move_text()


def _form_errors(form: PlayForm) -> list[str]:
    return [f"{message}" if name == "__all__" else f"{form.fields[name].label}: {message}"
            for name, errors in form.errors.items() for message in errors]


def _meaning(outcome: services.Outcome, game: Game) -> str:
    """What the stored submission means, in words."""
    if isinstance(parse_move(outcome.text), EndAlliance):
        return f"Done: {outcome.text}."
    said = f"Your submission: {outcome.text}{_explain(outcome.text, game)}."
    if not outcome.ready:
        return f"{said} You can change it until {UNTIL.get(game.phase_kind, 'then')}."
    return f"{said} It is being applied."


def _explain(text: str, game: Game) -> str:
    move = parse_move(text)
    if not isinstance(move, Decide) or game.state is None:
        return ""
    card = (view(game.engine_state, None).get("card") or "").split()
    actions = [action_text(card[n - 1]) for n in move.cards if n <= len(card)]
    return f" ({' and '.join(actions)})" if actions else ""
