"""The lobby: open games to join, my games (those waiting for me first) and finished
games; creating a game; joining one, from the lobby or through its invite link.

Whether a game may be created or joined is for `games.services` to say; these views
show its answer.

An invite-only game is seen only by its players and the people invited to it
(games.visibility): opening its invite link lets this browser see it.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Page, Paginator
from django.db.models import (
    Count,
    Exists,
    OuterRef,
    Q,
    QuerySet,
)
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext
from django.views.decorators.http import require_POST, require_safe

from engine.position import COLOURS
from games import services
from games.context_processors import Live
from games.forms import CreateGameForm, JoinForm
from games.models import Game, PendingSubmission, Seat, away_between, colour_word, seat_name
from games.show.words import away_name, name_of, sentence
from games.views.lists import (
    LISTED,
    MY_GAMES_PAGE,
    OPEN_GAMES_PAGE,
    lobby_version,
    my_games_in_order,
    open_games,
)
from games.visibility import remember_invite, visible_games

FINISHED_SHOWN = 20  # the archive has the rest


@dataclass(frozen=True)
class ListedSeat:
    """A seat as a list shows it."""

    colour: str
    display_name: str  # `Seat.display_name`, from the row's columns (`seat_name`)
    user_id: int | None
    submitted: bool  # a submission of it is stored for its game's current phase
    away: bool = False  # its person is away now (named as away where the game waits for them)


@dataclass(frozen=True)
class Listing:
    """A game as the viewer sees it in a list: names instead of colours, and their part."""

    game: Game
    seats: list[ListedSeat]
    my_colour: str | None
    waiting_for: list[str]  # the others the phase still waits for (not submitted), by name
    winners: list[str]
    invite_url: str  # for seated players of a game still gathering players, else ""
    is_my_turn: bool = False  # the phase waits for my submission

    @property
    def free_colours(self) -> list[str]:
        taken = {s.colour for s in self.seats}
        return [c for c in COLOURS if c not in taken]


def seats_by_game(game_ids: list[int]) -> dict[int, list[ListedSeat]]:
    """The seats of every game listed, in seat order, in one query for all of them (rows,
    not models: a list of games shows a few words of each seat)."""
    stored = PendingSubmission.objects.filter(
        seat=OuterRef("pk"), phase_number=OuterRef("game__phase_number")
    )
    rows: Iterable[tuple[Any, ...]] = (  # a seat's user may be gone: user_id None
        Seat.objects.filter(game_id__in=game_ids)
        .annotate(submitted=Exists(stored))
        .order_by("game_id", "position")
        .values_list(
            "game_id",
            "colour",
            "user_id",
            "is_computer",
            "game__computer_level",
            "user__username",
            "user__profile__display_name",
            "submitted",
            "user__notifications__away_from",
            "user__notifications__away_until",
        )
    )
    now = timezone.now()
    seats: dict[int, list[ListedSeat]] = {i: [] for i in game_ids}
    for row in rows:
        (
            game_id,
            colour,
            user_id,
            computer,
            level,
            username,
            shown_name,
            submitted,
            since,
            until,
        ) = row
        name = seat_name(
            colour, computer=computer, username=username, profile_name=shown_name, level=level
        )
        is_away = not computer and away_between(since, until, now)
        seats[game_id].append(ListedSeat(colour, name, user_id, submitted, is_away))
    return seats


def listings(request: HttpRequest, games: list[Game]) -> list[Listing]:
    """The games as the requesting person sees them in a list, from their rows and one
    query for all their seats: no state is read, no query is made per game."""
    seats = seats_by_game([g.pk for g in games])
    user_id = request.user.pk if request.user.is_authenticated else None
    rows = []
    for game in games:
        names = {s.colour: s.display_name for s in seats[game.pk]}
        mine = next((s.colour for s in seats[game.pk] if user_id and s.user_id == user_id), None)
        invite_url = ""
        if mine is not None and game.status == Game.Status.OPEN:
            invite_url = request.build_absolute_uri(reverse("invite", args=[game.invite_token]))
        waiting = game.still_waiting({s.colour for s in seats[game.pk] if s.submitted})
        away = {s.colour for s in seats[game.pk] if s.away}
        rows.append(
            Listing(
                game=game,
                seats=seats[game.pk],
                my_colour=mine,
                invite_url=invite_url,
                waiting_for=[
                    away_name(name_of(c, names)) if c in away else name_of(c, names)
                    for c in waiting
                    if c != mine
                ],
                winners=[name_of(c, names) for c in game.winners],
                is_my_turn=mine is not None and mine in waiting,
            )
        )
    return rows


class CountedPaginator(Paginator):
    """A paginator told how many there are (counted with something else in one query)."""

    def __init__(self, object_list: QuerySet[Game], per_page: int, count: int) -> None:
        super().__init__(object_list, per_page)
        self.known = count

    @cached_property
    def count(self) -> int:
        return self.known


class LobbyLive(Live):
    """The navigation's "your move" count, taken from the lobby's own count of my games
    whose phase awaits me (the same rule, counted in SQL with the page's total) instead
    of a second pass over every game of mine."""

    def __init__(self, request: HttpRequest, awaiting: int) -> None:
        super().__init__(request)
        self.awaiting = awaiting

    @cached_property
    def your_move(self) -> int:
        return self.awaiting if self.counts else 0


def my_games_page(request: HttpRequest) -> tuple[Page[Game], int]:
    """The page of my games `?page=` asks for (the first by default; the last if past it),
    and how many of all my games await my move: one query counts both, one reads the page."""
    assert request.user.is_authenticated  # only a signed-in person has games of their own
    games = my_games_in_order(request.user)
    counted = games.aggregate(total=Count("pk"), awaiting=Count("pk", filter=Q(my_turn=True)))
    paginator = CountedPaginator(games, MY_GAMES_PAGE, counted["total"])
    return paginator.get_page(request.GET.get("page")), counted["awaiting"]


@require_safe
def lobby(request: HttpRequest) -> HttpResponse:
    context: dict[str, Any] = {"my_page": None}
    mine: list[Game] = []
    live_url = reverse("live") + "?lobby=1"
    if request.user.is_authenticated:
        page, awaiting = my_games_page(request)
        mine = list(page.object_list)
        context["my_page"], context["live"] = page, LobbyLive(request, awaiting)
        if page.number > 1:
            live_url += f"&page={page.number}"
    open_page = Paginator(open_games(request).only(*LISTED), OPEN_GAMES_PAGE).get_page(
        request.GET.get("open")
    )
    if open_page.number > 1:
        live_url += f"&open={open_page.number}"
    # Each list's page links keep the other list's page.
    context.update(
        open_page=open_page,
        live_url=live_url,
        live_version=lobby_version(request),
        keep_open=f"&open={open_page.number}" if open_page.number > 1 else "",
        keep_page=f"&page={context['my_page'].number}"
        if context["my_page"] and context["my_page"].number > 1
        else "",
    )
    gathering = list(open_page.object_list)
    finished = list(
        visible_games(request, Game.objects.filter(status=Game.Status.FINISHED))
        .only(*LISTED)
        .order_by("-finished_at")[:FINISHED_SHOWN]
    )
    rows = listings(request, [*mine, *gathering, *finished])  # one query for all seats
    return render(
        request,
        "games/lobby.html",
        {
            **context,
            "my_games": rows[: len(mine)],
            "open_games": rows[len(mine) : len(mine) + len(gathering)],
            "finished_games": rows[len(mine) + len(gathering) :],
        },
    )


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
    if game.invite_only and not secrets.compare_digest(token.encode(), game.invite_token.encode()):
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
    messages.success(
        request,
        gettext("You joined %(game)s as %(colour)s.")
        % {"game": game.name, "colour": colour_word(colour)},
    )
    return redirect("game", game.pk)


@require_safe
def invite(request: HttpRequest, token: str) -> HttpResponse:
    game = get_object_or_404(
        Game.objects.defer("state").prefetch_related("seats"), invite_token=token
    )
    remember_invite(request, game)
    return render(
        request,
        "games/invite.html",
        {"row": listings(request, [game])[0], "game": game, "form": JoinForm(game)},
    )
