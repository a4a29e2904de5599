"""What a page open in a browser polls (games/static/games/live.js): a version of what
it shows, and the "your move" count of the navigation.

The answer is tiny and cheap (a fixed handful of queries, none per event or seat), and
a 304 when the browser already has it (an ETag over the answer), so that a tab left
open for days costs little. Only when the version changes does the page fetch itself
again, rendered by the very views and templates of a first load: nothing shown here
comes from anywhere but `games.show.presenter.present`.

- `/live/`: the count alone (every page of a signed-in person); `?lobby=1` adds the
  lobby's version (the page of my games it shows, `&page=`, and of open games, `&open=`).
- `/games/<id>/live/`: the count and the game page's version, for the viewer; an
  invite-only game they may not see is a 404, as its page is. A session a magic link
  opened polls its game here too, without the count (games.middleware).

A version is an opaque digest: it says that something changed, never what.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

from django.db.models import Count, IntegerField, Max, OuterRef, Q, QuerySet, Subquery, Window
from django.db.models.functions import Coalesce
from django.http import HttpRequest, HttpResponse, HttpResponseNotModified, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from games.context_processors import your_move_count
from games.middleware import scope_of
from games.models import IN_PERSON, Event, Game, Message, PendingSubmission, Seat
from games.views.lobby import (
    MY_GAMES_PAGE,
    OPEN_GAMES_PAGE,
    my_games_in_order,
    open_games,
)
from games.visibility import visible_game

# What the game page shows changes with these columns of the game's row, and with the
# subqueries annotated below: seats (joined, and those not played in person: left, a
# computer's, stood in for or conceded), submissions of this phase (who has submitted),
# the events and messages I may read.
GAME_COLUMNS = ("status", "phase_number", "turn", "deadline", "paused", "needs_repair_since")


def digest(parts: object) -> str:
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:20]


def _count(rows: QuerySet[Any]) -> Coalesce:
    """A correlated COUNT of `rows` (filtered on OuterRef): a subquery, not a join that
    would multiply the game's row by its events and seats."""
    counted = rows.order_by().values("game_id").annotate(n=Count("pk")).values("n")
    return Coalesce(Subquery(counted, output_field=IntegerField()), 0)


def _user(request: HttpRequest) -> int:
    """The requesting person's id; 0 (nobody's) for a visitor, whom no seat matches: a
    computer's seat has no user either."""
    return request.user.pk if request.user.is_authenticated else 0


def _mine(request: HttpRequest, column: str) -> Subquery:
    """A column of the requesting person's seat in the outer game (NULL without one)."""
    return Subquery(
        Seat.objects.filter(game=OuterRef("pk"), user_id=_user(request)).values(column)[:1]
    )


def game_version(request: HttpRequest, game_id: int) -> dict[str, Any]:
    """The game page's version for the requesting person, in one query; 404 as the page
    if they may not see the game."""
    seats = Seat.objects.filter(game=OuterRef("pk"))
    this_phase = PendingSubmission.objects.filter(
        game=OuterRef("pk"), phase_number=OuterRef("phase_number")
    )
    games = Game.objects.only("pk", *GAME_COLUMNS).annotate(
        my_colour=_mine(request, "colour"),
        seated=_count(seats),
        computers=_count(seats.exclude(IN_PERSON)),
        submitted=_count(this_phase),
        my_submission=Subquery(
            this_phase.filter(seat__user=_user(request)).values("submitted_at")[:1]
        ),
        last_event=Subquery(  # the newest event I may read (none for others' eyes only)
            Event.objects.filter(game=OuterRef("pk"))
            .filter(Q(to_colour="") | Q(to_colour=OuterRef("my_colour")))
            .order_by()
            .values("game_id")
            .annotate(last=Max("index"))
            .values("last")
        ),
        last_message=Subquery(  # the newest message of the table I may read
            Message.objects.filter(game=OuterRef("pk"))
            .filter(
                Q(to_seat__isnull=True)
                | Q(to_seat__colour=OuterRef("my_colour"))
                | Q(sender__colour=OuterRef("my_colour"))
            )
            .order_by()
            .values("game_id")
            .annotate(last=Max("pk"))
            .values("last")
        ),
    )
    game = visible_game(request, games, pk=game_id)
    parts = [
        getattr(game, name)
        for name in (
            *GAME_COLUMNS,
            "seated",
            "computers",
            "submitted",
            "my_submission",
            "last_event",
            "last_message",
        )
    ]
    return {"version": digest(parts), "phase": game.phase_number, "status": game.status}


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
            seated=_count(Seat.objects.filter(game=OuterRef("pk"))),
            submitted=_count(
                PendingSubmission.objects.filter(
                    game=OuterRef("pk"), phase_number=OuterRef("phase_number")
                )
            ),
            total=Window(Count("pk")),
        )
        .values_list("pk", *GAME_COLUMNS, "seated", "submitted", "total")[
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
            seated=_count(Seat.objects.filter(game=OuterRef("pk"))), total=Window(Count("pk"))
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


def answer(request: HttpRequest, body: dict[str, Any]) -> HttpResponse:
    """The JSON, or a 304 if the browser's copy (If-None-Match) is this very answer."""
    etag = f'"{digest(body)}"'
    if etag in request.headers.get("If-None-Match", ""):
        response: HttpResponse = HttpResponseNotModified()
    else:
        response = JsonResponse(body)
    response["ETag"] = etag
    return response


@never_cache
@require_safe
def live(request: HttpRequest) -> HttpResponse:
    body: dict[str, Any] = {"your_move": your_move_count(request.user)}
    if request.GET.get("lobby"):
        body["lobby"] = lobby_version(request)
    return answer(request, body)


@never_cache
@require_safe
def game_live(request: HttpRequest, game_id: int) -> HttpResponse:
    body: dict[str, Any] = {"game": game_version(request, game_id)}
    if scope_of(request) is None:  # a magic link's session sees no count of other games
        body["your_move"] = your_move_count(request.user)
    return answer(request, body)
