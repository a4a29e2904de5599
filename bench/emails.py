"""`emails-per-ask`: the emails a person receives per phase that awaited them, over whole
games (issue 10's measure, from tests/site/test_email_cadence.py, reused as it is).

Three people and a computer play a 4-player game to its end: alice and bob by email (real
replies through `manage.py receive_email`, with table talk beside their moves and alone),
charlie on the web; every email goes through a real SMTP server (aiosmtpd on loopback).
The worker's part is done in-process and in order, so that the count depends on the
site's cadence alone. Counted: every email received but the final game-over one.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

from django.test import override_settings

from bench.core import Figure, Options, figures
from bench.db import empty_tables

TARGET = "<= 1.1"


@figures("emails-per-ask")
def emails_figure(options: Options) -> Iterator[Figure]:
    seeds = [7] if options.quick else [7, 8, 9]
    fast = [_one_game(seed, "fast") for seed in seeds]
    slow = [] if options.quick else [_one_game(seeds[0], "slow")]
    received = sum(r for r, _ in fast)
    awaited = sum(a for _, a in fast)
    yield Figure(
        "emails-per-ask",
        "emails a person receives per phase that awaited them, "
        "over whole games with table talk (fast pace)",
        measured=received / awaited,
        baseline=None,
        target=TARGET,
        unit="emails",
        detail={
            "games": len(fast),
            "received": received,
            "awaited": awaited,
            "slow_pace": [round(r / a, 2) for r, a in slow],
            "note": "slow pace: each move after the confirmation window, an "
            "hour after each message without a move",
        },
    )


def _one_game(seed: int, pace: str) -> tuple[int, int]:
    """(emails received but the game-over ones, phases that awaited a person)."""
    from games import tasks
    from tests.site.conftest import clear_site_cache, make_user
    from tests.site.test_email_cadence import play_whole_game
    from tests.site.test_outbox import SMTPServer

    empty_tables()
    clear_site_cache()
    server = SMTPServer()
    server.start()
    with ExitStack() as stack:
        stack.enter_context(
            override_settings(
                EMAIL_BACKEND="django.core.mail.backends.smtp.EmailBackend",
                EMAIL_HOST="127.0.0.1",
                EMAIL_PORT=server.port,
                EMAIL_HOST_USER="",
                EMAIL_HOST_PASSWORD="",
                EMAIL_USE_TLS=False,
                EMAIL_USE_SSL=False,
                EMAIL_TIMEOUT=5,
                PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"],
            )
        )
        for task in (
            tasks.send_email,
            tasks.resolve_phase,
            tasks.notify_phase,
            tasks.play_computer,
            tasks.flush_held,
        ):
            stack.enter_context(_no_dispatch(task))
        stack.callback(server.stop)
        alice, bob, charlie = (make_user(name) for name in ("alice", "bob", "charlie"))
        cadence = play_whole_game(alice, bob, charlie, server, pace, seed=seed)
    return sum(cadence.received.values()), sum(cadence.awaited.values())


class _no_dispatch:
    """A task's apply_async does nothing: the game's loop does the worker's part."""

    def __init__(self, task: object) -> None:
        self.task = task

    def __enter__(self) -> None:
        self.saved = self.task.__dict__.get("apply_async")
        self.task.apply_async = lambda *args, **kwargs: None  # type: ignore[attr-defined]

    def __exit__(self, *exc: object) -> None:
        if self.saved is None:
            del self.task.apply_async  # type: ignore[attr-defined]
        else:
            self.task.apply_async = self.saved  # type: ignore[attr-defined]
