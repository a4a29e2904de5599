"""Who is told what when a phase changes (play by email).

`phase_changed` runs in a Celery task after every resolved phase: it queues the
emails of that phase in the outbox (games.emails). Filled in by the email work.
"""

from __future__ import annotations


def phase_changed(game_id: int, phase_number: int) -> None:
    """Queue the emails for the phase that just began (none yet)."""
