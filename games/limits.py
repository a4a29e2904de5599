"""Rate limits, counted in the shared cache (django-ratelimit), for what no view
decorator can guard: emails the site sends on someone's behalf, and inbound email.

Each limit has a name and a rate ("count/period", period s, m, h or d) in
`settings.RATE_LIMITS`, so that an operator can tune it from the environment. Views
use django-ratelimit's decorator with `rate_of(name)`; everything else calls `spend`.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django_ratelimit.core import get_usage


def rate_of(name: str) -> Callable[[str, HttpRequest | None], str]:
    """The decorator's `rate` argument: read at each request, so tests and operators
    may change `settings.RATE_LIMITS`."""
    return lambda group, request: settings.RATE_LIMITS[name]


def spend(name: str, who: str) -> bool:
    """Count one use of limit `name` by `who` (an address, a user id); False when over it.

    A refused use still counts: whoever hammers stays refused."""
    usage = get_usage(
        None,
        group=f"lowenherz.{name}",
        key=lambda group, request: who.lower(),
        rate=settings.RATE_LIMITS[name],
        increment=True,
    )
    return usage is None or not usage["should_limit"]


def per_period(name: str) -> str:
    """Limit `name` in words, for the people it stops: "30/d" → "30 per day", "5/10m" →
    "5 per 10 minutes"."""
    count, _slash, period = settings.RATE_LIMITS[name].partition("/")
    match = re.fullmatch(r"(\d*)([smhd])", period.strip().lower())
    if match is None:  # django-ratelimit would refuse it first
        return settings.RATE_LIMITS[name]
    times, unit = match.group(1), match.group(2)
    if times in ("", "1"):
        return _per_one(unit) % {"count": count}
    return _per_many(unit, int(times)) % {"count": count, "times": int(times)}


def _per_one(unit: str) -> str:
    return {
        "s": _("%(count)s per second"),
        "m": _("%(count)s per minute"),
        "h": _("%(count)s per hour"),
        "d": _("%(count)s per day"),
    }[unit]


def _per_many(unit: str, times: int) -> str:
    if unit == "s":
        return ngettext("%(count)s per %(times)d second", "%(count)s per %(times)d seconds", times)
    if unit == "m":
        return ngettext("%(count)s per %(times)d minute", "%(count)s per %(times)d minutes", times)
    if unit == "h":
        return ngettext("%(count)s per %(times)d hour", "%(count)s per %(times)d hours", times)
    return ngettext("%(count)s per %(times)d day", "%(count)s per %(times)d days", times)
