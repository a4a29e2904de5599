"""What people do about deadlines: ask the table to extend the current one or pause the
phase, vote on what is asked (`games.votes` says whether they may, and what passes), and
take their seat back from the computer standing in. POSTs that answer with a message on
the game page; `table_context` is what the game page shows of the table's vote.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils import formats, timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from games import deadlines, votes
from games.models import DeadlineVote, Game, Seat
from games.services import GameError
from games.show.vote_text import counted_text, majority_text, proposal_text
from games.show.words import Names, name_of
from games.visibility import visible_game

Kind = DeadlineVote.Kind


class ProposeForm(forms.Form):
    """A proposal to the table: extend the deadline by `amount` hours, or pause the phase
    for `amount` days (the most of each is a setting: `games.votes`)."""

    kind = forms.ChoiceField(
        choices=Kind.choices,
        error_messages={
            "required": _("Say what to propose."),
            "invalid_choice": _("Say what to propose."),
        },
    )
    amount = forms.IntegerField(
        min_value=1,
        error_messages={
            "required": _("Say how long, as a whole number."),
            "invalid": _("Say how long, as a whole number."),
            "min_value": _("Say how long, as a whole number of 1 or more."),
        },
    )


class VoteForm(forms.Form):
    vote = forms.ChoiceField(
        choices=[("yes", "yes"), ("no", "no")],
        error_messages={
            "required": _("Vote yes or no."),
            "invalid_choice": _("Vote yes or no."),
        },
    )


def _when(moment: datetime) -> str:
    """A time as the game page shows it, in the viewer's time zone (the middleware's)."""
    return formats.date_format(timezone.localtime(moment), "D j M Y, H:i T")


@login_required
@require_POST
def propose(request: HttpRequest, game_id: int) -> HttpResponse:
    assert request.user.is_authenticated  # login_required
    game = visible_game(request, Game.objects.all(), pk=game_id)
    form = ProposeForm(request.POST)
    if not form.is_valid():
        reason = next(iter(form.errors.values()))[0]
        messages.error(request, gettext("Not proposed: %(reason)s") % {"reason": reason})
        return redirect("game", game_id=game.pk)
    try:
        vote = votes.propose(
            game.pk, request.user, form.cleaned_data["kind"], form.cleaned_data["amount"]
        )
    except GameError as exc:
        messages.error(request, gettext("Not proposed: %(reason)s.") % {"reason": exc})
    else:
        if vote.status == DeadlineVote.Status.PASSED:  # one person seated: their yes is enough
            messages.success(request, gettext("Done: you are the only person seated who votes."))
        else:
            messages.success(
                request, gettext("Proposed: the others are asked to vote, by email too.")
            )
    return redirect("game", game_id=game.pk)


@login_required
@require_POST
def vote(request: HttpRequest, game_id: int) -> HttpResponse:
    assert request.user.is_authenticated  # login_required
    game = visible_game(request, Game.objects.all(), pk=game_id)
    form = VoteForm(request.POST)
    if not form.is_valid():
        reason = form.errors["vote"][0]
        messages.error(request, gettext("Not counted: %(reason)s") % {"reason": reason})
        return redirect("game", game_id=game.pk)
    yes = form.cleaned_data["vote"] == "yes"
    try:
        counted = votes.cast(game.pk, request.user, yes)
    except GameError as exc:
        messages.error(request, gettext("Not counted: %(reason)s.") % {"reason": exc})
    else:
        messages.success(request, counted_text(counted, yes))
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


# --- what the game page shows of the table's vote ----------------------------------------------


@dataclass(frozen=True)
class Table:
    """The table's vote as the game page shows it to a person who votes."""

    vote: DeadlineVote | None  # the proposal open now
    proposal: str  # what it asks, in a sentence
    majority: str
    open_until: str
    yes: str  # who voted yes, by name
    no: str
    my_vote: bool | None  # the viewer's, if cast
    problem: str  # why nothing may be proposed now ("" if something may)
    left: votes.Left

    @property
    def max_hours(self) -> int:
        return settings.VOTE_EXTEND_MAX_HOURS

    @property
    def max_days(self) -> int:
        return settings.VOTE_PAUSE_MAX_DAYS


def table_context(game: Game, seat: Seat | None, names: Names) -> Table | None:
    """What the game page shows of the table's vote to the viewer of `seat`; None for a
    viewer who does not vote (a spectator, a computer's seat, a conceded one) or a game
    that is not running."""
    if game.status != Game.Status.RUNNING or seat is None or not votes.is_voter(seat):
        return None
    now = timezone.now()
    standing = votes.standing(game, now)
    open_vote = standing.open
    if open_vote is None:
        problem = votes.changes_problem(game, now, standing) or ""
        return Table(None, "", "", "", "", "", None, problem, standing.left)
    result = votes.tally(open_vote, list(game.seats.all()))
    return Table(
        vote=open_vote,
        proposal=proposal_text(open_vote, name_of(open_vote.proposer.colour, names)),
        majority=majority_text(result.needed, result.voters),
        open_until=_when(open_vote.expires_at),
        yes=", ".join(name_of(c, names) for c in result.yes),
        no=", ".join(name_of(c, names) for c in result.no),
        my_vote=result.votes.get(seat.colour),
        problem="",
        left=standing.left,
    )


def paused_until(game: Game) -> str:
    """Until when the table's pause holds, in the viewer's zone ("" if it does not)."""
    return _when(game.paused_until) if game.paused_by_vote and game.paused_until else ""


def deadline_context(game: Game, seat: Seat | None, names: Names) -> dict[str, Any]:
    """Everything templates/deadlines/_controls.html needs beside `game`, `seat`, `user`."""
    return {"table": table_context(game, seat, names), "paused_until": paused_until(game)}
