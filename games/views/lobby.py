"""The lobby: open games to join, my games (those waiting for me first) and finished
games; creating a game; joining one, from the lobby or through its invite link.

Whether a game may be created or joined is for `games.services` to say; these views
show its answer.

An invite-only game is seen only by its players and the people invited to it: those who
opened its invite link (this browser's session remembers it) and those an invitation
email went to. To everyone else it does not exist (404), here, on its game page and in
the archive (`visible_games`).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db.models import Prefetch, Q, QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from games import services
from games.forms import CreateGameForm, JoinForm
from games.models import Game, OutgoingEmail, PendingSubmission, Seat
from games.presenter import present, seat_of
from games.words import sentence

FINISHED_SHOWN = 20  # the archive has the rest
INVITED = "invited_games"  # session key: the invite-only games whose link was opened here
INVITES_REMEMBERED = 50


def invited_in_session(request: HttpRequest) -> list[int]:
    ids = request.session.get(INVITED, [])
    return [i for i in ids if isinstance(i, int)] if isinstance(ids, list) else []


def remember_invite(request: HttpRequest, game: Game) -> None:
    """The invite link was opened: this browser may see the game from now on."""
    ids = invited_in_session(request)
    if game.pk not in ids:
        request.session[INVITED] = [*ids, game.pk][-INVITES_REMEMBERED:]


def visible_games(request: HttpRequest, games: QuerySet[Game]) -> QuerySet[Game]:
    """`games` but the invite-only ones the requesting person neither plays in nor was
    invited to (by the link, in this session, or by an email to their address)."""
    allowed = Q(invite_only=False) | Q(pk__in=invited_in_session(request))
    user = request.user
    if user.is_authenticated:
        allowed |= Q(pk__in=Seat.objects.filter(user=user).values("game_id"))
        if user.email:
            allowed |= Q(pk__in=OutgoingEmail.objects.filter(
                kind="invitation", to__iexact=user.email, game__isnull=False).values("game_id"))
    return games.filter(allowed)


def visible_game(request: HttpRequest, games: QuerySet[Game], **lookup: object) -> Game:
    """The game, if the requesting person may see it; else 404, as if it did not exist."""
    return get_object_or_404(visible_games(request, games), **lookup)


@dataclass(frozen=True)
class Listing:
    """A game as the viewer sees it in a list: names instead of colours, and their part."""

    game: Game
    seats: list[Seat]
    my_colour: str | None
    waiting_for: list[str]  # the others the phase still waits for (not submitted), by name
    winners: list[str]
    invite_url: str  # for seated players of a game still gathering players, else ""
    is_my_turn: bool = False  # the phase waits for my submission

    @property
    def free_colours(self) -> list[str]:
        return self.game.free_colours()


def with_seats(games: QuerySet[Game]) -> QuerySet[Game]:
    # Seats, players and profiles, and who has submitted, in one query each for all
    # games: no query per game.
    return games.prefetch_related(
        Prefetch("seats", queryset=Seat.objects.select_related("user__profile")),
        Prefetch("pending", queryset=PendingSubmission.objects.only(
            "game_id", "seat_id", "phase_number")))


def listing(request: HttpRequest, game: Game) -> Listing:
    shown = present(game, seat_of(game, request.user))
    mine = shown.colour
    invite_url = ""
    if mine is not None and game.status == Game.Status.OPEN:
        invite_url = request.build_absolute_uri(reverse("invite", args=[game.invite_token]))
    # Whom the game waits for as its page says it: those who submitted are not awaited.
    waiting = shown.still_waiting() if game.status == Game.Status.RUNNING else []
    return Listing(
        game=game, seats=list(game.seats.all()), my_colour=mine, invite_url=invite_url,
        waiting_for=[shown.name(c) for c in waiting if c != mine],
        winners=[shown.name(c) for c in game.winners],
        is_my_turn=mine is not None and mine in waiting)


def my_games(request: HttpRequest) -> list[Listing]:
    assert request.user.is_authenticated  # only a signed-in person has games of their own
    games = with_seats(Game.objects.filter(
        seats__user=request.user, status__in=[Game.Status.OPEN, Game.Status.RUNNING]))
    rows = [listing(request, game) for game in games]
    # Waiting for me first, then the nearest deadline; games still gathering players last.
    return sorted(rows, key=lambda r: (not r.is_my_turn, r.game.deadline is None,
                                       r.game.deadline or r.game.created_at))


@require_safe
def lobby(request: HttpRequest) -> HttpResponse:
    open_games = Game.objects.filter(status=Game.Status.OPEN, invite_only=False)
    mine: list[Listing] = []
    if request.user.is_authenticated:
        open_games = open_games.exclude(seats__user=request.user)
        mine = my_games(request)
    finished = visible_games(request, Game.objects.filter(status=Game.Status.FINISHED)
                             ).order_by("-finished_at")
    return render(request, "games/lobby.html", {
        "open_games": [listing(request, g) for g in with_seats(open_games.order_by("-created_at"))],
        "my_games": mine,
        "finished_games": [listing(request, g) for g in with_seats(finished)[:FINISHED_SHOWN]],
    })


@login_required
def create_game(request: HttpRequest) -> HttpResponse:
    assert request.user.is_authenticated  # login_required
    form = CreateGameForm(request.POST if request.method == "POST" else None)
    if form.is_valid():
        try:
            game = services.create_game(request.user, **form.cleaned_data)
        except services.GameError as exc:
            form.add_error(None, sentence(exc))
        else:
            return redirect("game", game.pk)
    return render(request, "games/create_game.html", {"form": form})


def joinable_game(game_id: int, token: str) -> Game:
    """The game to join; an invite-only game only with its token, or its id would do."""
    game = get_object_or_404(Game.objects.prefetch_related("seats"), pk=game_id)
    if game.invite_only and not secrets.compare_digest(token.encode(),
                                                       game.invite_token.encode()):
        raise Http404("No such game")
    return game


def refuse_join(request: HttpRequest, game: Game, reason: object) -> HttpResponse:
    messages.error(request, sentence(reason))
    return redirect("invite", game.invite_token)


@login_required
@require_POST
def join_game(request: HttpRequest, game_id: int) -> HttpResponse:
    assert request.user.is_authenticated  # login_required
    game = joinable_game(game_id, request.POST.get("token", ""))
    form = JoinForm(game, request.POST)
    if not form.is_valid():
        return refuse_join(request, game, form.errors["colour"][0])
    colour = form.cleaned_data["colour"]
    try:
        services.join_game(game.pk, request.user, colour)
    except services.GameError as exc:
        return refuse_join(request, game, exc)
    messages.success(request, f"You joined {game.name} as {colour}.")
    return redirect("game", game.pk)


@require_safe
def invite(request: HttpRequest, token: str) -> HttpResponse:
    game = get_object_or_404(with_seats(Game.objects.all()), invite_token=token)
    remember_invite(request, game)
    return render(request, "games/invite.html", {
        "row": listing(request, game), "game": game, "form": JoinForm(game)})
