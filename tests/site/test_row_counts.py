"""The game's row counts its record and event rows (issue 11): a resolution takes the
indexes of its new rows from the game's row, which it locks anyway, instead of counting
every row the game has stored (a cost that grew with the game's length)."""

from __future__ import annotations

import importlib

from django.apps import apps
from django.db import connection
from django.test.utils import CaptureQueriesContext

from engine import game as engine
from games import services
from games.models import Event, Game, RecordEntry
from games.tasks import sweep_once as sweep
from tests.site.test_deadlines import MINUTE, fresh, play_one_phase, play_until, seeded_game


def counted(game: Game) -> tuple[int, int]:
    game = fresh(game)
    return game.records_stored, game.events_stored


def stored(game: Game) -> tuple[int, int]:
    return RecordEntry.objects.filter(game=game).count(), Event.objects.filter(game=game).count()


def test_the_counts_follow_the_rows_through_phases_a_missed_deadline_and_a_concession(
    alice, bob, charlie
):
    game = seeded_game(alice, bob, charlie)
    assert counted(game) == stored(game) and stored(game)[1] > 0  # the start's events
    game = play_until(game, lambda g: g.phase_number >= 6, "phase 6")
    assert counted(game) == stored(game)
    sweep(now=game.deadline + MINUTE)  # its "deadline_missed", a site event
    assert Event.objects.filter(game=game, kind="deadline_missed").exists()
    assert counted(game) == stored(game)
    services.concede(game.pk, bob)  # "conceded", another
    assert counted(game) == stored(game)
    for step in range(4):  # the next rows take the next indexes (both are unique per game)
        play_one_phase(fresh(game), 100 + step)
    assert counted(game) == stored(game)
    assert list(Event.objects.filter(game=game).values_list("index", flat=True)) == list(
        range(stored(game)[1])
    )


def test_a_resolution_counts_no_rows_of_its_game(game):
    game = play_until(game, lambda g: g.phase_number >= 3, "phase 3")
    state = game.engine_state
    movers = state.waiting if engine.is_simultaneous(state) else state.waiting[:1]
    for colour in movers:  # (stored outside the queries captured)
        services.submit_move(
            game.pk, game.seats.get(colour=colour).pk, engine.default_move(state, colour)
        )
    with CaptureQueriesContext(connection) as queries:
        assert services.resolve(game.pk, game.phase_number)
    assert not [q["sql"] for q in queries.captured_queries if "COUNT(" in q["sql"].upper()]
    assert counted(game) == stored(game)


def test_the_migration_counts_the_rows_of_the_games_there_are(alice, bob, charlie):
    game = play_until(seeded_game(alice, bob, charlie), lambda g: g.phase_number >= 4, "phase 4")
    Game.objects.update(records_stored=0, events_stored=0)  # as the new columns begin
    migration = importlib.import_module("games.migrations.0008_game_row_counts")
    migration.count_rows(apps, None)
    assert counted(game) == stored(game) != (0, 0)
