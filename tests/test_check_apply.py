"""`engine.game.check` and `apply` (RULES 9): a submission is checked once, then applied
as trusted; `submit` is the two together. Moves that take effect step by step are
checked step by step, each step after the ones before it."""

from __future__ import annotations

import copy

import pytest

from engine.errors import IllegalMove
from engine.game import apply, check, submit
from engine.notation import parse_move
from engine.serialize import state_to_json
from tests.test_rules_7_politics import border_game


def test_rules_3_2_7_two_alliances_in_one_open_decision_are_checked_in_turn():
    """Open decisions: politics cards take effect as they are played, so the second
    Alliance with the same region is refused by `check` as by `submit`, and nothing
    changes."""
    play = border_game("open")
    play.state.pos.players["red"].hand.append("alliance")
    before = copy.deepcopy(play.state)
    move = parse_move("decide 1 alliance A2 F2, 3 alliance A2 F2")
    for attempt in (check, submit):
        with pytest.raises(IllegalMove, match="already allied"):
            attempt(play.state, "red", move)
    assert play.state == before


def test_rules_3_2_7_in_a_sealed_decision_the_second_card_goes_back_at_the_reveal():
    play = border_game("sealed")
    play.state.pos.players["red"].hand.append("alliance")
    move = parse_move("decide 1 alliance A2 F2, 3 alliance A2 F2")
    check(play.state, "red", move)
    play("red", "decide 1 alliance A2 F2, 3 alliance A2 F2")("ochre", "decide 2")
    play("lilac", "decide 2")
    assert [e["card"] for e in play.events if e["kind"] == "politics_returned"] == ["alliance"]


def test_rules_9_check_then_apply_gives_what_submit_gives():
    play = border_game("open")
    move = parse_move("decide 1 alliance A2 F2, 3")
    before = copy.deepcopy(play.state)
    check(play.state, "red", move)
    applied, log = apply(play.state, "red", move)
    submitted, expected = submit(play.state, "red", move)
    assert play.state == before
    assert state_to_json(applied) == state_to_json(submitted) and log == expected
    assert applied.pos.alliances == {((0, 1), (5, 1))}


def test_rules_9_check_refuses_with_the_sentence_submit_uses():
    play = border_game("open")
    for player, text, sentence in (
        ("grey", "decide 1", "grey does not play in this game"),
        ("red", "bid 3", "waits for a decision"),
        ("red", "decide 1 renegade E2 C2, 3", "only link"),
        ("red", "break alliance A2 F2", "not allied"),
    ):
        with pytest.raises(IllegalMove, match=sentence):
            check(play.state, player, parse_move(text))
        with pytest.raises(IllegalMove, match=sentence):
            submit(play.state, player, parse_move(text))
