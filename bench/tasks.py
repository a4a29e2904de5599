"""Tasks for the benchmarks only (a worker the bench starts imports this module with
`--include bench.tasks`; the site's own workers never see it).

`stamp` is the no-op the worker figures are measured against: it only appends the
worker's clock to a Redis list, so the bench reads when it ran on the same clock as the
rows a real task writes (`Snapshot.created_at`). `resident` is the probe of the
worker-memory-variable figure.
"""

from __future__ import annotations

import json
import os
import time
from functools import cache

import redis
from celery import shared_task
from django.conf import settings

import lowenherz_site.celery as site_celery
from bench.web_memory import resident_kib


@cache
def _redis() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL)


@shared_task(name="bench.stamp", ignore_result=True)
def stamp(key: str) -> None:
    """A no-op task: the time it ran, appended to the list `key`."""
    _redis().rpush(key, repr(time.time()))


@shared_task(name="bench.resident", ignore_result=True)
def resident(key: str) -> None:
    """The resident set of the pool process that runs it, and the phases resolved in
    every game by then, appended to the list `key` as JSON. Read here, in the worker,
    between two tasks: with one pool process nothing resolves meanwhile. (It imports
    nothing the worker has not loaded already: its memory is the worker's own.)"""
    rss = resident_kib()
    found = {"pid": os.getpid(), "rss_kib": rss, "phases": resolved_phases()}
    _redis().rpush(key, json.dumps(found))


def resolved_phases() -> int:
    """Phases resolved in every game (a game starts at phase 1)."""
    from django.db.models import F, Sum

    from games.models import Game

    found = Game.objects.filter(phase_number__gt=0).aggregate(n=Sum(F("phase_number") - 1))
    return int(found["n"] or 0)


# BENCH_RESOLVE_QUEUE=default: the bench process and its workers send `resolve_phase` to
# the default queue, as before issue 11 (to measure what its own queue changed).
if os.environ.get("BENCH_RESOLVE_QUEUE") == "default":
    site_celery.ON_RESOLVE_QUEUE = frozenset()

# BENCH_COMPUTER_QUEUE=default: `play_computer` on the default queue, as before issue 25
# (with BENCH_WORKERS=single: one worker takes every queue, the layout before it).
if os.environ.get("BENCH_COMPUTER_QUEUE") == "default":
    site_celery.ON_COMPUTER_QUEUE = frozenset()
