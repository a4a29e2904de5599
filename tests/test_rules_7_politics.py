"""RULES 7 in play: when Alliance and Renegade take effect, and ending an alliance."""

from __future__ import annotations

import pytest

from engine.board import Board
from engine.errors import IllegalMove
from engine.position import Player, Position
from engine.reasons import sentence
from tests.engine_helpers import Play, game

#  A B C | D E F      red castle A2, knight B2;  ochre castle F2, knights E1 and E2.
#  . . . | . k .      A wall runs down between C and D: two regions that border.
#  C k . | . k C
#  . . . | . . .


def border_game(decisions: str = "sealed") -> Play:
    state = game(cards=("W2 S1 M5", "W2 S1 M5"), decisions=decisions)
    walls = {((2, y), (3, y)) for y in range(3)}
    state.pos = Position(
        board=Board(("......", "......", "......")),
        players={p: Player() for p in state.players},
        castles={(0, 1): "red", (5, 1): "ochre"},
        knights={(1, 1): "red", (4, 0): "ochre", (4, 1): "ochre"},
        walls=walls,
        wall_supply=100 - len(walls),
        knight_supply={"red": 11, "ochre": 10, "lilac": 12, "grey": 12},
        founded={(0, 1), (5, 1)},
    )
    state.start = state.players.index("red")
    state.phase.waiting = state.order
    for colour in ("red", "ochre"):
        state.pos.players[colour].hand.extend(["alliance", "renegade"])
    return Play(state)


def test_rules_7_sealed_cards_take_effect_at_the_reveal_in_seat_order():
    play = border_game()
    play("red", "decide 1 alliance A2 F2, 3")
    assert not play.state.pos.alliances  # sealed: nothing happens before the reveal
    play("ochre", "decide 2 alliance F2 A2")("lilac", "decide 3")
    assert play.state.pos.alliances == {((0, 1), (5, 1))}
    assert play.state.pos.players["red"].hand == ["renegade"]
    # RULES 7: ochre's card came second and could no longer be played: back to hand.
    assert sorted(play.state.pos.players["ochre"].hand) == ["alliance", "renegade"]
    returned = next(e for e in play.events if e["kind"] == "politics_returned")
    reason = returned["reason"]
    assert returned["player"] == "ochre" and reason["code"] == "already_allied"
    assert "already allied" in sentence(reason["code"], reason["values"])
    assert play.state.discard == ["alliance"]


def test_rules_7_open_cards_take_effect_the_moment_they_are_played():
    play = border_game("open")
    play("red", "decide 1 alliance A2 F2, 3")
    assert play.state.pos.alliances == {((0, 1), (5, 1))}
    with pytest.raises(IllegalMove, match="already allied"):
        play("ochre", "decide 2 alliance F2 A2")


def test_rules_7_2_a_renegade_replaces_an_enemy_knight_with_an_own_one():
    play = border_game()
    play("red", "decide 1 renegade E1 C2, 3")("ochre", "decide 2")("lilac", "decide 3")
    pos = play.state.pos
    assert (4, 0) not in pos.knights and pos.knights[(2, 1)] == "red"
    assert pos.knight_supply["ochre"] == 11 and pos.knight_supply["red"] == 10
    assert play.state.discard == ["renegade"]


def test_rules_7_2_the_only_link_to_the_castle_cannot_be_removed():
    play = border_game()
    with pytest.raises(IllegalMove, match="only link"):
        play("red", "decide 1 renegade E2 C2, 3")


def test_rules_7_a_politics_card_must_be_in_hand():
    play = border_game()
    play.state.pos.players["red"].hand.clear()
    with pytest.raises(IllegalMove, match="0 Alliance card"):
        play("red", "decide 1 alliance A2 F2, 3")


def test_rules_7_1_an_alliance_can_be_ended_at_any_time_for_10_ducats():
    play = border_game("open")
    play("red", "decide 1 alliance A2 F2, 3")
    assert play.state.waiting == ["ochre"]
    play("red", "break alliance A2 F2")
    assert not play.state.pos.alliances
    assert play.state.pos.players["red"].ducats == 2
    with pytest.raises(IllegalMove, match="not allied"):
        play("ochre", "break alliance F2 A2")


def test_rules_7_1_only_the_two_allies_can_end_it():
    play = border_game("open")
    play("red", "decide 1 alliance A2 F2, 3")
    with pytest.raises(IllegalMove, match="not a party"):
        play("lilac", "break alliance A2 F2")


# RULES 7.3: Treasure is spent whole, no change; more cards than the fee needs are refused.
def test_rules_7_3_treasure_pays_whole_but_no_card_more_than_needed():
    play = border_game("open")
    play("red", "decide 1 alliance A2 F2, 3")
    red = play.state.pos.players["red"]
    red.hand.extend(["treasure 8", "treasure 12"])
    ducats = red.ducats
    # 12 alone covers the 10 ducats: adding the 8 would ask the bank for change.
    with pytest.raises(IllegalMove, match="fewer Treasure cards already pay"):
        play("red", "break alliance A2 F2 treasure 8 12")
    assert play.state.pos.alliances and sorted(red.treasure()) == [8, 12]
    play("red", "break alliance A2 F2 treasure 12")  # 2 ducats over: spent whole
    red = play.state.pos.players["red"]  # each move makes a new state
    assert not play.state.pos.alliances
    assert red.treasure() == [8] and red.ducats == ducats


# RULES 7.3: two cards that together are needed are not "more than needed".
def test_rules_7_3_two_treasure_cards_may_pay_when_one_is_not_enough():
    play = border_game("open")
    play("red", "decide 1 alliance A2 F2, 3")
    red = play.state.pos.players["red"]
    red.ducats = 0
    red.hand.extend(["treasure 8", "treasure 8"])
    play("red", "break alliance A2 F2 treasure 8 8")
    assert not play.state.pos.alliances and play.state.pos.players["red"].treasure() == []
