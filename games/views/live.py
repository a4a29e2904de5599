"""What a page open in a browser polls (games/static/games/live.js): a version of what
it shows, and the "your move" count of the navigation.

The answer is tiny and cheap (two indexed lookups of marks the writes keep), and
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

from django.http import HttpRequest, HttpResponse, HttpResponseNotModified, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from games.context_processors import your_move_count
from games.middleware import scope_of
from games.models import Game, Seat
from games.views.lists import GAME_COLUMNS, digest, lobby_version
from games.visibility import visible_game


def viewer_seat(request: HttpRequest, game_id: int) -> Seat | None:
    """The requesting person's seat in the game, with what the rules of reading ask of
    it (its colour, the colours it muted) and its live mark; None for a visitor or a
    spectator."""
    if not request.user.is_authenticated:
        return None
    seats = Seat.objects.filter(game_id=game_id, user_id=request.user.pk)
    return seats.only("pk", "game_id", "user_id", "colour", "muted_colours", "live_mark").first()


def game_version(request: HttpRequest, game_id: int) -> dict[str, Any]:
    """The game page's version for the requesting person, in two indexed lookups (their
    seat, then the game's row); 404 as the page if they may not see the game. The marks
    are kept by the writes (games.signals): the game's moves on with what everyone reads
    (the game, its seats and submissions, public events), the seat's with what its
    reader alone reads (their table talk, by the one rule of reading, and their own
    events); so what the reader may not see, or muted, changes nothing."""
    seat = viewer_seat(request, game_id)
    games = Game.objects.only("pk", "invite_only", "live_mark", *GAME_COLUMNS)
    game = visible_game(request, games, pk=game_id)
    parts: list[Any] = [getattr(game, name) for name in GAME_COLUMNS]
    parts.append(game.live_mark)
    if seat is not None:
        parts.extend([seat.live_mark, seat.muted_colours])
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
