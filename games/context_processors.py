"""What every page's navigation needs: the "your move" count, and whether the page polls
for changes (games/static/games/live.js, answered by games.views.live).

Imports only the tables, the engine's colours and the magic-link scope: it sits beside
the layers, read by the template engine (settings.TEMPLATES), by games.views.live and by
the lobby (`my_games`, the rule of "your move").
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import BooleanField, Case, Exists, F, OuterRef, Q, QuerySet, TextField, When
from django.db.models.functions import Cast
from django.http import HttpRequest

from engine.position import COLOURS
from games.middleware import scope_of
from games.models import Game, PendingSubmission, Seat


def my_games(user: Any) -> QuerySet[Game]:
    """The person's games, a row for each seat of theirs, each carrying `my_colour`,
    `my_seat` and `my_turn`: the game is running, its phase waits for my colour and I
    have not submitted. The one rule of "your move", all of it in SQL: the navigation's
    count and the lobby's order (games.views.lobby) both read it."""
    awaits_me = Q()
    for colour in COLOURS:  # "my colour is in the JSON list", the same in every database
        awaits_me |= Q(my_colour=colour, waiting_text__contains=f'"{colour}"')
    stored = PendingSubmission.objects.filter(
        seat_id=OuterRef("my_seat"), phase_number=OuterRef("phase_number")
    )
    return (
        Game.objects.filter(seats__user=user)
        .annotate(
            my_colour=F("seats__colour"),
            my_seat=F("seats__pk"),
            waiting_text=Cast("waiting", output_field=TextField()),
        )
        .annotate(
            my_turn=Case(
                When(awaits_me & Q(status=Game.Status.RUNNING) & ~Exists(stored), then=True),
                default=False,
                output_field=BooleanField(),
            )
        )
    )


def your_move_count(user: Any) -> int:
    """The running games whose current phase waits for `user`'s seat, where they have
    not submitted yet: counted in the database, one query, whatever their number."""
    if not user.is_authenticated:
        return 0
    with connection.cursor() as cursor:
        cursor.execute(YOUR_MOVE_SQL, [user.pk, Game.Status.RUNNING.value])
        row = cursor.fetchone()
    return int(row[0]) if row else 0


# `my_games` counted where it is my turn, written out by hand: every page's navigation
# asks, and building the query in the ORM costs several times running it. The rule
# stays `my_games`'s: tests/site/test_your_move_count.py proves the two agree.
YOUR_MOVE_SQL = f"""
SELECT COUNT(*) FROM {Seat._meta.db_table} s
JOIN {Game._meta.db_table} g ON g.id = s.game_id
WHERE s.user_id = %s AND g.status = %s
AND CAST(g.waiting AS TEXT) LIKE ('%%"' || s.colour || '"%%')
AND NOT EXISTS (
    SELECT 1 FROM {PendingSubmission._meta.db_table} p
    WHERE p.seat_id = s.id AND p.phase_number = g.phase_number
)"""


class Live:
    """The template's `live`: counted only if a template asks (the nav does, once)."""

    def __init__(self, request: HttpRequest) -> None:
        self.request = request
        # (An error page drawn before the authentication middleware has no user.)
        self.on = hasattr(request, "user")
        # A magic link's session is kept to one game (games.middleware): its game page
        # polls its game (games.views.live.game_live), but it sees no count of the
        # account's other games, and other pages do not poll `/live/` for one.
        self.counts = self.on and scope_of(request) is None
        self.seconds = max(1, int(settings.LIVE_POLL_SECONDS))

    @cached_property
    def your_move(self) -> int:
        if not self.counts:
            return 0
        known = getattr(self.request, COUNTED, None)
        return known if isinstance(known, int) else your_move_count(self.request.user)


# A view that has counted "your move" already (the game page, with its version in one
# query: games.views.live.game_poll) leaves it on the request for the navigation.
COUNTED = "your_move_counted"


def live(request: HttpRequest) -> dict[str, Live]:
    return {"live": Live(request)}
