"""Issue 26, item 5: a game's computers play at the level chosen when it is made (easy:
the engine's random player, normal: greedy, hard: search; `COMPUTER_KINDS`), its own
seats and every seat a computer plays for a person (RULES 9: after missed deadlines, or
conceded); a computer's name says its level, in the reader's language."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from django.test import override_settings
from django.utils import translation

from engine import ai
from games import services
from games.forms import CreateGameForm
from games.models import Game, PendingSubmission, Seat
from tests.site.conftest import new_game, three_player_game

# The search thinks this long a decision here: its move, not its strength, is tested.
TINY_BUDGET = 0.01

FORM = {
    "name": "Levels",
    "player_count": "3",
    "setup": "basic",
    "decisions": "sealed",
    "money": "hidden",
    "deadline_hours": "48",
    "on_absence": "extend",
    "max_missed_deadlines": "3",
    "colour": "red",
    "computer_colours": ["ochre", "lilac"],
}


class SpySearch(ai.SearchPlayer):
    """The engine's search player, noting each decision it is asked for."""

    asked: ClassVar[list[tuple[str, float | None]]] = []

    def choose(self, state: Any, player: str) -> Any:
        SpySearch.asked.append((player, self.search.budget))
        return super().choose(state, player)


@pytest.fixture
def spy(monkeypatch) -> list[tuple[str, float | None]]:
    """The "search" kind of `engine.ai.PLAYERS` spied on; the tasks queued nowhere."""
    monkeypatch.setitem(ai.PLAYERS, "search", SpySearch)
    monkeypatch.setattr(SpySearch, "asked", [])
    for name in ("_dispatch_notify", "_dispatch_computer", "_dispatch_resolve"):
        monkeypatch.setattr(services, name, lambda *args: None)
    return SpySearch.asked


def test_the_form_stores_the_level_it_was_given(alice):
    form = CreateGameForm({**FORM, "computer_level": "hard"})
    assert form.is_valid(), form.errors
    game = services.create_game(alice, **form.cleaned_data)
    assert Game.objects.get(pk=game.pk).computer_level == "hard"


def test_a_form_without_the_level_makes_a_normal_game(alice):
    form = CreateGameForm(FORM)  # a form from before the field
    assert form.is_valid(), form.errors
    assert services.create_game(alice, **form.cleaned_data).computer_level == "normal"


def test_a_level_that_is_none_is_refused_with_the_levels_named(alice):
    form = CreateGameForm({**FORM, "computer_level": "brutal"})
    assert not form.is_valid()
    assert form.errors["computer_level"] == ["brutal is not a level; choose easy, normal or hard."]
    with pytest.raises(services.GameError, match="easy, normal or hard"):
        new_game(alice, computer_colours=["ochre"], computer_level="brutal")
    assert not Game.objects.exists()


@pytest.mark.parametrize(
    ("level", "kind"),
    [("easy", ai.RandomPlayer), ("normal", ai.GreedyPlayer), ("hard", ai.SearchPlayer)],
)
def test_each_level_is_the_engine_s_player_of_its_kind(alice, level, kind):
    game = new_game(alice, computer_colours=["ochre"], computer_level=level)
    assert type(services.computer_player(game, game.phase_number, "ochre")) is kind


@override_settings(COMPUTER_SEARCH_SECONDS=TINY_BUDGET)
def test_a_hard_game_s_computers_move_by_search_within_the_site_s_budget(alice, spy):
    game = new_game(alice, computer_colours=["ochre", "lilac"], computer_level="hard")
    assert game.status == Game.Status.RUNNING
    services.play_computers(game.pk, game.phase_number)
    assert sorted(spy) == [("lilac", TINY_BUDGET), ("ochre", TINY_BUDGET)]
    moved = PendingSubmission.objects.filter(game=game, phase_number=game.phase_number)
    assert sorted(moved.values_list("seat__colour", flat=True)) == ["lilac", "ochre"]


@override_settings(COMPUTER_SEARCH_SECONDS=TINY_BUDGET)
def test_a_stand_in_plays_at_the_game_s_level(alice, bob, charlie, spy):
    """RULES 9 (by email): bob concedes, a computer stands in for charlie after missed
    deadlines (games.deadlines sets `standin`); both seats are played by search."""
    game = three_player_game(alice, bob, charlie, computer_level="hard")
    services.concede(game.pk, bob)
    Seat.objects.filter(game=game, colour="lilac").update(standin=True)
    services.play_computers(game.pk, game.phase_number)
    assert sorted(colour for colour, _ in spy) == ["lilac", "ochre"]


def test_a_computer_s_name_says_its_level_in_the_reader_s_language(alice):
    game = new_game(alice, computer_colours=["ochre"], computer_level="hard")
    seat = Seat.objects.get(game=game, colour="ochre")
    assert seat.display_name == "Computer (ochre, hard)"
    with translation.override("de"):
        assert seat.display_name == "Computer (Ocker, schwer)"
    with translation.override("it"):
        assert "difficile" in seat.display_name


@pytest.mark.parametrize(
    ("seconds", "says"),
    [
        ("0", "COMPUTER_SEARCH_SECONDS must be above 0 and at most a tenth of"),
        ("3.5", "COMPUTER_SEARCH_SECONDS must be above 0 and at most a tenth of"),
        ("quick", "COMPUTER_SEARCH_SECONDS must be a number, not 'quick'"),
    ],
)
def test_a_search_budget_not_well_below_a_computers_task_s_limit_is_refused(seconds, says):
    from tests.site.test_production_settings import run_settings

    done = run_settings(
        {"DEBUG": "true", "COMPUTER_SEARCH_SECONDS": seconds, "COMPUTER_TIME_LIMIT_SECONDS": "30"},
        "import django; django.setup()",
    )
    assert done.returncode != 0
    assert says in done.stderr, done.stderr


def test_a_game_made_before_levels_keeps_its_random_computers(transactional_db):
    """Before 0017 every computer played the random player: such a game is "easy" after
    it, so its computers play on as they did; a game made after is "normal"."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before, after = [("games", "0016_table_votes")], [("games", "0017_computer_level")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps.get_model("games", "Game")
    made = old.objects.create(name="Old", player_count=3)
    executor = MigrationExecutor(connection)
    executor.migrate(after)
    new = executor.loader.project_state(after).apps.get_model("games", "Game")
    try:
        assert new.objects.get(pk=made.pk).computer_level == "easy"
        assert new.objects.create(name="New", player_count=3).computer_level == "normal"
    finally:
        MigrationExecutor(connection).migrate(executor.loader.graph.leaf_nodes())
