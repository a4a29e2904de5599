"""What every page's navigation needs: the "your move" count, and whether the page polls
for changes (games/static/games/live.js, answered by games.views.live).

Imports only the tables and the magic-link scope: it sits beside the layers, read by
the template engine (settings.TEMPLATES) and by games.views.live.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

from django.conf import settings
from django.db.models import Exists, OuterRef
from django.http import HttpRequest

from games.middleware import scope_of
from games.models import Game, PendingSubmission, Seat


def your_move_count(user: Any) -> int:
    """The running games whose current phase waits for `user`'s seat, where they have
    not submitted yet: one query, a row per running game they play (few), counted here
    since "the colour is awaited" is a JSON list the databases query differently."""
    if not user.is_authenticated:
        return 0
    submitted = PendingSubmission.objects.filter(
        seat=OuterRef("pk"), phase_number=OuterRef("game__phase_number"))
    rows = (Seat.objects.filter(user=user, game__status=Game.Status.RUNNING)
            .annotate(submitted=Exists(submitted))
            .values_list("colour", "game__waiting", "submitted"))
    return sum(1 for colour, waiting, done in rows if not done and colour in (waiting or []))


class Live:
    """The template's `live`: counted only if a template asks (the nav does, once)."""

    def __init__(self, request: HttpRequest) -> None:
        self.request = request
        # A magic link's session is kept to one game (games.middleware): it neither
        # polls (the middleware would send the poll to the login page) nor sees a count
        # of the account's other games.
        # (An error page drawn before the authentication middleware has no user.)
        self.on = hasattr(request, "user") and scope_of(request) is None
        self.seconds = max(1, int(settings.LIVE_POLL_SECONDS))

    @cached_property
    def your_move(self) -> int:
        return your_move_count(self.request.user) if self.on else 0


def live(request: HttpRequest) -> dict[str, Live]:
    return {"live": Live(request)}
