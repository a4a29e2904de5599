"""Computers play a phase in one task (issue 11): every awaited computer moves, the phase
is resolved in the same transaction when their moves complete it, and a stretch of phases
that awaits computers only goes on in that task, up to a bound."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from engine.game import replay
from engine.serialize import move_from_json
from games import services
from games.models import Game, PendingSubmission, Snapshot

OPTIONS = {
    "name": "G",
    "player_count": 3,
    "setup": "basic",
    "decisions": "sealed",
    "money": "hidden",
    "deadline_hours": 48,
    "invite_only": False,
    "colour": "red",
}


@pytest.fixture
def announced(monkeypatch) -> dict[str, list[tuple[int, ...]]]:
    """What the services announce for the tasks (nothing is queued)."""
    found: dict[str, list[tuple[int, ...]]] = {"notify": [], "computer": [], "resolve": []}
    for name, key in (
        ("_dispatch_notify", "notify"),
        ("_dispatch_computer", "computer"),
        ("_dispatch_resolve", "resolve"),
    ):
        monkeypatch.setattr(services, name, lambda *args, key=key: found[key].append(args))
    return found


def computers_only(creator, django_capture_on_commit_callbacks) -> Game:
    """Three computers; the creator's seat handed to one for good (nobody plays in person)."""
    with django_capture_on_commit_callbacks(execute=True):
        game = services.create_game(creator, **OPTIONS, computer_colours=["ochre", "lilac"])
    game.seats.filter(user=creator).update(user=None, is_computer=True)
    return Game.objects.get(pk=game.pk)


def test_a_game_of_computers_plays_a_stretch_of_phases_in_one_call(
    alice, announced, django_capture_on_commit_callbacks
):
    game = computers_only(alice, django_capture_on_commit_callbacks)
    announced["computer"].clear()
    announced["notify"].clear()  # the game's start, while alice still had her seat
    start = game.phase_number
    with django_capture_on_commit_callbacks(execute=True):
        resolved = services.play_computers(game.pk, start, phases=7)
    game = Game.objects.get(pk=game.pk)
    assert resolved == 7 and game.phase_number == start + 7
    assert Snapshot.objects.filter(game=game).count() == 8  # each phase kept for the archive
    assert not PendingSubmission.objects.filter(game=game).exists()
    # Nobody to tell: marked told, no notify task; the rest of the stretch: one next task.
    assert game.notified_phase == game.phase_number and not announced["notify"]
    assert [a[:2] for a in announced["computer"]] == [(game.pk, game.phase_number)]
    assert game.work_due_since is not None  # the computers' next task is owed (recovery)


def test_the_stretch_keeps_the_record_the_engine_replays(
    alice, announced, django_capture_on_commit_callbacks
):
    """Every move of the stretch is in the record, in order: replayed by the engine from
    the game's settings, it gives the state stored (as for moves resolved one by one)."""
    game = computers_only(alice, django_capture_on_commit_callbacks)
    services.play_computers(game.pk, game.phase_number, phases=20)
    game = Game.objects.get(pk=game.pk)
    colours = tuple(game.seats.order_by("position").values_list("colour", flat=True))
    record = [(r.colour, move_from_json(r.move)) for r in game.record.order_by("index")]
    assert len({r.phase_number for r in game.record.all()}) == 20
    assert replay(game.settings_for(colours), record) == game.engine_state


