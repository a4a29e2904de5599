"""Phases are resolved by a real Celery worker, exactly once, on PostgreSQL and Redis.

The worker is a subprocess on the test database (the `celery_worker` fixture), so
these tests commit (`transaction=True`) and poll the database for its work.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import suppress
from typing import TypeVar

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction

from engine.ai import RandomPlayer
from engine.errors import IllegalMove
from engine.game import replay
from engine.notation import format_move, parse_move
from engine.serialize import move_from_json
from games import services
from games.models import Game, PendingSubmission, Seat
from games.tasks import resolve_phase

pytestmark = pytest.mark.django_db(transaction=True)

T = TypeVar("T")
TIMEOUT = 60  # seconds for one phase; the worker takes a fraction of one
SEED = 1  # a fixed game, so that a failure can be replayed


def wait_until(condition: Callable[[], T], what: str, timeout: float = TIMEOUT) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout}s waiting until {what}")


def fresh(game: Game) -> Game:
    return Game.objects.get(pk=game.pk)


def wait_for_phase(game: Game, number: int) -> Game:
    return wait_until(
        lambda: (g := fresh(game)).phase_number >= number and g,
        f"game {game.pk} reaches phase {number}",
    )


def decision_text(game: Game, seat: Seat) -> str:
    """A legal sealed decision for the seat (RULES 3.2), in notation."""
    player = RandomPlayer(f"{game.seed}/{game.phase_number}/{seat.colour}")
    return format_move(player.choose(game.engine_state, seat.colour))


def submit_decisions(game: Game, seats: list[Seat]) -> None:
    for seat in seats:
        services.submit(game.pk, seat.pk, parse_move(decision_text(game, seat)))


def recorded_colours(game: Game, phase_number: int) -> list[str]:
    return sorted(game.record.filter(phase_number=phase_number).values_list("colour", flat=True))


def assert_resolved_once(game: Game, phase_number: int) -> None:
    """The phase's submissions are in the record once, and the game moved on one phase:
    a snapshot per phase, none twice."""
    game = fresh(game)
    assert game.phase_number == phase_number + 1
    assert recorded_colours(game, phase_number) == sorted(s.colour for s in game.seats.all())
    assert game.snapshots.count() == game.phase_number
    assert not game.pending.filter(phase_number=phase_number).exists()


def test_the_worker_resolves_a_phase_when_all_sealed_decisions_are_in(celery_worker, game):
    number = game.phase_number
    assert game.phase_kind == "decision" and len(game.waiting) == 3
    submit_decisions(game, list(game.seats.all()))
    wait_for_phase(game, number + 1)
    assert game.record.count() == 3
    assert_resolved_once(game, number)


def test_a_phase_is_resolved_exactly_once_however_often_asked(celery_worker, game):
    number = game.phase_number
    submit_decisions(game, list(game.seats.all()))
    resolved = wait_for_phase(game, number + 1)
    events = resolved.events.count()
    again = [resolve_phase.delay(game.pk, number) for _ in range(2)]
    assert services.resolve(game.pk, number) is False
    assert [celery_worker.result_of(task.id) for task in again] == ["False", "False"]
    assert_resolved_once(game, number)
    assert game.record.count() == 3
    assert fresh(game).state == resolved.state
    assert resolved.events.count() == events


def test_two_racing_submissions_resolve_the_phase_once(celery_worker, game):
    number = game.phase_number
    first, *racing = game.seats.all()
    submit_decisions(game, [first])
    texts = {seat.pk: decision_text(game, seat) for seat in racing}
    start = threading.Barrier(len(racing))
    outcomes: dict[str, object] = {}

    def submit(seat: Seat) -> None:
        try:
            start.wait(timeout=10)
            outcomes[seat.colour] = services.submit(game.pk, seat.pk, parse_move(texts[seat.pk]))
        except Exception as exc:  # shown by the assertion below
            outcomes[seat.colour] = exc
        finally:
            connection.close()  # each thread has its own connection

    threads = [threading.Thread(target=submit, args=(seat,)) for seat in racing]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    # The row lock orders them: the first stores and waits, the second finds the phase
    # complete, so exactly one of them sends the phase to the worker.
    assert sorted(getattr(o, "ready", o) for o in outcomes.values()) == [False, True]
    wait_for_phase(game, number + 1)
    assert_resolved_once(game, number)


def awaits(game: Game, seat: Seat) -> bool:
    return (
        seat.colour in game.waiting
        and not PendingSubmission.objects.filter(seat=seat, phase_number=game.phase_number).exists()
    )


def play_until_the_end(game: Game, seat: Seat, worker) -> Game:
    """Submit the person's moves whenever the game waits for them; the worker plays
    the computers and resolves every phase. Fails when nothing moves for a while."""
    player = RandomPlayer(SEED)
    progress, last_change = None, time.monotonic()
    while time.monotonic() - last_change < TIMEOUT:
        game = fresh(game)
        if game.is_finished:
            return game
        if (game.phase_number, game.record.count()) != progress:
            progress, last_change = (game.phase_number, game.record.count()), time.monotonic()
        if not awaits(game, seat):
            time.sleep(0.02)
            continue
        with suppress(IllegalMove, services.GameError):  # the game moved on meanwhile
            services.submit_move(game.pk, seat.pk, player.choose(game.engine_state, seat.colour))
    log = "\n".join(worker.log().splitlines()[-20:])
    raise AssertionError(
        f"game {game.pk} stuck for {TIMEOUT}s at phase {game.phase_number} "
        f"({game.phase_kind}, waiting for {game.waiting}, pending "
        f"{list(game.pending.values_list('seat__colour', 'text'))}, last "
        f"recorded {list(game.record.values_list('colour', 'text'))[-3:]}); "
        f"the worker's log ends:\n{log}"
    )


def test_a_game_against_computers_is_played_to_the_end_by_the_worker(
    celery_worker, alice: User, monkeypatch
):
    with monkeypatch.context() as patch:
        patch.setattr("games.models.secrets.randbits", lambda bits: SEED)  # Game.seed
        game = services.create_game(
            alice,
            name="Against the computers",
            player_count=3,
            setup="variable",
            decisions="sealed",
            money="hidden",
            deadline_hours=48,
            invite_only=False,
            colour="red",
            computer_colours=["ochre", "lilac"],
        )
    assert game.seed == SEED
    finished = play_until_the_end(game, game.seats.get(user=alice), celery_worker)
    assert finished.winners
    assert set(finished.record.values_list("colour", flat=True)) == {"red", "ochre", "lilac"}
    record = [(e.colour, move_from_json(e.move)) for e in finished.record.all()]
    colours = tuple(finished.seats.values_list("colour", flat=True))  # in seat order
    replayed = replay(finished.settings_for(colours), record)
    assert replayed.winners == finished.winners
    assert replayed == finished.engine_state  # compared as values: JSON lists sets unordered


def backends_waiting_for_a_row_lock() -> list[str]:
    """The queries of other connections to this database that wait for a lock."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")  # else frozen for the transaction
        cursor.execute(
            "SELECT query FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'"
        )
        return [row[0] for row in cursor.fetchall()]


def test_a_resolution_waits_for_the_game_row_lock(on_postgresql, game):
    number = game.phase_number
    result: dict[str, object] = {}

    def resolve_elsewhere() -> None:
        try:
            result["resolved"] = services.resolve(game.pk, number)
        except Exception as exc:  # shown by the assertion below
            result["error"] = exc
        finally:
            connection.close()

    other = threading.Thread(target=resolve_elsewhere)
    with transaction.atomic():
        Game.objects.select_for_update().get(pk=game.pk)
        submit_decisions(game, list(game.seats.all()))
        other.start()
        waiting = wait_until(backends_waiting_for_a_row_lock, "the other resolve waits")
        # The game's row read under its lock (pg_stat_activity keeps a query's first
        # 1024 bytes: the lock query's select list, with the rows it counts, is longer).
        assert any(query.startswith('SELECT "games_game"') for query in waiting), waiting
        assert other.is_alive()
        assert services.resolve(game.pk, number) is True
    other.join(timeout=30)
    # Serialised by the lock, it then found the phase resolved and did nothing.
    assert result == {"resolved": False}
    assert_resolved_once(game, number)
