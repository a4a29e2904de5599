"""The recovery pass: the database says what must happen; the queue only makes it fast.

Every change to a game records in its row since when a task is owed to it
(`Game.work_due_since`, kept by `services.keep_due`): the phase's emails
(`notified_phase` behind `phase_number`), a resolve (every awaited submission is in)
or a computer's move. A task message can be lost (Redis restarted or flushed, a worker
killed, a database connection cut); the game's row still says what is owed. So every
beat (`games.tasks.sweep_once`, every RECOVERY_INTERVAL_SECONDS) this pass takes the
games owed work for longer than RECOVERY_GRACE_SECONDS, through the partial index
`game_work_due` (its cost grows with the games owed work, not with all games), and
queues their tasks again: those whose message is gone. A task whose message still waits
in its queue, behind a backlog longer than the grace, is not queued again (`games.tasks`
marks each message in the broker's Redis until a worker starts it), so a backlog holds
one copy of each task however many passes run; a flushed Redis loses its marks with its
messages, and a worker killed in a task has cleared its mark, so their work is queued.

Everything it queues is idempotent by construction: `services.resolve` and
`play_computer` check the phase number under the row lock, `notify.phase_changed`
the game's `notified_phase`, and the outbox's unique constraint stands behind that.
Two passes at once act once: each game is taken with `skip_locked` and its due time
moved on before its tasks are queued, so the other pass skips it. A game a task is
working on (its row locked) is skipped too, and looked at again next time.

Emails are the outbox's own rows: `outbox.send_due`, in the same sweep, sends again
those queued whose task never ran and those a dead worker left SENDING; before it,
`notify.flush_due` sends the held (COALESCING) news and confirmations now due. No task
message stands for those: their due time is in their rows, so a lost message loses none.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction

from games import services
from games.deadlines import each
from games.models import Game

logger = logging.getLogger(__name__)

BATCH = 500  # games per pass; the rest wait for the next pass


def grace() -> timedelta:
    return timedelta(seconds=settings.RECOVERY_GRACE_SECONDS)


def overdue(now: datetime) -> list[int]:
    """The games owed a task for longer than the grace, longest first."""
    return list(
        Game.objects.filter(work_due_since__lte=now - grace())
        .order_by("work_due_since")
        .values_list("pk", flat=True)[:BATCH]
    )


def recover(now: datetime) -> None:
    each(overdue(now), _recover, now)


def _recover(game_id: int, now: datetime) -> None:
    with transaction.atomic():
        game = (
            Game.objects.select_for_update(skip_locked=True)
            .filter(pk=game_id, work_due_since__lte=now - grace())
            .first()
        )
        if game is None:
            return  # being worked on, or another pass took it
        work = services.owed(game)
        # Look again after another grace if the tasks queued now are lost too.
        game.work_due_since = now if work else None
        game.save(update_fields=["work_due_since"])
        if work:
            logger.warning(
                "recovery: game %s is owed %s; queuing what is not waiting in a queue",
                game_id,
                work,
            )
            services.announce(work)
