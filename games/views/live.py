"""What a page open in a browser polls (games/static/games/live.js): a version of what
it shows, and the "your move" count of the navigation.

The answer is tiny and cheap (one query: indexed lookups of marks the writes keep), and
a 304 when the browser already has it (an ETag over the answer), so that a tab left
open for days costs little. Only when the version changes does the page fetch itself
again, rendered by the very views and templates of a first load: nothing shown here
comes from anywhere but `games.show.presenter.present`.

- `/live/`: the count alone (every page of a signed-in person); `?lobby=1` adds the
  lobby's version (of all my games and all open games, whatever page the lobby shows).
- `/games/<id>/live/`: the count and the game page's version, for the viewer; an
  invite-only game they may not see is a 404, as its page is. A session a magic link
  opened polls its game here too, without the count (games.middleware). A visible page
  says so (`?visible=1`): a seated person's look is recorded in the cache
  (games.watching), and the "waits for you" email waits for them to miss a phase.

A version is an opaque digest (games.views.lists): it says that something changed,
never what. The page was drawn with the version of its moment (`data-live-version`).

An open page polls every LIVE_POLL_SECONDS, so the polls are most of what a busy site
answers (bench `open-tabs`): `QuickPollMiddleware` answers them before the middleware
that loads a person's profile for the time zone and the language, which an answer of
digests and counts does not read, and finds the person of the session in one statement
instead of the ORM's (`polling_person`). Whatever it is not sure of goes the whole way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import ValidationError
from django.db import connection
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotModified, JsonResponse
from django.urls import Resolver404, resolve
from django.utils.crypto import constant_time_compare
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from games import watching
from games.context_processors import YOUR_MOVE_SQL, your_move_count
from games.middleware import SCOPE_KEY, scope_of
from games.models import Game, Seat
from games.views.lists import digest, lobby_poll
from games.visibility import visible_game

_GAMES, _SEATS = Game._meta.db_table, Seat._meta.db_table
# The poll of a game page, with the navigation's count (`YOUR_MOVE_SQL`, the one home of
# that count in SQL): the game's row and the reader's seat, one indexed lookup each.
GAME_POLL_SQL = f"""
SELECT g.invite_only, g.status, g.phase_number, g.live_mark, s.live_mark, ({YOUR_MOVE_SQL})
FROM {_GAMES} g LEFT JOIN {_SEATS} s ON s.game_id = g.id AND s.user_id = %s
WHERE g.id = %s"""


def game_poll(request: HttpRequest, game_id: int) -> tuple[dict[str, Any], int, bool]:
    """The game page's version for the requesting person, their "your move" count and
    whether they are seated, in one query of the live marks the writes keep
    (games.models `Game.live_mark`: what everyone reads of the game; `Seat.live_mark`:
    what their seat alone reads, by the one rule of reading), so what the reader may
    not see, or muted, changes nothing.
    A 404 as the page if they may not see the game (only an invite-only game asks)."""
    user_id = request.user.pk if request.user.is_authenticated else None
    with connection.cursor() as cursor:
        cursor.execute(GAME_POLL_SQL, [user_id, Game.Status.RUNNING.value, user_id, game_id])
        row = cursor.fetchone()
    if row is None:
        raise Http404
    invite_only, status, phase, *marks, count = row
    if invite_only:
        visible_game(request, Game.objects.only("pk", "invite_only"), pk=game_id)
    version = {"version": digest(marks), "phase": phase, "status": status}
    return version, (int(count) if user_id is not None else 0), marks[1] is not None


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
    if not request.GET.get("lobby"):
        return answer(request, {"your_move": your_move_count(request.user)})
    count, version = lobby_poll(request)
    return answer(request, {"your_move": count, "lobby": version})


@never_cache
@require_safe
def game_live(request: HttpRequest, game_id: int) -> HttpResponse:
    """`?visible=1`: the page is open and visible (live.js): a seated person's look is
    recorded (games.watching: a cache write, no query), so that the page, not an email,
    tells them of a phase that needs them."""
    version, count, seated = game_poll(request, game_id)
    body: dict[str, Any] = {"game": version}
    if seated and request.GET.get("visible") == "1":
        watching.saw(game_id, request.user.pk)
    if scope_of(request) is None:  # a magic link's session sees no count of other games
        body["your_move"] = count
    return answer(request, body)


# --- the quick way to the answer ------------------------------------------------------------

POLLS = frozenset({"live", "game_live"})  # the URL names of the views above
MODEL_BACKEND = f"{ModelBackend.__module__}.{ModelBackend.__qualname__}"
# What the polls read of a person (the session's check, the rule of who sees a game, the
# 404 page's navigation), in the model's order of fields as `Model.from_db` reads them;
# any other field is read from the database if asked for.
_READ = [
    (f.attname, f.column)
    for f in User._meta.concrete_fields
    if f.attname in {"id", "password", "is_active", "username", "email"}
]
_USER_FIELDS = [attname for attname, _ in _READ]
_USER_SQL = (
    f"SELECT {', '.join(str(column) for _, column in _READ)} "
    f"FROM {User._meta.db_table} WHERE {User._meta.pk.column} = %s"
)


def polling_person(request: HttpRequest) -> User | AnonymousUser | None:
    """The person of the request's session, as `django.contrib.auth.get_user` finds them
    (`ModelBackend`: an active account whose password is the one the session was signed
    in with), with one statement written out; a visitor if the session names nobody.
    None wherever that function would do more than find them (a session signed with an
    older secret, or one to end), or the site would (a magic link's session, kept to one
    game by games.middleware): the whole stack answers those."""
    session = request.session
    if SCOPE_KEY in session:
        return None
    if SESSION_KEY not in session:
        return AnonymousUser()
    if session.get(BACKEND_SESSION_KEY) != MODEL_BACKEND:
        return None
    if MODEL_BACKEND not in settings.AUTHENTICATION_BACKENDS:
        return None
    try:
        user_id = User._meta.pk.to_python(session[SESSION_KEY])
    except ValidationError:
        return None
    with connection.cursor() as cursor:
        cursor.execute(_USER_SQL, [user_id])
        row = cursor.fetchone()
    if row is None:
        return None
    user = User.from_db(connection.alias, _USER_FIELDS, row)
    if not ModelBackend().user_can_authenticate(user):
        return None
    signed = session.get(HASH_SESSION_KEY)
    if not signed or not constant_time_compare(signed, user.get_session_auth_hash()):
        return None
    return user


class QuickPollMiddleware:
    """Answers a poll (`live`, `game_live`) as soon as the response's own middleware has
    run (sessions, language, security headers, the CSP), with the person `polling_person`
    finds; any other request, and a poll it is not sure of, goes on down the stack.
    Before the middleware that reads the person's profile (games.middleware)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method in ("GET", "HEAD") and request.path_info.endswith("/live/"):
            try:
                match = resolve(request.path_info)
            except Resolver404:
                match = None
            if match is not None and match.url_name in POLLS:
                person = polling_person(request)
                if person is not None:
                    request.user = person
                    request.resolver_match = match
                    response: HttpResponse = match.func(request, *match.args, **match.kwargs)
                    return response
        return self.get_response(request)
