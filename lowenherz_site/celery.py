"""The Celery app, configured from Django settings (namespace CELERY), and its queues.

Three queues (issue 11): `resolve` takes only `games.tasks.resolve_phase`, so that a
phase whose last move is in is resolved at once, never behind the backlog of emails being
composed or sent and computers thinking; `sweep` the beat's work; `celery` everything else.

`WORKERS` is how one machine consumes them (`dev.py run`, the Procfile and compose.yaml
start these): one worker whose pool processes take from all three queues. A worker takes
from its queues in turn, so a resolve waits at most for a pool process to end the task it
is running, not for the tasks queued before it. Measured on two cores (bench/worker.py,
resolve-latency with eight busy games): resolve on the shared queue 174 ms p50, on its own
queue in the one worker 27 ms, on its own queue in a worker of its own 114 ms: a third
pool process on two cores takes CPU from the others, and the resolve waits for it. On a
machine with cores to spare, a worker for `resolve` alone (`-Q resolve -c 1`) may be
started beside it.
"""

import os
from typing import Any

from celery import Celery
from celery.signals import task_postrun, task_prerun, worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lowenherz_site.settings")

DEFAULT_QUEUE = "celery"
RESOLVE_QUEUE = "resolve"
SWEEP_QUEUE = "sweep"
ON_RESOLVE_QUEUE = frozenset({"games.tasks.resolve_phase"})

# (name, the queues it takes, pool processes; None: WORKER_CONCURRENCY, default 2)
WORKERS: tuple[tuple[str, tuple[str, ...], int | None], ...] = (
    ("worker", (RESOLVE_QUEUE, DEFAULT_QUEUE, SWEEP_QUEUE), None),
)

app = Celery("lowenherz_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def route_task(
    name: str, args: Any, kwargs: Any, options: Any, task: Any = None, **_: Any
) -> dict[str, str] | None:
    """`resolve_phase` to the resolve queue (settings: CELERY_TASK_ROUTES). A process that
    moved its default queue elsewhere (the test suite sends everything to a queue of its
    own, which its one worker consumes) keeps every task on that queue."""
    if name in ON_RESOLVE_QUEUE and app.conf.task_default_queue == DEFAULT_QUEUE:
        return {"queue": RESOLVE_QUEUE}
    return None


# A worker's pool process keeps its database connection from task to task. Celery's Django
# fixup closes every connection before and after every task unless told to reuse them (a
# new PostgreSQL connection for each task cost a resolve more than its own work); instead,
# as Django does around a web request, each task first closes a connection that failed or
# aged (CONN_MAX_AGE, and CONN_HEALTH_CHECKS: one a database restart cut is opened again).
# DATABASE_CONN_MAX_AGE in the environment, if set, is the age for workers too (0: a new
# connection for every task, as before). Pool processes only (prefork): a solo worker
# (dev.py run, the tests' worker) opens one per task.
WORKER_CONN_MAX_AGE = 300
app.conf["CELERY_DB_REUSE_MAX"] = 1_000_000  # the fixup's own closing: practically never


@worker_process_init.connect
def _keep_database_connections(**_: Any) -> None:
    from django.db import connections

    age = int(os.environ.get("DATABASE_CONN_MAX_AGE") or WORKER_CONN_MAX_AGE)
    for connection in connections.all(initialized_only=False):
        connection.settings_dict["CONN_MAX_AGE"] = age
        connection.settings_dict["CONN_HEALTH_CHECKS"] = True


@task_prerun.connect
@task_postrun.connect
def _close_failed_or_old_connections(sender: Any = None, **_: Any) -> None:
    if sender is None or getattr(sender.request, "is_eager", False):
        return  # a task run in the caller's process (tests): its connection is the caller's
    from django.db import connections

    for connection in connections.all(initialized_only=True):
        connection.close_if_unusable_or_obsolete()
