"""The roof: Celery tasks, thin and taking only ids, and the receivers that queue them.

Nothing below imports this module. The core announces what must follow a commit
with signals (`games.services.phase_ready`, `phase_began`, `computer_awaited`;
`games.mail.outbox.email_queued`); the receivers here turn each into a task.
`GamesConfig.ready` imports this module, so the receivers are connected in the web
process and in the worker alike.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import redis
from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from celery.signals import task_prerun
from celery.utils import uuid
from django.conf import settings
from django.db import InterfaceError
from django.db import OperationalError as DatabaseDown
from django.dispatch import receiver
from django.utils import timezone
from kombu import Queue
from kombu.exceptions import InconsistencyError, KombuError
from redis.exceptions import RedisError

from games import deadlines, housekeeping, recovery, services, votes
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
        "visibility_timeout", REDIS_VISIBILITY_TIMEOUT
    )
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


@shared_task(**SURVIVES, soft_time_limit=settings.COMPUTER_TIME_LIMIT_SECONDS)
def play_computer(game_id: int, phase_number: int, seat_id: int) -> int:
    """Every computer the phase awaits (`seat_id`: one of them; the name and arguments
    are those of the messages queued before issue 11, which still arrive). On a queue
    and a worker of their own (lowenherz_site.celery). Past COMPUTER_TIME_LIMIT_SECONDS
    the stretch is rolled back (its transaction) and the task ends; the game still owes
    the computers' moves (`Game.work_due_since`), which the recovery pass queues again."""
    try:
        return services.play_computers(game_id, phase_number)
    except SoftTimeLimitExceeded:
        logger.warning(
            "game %s, phase %s: the computers took over %s s; the recovery pass tries again",
            game_id,
            phase_number,
            settings.COMPUTER_TIME_LIMIT_SECONDS,
        )
        return 0


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
    """One beat: what the queue lost first, then the table's proposals past their time,
    pauses and absences (an away player is not defaulted), deadlines, reminders for what is
    still awaited, the held (coalescing) emails now due, and the outbox."""
    now = now or timezone.now()
    recovery.recover(now)
    votes.expire_votes(now)
    deadlines.settle_absences(now)
    deadlines.mark_absences_turning(now)  # "away" on open pages, as it begins or ends
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
    """Queue a task after the commit that made it owed, unless the same task is still
    waiting in its queue (`_mark_waiting`). The commit is what counts: if the broker
    cannot be reached, the person still sees their move accepted, the failure is logged,
    and the recovery pass queues the task once the broker is back. `countdown`: at most
    `longest_countdown()`."""
    mark: Mark | None = None
    try:
        if countdown is not None and countdown > longest_countdown():
            raise ValueError(
                f"a countdown of {countdown:.0f} s outlasts the broker's "
                f"visibility timeout: the sweep's work (longest_countdown)"
            )
        client = broker_redis(task) if countdown is None else None
        if client is not None:
            mark = _mark_waiting(client, task, args)
            if mark is None:
                logger.info("%s%r is still waiting in its queue: not queued again", task.name, args)
                return
        try:
            _apply(task, args, countdown, mark)
        except InconsistencyError:
            # A flushed Redis forgot the queue's binding, which workers declare only when
            # they start: declare it again and retry once.
            _declare_queue(task)
            _apply(task, args, countdown, mark)
    except Exception:  # whatever the broker's client raises, the move stays accepted
        logger.exception("could not queue %s%r; the recovery pass will", task.name, args)
        if mark is not None:
            mark.drop()


def _apply(task: Task, args: tuple[int, ...], countdown: float | None, mark: Mark | None) -> None:
    options: dict[str, Any] = {}
    if countdown is not None:
        options["countdown"] = countdown
    if mark is not None:
        options.update(task_id=mark.task_id, headers=mark.headers)
    task.apply_async(args, **options)


# --- a task still waiting in its queue is not queued again (issue 21) ----------------------
#
# The recovery pass queues again what the database says a game is owed once it has been
# owed for RECOVERY_GRACE_SECONDS; behind a backlog longer than that, the message queued
# first is still waiting, and every pass would add a copy. So each message queued here
# leaves a mark beside its queue, in the broker's Redis: a key naming the queue, the task
# and its arguments, set when it is queued and deleted when a worker starts the task. A
# mark means the message still waits: a second `queue` of the same task does nothing.
#   - A flushed or restarted Redis loses the marks with the messages, and a worker killed
#     in a task has deleted its mark: what the games are owed is queued again.
#   - A mark can outlive its message (a purged queue; a process killed between the mark
#     and the message). Each message carries the number of its mark, counted up per
#     queue, and a queue is first in, first out: when the oldest message in the queue
#     (or none) came after the mark, the mark's message has left, and the task is queued.
#     Two publishers racing may queue in the other order than they counted: then at
#     worst one copy more. A mark also expires after RECOVERY_QUEUED_SECONDS.
# Only immediate tasks are marked: a countdown's task is not waiting for a worker.

