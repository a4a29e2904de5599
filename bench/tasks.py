"""Tasks for the benchmarks only (a worker the bench starts imports this module with
`--include bench.tasks`; the site's own workers never see it).

`stamp` is the no-op the worker figures are measured against: it only appends the
worker's clock to a Redis list, so the bench reads when it ran on the same clock as the
rows a real task writes (`Snapshot.created_at`).
"""

from __future__ import annotations

import os
import time
from functools import cache

import redis
from celery import shared_task
from django.conf import settings

import lowenherz_site.celery as site_celery


@cache
def _redis() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL)


@shared_task(name="bench.stamp", ignore_result=True)
def stamp(key: str) -> None:
    """A no-op task: the time it ran, appended to the list `key`."""
    _redis().rpush(key, repr(time.time()))


# BENCH_RESOLVE_QUEUE=default: the bench process and its workers send `resolve_phase` to
# the default queue, as before issue 11 (to measure what its own queue changed).
if os.environ.get("BENCH_RESOLVE_QUEUE") == "default":
    site_celery.ON_RESOLVE_QUEUE = frozenset()
