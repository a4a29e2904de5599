"""State and submissions serialise to JSON and back losslessly."""

from __future__ import annotations

import json

import pytest

from engine.game import default_move, new_game, submit
from engine.moves import (
    Accept,
    Alliance,
    Bid,
    BreakOff,
    Choice,
    ChoosePile,
    Decide,
    EndAlliance,
    Expand,
    Knight,
    Offer,
    Pass,
    Place,
    Renegade,
    Swords,
    TakeCard,
    Walls,
)
from engine.serialize import (
    move_from_json,
    move_to_json,
    settings_from_json,
    settings_to_json,
    state_from_json,
    state_to_json,
)
from engine.setup import Settings

MOVES = [
    Place((1, 2), (1, 3)),
    Offer(3),
    Accept(),
    BreakOff(),
    Bid(4, (10, 12)),
    Pass(),
    Decide((Choice(1, Alliance((0, 0), (5, 5))), Choice(3))),
    Decide((Choice(2, Renegade((3, 3), (4, 4), (8,))),)),
    Walls((((0, 0), (1, 0)), ((2, 2), (2, 3)))),
    Swords((Knight((1, 1)), Expand(((2, 2), (3, 2)), (0, 0))), (10,)),
    Swords((Expand(((2, 2),)),)),
    ChoosePile(2),
    TakeCard("treasure 15"),
    EndAlliance((0, 0), (9, 9), (12,)),
]


@pytest.mark.parametrize("move", MOVES, ids=lambda m: type(m).__name__)
def test_every_kind_of_submission_round_trips_through_json(move):
    assert move_from_json(json.loads(json.dumps(move_to_json(move)))) == move


def test_a_submission_of_the_wrong_shape_is_refused():
    with pytest.raises(ValueError):
        move_from_json({"type": "Bid", "ducats": "lots"})
    with pytest.raises(ValueError):
        move_from_json({"type": "Launch"})


def test_settings_round_trip_through_json():
    settings = Settings(
        players=("ochre", "red"),
        seed=7,
        decisions="open",
        money="open",
        tiles=(("B", 1), ("A", 2), ("C", 0), ("F", 3), ("E", 0), ("D", 1)),
        deck=(("B", ("W2 S1 M5",)), ("E", ("KING",))),
        neutral="grey",
    )
    assert settings_from_json(json.loads(json.dumps(settings_to_json(settings)))) == settings


@pytest.mark.parametrize("players", [("red", "ochre"), ("red", "ochre", "lilac")])
def test_every_state_of_a_game_round_trips_through_json(players):
    state = new_game(Settings(players=players, seed=3))
    while not state.is_over:
        again = state_from_json(json.loads(json.dumps(state_to_json(state))))
        assert again == state
        player = state.waiting[0]
        state, _ = submit(state, player, default_move(state, player))
    assert state_from_json(json.loads(json.dumps(state_to_json(state)))) == state
