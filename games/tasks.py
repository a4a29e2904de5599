"""The roof: Celery tasks, thin and taking only ids, and the receivers that queue them.

Nothing below imports this module. The core announces what must follow a commit
with signals (`games.services.phase_ready`, `phase_began`, `computer_awaited`;
`games.mail.outbox.email_queued`); the receivers here turn each into a task.
`GamesConfig.ready` imports this module, so the receivers are connected in the web
process and in the worker alike.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from celery import shared_task
from django.dispatch import receiver
from django.utils import timezone

from games import deadlines, services
from games.mail import notify, outbox


@shared_task(acks_late=True)
def resolve_phase(game_id: int, phase_number: int) -> bool:
    # Idempotent (services.resolve checks the phase number under a row lock), so a
    # redelivered message after a worker crash does no harm.
    return services.resolve(game_id, phase_number)


@shared_task
def play_computer(game_id: int, phase_number: int, seat_id: int) -> bool:
    return services.play_computer(game_id, phase_number, seat_id)


@shared_task
def notify_phase(game_id: int, phase_number: int) -> None:
    notify.phase_changed(game_id, phase_number)


@shared_task(acks_late=True)  # idempotent: a redelivered id finds its row claimed or sent
def send_email(email_id: int) -> bool:
    return outbox.send(email_id)


@shared_task
def sweep() -> None:
    """Every minute (beat): deadlines, reminders, outbox retries."""
    sweep_once()


def sweep_once(now: datetime | None = None) -> None:
    """One beat: absences first (an away player is not defaulted), then deadlines, then
    reminders for what is still awaited, then the outbox."""
    now = now or timezone.now()
    deadlines.settle_absences(now)
    deadlines.pass_deadlines(now)
    notify.arm_reminders(now)
    notify.send_reminders(now)
    outbox.send_due(now)


@shared_task
def send_digests() -> None:
    """Hourly (beat): the daily digests that are due."""
    notify.send_digests()


# --- what the layers below announce ---------------------------------------------------------


@receiver(services.phase_ready, dispatch_uid="games.tasks.resolve")
def _resolve_soon(game_id: int, phase_number: int, **_: Any) -> None:
    resolve_phase.delay(game_id, phase_number)


@receiver(services.phase_began, dispatch_uid="games.tasks.notify")
def _notify_soon(game_id: int, phase_number: int, **_: Any) -> None:
    notify_phase.delay(game_id, phase_number)


@receiver(services.computer_awaited, dispatch_uid="games.tasks.computer")
def _computer_soon(game_id: int, phase_number: int, seat_id: int, **_: Any) -> None:
    play_computer.delay(game_id, phase_number, seat_id)


@receiver(outbox.email_queued, dispatch_uid="games.tasks.send_email")
def _send_soon(email_id: int, **_: Any) -> None:
    send_email.delay(email_id)
