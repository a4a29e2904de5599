"""The recovery pass (games.recovery): what a lost task message leaves undone is found
again in the database and queued again, once, and a move is accepted when it is
committed whether or not the broker answers.

The dispatches are recorded here instead of reaching a broker (the fault tests in
test_faults.py do the same with real workers, Redis and an SMTP server); `now` is
given to each pass, so no test waits for the grace period.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from datetime import datetime, timedelta

import pytest
import redis
from django.conf import settings
from django.urls import reverse
from kombu.exceptions import OperationalError as BrokerDown

from engine.ai import RandomPlayer
from engine.game import is_simultaneous
from engine.notation import format_move
from games import recovery, services, tasks
from games.mail import notify
from games.models import Game, OutgoingEmail, Seat
from tests.site.conftest import purge_queue, require_redis, three_player_game
from tests.site.test_deadlines import at_once, slowly
from tests.site.test_resolve_queue import submit_all

SECOND = timedelta(seconds=1)


@pytest.fixture
def queued(monkeypatch) -> list[tuple]:
    """What the core asked to queue, in order: ("resolve", game, phase), ..."""
    calls: list[tuple] = []
    for kind in ("notify", "resolve", "computer"):
        monkeypatch.setattr(
            services, f"_dispatch_{kind}", lambda *args, kind=kind: calls.append((kind, *args))
        )
    return calls


def fresh(game: Game) -> Game:
    return Game.objects.get(pk=game.pk)


def later(game: Game, grace_and: timedelta = SECOND) -> datetime:
    """A moment past the recovery grace after the game's last change."""
    due = fresh(game).work_due_since
    assert due is not None, "the game owes nothing"
    return due + recovery.grace() + grace_and


def decide_all(game: Game) -> None:
    game = fresh(game)
    for seat in game.seats.all():
        move = RandomPlayer(f"{game.seed}/{seat.colour}").choose(game.engine_state, seat.colour)
        services.submit(game.pk, seat.pk, move)


def told(game: Game) -> Game:
    """The current phase's emails were queued (its notify task ran)."""
    notify.phase_changed(game.pk, fresh(game).phase_number)
    return fresh(game)


@pytest.fixture
def recover(queued, django_capture_on_commit_callbacks):
    """`recover(now)`: one pass, its commit and what it queued."""

    def one_pass(now: datetime) -> list[tuple]:
        queued.clear()
        with django_capture_on_commit_callbacks(execute=True):
            recovery.recover(now)
        return sorted(queued)

    return one_pass


# --- what is owed, and when it is looked at -----------------------------------------------


def test_a_ready_phase_whose_resolve_was_lost_is_resolved_again(game, queued, recover):
    game = told(game)
    decide_all(game)  # its resolve is never queued: no commit in this test, as if lost
    number = game.phase_number
    assert recover(later(game, -2 * SECOND)) == []  # within the grace: in flight
    assert recover(later(game)) == [("resolve", game.pk, number)]
    assert services.resolve(game.pk, number)
    assert fresh(game).phase_number == number + 1


def test_a_pass_looks_again_only_after_another_grace(game, queued, recover):
    game = told(game)
    decide_all(game)
    now = later(game)
    assert recover(now) == [("resolve", game.pk, game.phase_number)]
    assert recover(now + SECOND) == []  # just queued again: give it time
    assert recover(now + recovery.grace() + SECOND) != []  # lost again


def test_a_lost_computer_move_is_asked_for_again(alice, bob, recover):
    game = services.create_game(
        alice,
        name="With a computer",
        player_count=3,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=["lilac"],
    )
    services.join_game(game.pk, bob, "ochre")
    game = told(game)
    computer = Seat.objects.get(game=game, colour="lilac")
    assert recover(later(game)) == [("computer", game.pk, game.phase_number, computer.pk)]
    assert services.play_computer(game.pk, game.phase_number, computer.pk)
    assert not services.play_computer(game.pk, game.phase_number, computer.pk)  # once
    game = fresh(game)
    assert game.work_due_since is None  # only people are awaited now: nothing is owed


def test_a_lost_notification_is_queued_again_and_then_nothing_is_owed(game, recover):
    game = fresh(game)
    assert game.notified_phase < game.phase_number
    assert recover(later(game)) == [("notify", game.pk, game.phase_number)]
    notify.phase_changed(game.pk, game.phase_number)
    game = fresh(game)
    assert game.notified_phase == game.phase_number and game.work_due_since is None
    assert OutgoingEmail.objects.filter(game=game, kind="your_turn").count() == 3


def test_a_phase_told_after_its_moves_came_in_still_owes_their_resolve(game, recover):
    """notify reads who has submitted with the seats (services.with_submitted): the
    resolve that the moves made ready stays owed after the emails are queued."""
    decide_all(game)  # every move in before the phase's emails are queued
    game = told(game)
    assert game.work_due_since is not None
    assert recover(later(game)) == [("resolve", game.pk, game.phase_number)]


