"""URLs reversed once per process, not once per link: a page links to the same dozen
views on every request (the navigation, the footer, the rules' sections, the game's
forms), and Django's `reverse` works each one out again, at some 20 µs a link (bench
figure `game-page`: a page has 37).

A URL is the same for as long as what it is worked out from is: the view's name and
arguments, the URLconf (the settings' or the request's own), the script prefix the
site is served under and the active language. `reverse_cached` keys on all of them.
The template tag `{% url %}` uses it (games.templatetags.cached_url, a builtin of the
site's templates, settings.TEMPLATES).
"""

from __future__ import annotations

from collections.abc import Hashable
from functools import lru_cache

from django.conf import settings
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils.translation import get_language

KEPT = 4096  # URLs: every game's few links while thousands are open, bounded


def reverse_cached(view_name: str, *args: Hashable) -> str:
    """`reverse(view_name, args=args)`, worked out once for the same URLconf, script
    prefix and language (NoReverseMatch is raised each time, never kept)."""
    urlconf = get_urlconf() or settings.ROOT_URLCONF
    return _reversed(view_name, args, urlconf, get_script_prefix(), get_language())


@lru_cache(maxsize=KEPT)
def _reversed(
    view_name: str, args: tuple[Hashable, ...], urlconf: str, prefix: str, language: str | None
) -> str:
    return reverse(view_name, args=args, urlconf=urlconf)
