"""Issue 11: a phase is resolved on a queue of its own, which the workers take in turn with
the others, so that a resolve never waits behind the backlog of emails or computers'
moves; and
telling a phase change costs the same number of queries however long the game has run."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext

import lowenherz_site.celery as site_celery
from engine.ai import RandomPlayer
from engine.game import is_simultaneous
from games import services, tasks
from games.mail import notify
from games.models import Game, Seat
from lowenherz_site.celery import app as celery_app
from tests.site.conftest import (
    ROOT,
    forget_queue,
    launch_worker,
    require_postgresql,
    require_redis,
    three_player_game,
    worker_env,
)


@contextmanager
def deployed() -> Iterator[None]:
    """The queues as a deployment has them (the session sends to a queue of its own)."""
    before = celery_app.conf.task_default_queue
    celery_app.conf.task_default_queue = site_celery.DEFAULT_QUEUE
    try:
        yield
    finally:
        celery_app.conf.task_default_queue = before


@pytest.fixture
def deployed_queues() -> Iterator[None]:
    with deployed():
        yield


def test_resolve_phase_is_routed_to_the_resolve_queue(deployed_queues):
    assert tasks.queue_of(tasks.resolve_phase) == "resolve"
    assert tasks.queue_of(tasks.play_computer) == "computers"  # issue 25: a worker of its own
    for task in (tasks.notify_phase, tasks.send_email, tasks.flush_held):
        assert tasks.queue_of(task) == "celery", task.name
    assert tasks.queue_of(tasks.sweep) == tasks.queue_of(tasks.send_digests) == "sweep"


def test_a_session_with_a_queue_of_its_own_keeps_every_task_there(celery_queue):
    assert tasks.queue_of(tasks.resolve_phase) == celery_queue
    assert tasks.queue_of(tasks.play_computer) == celery_queue


def test_every_queue_is_taken_by_a_worker_of_every_deployment():
    """dev.py, the Procfile and compose.yaml start the workers of `WORKERS`."""
    declared = {q.name for q in settings.CELERY_TASK_QUEUES}
    taken = [set(queues) for _, queues, _ in site_celery.WORKERS]
    assert set().union(*taken) == declared >= {"resolve", "celery", "sweep", "computers"}
    # No worker takes the computers' queue with another: nothing people wait for waits
    # for a computer's task to end (tests/site/test_computer_queue.py).
    assert all(queues == {"computers"} for queues in taken if "computers" in queues)
    for path in ("Procfile", "compose.yaml", "dev.py"):
        text = (ROOT / path).read_text()
        options = set(re.findall(r'-Q"?,?\s*"?([a-z,]+)', text))
        assert options == {",".join(q) for _, q, _ in site_celery.WORKERS}, path


def test_a_lost_resolve_is_declared_on_its_own_queue(deployed_queues):
    """A flushed Redis forgot the binding: `queue` declares the task's own queue again."""
    declared = []
    with (
        mock.patch.object(
            tasks, "Queue", side_effect=lambda name, **_: declared.append(name) or mock.MagicMock()
        ),
        mock.patch.object(celery_app, "connection_for_write", mock.MagicMock()),
    ):
        tasks._declare_queue(tasks.resolve_phase)
    assert declared == ["resolve"]


def submit_all(game: Game) -> int:
    """Every awaited seat's move for the phase, through the services; the phase number."""
    game = Game.objects.get(pk=game.pk)
    state = game.engine_state
    seats = dict(Seat.objects.filter(game=game).values_list("colour", "pk"))
    movers = state.waiting if is_simultaneous(state) else state.waiting[:1]
    for colour in movers:
        move = RandomPlayer(f"{game.pk}/{colour}").choose(state, colour)
        services.submit(game.pk, seats[colour], move, game.phase_number)
    return game.phase_number


def test_a_worker_taking_only_the_resolve_queue_resolves_the_phase(
    transactional_db, alice, bob, charlie, monkeypatch, tmp_path: Path
):
    require_postgresql()
    require_redis()
    game = three_player_game(alice, bob, charlie)  # its tasks: the session's queue
    queue = f"lowenherz-test-resolve-{uuid.uuid4().hex[:8]}"
    monkeypatch.setattr(site_celery, "RESOLVE_QUEUE", queue)
    worker = launch_worker(queue, worker_env(tmp_path / "var"), tmp_path / "worker.log")
    try:
        with deployed():
            number = submit_all(game)  # the last one queues the resolve
        deadline = time.monotonic() + 30
        while Game.objects.get(pk=game.pk).phase_number == number:
            assert time.monotonic() < deadline, worker.log()
            time.sleep(0.05)
        received = re.search(r"Task games\.tasks\.resolve_phase\[(\S+)\] received", worker.log())
        assert received, worker.log()
        assert worker.result_of(received.group(1)) == "True"
        worker.wait_until_idle()  # the phase's emails, which it sends itself here
    finally:
        worker.stop()
        forget_queue(queue)


# --- telling a phase change -----------------------------------------------------------------


def play_and_tell(game: Game) -> list[tuple[int, str, int]]:
    """The game played through its first turns, every phase told: (turn, phase kind,
    queries of `notify.phase_changed`) for each phase."""
    found = []
    seats = dict(Seat.objects.filter(game=game).values_list("colour", "pk"))
    with mock.patch("games.tasks.queue"):
        notify.phase_changed(game.pk, game.phase_number)
        while (game := Game.objects.get(pk=game.pk)).turn <= 4:
            state, number = game.engine_state, game.phase_number
            movers = state.waiting if is_simultaneous(state) else state.waiting[:1]
            for colour in movers:
                move = RandomPlayer(f"{number}/{colour}").choose(state, colour)
                services.submit(game.pk, seats[colour], move, number)
            services.resolve(game.pk, number)
            game = Game.objects.get(pk=game.pk)
            with CaptureQueriesContext(connection) as queries:
                notify.phase_changed(game.pk, game.phase_number)
            found.append((game.turn, game.phase_kind, len(queries)))
    return found


def test_telling_a_phase_costs_the_same_queries_however_long_the_game_ran(game):
    told = play_and_tell(game)
    decisions = [count for turn, kind, count in told if kind == "decision" and turn >= 2]
    assert len(decisions) >= 2, told
    # Each asks all three: the same work, within what the data decides (a reply token made
    # or reused, held results to fold in or not): never more with every turn.
    assert max(decisions) - min(decisions) <= 2, told
    assert max(count for _, _, count in told) <= 60, told


def test_each_person_s_view_is_computed_once_per_phase_change(game):
    with (
        mock.patch("games.tasks.queue"),
        mock.patch("games.mail.notify.present", wraps=notify.present) as present,
    ):
        notify.phase_changed(game.pk, game.phase_number)
    assert present.call_count == 3  # three people, each asked once
    assert {c.args[1].colour for c in present.call_args_list} == {"red", "ochre", "lilac"}
