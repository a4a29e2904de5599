"""RULES 5.4: the crown — look through one politics pile, take one card."""

from __future__ import annotations

import copy

import pytest

from engine.errors import IllegalMove
from engine.moves import POLITICS_CARDS, TakeCard
from engine.notation import parse_move
from engine.view import view
from tests.engine_helpers import Play, game


def crowned() -> tuple[Play, str, str, str]:
    play = Play(game(cards=("P W3 S1",)))
    s, a, b = play.order
    play.decide({s: "decide 1, 3", a: "decide 2", b: "decide 3"})
    return play, s, a, b


def test_rules_5_4_the_crown_shows_one_pile_to_its_taker_alone():
    play, s, a, _ = crowned()
    pile = list(play.state.piles[1])
    play(s, "pile 2")
    assert play.state.phase.kind == "crown"
    assert view(play.state, s)["pile_cards"] == sorted(pile)
    assert "pile_cards" not in view(play.state, a)
    assert "pile_cards" not in view(play.state, None)


def test_rules_5_4_the_card_taken_goes_into_the_hidden_hand():
    play, s, a, _ = crowned()
    card = play.state.piles[0][2]
    play(s, "pile 1")(s, f"take {card}")
    assert play.state.pos.players[s].hand == [card]
    assert len(play.state.piles[0]) == 5
    public = [e for e in play.events if e["kind"] == "took_card"]
    assert public == [{"kind": "took_card", "player": s, "pile": 1, "turn": 1}]
    private = [e for e in play.events if e["kind"] == "card"]
    assert private[0]["to"] == s and private[0]["card"] == card
    assert play.state.waiting == [a]


def test_rules_5_4_an_empty_pile_cannot_be_chosen():
    play, s, _, _ = crowned()
    play.state.piles[0] = []
    with pytest.raises(IllegalMove, match="pile 1 is empty"):
        play(s, "pile 1")


def test_rules_5_4_with_both_piles_empty_the_crown_does_nothing():
    play = Play(game(cards=("P W3 S1",)))
    play.state.piles = [[], []]
    s, a, b = play.order
    play.decide({s: "decide 1, 3", a: "decide 2", b: "decide 3"})
    assert {"kind": "nothing_to_do", "player": s, "action": "P", "turn": 1} in play.events
    assert play.state.waiting == [a]


def test_rules_5_4_a_card_not_in_the_pile_cannot_be_taken():
    """The card is named as the notation reads it, so the refusal is the engine's check
    (RULES 5.4: a card "of the pile"), not the parser's."""
    play, s, _, _ = crowned()
    missing = next(c for c in POLITICS_CARDS if c not in play.state.piles[0])
    assert parse_move(f"take {missing}") == TakeCard(missing)
    play(s, "pile 1")
    before = copy.deepcopy(play.state)
    with pytest.raises(IllegalMove, match=f"pile 1 holds no '{missing}' card"):
        play(s, f"take {missing}")
    assert play.state == before