def test_a_phase_told_with_one_of_its_moves_in_owes_nothing_more(game):
    game = fresh(game)
    assert is_simultaneous(game.engine_state)  # the others' moves are still to come
    seat = game.seats.get(colour=game.engine_state.waiting[0])
    services.submit(game.pk, seat.pk, RandomPlayer("1").choose(game.engine_state, seat.colour))
    assert told(game).work_due_since is None


def test_a_lost_notification_is_folded_into_the_next_phases(game, alice):
    game = fresh(game)
    first = game.phase_number
    decide_all(game)
    services.resolve(game.pk, first)  # phase 1's notify task was lost; phase 2's runs
    notify.phase_changed(game.pk, first + 1)
    game = fresh(game)
    assert game.notified_phase == first + 1
    told_alice = OutgoingEmail.objects.filter(game=game, user=alice)
    # One email per phase change that needs alice (issue 10): the results held for her
    # are folded into her ask, or wait for her next email.
    now = ("your_turn", first + 1) if "red" in game.waiting else ("results", first + 1)
    assert sorted(told_alice.values_list("kind", "phase_number")) == [("results", first), now]
    notify.phase_changed(game.pk, first)  # the lost task comes back after all: nothing
    assert told_alice.count() == 2


def test_a_game_that_owes_nothing_is_forgotten(game, recover):
    game = told(game)
    Game.objects.filter(pk=game.pk).update(work_due_since=game.started_at)  # stale mark
    assert recover(later(game)) == []
    assert fresh(game).work_due_since is None


def test_the_pass_reads_only_the_games_that_owe_work(
    game, alice, bob, charlie, recover, django_assert_max_num_queries
):
    game = told(game)
    for number in range(30):  # games waiting for people: nothing owed, never read
        other = services.create_game(
            alice,
            name=f"Idle {number}",
            player_count=3,
            setup="basic",
            decisions="sealed",
            money="hidden",
            deadline_hours=48,
            invite_only=False,
            colour="red",
            computer_colours=[],
        )
        services.join_game(other.pk, bob, "ochre")
        services.join_game(other.pk, charlie, "lilac")
        told(other)
    decide_all(game)
    with django_assert_max_num_queries(8):
        assert recover(later(game)) == [("resolve", game.pk, game.phase_number)]


def test_the_migration_hands_every_running_game_to_the_first_pass(game, recover):
    """Upgrading with running games (games/migrations/0003): notified as they were, and
    owed a look: the first pass queues what is owed and forgets the rest."""
    Game.objects.filter(pk=game.pk).update(
        notified_phase=game.phase_number, work_due_since=game.started_at
    )
    assert recover(later(game)) == []
    assert fresh(game).work_due_since is None


# --- two passes at once -----------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_two_passes_at_once_queue_each_task_once(
    on_postgresql, alice, bob, charlie, queued, monkeypatch
):
    games = []
    for number in range(3):
        game = services.create_game(
            alice,
            name=f"Race {number}",
            player_count=3,
            setup="basic",
            decisions="sealed",
            money="hidden",
            deadline_hours=48,
            invite_only=False,
            colour="red",
            computer_colours=[],
        )
        services.join_game(game.pk, bob, "ochre")
        services.join_game(game.pk, charlie, "lilac")
        notify.phase_changed(game.pk, fresh(game).phase_number)
        decide_all(game)
        games.append(fresh(game))
    now = max(later(g) for g in games)
    monkeypatch.setattr(services, "owed", slowly(services.owed, 0.2))
    queued.clear()
    at_once(2, lambda: recovery.recover(now))
    assert sorted(queued) == sorted(("resolve", g.pk, g.phase_number) for g in games)


# --- a move is accepted when it is committed ----------------------------------------------


def test_a_move_is_accepted_when_the_broker_is_down(
    client, game, alice, monkeypatch, caplog, django_capture_on_commit_callbacks
):
    """What a broker's client raises when Redis is unreachable (test_faults.py stops a
    real Redis): the person sees their move accepted, and the failure is logged."""

    def down(*args, **kwargs):
        raise BrokerDown("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(tasks.resolve_phase, "apply_async", down)
    for seat in fresh(game).seats.exclude(user=alice):
        move = RandomPlayer(seat.colour).choose(fresh(game).engine_state, seat.colour)
        services.submit(game.pk, seat.pk, move)
    seat = Seat.objects.get(game=game, user=alice)
    move = format_move(RandomPlayer("red").choose(fresh(game).engine_state, "red"))
    client.force_login(alice)
    with (
        caplog.at_level(logging.ERROR, logger="games.tasks"),
        django_capture_on_commit_callbacks(execute=True),
    ):
        response = client.post(
            reverse("submit", args=[game.pk]),
            {"move": move, "phase": str(fresh(game).phase_number)},
            follow=True,
        )
    assert response.status_code == 200
    assert "Your submission:" in response.content.decode()
    assert seat.pending.filter(phase_number=game.phase_number).exists()
    assert any(
        "could not queue games.tasks.resolve_phase" in r.getMessage() for r in caplog.records
    )
    assert fresh(game).work_due_since is not None  # and the recovery pass will find it


# --- the tasks themselves -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "task",
    [
        tasks.resolve_phase,
        tasks.play_computer,
        tasks.notify_phase,
        tasks.send_email,
        tasks.sweep,
        tasks.send_digests,
    ],
)
def test_every_task_survives_its_worker_and_retries_what_can_pass(task):
    assert task.acks_late and task.reject_on_worker_lost
    assert task.max_retries and task.retry_backoff
    for error in (BrokerDown, OSError):
        assert issubclass(error, task.autoretry_for)


