"""RULES 4: negotiation between two choosers, duels with re-duel and double tie."""

from __future__ import annotations

import pytest

from engine.errors import IllegalMove
from tests.engine_helpers import Play, game


def contested(cards: str = "W2 S1 M5", third: str = "decide 2") -> tuple[Play, str, str, str]:
    """The start player and the next both chose action 1."""
    play = Play(game(cards=(cards,)))
    s, a, b = play.order
    play.decide({s: "decide 1, 3", a: "decide 1", b: third})
    return play, s, a, b


def ducats(play: Play, *players: str) -> list[int]:
    return [play.state.pos.players[p].ducats for p in players]


def test_rules_4_1_two_choosers_negotiate_and_either_may_open():
    play, s, a, _ = contested()
    assert play.state.phase.kind == "negotiation"
    assert play.state.waiting == [s, a]


def test_rules_4_1_an_accepted_offer_moves_the_money_and_the_payer_acts_alone():
    play, s, a, _ = contested()
    play(s, "offer 3")
    assert play.state.waiting == [a]
    play(a, "accept")
    assert ducats(play, s, a) == [9, 15]
    assert (play.state.phase.kind, play.state.waiting) == ("perform", [s])


def test_rules_4_1_a_counter_offer_can_be_accepted_by_the_first_offerer():
    play, s, a, _ = contested()
    play(s, "offer 3")(a, "offer 4")
    assert play.state.waiting == [s]
    play(s, "accept")
    assert ducats(play, s, a) == [16, 8]
    assert play.state.waiting == [a]


def test_rules_4_1_an_offer_is_only_of_ducats_the_offerer_has():
    play, s, a, _ = contested()
    with pytest.raises(IllegalMove, match="0 to 12"):
        play(s, "offer 13")
    with pytest.raises(IllegalMove, match="no offer"):
        play(a, "accept")


def test_rules_4_1_breaking_off_leads_to_a_duel():
    play, s, a, _ = contested()
    play(s, "offer 1")(a, "break off")
    assert (play.state.phase.kind, play.state.waiting, play.state.phase.round) == (
        "duel",
        [s, a],
        1,
    )


def test_rules_4_2_three_choosers_duel_at_once():
    play, s, a, b = contested(third="decide 1")
    assert (play.state.phase.kind, play.state.waiting) == ("duel", [s, a, b])


def test_rules_4_2_the_highest_bid_pays_the_bank_and_acts_the_others_keep_their_money():
    play, s, a, b = contested(third="decide 1")
    play(s, "bid 5")(a, "bid 3")
    assert ducats(play, s, a) == [12, 12]  # sealed: nothing paid before all bids are in
    play(b, "bid 0")
    assert ducats(play, s, a, b) == [7, 12, 12]
    assert play.state.waiting == [s]
    bids = next(e for e in play.events if e["kind"] == "bids")
    assert bids["bids"][a]["total"] == 3


def test_rules_4_2_tied_leaders_alone_bid_again():
    play, s, a, b = contested(third="decide 1")
    play(s, "bid 4")(a, "bid 4")(b, "bid 1")
    assert (play.state.phase.kind, play.state.waiting, play.state.phase.round) == (
        "duel",
        [s, a],
        2,
    )
    play(s, "bid 2")(a, "bid 6")
    assert ducats(play, s, a, b) == [12, 6, 12]
    assert play.state.waiting == [a]


def test_rules_4_2_a_second_tie_means_nobody_acts_and_nobody_pays():
    play, s, a, b = contested()
    play(s, "break off")
    play(s, "bid 2")(a, "bid 2")(s, "bid 3")(a, "bid 3")
    assert ducats(play, s, a) == [12, 12]
    assert "duel_void" in play.kinds()
    assert play.state.waiting == [b] and play.state.phase.action == "S1"


def test_rules_4_2_treasure_cards_bid_at_full_value_and_are_spent_whole():
    play, s, a, _ = contested()
    play.state.pos.players[s].hand.append("treasure 10")
    play(s, "break off")(s, "bid 0 treasure 10")(a, "bid 9")
    assert ducats(play, s, a) == [12, 12]
    assert play.state.pos.players[s].hand == []
    with pytest.raises(IllegalMove, match="Treasure card worth 8"):
        contested()[0](s, "break off")(s, "bid 1 treasure 8")


def test_rules_4_2_a_bid_cannot_exceed_the_bidders_ducats():
    play, s, _, _ = contested()
    play(s, "break off")
    with pytest.raises(IllegalMove, match="0 to 12"):
        play(s, "bid 13")
