"""Celery tasks: thin, taking only ids; the work is in games.services."""

from __future__ import annotations

from celery import shared_task

from games import outbox, services


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
    from games.notify import phase_changed

    phase_changed(game_id, phase_number)


@shared_task
def sweep() -> None:
    """Every minute (beat): deadlines, reminders, outbox retries."""
    from games import deadlines

    deadlines.sweep()


@shared_task
def send_digests() -> None:
    """Hourly (beat): the daily digests that are due."""
    outbox.send_digests()
