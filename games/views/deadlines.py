"""What people do about deadlines: the creator extends the current one; a person takes
their seat back from the computer standing in. Both are POSTs that answer with a
message on the game page; `games.deadlines` says whether they may (and announces an
extension, which the mail wing tells every player by email).
"""

from __future__ import annotations

from datetime import datetime

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils import formats, timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from games import deadlines
from games.forms import interpolated
from games.models import Game
from games.services import MAX_DEADLINE_HOURS, GameError
from games.visibility import visible_game


class ExtendDeadlineForm(forms.Form):
    hours = forms.IntegerField(
        label=_("Extend the deadline by (hours)"),
        min_value=1,
        max_value=MAX_DEADLINE_HOURS,
        error_messages={
            "min_value": interpolated(
                _("Extend by 1 to %(hours)s hours."), {"hours": MAX_DEADLINE_HOURS}
            ),
            "max_value": interpolated(
                _("Extend by 1 to %(hours)s hours."), {"hours": MAX_DEADLINE_HOURS}
            ),
            "required": _("Say by how many hours."),
            "invalid": _("Say by how many hours, as a whole number."),
        },
    )


def _when(moment: datetime) -> str:
    """A time as the game page shows it, in the viewer's time zone (the middleware's)."""
    return formats.date_format(timezone.localtime(moment), "D j M Y, H:i T")


@login_required
@require_POST
def extend_deadline(request: HttpRequest, game_id: int) -> HttpResponse:
    assert request.user.is_authenticated  # login_required
    game = visible_game(request, Game.objects.all(), pk=game_id)
    form = ExtendDeadlineForm(request.POST)
    if not form.is_valid():
        messages.error(
            request, gettext("Not extended: %(reason)s") % {"reason": form.errors["hours"][0]}
        )
        return redirect("game", game_id=game.pk)
    try:
        game = deadlines.extend_deadline(game.pk, request.user, form.cleaned_data["hours"])
    except GameError as exc:
        messages.error(request, gettext("Not extended: %(reason)s.") % {"reason": exc})
    else:
        assert game.deadline is not None  # just extended
        messages.success(
            request,
            gettext("The deadline is now %(when)s; the players are told by email.")
            % {"when": _when(game.deadline)},
        )
    return redirect("game", game_id=game.pk)


@login_required
@require_POST
def take_seat_back(request: HttpRequest, game_id: int) -> HttpResponse:
    assert request.user.is_authenticated  # login_required
    game = visible_game(request, Game.objects.all(), pk=game_id)
    try:
        deadlines.take_seat_back(game.pk, request.user)
    except GameError as exc:
        messages.error(request, gettext("Not done: %(reason)s.") % {"reason": exc})
    else:
        messages.success(
            request, gettext("Your seat is yours again: the computer no longer plays it.")
        )
    return redirect("game", game_id=game.pk)
