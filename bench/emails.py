"""`emails-per-ask`: every email a person receives per phase that awaited them, over whole
games (issue 10's measure, from tests/site/test_email_cadence.py, reused as it is; since
issue 24 with deadline notices and a watcher, and every email counted).

Three people and a computer play a 4-player game to its end: alice and bob by email (real
replies through `manage.py receive_email`, with table talk beside their moves and alone),
charlie on the web; every email goes through a real SMTP server (aiosmtpd on loopback).
The creator extends the deadline now and then, one player is away for a while, and the
web player has the game page open every other stretch of steps. The worker's part is
done in-process and in order, so that the count depends on the site's cadence alone.
Counted: every email received, the final scores and the deadline notices included.

No baseline: a count against a count (emails per phase that awaited the person), both
of the same games, so no machine or moment enters it; the target ("<= 1.1"): about one
email per phase a person is asked to play, the rest folded into those.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from typing import TYPE_CHECKING

from django.test import override_settings

from bench.core import Figure, Options, figures
from bench.db import empty_tables

if TYPE_CHECKING:
    from tests.site.test_email_cadence import Cadence

TARGET = "<= 1.1"


@figures("emails-per-ask")
def emails_figure(options: Options) -> Iterator[Figure]:
    seeds = [7] if options.quick else [7, 8, 9]
    fast = [_one_game(seed, "fast") for seed in seeds]
    slow = [] if options.quick else [_one_game(seeds[0], "slow")]
    everything = sum(sum(c.everything.values()) for c in fast)
    received = sum(sum(c.received.values()) for c in fast)
    awaited = sum(sum(c.awaited.values()) for c in fast)
    yield Figure(
        "emails-per-ask",
        "every email a person receives (final scores, deadline notices included) per "
        "phase that awaited them, over whole games with table talk, extensions, an "
        "absence and a watcher (fast pace)",
        measured=everything / awaited,
        baseline=None,
        target=TARGET,
        unit="emails",
        detail={
            "games": len(fast),
            "received_all": everything,
            "received_but_final_scores": received,
            "awaited": awaited,
            "per_person": _per_person(fast),
            "extensions": sum(c.extensions for c in fast),
            "extension_emails_alone": sum(sum(c.lone_notices.values()) for c in fast),
            "steps_watched": sum(c.watched_steps for c in fast),
            "slow_pace": [round(c.all_per_ask(), 2) for c in slow],
            "note": "charlie watches the game page every other 10 steps; alice extends "
            "every 11 steps; bob is away for 20 steps. Slow pace: each move after the "
            "confirmation window, an hour after each message without a move",
        },
    )


def _per_person(games: list[Cadence]) -> dict[str, float]:
    """Each person's emails (all) per phase that awaited them, over the games."""
    people = {person for cadence in games for person in cadence.awaited}
    return {
        person.partition("@")[0]: round(
            sum(c.everything[person] for c in games) / sum(c.awaited[person] for c in games), 2
        )
        for person in sorted(people)
    }


def _one_game(seed: int, pace: str) -> Cadence:
    """One whole game's cadence (tests/site/test_email_cadence.play_whole_game)."""
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
        return play_whole_game(alice, bob, charlie, server, pace, seed=seed)


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
