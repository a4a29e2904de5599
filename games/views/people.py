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
from django.db.models import Count, F, Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone

from games.models import Game, Rating
from games.people import CHART_POINTS, person_stats
from games.ratings import MODEL
from games.show.charts import rating_chart
from games.views.lists import LISTED
from games.visibility import visible_games

RUNNING_PAGE = 10
FINISHED_PAGE = 25
BOARD_PAGE = 25


def person(request: HttpRequest, user_id: int) -> HttpResponse:
    user = get_object_or_404(
        User.objects.select_related("profile", "rating"), pk=user_id, is_active=True
    )
    profile = user.profile
    context: dict[str, Any] = {"person": user, "name": profile.display_name or user.username}
    if not profile.public_page and request.user.pk != user.pk:
        return render(request, "people/private.html", context)
    rating = getattr(user, "rating", None)
    stats = person_stats(user.pk, timezone.now())
    running, finished = _games(request, user)
    context.update(
        {
            "own": request.user.pk == user.pk,
            "running": running,
            "finished": finished,
            "rating": rating,
            "chart": _chart(stats.ratings) if rating is not None else "",
            "stats": stats,
            "keep_running": f"&running={running.number}",
            "keep_finished": f"&finished={finished.number}",
        }
    )
    return render(request, "people/person.html", context)


def _games(request: HttpRequest, user: User) -> tuple[Page, Page]:
    """A page of the person's running games and one of their finished games, those the
    viewer may see, newest first, each with the person's colour (`their_colour`); both
    counted in one query."""
    mine = Game.objects.filter(seats__user=user, seats__is_computer=False)
    counts = visible_games(request, mine).aggregate(
        running=Count("pk", filter=Q(status=Game.Status.RUNNING)),
        finished=Count("pk", filter=Q(status=Game.Status.FINISHED)),
    )
    pages = []
    for status, newest, size in (
        (Game.Status.RUNNING, "-started_at", RUNNING_PAGE),
        (Game.Status.FINISHED, "-finished_at", FINISHED_PAGE),
    ):
        games = mine.filter(status=status).annotate(their_colour=F("seats__colour"))
        listed = visible_games(request, games).only(*LISTED).order_by(newest, "-pk")
        paginator = Paginator(listed, size)
        paginator.count = counts[status]  # counted above, both at once
        pages.append(paginator.get_page(request.GET.get(status)))
    return pages[0], pages[1]


def _chart(ratings: list[float]) -> str:
    """The rating's history: where everyone starts, then after each rated game."""
    if len(ratings) < CHART_POINTS:
        ratings = [MODEL.rating().ordinal(), *ratings]
    return rating_chart(ratings)


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