MARK_HEADER = "lowenherz_waiting"  # the mark's key
NUMBER_HEADER = "lowenherz_number"  # the mark's number in its queue
MARK_PREFIX = "lowenherz:waiting"

# KEYS: the mark, the queue's list (kombu: pushed at the left, taken from the right),
# the queue's count of marks; ARGV: the task id, the mark's lifetime, NUMBER_HEADER.
# The new mark's number, or nil if the task's mark is there and its message may wait.
_MARK = """
local mark = redis.call('get', KEYS[1])
if mark then
  local oldest = redis.call('lindex', KEYS[2], -1)
  if oldest then
    local ok, message = pcall(cjson.decode, oldest)
    local first = ok and type(message) == 'table' and type(message.headers) == 'table'
      and tonumber(message.headers[ARGV[3]])
    if not first or first <= (tonumber(string.match(mark, '(%d+)$')) or 0) then
      return false
    end
  end
end
local number = redis.call('incr', KEYS[3])
redis.call('set', KEYS[1], ARGV[1] .. ' ' .. number, 'EX', ARGV[2])
return number
"""

# Deletes the mark only if it is still this message's (a retry carries the same headers,
# and a newer message of the same task may have marked it again meanwhile).
_UNMARK = """
local mark = redis.call('get', KEYS[1])
if mark and string.find(mark, ARGV[1] .. ' ', 1, true) == 1 then
  return redis.call('del', KEYS[1])
end
return 0
"""


@dataclass(frozen=True)
class Mark:
    """The mark of a message about to be queued: its key, task id, number, and Redis."""

    client: redis.Redis
    key: str
    task_id: str
    number: int

    @property
    def headers(self) -> dict[str, Any]:
        return {MARK_HEADER: self.key, NUMBER_HEADER: self.number}

    def drop(self) -> None:
        with contextlib.suppress(RedisError):
            self.client.eval(_UNMARK, 1, self.key, self.task_id)


def _mark_waiting(client: redis.Redis, task: Task, args: tuple[int, ...]) -> Mark | None:
    """The new message's mark; None if the same task is still waiting in its queue."""
    name, task_id = queue_of(task), uuid()
    key = waiting_key(name, task, args)
    number = client.eval(
        _MARK,
        3,
        key,
        name,
        f"{MARK_PREFIX}:{name}",
        task_id,
        settings.RECOVERY_QUEUED_SECONDS,
        NUMBER_HEADER,
    )
    return None if number is None else Mark(client, key, task_id, int(number))


def waiting_key(queue_name: str, task: Task, args: tuple[int, ...]) -> str:
    return ":".join([MARK_PREFIX, queue_name, task.name, *map(str, args)])


def broker_redis(task: Task) -> redis.Redis | None:
    """A client of the broker's Redis (the marks live beside the queues, so that what
    empties one empties the other); None on another broker."""
    url = task.app.conf.broker_url
    return _redis(url) if isinstance(url, str) and url.startswith(REDIS_SCHEMES) else None


REDIS_SCHEMES = ("redis://", "rediss://", "redis+socket://", "unix://")


@functools.cache
def _redis(url: str) -> redis.Redis:
    timeout = settings.CELERY_BROKER_CONNECTION_TIMEOUT
    return redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)


@task_prerun.connect(dispatch_uid="games.tasks.taken")
def _taken_from_queue(task: Task | None = None, task_id: str | None = None, **_: Any) -> None:
    """A worker starts a marked task: its message has left the queue."""
    key = getattr(task.request, MARK_HEADER, None) if task is not None else None
    if task is None or not isinstance(key, str):
        return
    client = broker_redis(task)
    if client is None:
        return
    try:
        client.eval(_UNMARK, 1, key, task_id or "")
    except RedisError:  # the task runs anyway; the mark expires, or its queue empties
        logger.warning("could not clear the mark %s of task %s", key, task_id)


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
