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

A version is an opaque digest (games.views.lists): it says that something changed,
never what. The page was drawn with the version of its moment (`data-live-version`).
"""

from __future__ import annotations

from typing import Any

from django.db.models import OuterRef, Subquery
from django.http import HttpRequest, HttpResponse, HttpResponseNotModified, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from games.context_processors import your_move_count
from games.middleware import scope_of
from games.models import IN_PERSON, Event, Game, Message, PendingSubmission, Seat
from games.views.lists import GAME_COLUMNS, away_now, count_of, digest, lobby_version
from games.visibility import visible_game


def viewer_seat(request: HttpRequest, game_id: int) -> Seat | None:
    """The requesting person's seat in the game, with what the rules of reading ask of
    it (its colour, the colours it muted); None for a visitor or a spectator."""
    if not request.user.is_authenticated:
        return None
    seats = Seat.objects.filter(game_id=game_id, user_id=request.user.pk)
    return seats.only("pk", "game_id", "user_id", "colour", "muted_colours").first()


def game_version(request: HttpRequest, game_id: int) -> dict[str, Any]:
    """The game page's version for the requesting person, in two queries (their seat,
    then the game with what it shows); 404 as the page if they may not see the game.
    The newest event and message are those the seat reads by the one rule of each
    (`visible_to`): what the reader may not see, or muted, changes nothing."""
    seat = viewer_seat(request, game_id)
    seats = Seat.objects.filter(game=OuterRef("pk"))
    this_phase = PendingSubmission.objects.filter(
        game=OuterRef("pk"), phase_number=OuterRef("phase_number")
    )
    mine = this_phase.filter(seat=seat) if seat is not None else this_phase.none()
    games = Game.objects.only("pk", *GAME_COLUMNS).annotate(
        seated=count_of(seats),
        computers=count_of(seats.exclude(IN_PERSON)),
        submitted=count_of(this_phase),
        my_submission=Subquery(mine.values("submitted_at")[:1]),
        last_event=Event.objects.visible_to(seat.colour if seat else None).newest_in(
            OuterRef("pk"), "index"
        ),
        last_message=Message.objects.visible_to(seat).newest_in(OuterRef("pk")),
        away=away_now(),
    )
    game = visible_game(request, games, pk=game_id)
    shown = (
        "seated",
        "computers",
        "submitted",
        "my_submission",
        "last_event",
        "last_message",
        "away",
    )
    parts = [getattr(game, name) for name in (*GAME_COLUMNS, *shown)]
    parts.append(seat.muted_colours if seat is not None else None)
    return {"version": digest(parts), "phase": game.phase_number, "status": game.status}


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
