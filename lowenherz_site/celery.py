"""The Celery app, configured from Django settings (namespace CELERY), and its queues.

Four queues: `resolve` takes only `games.tasks.resolve_phase` (issue 11), so that a phase
whose last move is in is resolved at once, never behind the backlog of emails being
composed or sent; `computers` takes only `games.tasks.play_computer` (issue 25), so that
no resolve, "your move" email or notify waits behind computers thinking; `sweep` the
beat's work; `celery` everything else.

`WORKERS` is how one machine consumes them (`dev.py run`, the Procfile and compose.yaml
start these): a worker whose pool processes take `resolve`, `celery` and `sweep` in
turn, and a worker of its own for `computers`, whose processes run at a lower CPU
priority (`COMPUTER_NICENESS`, set as it starts). So a task people wait for never waits
for a pool process to end a computer stretch, and on a busy machine the kernel gives it
the CPU first; when no person is waiting, the computers have every core.

Measured on two cores (bench/worker.py). Issue 11, resolve-latency with eight busy games:
resolve on the shared queue 174 ms p50, on its own queue in the one worker 27 ms, on its
own queue in a worker of its own 114 ms: a third pool process at the same priority takes
CPU from the others, and the resolve waits for it. Issue 25, ask-latency (last move to
the "your move" emails handed to SMTP, p95, 200 computer games playing; one run each on
a machine loaded by other work, load 6-12): computers on the `celery` queue, 8.3 s (the
issue; the emails queued behind a stretch of every game: retried here, the first ask
waited over 60 s behind the first wave); computers on their own queue in the one worker
of two processes, 2.37 s (p50 1.19 s: every step of resolve, notify and send waits for a
process to end a stretch); the two workers below, 0.57 s (p50 0.34 s), the computers'
two processes taking what CPU is left (36 phases/s meanwhile against 93 in the one
worker; 227 phases/s when no person waits, bench throughput). It costs a worker process
and two pool processes more (memory: bench worker-memory-variable, per process).
"""

import os
from typing import Any

from celery import Celery
from celery.signals import celeryd_after_setup, task_postrun, task_prerun, worker_process_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lowenherz_site.settings")

DEFAULT_QUEUE = "celery"
RESOLVE_QUEUE = "resolve"
SWEEP_QUEUE = "sweep"
COMPUTER_QUEUE = "computers"
ON_RESOLVE_QUEUE = frozenset({"games.tasks.resolve_phase"})
ON_COMPUTER_QUEUE = frozenset({"games.tasks.play_computer"})

# (name, the queues it takes, pool processes; None: WORKER_CONCURRENCY, default 2)
WORKERS: tuple[tuple[str, tuple[str, ...], int | None], ...] = (
    ("worker", (RESOLVE_QUEUE, DEFAULT_QUEUE, SWEEP_QUEUE), None),
    ("computers", (COMPUTER_QUEUE,), None),
)
# A worker that takes only the computers' queue runs this much nicer (os.nice) than the
# rest: a lower CPU priority, which its pool processes inherit.
COMPUTER_NICENESS = 10

app = Celery("lowenherz_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def route_task(
    name: str, args: Any, kwargs: Any, options: Any, task: Any = None, **_: Any
) -> dict[str, str] | None:
    """`resolve_phase` to the resolve queue, `play_computer` to the computers' queue
    (settings: CELERY_TASK_ROUTES). A process that moved its default queue elsewhere (the
    test suite sends everything to a queue of its own, which its one worker consumes)
    keeps every task on that queue."""
    if app.conf.task_default_queue != DEFAULT_QUEUE:
        return None
    if name in ON_RESOLVE_QUEUE:
        return {"queue": RESOLVE_QUEUE}
    if name in ON_COMPUTER_QUEUE:
        return {"queue": COMPUTER_QUEUE}
    return None


def declare_queues() -> None:
    """Declare every queue of the settings once, before the workers start (`dev.py run`
    calls it).

    Why: on the embedded file-system broker, kombu writes a queue's binding into a file
    shared by all queues without guarding its creation (it truncates the file, then
    locks it), so two workers declaring their queues at the same moment could leave it
    unreadable, and a worker then died at start. Once every binding is there, a worker's
    declare only reads the file. On Redis this is harmless and not needed."""
    with app.connection_for_write() as connection:
        channel = connection.default_channel
        for queue in app.amqp.queues.values():
            queue.bind(channel).declare()


@celeryd_after_setup.connect
def _computers_yield_the_cpu(sender: Any = None, instance: Any = None, **_: Any) -> None:
    """A worker taking only the computers' queue lowers its priority before its pool
    starts (the pool processes inherit it): see the module's docstring."""
    if instance is not None and consumes_only_computers(instance.app):
        os.nice(COMPUTER_NICENESS)


def consumes_only_computers(celery: Celery) -> bool:
    taken = {queue.name for queue in celery.amqp.queues.consume_from.values()}
    return taken == {COMPUTER_QUEUE}


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
