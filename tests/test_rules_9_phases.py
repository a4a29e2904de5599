"""RULES 9: phases, whom they wait for, and the defaults at a deadline."""

from __future__ import annotations

import pytest

from engine.errors import IllegalMove
from engine.game import default_move, new_game, submit
from engine.moves import Bid, BreakOff, Decide, Pass, Place
from engine.notation import parse_move
from engine.setup import Settings
from tests.engine_helpers import Play, game
from tests.test_rules_4_contests import contested


def test_rules_9_a_missed_placement_gets_a_random_legal_placement():
    state = new_game(Settings(players=("red", "ochre", "lilac"), seed=8))
    player = state.waiting[0]
    move = default_move(state, player)
    assert isinstance(move, Place)
    after, _ = submit(state, player, move)
    assert after.pos.castles[move.castle] == player
    assert default_move(state, player) == move  # deterministic: replays the same


def test_rules_9_a_missed_decision_gets_random_legal_cards_without_politics():
    state = game()
    for player in state.order:
        move = default_move(state, player)
        assert isinstance(move, Decide)
        assert len(move.cards) == state.cards_to_choose(player)
        assert all(c.politics is None for c in move.choices)
        state, _ = submit(state, player, move)
    assert state.phase.kind != "decision"


def test_rules_9_a_missed_negotiation_breaks_off_and_a_missed_bid_is_zero():
    play, s, a, _ = contested()
    assert default_move(play.state, s) == BreakOff()
    play(s, "break off")
    assert default_move(play.state, a) == Bid(0)


def test_rules_9_a_missed_action_is_declined():
    play, s, a, _ = contested()
    play(s, "offer 0")(a, "accept")
    assert default_move(play.state, s) == Pass()


def test_rules_9_the_game_waits_only_for_the_players_it_names():
    play, s, a, b = contested()
    before = play.state.copy()
    with pytest.raises(IllegalMove, match=f"not for {b}"):
        play(b, "offer 1")
    assert play.state == before


@pytest.mark.parametrize("text", ["bid 3", "walls A5/A6", "pile 1", "place C3 D3"])
def test_rules_9_a_submission_of_the_wrong_kind_is_refused_with_what_is_expected(text):
    state = game()
    before = state.copy()
    with pytest.raises(IllegalMove, match="waits for a decision"):
        submit(state, state.order[0], parse_move(text))
    assert state == before


def test_rules_9_nothing_is_accepted_after_the_end():
    state = game(cards=())
    with pytest.raises(IllegalMove, match="over"):
        submit(state, "red", parse_move("decide 1"))


def test_rules_9_a_whole_game_of_defaults_ends():
    play = Play(new_game(Settings(players=("red", "ochre"), seed=2)))
    steps = 0
    while not play.state.is_over:
        player = play.state.waiting[0]
        play.state, _ = submit(play.state, player, default_move(play.state, player))
        steps += 1
        assert steps < 1000
    assert play.state.winners
