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

# Tasks that survive (issue 8). Each is idempotent (it checks, under a lock, whether the
# world moved on, and then does nothing), so each is acknowledged only after it ran
# (acks_late) and given back to the queue if its worker process dies (reject_on_worker_lost);
# a database or broker error is retried with back-off. What even that loses (a flushed
# Redis, too many retries) the recovery pass finds again in the database.
SURVIVES: dict[str, Any] = {
    "acks_late": True,
    "reject_on_worker_lost": True,
    "autoretry_for": (DatabaseDown, InterfaceError, KombuError, RedisError, OSError),
    "retry_backoff": 1,
    "retry_backoff_max": 60,
    "retry_jitter": True,
    "max_retries": 8,
}


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


# A held email due later than this is left to the sweep: a Redis broker redelivers a
# task that waits longer than its visibility timeout.
HELD_TASK_MAX_SECONDS = 600


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
    failure is logged, and the recovery pass queues the task once the broker is back."""
    try:
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
    if seconds <= HELD_TASK_MAX_SECONDS:  # later ones: the sweep, every minute
        queue(flush_held, user_id, game_id, countdown=seconds + 1)
