"""`/healthz`: whether this web process can reach what a move needs (for a load balancer
or an orchestrator's health check). 200 when the database and the broker answer, 503
with the one that does not; the body is JSON and says no more than "ok" or "down"."""

from __future__ import annotations

import logging

from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from lowenherz_site.celery import app

logger = logging.getLogger(__name__)


def _database() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            return cursor.fetchone() == (1,)
    except Exception:
        logger.exception("healthz: the database does not answer")
        return False


def _broker() -> bool:
    try:
        with app.connection_for_write() as broker:
            broker.ensure_connection(max_retries=1, timeout=2)
        return True
    except Exception:
        logger.exception("healthz: the broker does not answer")
        return False


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    checks = {"database": _database(), "broker": _broker()}
    body = {name: "ok" if up else "down" for name, up in checks.items()}
    return JsonResponse(body, status=200 if all(checks.values()) else 503)