# --- a backlog: what still waits in its queue is not queued again (issue 21) -------------


def waiting(queue: str) -> Counter:
    """The messages in the queue's Redis list: how many of each (task, arguments)."""
    client = redis.Redis.from_url(settings.REDIS_URL)
    bodies = [json.loads(raw) for raw in client.lrange(queue, 0, -1)]
    return Counter((m["headers"]["task"], m["headers"]["argsrepr"]) for m in bodies)


def passes(games: list[Game], count: int) -> None:
    """`count` recovery passes, each a grace after the one before (the clock given)."""
    now = max(later(game) for game in games)
    for _ in range(count):
        recovery.recover(now)
        now += recovery.grace() + SECOND


def runs(log: str, task: str, what: str = "received") -> int:
    """How many of the task's messages a worker's log says it received (or ended so)."""
    return len(re.findall(rf"Task games\.tasks\.{task}\[[^\]]+\] {re.escape(what)}", log))


@pytest.mark.django_db(transaction=True)
def test_a_backlog_holds_one_copy_of_each_task_however_many_passes(
    alice, bob, charlie, celery_worker_process, monkeypatch
):
    """The worker takes nothing (busy elsewhere) while five passes, each a grace apart,
    find every game owed its phase's emails and its resolve: each task waits in the queue
    once. A resolve whose message never reached the queue (Redis refused it) is queued
    once. Then the worker does each game's work once."""
    worker = celery_worker_process
    worker.consume(False)
    purge_queue(worker.queue)
    start = len(worker.log())
    games = [three_player_game(alice, bob, charlie, name=f"Backlog {n}") for n in range(3)]
    for game in games[:2]:
        submit_all(game)  # its resolve: queued behind its emails
    with monkeypatch.context() as broker:
        broker.setattr(tasks.resolve_phase, "apply_async", refuse)
        submit_all(games[2])  # its resolve never reached the queue
    before = waiting(worker.queue)
    assert sum(before.values()) == 5, before  # three phases' emails, two resolves

    passes(games, 5)

    owed = [
        (f"games.tasks.{task}", f"({g.pk}, {g.phase_number})")
        for task in ("notify_phase", "resolve_phase")
        for g in games
    ]
    assert waiting(worker.queue) == Counter(owed)  # one of each, the lost one too

    worker.consume(True)
    try:
        worker.wait_until_idle(timeout=600)  # (a guard against a hang, not a bound)
    finally:
        worker.consume(False)
        worker.wait_until_idle(timeout=600)
    log = worker.log()[start:]
    assert runs(log, "resolve_phase") == runs(log, "resolve_phase", "succeeded") == 3, log
    assert runs(log, "notify_phase") == 6, log  # the first phases' and the second's
    marks = redis.Redis.from_url(settings.REDIS_URL).keys(f"{tasks.MARK_PREFIX}:{worker.queue}:*")
    assert marks == []  # each cleared when its task started
    for game in games:
        game_now = fresh(game)
        assert game_now.phase_number == game.phase_number + 1
        assert game_now.snapshots.count() == game_now.phase_number  # each phase once


@pytest.mark.django_db(transaction=True)
def test_what_a_flushed_or_purged_queue_lost_is_queued_again_once(
    on_postgresql, alice, bob, charlie, celery_queue
):
    """No worker takes the session's queue here. A flushed Redis loses the messages and
    their marks; a purged queue (`celery purge`) loses the messages only: either way the
    passes queue each owed task once more, and only once."""
    require_redis()
    client = redis.Redis.from_url(settings.REDIS_URL)
    purge_queue(celery_queue)
    games = [three_player_game(alice, bob, charlie, name=f"Lost {n}") for n in range(2)]
    owed = Counter(("games.tasks.notify_phase", f"({g.pk}, {g.phase_number})") for g in games)
    try:
        assert waiting(celery_queue) == owed
        client.delete(celery_queue, *client.keys(f"{tasks.MARK_PREFIX}:{celery_queue}:*"))
        passes(games, 3)  # flushed
        assert waiting(celery_queue) == owed
        purge_queue(celery_queue)
        passes(games, 3)  # purged
        assert waiting(celery_queue) == owed
    finally:
        purge_queue(celery_queue)


def refuse(*args, **kwargs):
    raise BrokerDown("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
