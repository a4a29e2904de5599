"""The roof: Celery tasks, thin and taking only ids, and the receivers that queue them.

Nothing below imports this module. The core announces what must follow a commit
with signals (`games.services.phase_ready`, `phase_began`, `computer_awaited`;
`games.mail.outbox.email_queued`); the receivers here turn each into a task.
`GamesConfig.ready` imports this module, so the receivers are connected in the web
process and in the worker alike.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from celery import Task, shared_task
from django.conf import settings
from django.db import InterfaceError
from django.db import OperationalError as DatabaseDown
from django.dispatch import receiver
from django.utils import timezone
from kombu import Queue
from kombu.exceptions import InconsistencyError, KombuError
from redis.exceptions import RedisError

from games import deadlines, housekeeping, recovery, services
from games.mail import notify, outbox

logger = logging.getLogger(__name__)

# A Redis broker hands a message that a worker took and has not acknowledged to another
# worker after the visibility timeout. A task with a countdown (a held email's flush, a
# retry's back-off) is taken at once and held by the worker until it is due, and every
# task here is acknowledged after it ran (acks_late): its wait and its run must both fit
# in the visibility timeout, or it runs twice (issue 21). This much is left for the worker
# to take it, hand it to a pool process and acknowledge it, and for clocks a little apart.
COUNTDOWN_MARGIN_SECONDS = 10
REDIS_VISIBILITY_TIMEOUT = 3600  # kombu's default, where the settings name none


def longest_countdown() -> float:
    """The longest a task may wait in the broker for its time (a countdown, a retry's
    back-off), from the settings: the visibility timeout less the longest run
    (TASK_TIME_LIMIT_SECONDS) and the margin. A longer wait is the database's: a due
    time in a row, which the sweep (every RECOVERY_INTERVAL_SECONDS) acts on."""
    visibility = settings.CELERY_BROKER_TRANSPORT_OPTIONS.get(
        "visibility_timeout", REDIS_VISIBILITY_TIMEOUT)
    return max(0.0, visibility - settings.TASK_TIME_LIMIT_SECONDS - COUNTDOWN_MARGIN_SECONDS)


RETRY_BACKOFF_MAX_SECONDS = 60


def survives() -> dict[str, Any]:
    """Tasks that survive (issue 8). Each is idempotent (it checks, under a lock, whether
    the world moved on, and then does nothing), so each is acknowledged only after it ran
    (acks_late) and given back to the queue if its worker process dies
    (reject_on_worker_lost); a database or broker error is retried with back-off, never
    longer than `longest_countdown`. What even that loses (a flushed Redis, too many
    retries) the recovery pass finds again in the database."""
    return {
        "acks_late": True,
        "reject_on_worker_lost": True,
        "autoretry_for": (DatabaseDown, InterfaceError, KombuError, RedisError, OSError),
        "retry_backoff": 1,
        "retry_backoff_max": int(min(RETRY_BACKOFF_MAX_SECONDS, longest_countdown())),
        "retry_jitter": True,
        "max_retries": 8,
    }


SURVIVES = survives()


@shared_task(**SURVIVES)
def resolve_phase(game_id: int, phase_number: int) -> bool:
    return services.resolve(game_id, phase_number)


@shared_task(**SURVIVES)
def play_computer(game_id: int, phase_number: int, seat_id: int) -> int:
    """Every computer the phase awaits (`seat_id`: one of them; the name and arguments
    are those of the messages queued before issue 11, which still arrive)."""
    return services.play_computers(game_id, phase_number)


@shared_task(**SURVIVES)
def notify_phase(game_id: int, phase_number: int) -> None:
    notify.phase_changed(game_id, phase_number)


@shared_task(**SURVIVES)  # a redelivered id finds its row claimed or sent
def send_email(email_id: int) -> bool:
    return outbox.send(email_id)


@shared_task(**SURVIVES)
def flush_held(user_id: int, game_id: int) -> bool:
    return notify.flush(user_id, game_id)


@shared_task(**SURVIVES)
def sweep() -> None:
    """Every RECOVERY_INTERVAL_SECONDS (beat): recovery, deadlines, reminders, outbox."""
    sweep_once()


def sweep_once(now: datetime | None = None) -> None:
    """One beat: what the queue lost first, then absences (an away player is not
    defaulted), deadlines, reminders for what is still awaited, the held (coalescing)
    emails now due, and the outbox."""
    now = now or timezone.now()
    recovery.recover(now)
    deadlines.settle_absences(now)
    deadlines.pass_deadlines(now)
    notify.send_reminders(now)  # armed where deadlines are set, never by scanning games
    notify.flush_due(now)  # owed news and confirmations that may not wait longer
    outbox.send_due(now)


@shared_task(**SURVIVES)
def send_digests() -> None:
    """Hourly (beat): the daily digests that are due."""
    notify.send_digests()


@shared_task(**SURVIVES)
def tidy() -> dict[str, int]:
    """Hourly (beat): old email bodies and expired magic links (games.housekeeping)."""
    return housekeeping.tidy()


# --- what the layers below announce ---------------------------------------------------------


def queue(task: Task, *args: int, countdown: float | None = None) -> None:
    """Queue a task after the commit that made it owed. The commit is what counts: if
    the broker cannot be reached, the person still sees their move accepted, the
    failure is logged, and the recovery pass queues the task once the broker is back.
    `countdown`: at most `longest_countdown()`."""
    try:
        if countdown is not None and countdown > longest_countdown():
            raise ValueError(f"a countdown of {countdown:.0f} s outlasts the broker's "
                             f"visibility timeout: the sweep's work (longest_countdown)")
        try:
            _apply(task, args, countdown)
        except InconsistencyError:
            # A flushed Redis forgot the queue's binding, which workers declare only when
            # they start: declare it again and retry once.
            _declare_queue(task)
            _apply(task, args, countdown)
    except Exception:  # whatever the broker's client raises, the move stays accepted
        logger.exception("could not queue %s%r; the recovery pass will", task.name, args)


def _apply(task: Task, args: tuple[int, ...], countdown: float | None) -> None:
    if countdown is None:
        task.apply_async(args)
    else:
        task.apply_async(args, countdown=countdown)


def _declare_queue(task: Task) -> None:
    name = queue_of(task)
    with task.app.connection_for_write() as connection:
        Queue(name, routing_key=name).bind(connection.default_channel).declare()


def queue_of(task: Task) -> str:
    """The queue the task is routed to (`resolve_phase`: the resolve queue, see
    lowenherz_site.celery), as `apply_async` routes it."""
    queue = task.app.amqp.router.route({}, task.name, (), {}).get("queue")
    return str(getattr(queue, "name", queue) or task.app.conf.task_default_queue)


@receiver(services.phase_ready, dispatch_uid="games.tasks.resolve")
def _resolve_soon(game_id: int, phase_number: int, **_: Any) -> None:
    queue(resolve_phase, game_id, phase_number)


@receiver(services.phase_began, dispatch_uid="games.tasks.notify")
def _notify_soon(game_id: int, phase_number: int, **_: Any) -> None:
    queue(notify_phase, game_id, phase_number)


@receiver(services.computer_awaited, dispatch_uid="games.tasks.computer")
def _computer_soon(game_id: int, phase_number: int, seat_id: int, **_: Any) -> None:
    queue(play_computer, game_id, phase_number, seat_id)


@receiver(outbox.email_queued, dispatch_uid="games.tasks.send_email")
def _send_soon(email_id: int, **_: Any) -> None:
    queue(send_email, email_id)


@receiver(outbox.email_held, dispatch_uid="games.tasks.flush_held")
def _flush_when_due(user_id: int, game_id: int, seconds: float, **_: Any) -> None:
    if seconds + 1 <= longest_countdown():  # later ones: the sweep (their due time is
        queue(flush_held, user_id, game_id, countdown=seconds + 1)  # in their rows)
