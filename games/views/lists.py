"""Which games a list shows, in which order, and a version of what a list or the game
page shows: the lobby (games.views.lobby) reads its lists here, and so does the poll of
an open page (games.views.live); the game page and the lobby write the version they
were drawn from into the page (`data-live-version`), so that a change made while the
page was on its way is not taken for what it shows.

A version is an opaque digest: it says that something changed, never what. Each part
of it asks the rule of what it stands for (`Game.still_waiting`'s columns, the events
and messages a seat reads: `Event.objects.visible_to`, `Message.objects.visible_to`),
so that a page whose reader can see nothing new does not fetch itself again.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from django.db.models import Count, F, IntegerField, OuterRef, QuerySet, Subquery, Window
from django.db.models.functions import Coalesce
from django.http import HttpRequest
from django.utils import timezone

from games.context_processors import my_games
from games.models import PERSON, Game, PendingSubmission, Seat, away_q

MY_GAMES_PAGE = 25  # my games shown per page (those waiting for me first), as the archive's
OPEN_GAMES_PAGE = 25  # open games shown per page, the newest first (`?open=`)
# What a list shows of a game (never its state).
LISTED = (
    "name",
    "status",
    "player_count",
    "setup",
    "decisions",
    "money",
    "deadline_hours",
    "invite_only",
    "invite_token",
    "phase_number",
    "waiting",
    "deadline",
    "winners",
    "created_at",
    "finished_at",
)


def my_games_in_order(user: Any) -> QuerySet[Game]:
    """The person's games still going, in the lobby's order, all of it in SQL: those
    whose phase waits for their move first, then the nearest deadline, games gathering
    players last. Without the state; each game carries `my_colour`, `my_seat` and
    `my_turn` (games.context_processors.my_games: the rule the navigation counts)."""
    return (
        my_games(user)
        .only(*LISTED)
        .filter(status__in=[Game.Status.OPEN, Game.Status.RUNNING])
        .order_by(F("my_turn").desc(), F("deadline").asc(nulls_last=True), "created_at", "pk")
    )


def open_games(request: HttpRequest) -> QuerySet[Game]:
    """The games gathering players that anyone may join, newest first, but those I sit
    in (they are in my games): ordered in SQL (the index on status and creation), so a
    page of them costs the same however many there are."""
    games = Game.objects.filter(status=Game.Status.OPEN, invite_only=False)
    if request.user.is_authenticated:
        games = games.exclude(seats__user=request.user)
    return games.order_by("-created_at", "-pk")


# What the game page and a lobby row show of a game changes with these columns of its
# row, and with what the versions count beside them: seats (joined, and on the game page
# those not played in person: left, a computer's, stood in for or conceded), submissions
# of this phase (who has submitted), and on the game page the events and messages the
# viewer may read (games.views.live).
GAME_COLUMNS = (
    "status",
    "phase_number",
    "turn",
    "waiting",
    "deadline",
    "paused",
    "needs_repair_since",
)


def digest(parts: object) -> str:
    """A short digest of a version's parts (JSON; dates as their text)."""
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:20]


def count_of(rows: QuerySet[Any]) -> Coalesce:
    """A correlated COUNT of `rows` (filtered on OuterRef): a subquery, not a join that
    would multiply the game's row by its events and seats."""
    counted = rows.order_by().values("game_id").annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def away_now() -> Coalesce:
    """How many of a game's (OuterRef) people are away now: "Waiting for" names them as
    away, so an open page fetches itself again when one goes away or comes back."""
    seats = Seat.objects.filter(PERSON, away_q(timezone.now(), "user__notifications__"))
    return count_of(seats.filter(game=OuterRef("pk")))


def _page_number(raw: str | None) -> int:
    """`?page=` as a number (1 when there is none or it is not one)."""
    try:
        return int(raw or 1)
    except ValueError:
        return 1


def _my_page(request: HttpRequest, number: int) -> list[Any]:
    """The lobby's page `number` of my games, in its order, each with what its row shows
    and how many games I have in all: one query."""
    start = (number - 1) * MY_GAMES_PAGE
    return list(
        my_games_in_order(request.user)
        .annotate(
            seated=count_of(Seat.objects.filter(game=OuterRef("pk"))),
            submitted=count_of(
                PendingSubmission.objects.filter(
                    game=OuterRef("pk"), phase_number=OuterRef("phase_number")
                )
            ),
            away=away_now(),
            total=Window(Count("pk")),
        )
        .values_list("pk", *GAME_COLUMNS, "seated", "submitted", "away", "total")[
            start : start + MY_GAMES_PAGE
        ]
    )


def _open_page(request: HttpRequest, number: int) -> list[Any]:
    """The lobby's page `number` of open games: each with its seats taken, and how many
    open games there are in all; one query."""
    start = (number - 1) * OPEN_GAMES_PAGE
    return list(
        open_games(request)
        .annotate(
            seated=count_of(Seat.objects.filter(game=OuterRef("pk"))), total=Window(Count("pk"))
        )
        .values_list("pk", "seated", "total")[start : start + OPEN_GAMES_PAGE]
    )


def _shown_page(
    read: Callable[[int], list[Any]], number: int, count: Callable[[], int], per_page: int
) -> list[Any]:
    """The rows of page `number` as the lobby shows it: the last page if past it (and
    the first if it is not a number), as Django's `Paginator.get_page` does."""
    rows = read(number) if number >= 1 else []
    if not rows and number != 1:
        rows = read(max(-(-count() // per_page), 1))
    return rows


def lobby_version(request: HttpRequest) -> str:
    """The lobby's version: the page of my games it shows (`?page=`) and the page of
    open games (`?open=`); a query for each, whatever the number of games."""
    mine: list[Any] = []
    if request.user.is_authenticated:
        mine = _shown_page(
            lambda n: _my_page(request, n),
            _page_number(request.GET.get("page")),
            my_games_in_order(request.user).count,
            MY_GAMES_PAGE,
        )
    gathering = _shown_page(
        lambda n: _open_page(request, n),
        _page_number(request.GET.get("open")),
        open_games(request).count,
        OPEN_GAMES_PAGE,
    )
    return digest([mine, gathering])
