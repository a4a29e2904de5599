"""Rate limits, counted in the shared cache (django-ratelimit), for what no view
decorator can guard: emails the site sends on someone's behalf, and inbound email.

Each limit has a name and a rate ("count/period", period s, m, h or d) in
`settings.RATE_LIMITS`, so that an operator can tune it from the environment. Views
use django-ratelimit's decorator with `rate_of(name)`; everything else calls `spend`.
"""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest
from django_ratelimit.core import get_usage


def rate_of(name: str) -> Callable[[str, HttpRequest | None], str]:
    """The decorator's `rate` argument: read at each request, so tests and operators
    may change `settings.RATE_LIMITS`."""
    return lambda group, request: settings.RATE_LIMITS[name]


def allowance(name: str) -> str:
    """Limit `name` in words: "30 per day"."""
    count, _, period = settings.RATE_LIMITS[name].partition("/")
    return f"{count} per " + {"s": "second", "m": "minute", "h": "hour", "d": "day"}.get(
        period, period)


def spend(name: str, who: str) -> bool:
    """Count one use of limit `name` by `who` (an address, a user id); False when over it.

    A refused use still counts: whoever hammers stays refused."""
    usage = get_usage(None, group=f"lowenherz.{name}", key=lambda group, request: who.lower(),
                      rate=settings.RATE_LIMITS[name], increment=True)
    return usage is None or not usage["should_limit"]
