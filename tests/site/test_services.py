"""games.services refuses bad requests with a sentence and changes nothing."""

from __future__ import annotations

import pytest

from games import services
from games.models import Game, Seat

OPTIONS = {
    "name": "G",
    "player_count": 3,
    "setup": "basic",
    "decisions": "sealed",
    "money": "hidden",
    "deadline_hours": 48,
    "invite_only": False,
    "colour": "red",
    "computer_colours": [],
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"player_count": 2}, "basic setup is for 3 or 4"),
        ({"player_count": 5}, "2, 3 or 4 players"),
        ({"setup": "random"}, "basic or variable"),
        ({"deadline_hours": 0}, "1 to 720 hours"),
        ({"colour": "purple"}, "not a colour"),
        ({"computer_colours": ["ochre", "ochre"]}, "colour of its own"),
        ({"computer_colours": ["red"]}, "colour of its own"),
        ({"computer_colours": ["ochre", "lilac", "grey"]}, "your own seat"),
    ],
)
def test_creating_a_bad_game_is_refused_and_creates_nothing(alice, change, message):
    with pytest.raises(services.GameError, match=message):
        services.create_game(alice, **{**OPTIONS, **change})
    assert not Game.objects.exists() and not Seat.objects.exists()


def test_joining_with_an_unknown_colour_is_refused(alice, bob):
    game = services.create_game(alice, **OPTIONS)
    with pytest.raises(services.GameError, match="not a colour"):
        services.join_game(game.pk, bob, "purple")
    assert game.seats.count() == 1


def test_a_seat_whose_user_left_still_has_a_name(game, charlie):
    charlie.delete()
    seat = game.seats.get(colour="lilac")
    assert seat.display_name == "(left the game, lilac)"


def test_a_computer_that_ends_an_alliance_is_asked_again_for_its_move(
    alice, monkeypatch, django_capture_on_commit_callbacks
):
    from engine.moves import EndAlliance
    from engine.notation import parse_cell
    from engine.serialize import state_from_json, state_to_json

    game = services.create_game(alice, **{**OPTIONS, "computer_colours": ["ochre", "lilac"]})
    game = Game.objects.get(pk=game.pk)
    state = state_from_json(game.state)
    red, ochre = parse_cell("B1"), parse_cell("N1")  # the basic layout's corner castles
    state.pos.alliances.add((red, ochre))
    Game.objects.filter(pk=game.pk).update(state=state_to_json(state))
    monkeypatch.setattr(
        "engine.ai.RandomPlayer.choose", lambda self, state, colour: EndAlliance(ochre, red)
    )
    dispatched = []
    monkeypatch.setattr(services, "_dispatch_computer", lambda *args: dispatched.append(args))
    seat = game.seats.get(colour="ochre")
    with django_capture_on_commit_callbacks(execute=True):
        assert services.play_computer(game.pk, game.phase_number, seat.pk)
    assert not Game.objects.get(pk=game.pk).engine_state.pos.alliances
    assert (game.pk, game.phase_number, seat.pk) in dispatched
