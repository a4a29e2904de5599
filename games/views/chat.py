"""The table's messages on the game page: writing one, and muting a player's. Both are
POSTs that go back to the page's chat (games.chat says whether it may be done); a
refused message is kept in the form, as a refused move is."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.http import require_POST

from games import chat, services
from games.forms import MessageForm
from games.models import MESSAGE_CHARS, Game, colour_word
from games.show.words import sentence
from games.visibility import visible_game

DRAFT = "chat_draft"  # session key: {"game": id, "to": colour, "text": what was written}


def _back(game: Game) -> HttpResponse:
    return redirect(reverse("game", args=[game.pk]) + "#chat")


@login_required
@require_POST
def say(request: HttpRequest, game_id: int) -> HttpResponse:
    game = visible_game(request, Game.objects.prefetch_related("seats__user__profile"), pk=game_id)
    me = game.seat_for(request.user)
    if me is None:
        messages.error(
            request, gettext("Not sent: only the players of a game can write to its table.")
        )
        return _back(game)
    form = MessageForm(list(game.seats.all()), me, request.POST)
    try:
        if not form.is_valid():
            raise services.GameError(
                " ".join(str(e) for errors in form.errors.values() for e in errors).rstrip(".")
            )
        chat.post(game.pk, request.user.pk, form.cleaned_data["text"], form.cleaned_data["to"])
    except services.GameError as error:
        messages.error(request, gettext("Not sent: %(reason)s") % {"reason": sentence(error)})
        request.session[DRAFT] = {
            "game": game.pk,
            "to": request.POST.get("to", "")[:12],
            "text": request.POST.get("text", "")[: MESSAGE_CHARS * 2],
        }
        return _back(game)
    return _back(game)


def draft_of(request: HttpRequest, game: Game) -> dict[str, str] | None:
    """A refused message's form input for this game, once."""
    draft = request.session.pop(DRAFT, None)
    if not isinstance(draft, dict) or draft.get("game") != game.pk:
        return None
    return {"to": str(draft.get("to", "")), "text": str(draft.get("text", ""))}


@login_required
@require_POST
def mute_player(request: HttpRequest, game_id: int) -> HttpResponse:
    game = visible_game(request, Game.objects.prefetch_related("seats__user__profile"), pk=game_id)
    me = game.seat_for(request.user)
    colour = request.POST.get("colour", "")[:12]
    muted = request.POST.get("muted") == "on"
    if me is None:
        messages.error(request, gettext("Only the players of a game can mute one another."))
        return _back(game)
    try:
        chat.set_player_muted(me, colour, muted)
    except services.GameError as error:
        messages.error(request, gettext("Not done: %(reason)s") % {"reason": sentence(error)})
        return _back(game)
    said = (
        gettext("You no longer read the messages of %(colour)s.")
        if muted
        else gettext("You read again the messages of %(colour)s.")
    )
    messages.success(request, said % {"colour": colour_word(colour)})
    return _back(game)
