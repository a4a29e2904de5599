"""Running a table: the creator cancels a game that has not started, a player leaves
one before it starts, and a player concedes a running game (a computer plays on). Each
is a POST that answers with a message; `games.services` says whether it may be done."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from games import services
from games.models import Game
from games.visibility import visible_game

if TYPE_CHECKING:
    from django_stubs_ext import StrOrPromise


def _act(
    request: HttpRequest,
    game_id: int,
    act: Callable[[int, User], object],
    done: StrOrPromise,
    then: str,
) -> HttpResponse:
    assert request.user.is_authenticated  # login_required
    game = visible_game(request, Game.objects.all(), pk=game_id)
    if request.POST.get("confirm") != "yes":
        messages.error(request, gettext("Nothing was done: tick the box to confirm."))
        return redirect("game", game_id=game.pk)
    try:
        act(game.pk, request.user)
    except services.GameError as exc:
        messages.error(request, gettext("Not done: %(reason)s.") % {"reason": exc})
        return redirect("game", game_id=game.pk)
    messages.success(request, str(done) % {"name": game.name})
    return redirect(then, game_id=game.pk) if then == "game" else redirect(then)


@login_required
@require_POST
def cancel_game(request: HttpRequest, game_id: int) -> HttpResponse:
    return _act(request, game_id, services.cancel_game, _("%(name)s is cancelled."), "lobby")


@login_required
@require_POST
def leave_game(request: HttpRequest, game_id: int) -> HttpResponse:
    return _act(request, game_id, services.leave_game, _("You left %(name)s."), "lobby")


@login_required
@require_POST
def concede(request: HttpRequest, game_id: int) -> HttpResponse:
    return _act(
        request,
        game_id,
        services.concede,
        _("You conceded %(name)s: a computer plays your seat to the end."),
        "game",
    )
