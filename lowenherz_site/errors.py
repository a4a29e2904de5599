"""Error pages that say what happened and nothing about the site's insides."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def rate_limited(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """django-ratelimit's view: too many tries of one thing; HTTP 429."""
    return render(request, "errors/429.html", status=429)
