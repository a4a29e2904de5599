"""Issue 25 (item 3; issue 26, item 5 builds on it): the computers' moves run on a queue
and a worker of their own (lowenherz_site.celery: route_task, WORKERS), at a lower CPU
priority, within a time limit; so nothing a person waits for (a resolve, a "your move"
email) waits for a computer thinking."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

import lowenherz_site.celery as site_celery
from games import services, tasks
from games.mail import notify
from games.models import Game, OutgoingEmail, Seat
from tests.site.conftest import (
    ROOT,
    Worker,
    forget_queue,
    new_game,
    require_postgresql,
    require_redis,
    three_player_game,
    worker_env,
)
from tests.site.test_resolve_queue import deployed

THINK_SECONDS = 8.0  # each decision of the computers in the test's workers


def computers_game(creator) -> Game:
    """Three computers (the creator's seat handed to one for good), started."""
    game = new_game(creator, computer_colours=["ochre", "lilac"])
    Seat.objects.filter(game=game, user=creator).update(user=None, is_computer=True)
    return Game.objects.get(pk=game.pk)


# A worker as the deployment starts it (`celery -A lowenherz_site worker -Q ...`: the
# deployed routing), whose computers think THINK_SECONDS before each phase's moves.
LAUNCH_THINKING_WORKER = """
import sys, time
import django
from lowenherz_site.celery import app
django.setup()
from games import services
choose = services._computer_moves
def thinking(*args, **kwargs):
    time.sleep(float(sys.argv[1]))
    return choose(*args, **kwargs)
services._computer_moves = thinking
app.worker_main(["worker", *sys.argv[2:]])
"""


@pytest.fixture
def deployed_workers(transactional_db, tmp_path: Path) -> Iterator[list[tuple[Worker, set[str]]]]:
    """One worker for each of `WORKERS`, as dev.py, the Procfile and compose.yaml start
    them (one pool process each here), on the deployment's queues; the queues emptied
    and forgotten after."""
    require_postgresql()
    require_redis()
    env = worker_env(tmp_path / "var")
    started: list[tuple[Worker, set[str]]] = []
    queues = {q for _, names, _ in site_celery.WORKERS for q in names}
    try:
        for name, names, _ in site_celery.WORKERS:
            node = f"{name}-{uuid.uuid4().hex[:6]}@{socket.gethostname()}"
            log = tmp_path / f"{name}.log"
            with log.open("wb") as out:
                process = subprocess.Popen(
                    [
                        sys.executable,
                        "-c",
                        LAUNCH_THINKING_WORKER,
                        str(THINK_SECONDS),
                        "--pool=solo",
                        "--without-mingle",
                        "--without-gossip",
                        "-Q",
                        ",".join(names),
                        "-n",
                        node,
                        "--loglevel=info",
                    ],
                    cwd=ROOT,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                )
            started.append((Worker(process, node, names[0], log), set(names)))
        for worker, _ in started:
            worker.wait_until_ready()
        yield started
    finally:
        for name in queues:
            forget_queue(name)  # what is queued still: not taken by the next test's worker
        for worker, _ in started:
            worker.stop()  # warm: a computer's task ends first
        for name in queues:
            forget_queue(name)


def test_a_computer_thinking_holds_up_no_email(deployed_workers, alice, bob, charlie):
    """While a computer thinks (the only pool process of its worker busy), a "your move"
    email queued after it is sent; the computers' worker runs at a lower priority."""
    computers = computers_game(alice)
    people = three_player_game(alice, bob, charlie)
    with mock.patch("games.tasks.queue"):
        notify.phase_changed(people.pk, people.phase_number)
    ask = OutgoingEmail.objects.filter(game=people, kind="your_turn").first()
    assert ask is not None and ask.sent_at is None
    seat = Seat.objects.filter(game=computers).first()
    assert seat is not None
    with deployed():
        thinking = tasks.play_computer.apply_async(
            (computers.pk, computers.phase_number, seat.pk)
        ).id
        received = f"games.tasks.play_computer[{thinking}] received"
        until_received = time.monotonic() + 30
        while not any(received in w.log() for w, _ in deployed_workers):
            assert time.monotonic() < until_received, [w.log() for w, _ in deployed_workers]
            time.sleep(0.05)
        tasks.send_email.apply_async((ask.pk,))
    until_sent = time.monotonic() + 3 * THINK_SECONDS
    while OutgoingEmail.objects.get(pk=ask.pk).sent_at is None:
        assert time.monotonic() < until_sent, [w.log() for w, _ in deployed_workers]
        time.sleep(0.05)
    logs = "\n".join(w.log() for w, _ in deployed_workers)
    assert not re.search(rf"play_computer\[{thinking}\] (succeeded|raised)", logs), logs
    assert Game.objects.get(pk=computers.pk).phase_number == computers.phase_number

    own = os.getpriority(os.PRIO_PROCESS, 0)
    for worker, names in deployed_workers:
        niceness = os.getpriority(os.PRIO_PROCESS, worker.process.pid)
        lowered = names == {site_celery.COMPUTER_QUEUE}
        assert niceness == (min(19, own + site_celery.COMPUTER_NICENESS) if lowered else own)


def test_a_computers_task_past_its_time_is_rolled_back_and_not_counted_as_broken(alice):
    """COMPUTER_TIME_LIMIT_SECONDS: the soft limit raised in the middle of a stretch ends
    the task; nothing of the stretch is kept, and the game's moves are not taken for
    broken (only the engine's own failure counts towards RESOLVE_MAX_ATTEMPTS)."""
    assert tasks.play_computer.soft_time_limit == settings.COMPUTER_TIME_LIMIT_SECONDS
    game = computers_game(alice)
    number, state = game.phase_number, game.state
    seat = Seat.objects.filter(game=game).first()
    assert seat is not None
    with mock.patch.object(services, "_apply_pending", side_effect=SoftTimeLimitExceeded()):
        assert tasks.play_computer.run(game.pk, number, seat.pk) == 0
    game = Game.objects.get(pk=game.pk)
    assert (game.phase_number, game.state, game.resolve_failures) == (number, state, 0)
    assert not game.pending.exists() and not game.needs_repair
    assert game.work_due_since is not None  # still owed: the recovery pass queues it again


@pytest.mark.parametrize("seconds", ["0", "120", "500"])
def test_a_computers_time_limit_not_below_every_task_s_is_refused(seconds):
    from tests.site.test_production_settings import run_settings

    done = run_settings(
        {"DEBUG": "true", "COMPUTER_TIME_LIMIT_SECONDS": seconds, "TASK_TIME_LIMIT_SECONDS": "120"},
        "import django; django.setup()",
    )
    assert done.returncode != 0
    assert "COMPUTER_TIME_LIMIT_SECONDS must be above 0 and below" in done.stderr, done.stderr
