"""What a deadline falling due costs in SQL statements (issue 25): at most
`deadlines.DEADLINE_QUERIES`, the same for a 2-seat game at its first turn and a 4-seat
game six turns on (every seat missing, and three stand-ins coming in).

Counted, never timed, on PostgreSQL, outside a test transaction (as the beat's sweep
runs: Django counts its BEGIN and COMMIT, and the test adds no SAVEPOINT): the
statements of the sweep's deadline step (`deadlines.pass_deadlines`) with the game due,
less those of the same step with nothing due (its one indexed lookup of the due games,
which every sweep makes, due or not). That is the deadline's whole work (RULES 9): its
transaction, the game's row lock, its seats, the defaults stored, the log, the seats'
counts of missed deadlines, the game's row, up to the resolve queued after the commit
(queueing is the broker's, not SQL: recorded here, not sent). The resolve is the phase's
own, as for a phase everyone played (`services.resolve`). The same count in the
benchmark: `python -m bench --only deadline-queries`.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from unittest import mock

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from engine import game as engine
from games import deadlines, services
from games.models import Event, Game, PendingSubmission, Seat
from tests.site.conftest import make_user, new_game

pytestmark = [pytest.mark.django_db(transaction=True)]

MINUTE = timedelta(minutes=1)


@pytest.fixture
def queued() -> Iterator[list[tuple[str, tuple[int, ...]]]]:
    """The tasks queued after the commit (task name, arguments); nothing is sent."""
    calls: list[tuple[str, tuple[int, ...]]] = []
    with mock.patch("games.tasks.queue", lambda task, *args, **_: calls.append((task.name, args))):
        yield calls


def play_to(game: Game, turn: int) -> Game:
    """Every awaited seat plays the engine's default (stored and resolved by the
    services), until the game is at `turn` or later in a sealed phase that awaits every
    seat: the phase whose deadline falls due."""
    seats = dict(Seat.objects.filter(game=game).values_list("colour", "pk"))
    for _ in range(400):
        game = Game.objects.get(pk=game.pk)
        state = game.engine_state
        assert not state.is_over, f"the game ended before turn {turn}"
        simultaneous = engine.is_simultaneous(state)
        if game.turn >= turn and simultaneous and len(state.waiting) == len(seats):
            return game
        for colour in state.waiting if simultaneous else state.waiting[:1]:
            services.submit_move(game.pk, seats[colour], engine.default_move(state, colour))
        services.resolve(game.pk, game.phase_number)
    raise AssertionError(f"no phase awaiting every seat at turn {turn}")


def small_game(alice: User, bob: User) -> Game:
    """Two people, at the first phase that awaits both."""
    game = new_game(alice, player_count=2, setup="variable")
    services.join_game(game.pk, bob, "ochre")
    return play_to(game, 1)


def big_game(alice: User, bob: User, charlie: User) -> Game:
    """Four seats (three people, a computer), variable setup, many turns on; every person
    misses their first deadline in a row but the game's limit is 1: three stand-ins."""
    game = new_game(
        alice, player_count=4, setup="variable", computer_colours=["grey"], max_missed_deadlines=1
    )
    services.join_game(game.pk, bob, "ochre")
    services.join_game(game.pk, charlie, "lilac")
    return play_to(game, 6)


def deadline_queries(game: Game) -> tuple[list[str], int, bool]:
    """The SQL of the sweep's deadline step with this game's deadline just passed (and
    the other games' hours ahead), the count of the same step with nothing due, and
    whether the game's live mark moved on (the rows written in bulk send no signal)."""
    now = timezone.now()
    with CaptureQueriesContext(connection) as idle:
        deadlines.pass_deadlines(now)
    Game.objects.filter(pk=game.pk).update(deadline=now - MINUTE)
    mark = Game.objects.values_list("live_mark", flat=True).get(pk=game.pk)
    with CaptureQueriesContext(connection) as captured:
        deadlines.pass_deadlines(now)
    told = Game.objects.values_list("live_mark", flat=True).get(pk=game.pk) != mark
    # The resolve is queued, not run here: the deadline is moved on as if it had run.
    Game.objects.filter(pk=game.pk).update(deadline=now + timedelta(hours=48))
    return [q["sql"] for q in captured.captured_queries], len(idle), told


def test_a_deadline_costs_a_few_queries_whatever_the_size_of_the_game(on_postgresql, queued):
    alice, bob, charlie = make_user("alice"), make_user("bob"), make_user("charlie")
    small, big = small_game(alice, bob), big_game(alice, bob, charlie)
    assert big.turn > small.turn and big.events.count() > 4 * small.events.count()
    counts = {}
    for game in (small, big):
        queued.clear()
        sql, idle, told = deadline_queries(game)
        assert idle == 1  # the due games' lookup, which every sweep makes
        counts[game.player_count] = len(sql) - idle
        # The deadline's work was done: every seat's default stored, the log, the
        # resolve queued, open pages told.
        assert told
        number = game.phase_number
        stored = PendingSubmission.objects.filter(game=game, phase_number=number)
        assert stored.count() == game.seats.count()
        assert Event.objects.filter(game=game, kind="deadline_missed").count() == 1
        assert queued == [("games.tasks.resolve_phase", (game.pk, number))], sql
    assert Seat.objects.filter(game=big, standin=True).count() == 3
    assert counts[2] == counts[4] <= deadlines.DEADLINE_QUERIES, counts
