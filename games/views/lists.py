"""Which games a list shows, in which order, and a version of what a list or the game
page shows: the lobby (games.views.lobby) reads its lists here, and so does the poll of
an open page (games.views.live); the game page and the lobby write the version they
were drawn from into the page (`data-live-version`), so that a change made while the
page was on its way is not taken for what it shows.

A version is an opaque digest: it says that something changed, never what. It is made of
the live marks the writes keep (games.models `Game.live_mark`, `Seat.live_mark`), moved
on by what each reader may see by the rule of reading, so that a poll is one indexed
lookup and a page whose reader can see nothing new does not fetch itself again.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.db import connection
from django.db.models import F, QuerySet
from django.http import HttpRequest

from games.context_processors import YOUR_MOVE_SQL, my_games
from games.models import Game, Seat

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


def digest(parts: object) -> str:
    """A short digest of a version's parts (JSON; dates as their text)."""
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:20]


# A sum of marks kept below 2**31 each: the sum of any number of games fits a 64-bit integer
# in every database.
MARK_MODULUS = 2_147_483_647
_GAMES, _SEATS = Game._meta.db_table, Seat._meta.db_table
_MINE = (
    f"FROM {_SEATS} s JOIN {_GAMES} g ON g.id = s.game_id "
    "WHERE s.user_id = %s AND g.status IN (%s, %s)"
)
_OPEN = f"FROM {_GAMES} g WHERE g.status = %s AND NOT g.invite_only"
# The lobby's version, with the navigation's count (`YOUR_MOVE_SQL`, the one home of that
# count in SQL): the live marks of my games gathering or running (`my_games_in_order`'s)
# and of the open games anyone may join (`open_games`' and those I sit in, which are in
# mine too), each summed and counted, in one statement. Every write a lobby row shows
# moves its game's mark (games.models `Game.live_mark`), whatever page of the lobby it
# is on: a change on another page fetches this one too, and nothing is missed.
LOBBY_SQL = f"""
SELECT ({YOUR_MOVE_SQL}),
  (SELECT COUNT(*) {_MINE}), (SELECT COALESCE(SUM(g.live_mark %% {MARK_MODULUS}), 0) {_MINE}),
  (SELECT COUNT(*) {_OPEN}), (SELECT COALESCE(SUM(g.live_mark %% {MARK_MODULUS}), 0) {_OPEN})
"""


def lobby_poll(request: HttpRequest) -> tuple[int, str]:
    """The navigation's count for the requesting person and the lobby's version: one
    query, of marks the writes keep, whatever the number of games."""
    user_id = request.user.pk if request.user.is_authenticated else None
    running, gathering = Game.Status.RUNNING.value, Game.Status.OPEN.value
    mine = [user_id, gathering, running]
    with connection.cursor() as cursor:
        cursor.execute(LOBBY_SQL, [user_id, running, *mine, *mine, gathering, gathering])
        count, *marks = cursor.fetchone()
    return (int(count) if user_id is not None else 0), digest([int(m) for m in marks])


def lobby_version(request: HttpRequest) -> str:
    """The lobby's version (`lobby_poll`), which the lobby is drawn with."""
    return lobby_poll(request)[1]
