"""A page for each person (`people/<id>/`: an id, never a username or an address) and
the leaderboard (issue 27).

A page the person made private shows others their display name only (the person
themselves sees all of it); the leaderboard leaves such people out, since their rating
is part of what they hide. Lists of games are paged in SQL and show only the games the
viewer may see (games.visibility: an invite-only game to its people).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.paginator import Page, Paginator
from django.db.models import F, QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone

from games.models import Game, Rating, RatingChange
from games.people import person_stats
from games.ratings import MODEL
from games.show.charts import rating_chart
from games.views.lists import LISTED
from games.visibility import visible_games

RUNNING_PAGE = 10
FINISHED_PAGE = 25
BOARD_PAGE = 25
CHART_POINTS = 500  # the most recent rated games drawn (the page stays light)


def person(request: HttpRequest, user_id: int) -> HttpResponse:
    user = get_object_or_404(
        User.objects.select_related("profile", "rating"), pk=user_id, is_active=True
    )
    profile = user.profile
    context: dict[str, Any] = {"person": user, "name": profile.display_name or user.username}
    if not profile.public_page and request.user.pk != user.pk:
        return render(request, "people/private.html", context)
    rating = getattr(user, "rating", None)
    context.update(
        {
            "own": request.user.pk == user.pk,
            "running": _page(request, _games(request, user, Game.Status.RUNNING), "running"),
            "finished": _page(request, _games(request, user, Game.Status.FINISHED), "finished"),
            "rating": rating,
            "chart": _chart(user) if rating is not None else "",
            "stats": person_stats(user.pk, timezone.now()),
        }
    )
    context["keep_running"] = f"&running={context['running'].number}"
    context["keep_finished"] = f"&finished={context['finished'].number}"
    return render(request, "people/person.html", context)


def _games(request: HttpRequest, user: User, status: str) -> QuerySet[Game]:
    """The person's games of a status the viewer may see, newest first, each with the
    person's colour (`their_colour`)."""
    games = Game.objects.filter(seats__user=user, seats__is_computer=False, status=status).annotate(
        their_colour=F("seats__colour")
    )  # the seat of the filter's join
    newest = "-finished_at" if status == Game.Status.FINISHED else "-started_at"
    return visible_games(request, games).only(*LISTED).order_by(newest, "-pk")


def _page(request: HttpRequest, games: QuerySet[Game], param: str) -> Page:
    size = RUNNING_PAGE if param == "running" else FINISHED_PAGE
    return Paginator(games, size).get_page(request.GET.get(param))


def _chart(user: User) -> str:
    """The rating's history: where everyone starts, then after each rated game."""
    recent = RatingChange.objects.filter(user=user).order_by("-id")[:CHART_POINTS]
    ordinals = list(recent.values_list("ordinal", flat=True))[::-1]
    return rating_chart(
        [MODEL.rating().ordinal(), *ordinals] if len(ordinals) < CHART_POINTS else ordinals
    )


def leaderboard(request: HttpRequest) -> HttpResponse:
    ratings = (
        Rating.objects.filter(
            games__gte=settings.LEADERBOARD_MIN_GAMES,
            user__is_active=True,
            user__profile__public_page=True,
        )
        .select_related("user__profile")
        .order_by("-ordinal", "user_id")
    )
    page = Paginator(ratings, BOARD_PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "people/leaderboard.html",
        {"page": page, "min_games": settings.LEADERBOARD_MIN_GAMES},
    )
