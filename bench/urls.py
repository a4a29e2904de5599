"""The site's URLs and one view only the benchmarks use (bench.web's baseline): set as
ROOT_URLCONF for the length of a measurement, so the site itself ships nothing for it."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, URLResolver, path

from games.models import Game
from lowenherz_site.urls import urlpatterns as site_urlpatterns

MINIMAL_PATH = "/bench/minimal/"


def minimal(request: HttpRequest) -> HttpResponse:
    """A minimal view: one trivial query, a trivial response, through the site's
    middleware and database like every page."""
    newest = Game.objects.order_by("-pk").values_list("pk", flat=True).first()
    return HttpResponse(f"<p>{newest}</p>")


urlpatterns: list[URLPattern | URLResolver] = [
    path(MINIMAL_PATH.strip("/") + "/", minimal, name="bench_minimal"),
    *site_urlpatterns,
]