def test_computers_of_a_sealed_phase_wait_for_the_person(
    alice, announced, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        game = services.create_game(alice, **OPTIONS, computer_colours=["ochre", "lilac"])
    game = Game.objects.get(pk=game.pk)
    assert set(game.waiting) == {"red", "ochre", "lilac"}  # the first phase is sealed
    assert services.play_computers(game.pk, game.phase_number) == 0
    stored = set(PendingSubmission.objects.filter(game=game).values_list("seat__colour", flat=True))
    assert (
        stored == {"ochre", "lilac"}
        and Game.objects.get(pk=game.pk).phase_number == game.phase_number
    )
    # Again (a redelivered task): nothing more.
    assert services.play_computers(game.pk, game.phase_number) == 0
    assert PendingSubmission.objects.filter(game=game).count() == 2


def test_a_redelivered_task_for_a_resolved_phase_does_nothing(
    alice, announced, django_capture_on_commit_callbacks
):
    game = computers_only(alice, django_capture_on_commit_callbacks)
    number = game.phase_number
    assert services.play_computers(game.pk, number, phases=2) == 2
    state = Game.objects.get(pk=game.pk).state
    assert services.play_computers(game.pk, number) == 0
    assert Game.objects.get(pk=game.pk).state == state


def test_a_person_told_by_email_is_told_once_per_stretch(
    alice, announced, django_capture_on_commit_callbacks
):
    """A computer stands in for alice: she is still told the game, once for the stretch
    (notify folds the phases it did not tell into the last one)."""
    with django_capture_on_commit_callbacks(execute=True):
        game = services.create_game(alice, **OPTIONS, computer_colours=["ochre", "lilac"])
    game.seats.filter(user=alice).update(standin=True)
    announced["notify"].clear()
    with django_capture_on_commit_callbacks(execute=True):
        assert services.play_computers(game.pk, game.phase_number, phases=5) == 5
    game = Game.objects.get(pk=game.pk)
    assert announced["notify"] == [(game.pk, game.phase_number)]
    assert game.notified_phase < game.phase_number


def test_a_stretch_writes_its_rows_together(alice, announced, django_capture_on_commit_callbacks):
    """The queries of a stretch do not grow with its phases: the game's row is saved once
    and its record, events and snapshots inserted once each (issue 11: throughput)."""
    game = computers_only(alice, django_capture_on_commit_callbacks)
    # (the first stretch also deletes the reminders armed while alice had her seat)
    assert services.play_computers(game.pk, game.phase_number, phases=1) == 1
    game = Game.objects.get(pk=game.pk)
    with CaptureQueriesContext(connection) as short:
        assert services.play_computers(game.pk, game.phase_number, phases=2) == 2
    game = Game.objects.get(pk=game.pk)
    with CaptureQueriesContext(connection) as long:
        assert services.play_computers(game.pk, game.phase_number, phases=12) == 12
    assert len(long.captured_queries) == len(short.captured_queries) <= 14
    assert Snapshot.objects.filter(game=game).count() == 16


def test_a_computer_that_ends_an_alliance_in_a_stretch_then_makes_its_move(
    alice, announced, monkeypatch, django_capture_on_commit_callbacks
):
    """RULES 7.1: ending an alliance is applied at once and the phase still waits for the
    computer, which then makes its move in the same task."""
    from engine.ai import RandomPlayer
    from engine.moves import EndAlliance
    from engine.notation import parse_cell
    from engine.serialize import state_to_json

    game = computers_only(alice, django_capture_on_commit_callbacks)
    state = game.engine_state
    red, ochre = parse_cell("B1"), parse_cell("N1")  # the basic layout's corner castles
    state.pos.alliances.add((red, ochre))
    Game.objects.filter(pk=game.pk).update(state=state_to_json(state))
    choose, ended = RandomPlayer.choose, []

    def end_first(self, state, colour):
        if colour == "ochre" and not ended and state.pos.alliances:
            ended.append(colour)
            return EndAlliance(ochre, red)
        return choose(self, state, colour)

    monkeypatch.setattr(RandomPlayer, "choose", end_first)
    number = game.phase_number
    assert services.play_computers(game.pk, number, phases=1) == 1
    game = Game.objects.get(pk=game.pk)
    assert ended == ["ochre"] and not game.engine_state.pos.alliances
    assert game.phase_number == number + 1
    moves = list(game.record.filter(phase_number=number).values_list("colour", "text"))
    assert moves[0] == ("ochre", "break alliance N1 B1")
    assert sorted(c for c, _ in moves[1:]) == ["lilac", "ochre", "red"]  # then all decided


def test_a_stretch_of_slow_computers_ends_after_its_time(
    alice, announced, django_capture_on_commit_callbacks, monkeypatch
):
    """COMPUTER_STRETCH_SECONDS: past it, the stretch ends with the phase it resolved and
    the next task is queued (to the back of the queue: other games' moves come between)."""
    game = computers_only(alice, django_capture_on_commit_callbacks)
    announced["computer"].clear()
    monkeypatch.setattr(services, "COMPUTER_STRETCH_SECONDS", 0)
    with django_capture_on_commit_callbacks(execute=True):
        assert services.play_computers(game.pk, game.phase_number, phases=7) == 1
    game = Game.objects.get(pk=game.pk)
    assert [a[:2] for a in announced["computer"]] == [(game.pk, game.phase_number)]


def test_a_recovered_game_queues_one_task_for_all_its_computers(
    alice, announced, django_capture_on_commit_callbacks
):
    """What a game is owed (the recovery's `announce`) asks one task for every computer
    the phase awaits, as a new phase does: that task plays them all."""
    game = computers_only(alice, django_capture_on_commit_callbacks)
    announced["computer"].clear()
    work = services.owed(game)
    assert len(work.computers) == 3
    with django_capture_on_commit_callbacks(execute=True):
        services.announce(work)
    assert announced["computer"] == [(game.pk, game.phase_number, work.computers[0])]
