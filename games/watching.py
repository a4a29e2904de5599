"""Who is watching a game: when each person last had its page open and visible.

The game page's poll (games/static/games/live.js → games.views.live) says whether the
page is visible (document.visibilityState); a visible poll of a seated person records
the moment here, in the shared cache (Redis in production), never in the database: a
poll every LIVE_POLL_SECONDS from every open page must stay a cache write. The mail
wing reads it (games.mail.notify): a person watching when a phase needs them gets the
page's notice, and the "waits for you" email (and push) only if they have not looked
at the game within EMAIL_WATCHING_SECONDS of it.

Beside the layers (as games.limits): the views write, the mail wing reads, and the two
wings never import each other. A cache that cannot be reached records nothing and
reads as "not watching": the email goes, as it did before anyone watched.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.core.cache import cache
from django.utils import timezone

log = logging.getLogger(__name__)
PREFIX = "watching"


def _key(game_id: int, user_id: int) -> str:
    return f"{PREFIX}:{game_id}:{user_id}"


def window() -> timedelta:
    """How long after a look a person counts as watching (EMAIL_WATCHING_SECONDS)."""
    return timedelta(seconds=settings.EMAIL_WATCHING_SECONDS)


def kept_seconds() -> int:
    """How long a look is kept: past a deferred email's due time (a window after the
    phase began), even when the sweep, not its task, sends it (a recovery interval and
    its grace later)."""
    return (
        2 * settings.EMAIL_WATCHING_SECONDS
        + settings.RECOVERY_INTERVAL_SECONDS
        + settings.RECOVERY_GRACE_SECONDS
    )


def saw(game_id: int, user_id: int | None, now: datetime | None = None) -> None:
    """The person has the game's page open and visible now: one cache write."""
    if user_id is None:
        return
    moment = (now or timezone.now()).timestamp()
    try:
        cache.set(_key(game_id, user_id), moment, timeout=kept_seconds())
    except Exception:  # the cache is down: the poll still answers, the emails still go
        log.warning("could not record a look at game %s", game_id, exc_info=True)


def seen_of(game_id: int, user_ids: Iterable[int | None]) -> dict[int | None, datetime]:
    """When each of these people last looked at the game (those not seen lately are
    left out), in one cache read."""
    keys: dict[str, int | None] = {
        _key(game_id, user_id): user_id for user_id in user_ids if user_id is not None
    }
    if not keys:
        return {}
    try:
        found = cache.get_many(list(keys))
    except Exception:  # the cache is down: nobody is watching, the emails go
        log.warning("could not read who watches game %s", game_id, exc_info=True)
        return {}
    return {
        keys[key]: datetime.fromtimestamp(float(moment), tz=UTC)
        for key, moment in found.items()
        if isinstance(moment, int | float)
    }


def seen_at(game_id: int, user_id: int | None) -> datetime | None:
    """When the person last looked at the game (None: not lately)."""
    return seen_of(game_id, [user_id]).get(user_id) if user_id is not None else None


def is_watching(seen: datetime | None, now: datetime) -> bool:
    """Whether a look at `seen` is recent enough to count as watching at `now`."""
    return seen is not None and now - seen <= window()
