"""The site's absolute addresses, for links that leave it (emails, headers, replies): the
one place that joins SITE_URL to a path. A page shows its own links relative to itself."""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlencode

from django.conf import settings
from django.urls import reverse


def absolute_url(name_or_path: str, *args: object, query: Mapping[str, str] | None = None) -> str:
    """SITE_URL and the path of the URL pattern `name_or_path` with `args` (or the path
    itself, if it starts with "/"), and `query` unless it is empty. A signed value's ":"
    separators stay as they are: readable, and Django reads them either way."""
    path = name_or_path if name_or_path.startswith("/") else reverse(name_or_path, args=args)
    return settings.SITE_URL + path + (f"?{urlencode(query, safe=':')}" if query else "")
