"""RULES 3: the turn — reveal, decide (sealed and open), resolve, end."""

from __future__ import annotations

import pytest

from engine.errors import IllegalMove
from engine.game import submit
from engine.moves import Decide
from engine.notation import parse_move
from tests.engine_helpers import FOUR, Play, game


def test_rules_3_2_sealed_decisions_wait_for_everyone_and_stay_hidden_until_all_are_in():
    play = Play(game())
    s, a, b = play.order
    assert play.state.phase.kind == "decision"
    assert play.state.waiting == [s, a, b]
    play(s, "decide 1, 3")
    assert play.state.waiting == [a, b]
    assert play.events[-1] == {"kind": "decided", "player": s, "turn": 1}
    assert play.state.decisions == {}
    play(a, "decide 2")(b, "decide 3")
    revealed = next(e for e in play.events if e["kind"] == "revealed")
    assert revealed["decisions"][s]["cards"] == [1, 3]
    assert revealed["decisions"][b]["cards"] == [3]


def test_rules_3_2_the_start_player_of_a_three_player_game_chooses_two_cards():
    play = Play(game())
    s, a, _ = play.order
    with pytest.raises(IllegalMove, match="chooses 2 decision cards"):
        play(s, "decide 2")
    with pytest.raises(IllegalMove, match="chooses 1 decision card"):
        play(a, "decide 1, 2")


def test_rules_3_2_the_start_player_of_a_four_player_game_chooses_one_card():
    play = Play(game(players=FOUR))
    with pytest.raises(IllegalMove, match="chooses 1 decision card"):
        play(play.order[0], "decide 1, 2")
    play(play.order[0], "decide 1")
    assert play.order[0] not in play.state.waiting


def test_rules_3_2_two_cards_must_differ():
    state = game()
    with pytest.raises(IllegalMove, match="each at most once"):
        submit(state, state.order[0], Decide(parse_move("decide 2, 2").choices))


def test_rules_3_2_open_decisions_go_in_seat_order_from_the_start_player_and_are_public():
    play = Play(game(decisions="open"))
    s, a, b = play.order
    assert play.state.waiting == [s]
    with pytest.raises(IllegalMove, match=f"waiting for {s}"):
        play(a, "decide 1")
    play(s, "decide 1, 3")
    assert play.state.waiting == [a]
    assert [c.card for c in play.state.decisions[s]] == [1, 3]
    assert play.events[-1]["cards"] == [1, 3]
    play(a, "decide 2")
    assert play.state.waiting == [b]


def test_rules_3_3_a_lone_chooser_performs_money_is_shared_rounded_down_and_the_turn_ends():
    play = Play(game(cards=("W2 S1 M5",)))
    s, a, b = play.order
    play.decide({s: "decide 1, 3", a: "decide 2", b: "decide 3"})
    assert (play.state.phase.kind, play.state.waiting, play.state.phase.action) == (
        "perform",
        [s],
        "W2",
    )
    play(s, "pass")
    assert (play.state.waiting, play.state.phase.action) == ([a], "S1")
    play(a, "pass")
    ducats = {p: play.state.pos.players[p].ducats for p in (s, a, b)}
    assert ducats == {s: 14, a: 12, b: 14}  # RULES 3.3: 5 // 2 each, 1 lost
    assert play.state.is_over  # the next card was the King


def test_rules_3_3_nobody_chose_it_means_nothing_happens():
    play = Play(game(cards=("W2 S1 M5", "W2 S1 M5")))
    s, a, b = play.order
    play.decide({s: "decide 1, 3", a: "decide 3", b: "decide 3"})
    assert play.state.phase.kind == "perform" and play.state.waiting == [s]
    play(s, "pass")
    assert play.state.turn == 2  # action 2 had no chooser; money for the three
    assert play.state.pos.players[a].ducats == 13


def test_rules_3_4_the_start_player_role_passes_on_in_seat_order():
    play = Play(game(cards=("W2 S1 M5", "W2 S1 M5")))
    s, a, b = play.order
    play.decide({s: "decide 3, 2", a: "decide 3", b: "decide 3"})
    play(s, "pass")
    assert play.state.start_player == a
    assert play.state.order == [a, b, s]
    assert play.state.waiting == [a, b, s]


def test_rules_3_1_a_silver_mine_scores_hills_and_the_next_card_is_revealed():
    play = Play(game(cards=("SILVER", "W2 S1 M5")))
    reveal = play.state
    assert reveal.card == "W2 S1 M5"
    # Every starting region of the basic map holds one hill.
    assert all(p.power == 1 for p in reveal.pos.players.values())


def test_rules_3_1_the_king_ends_the_game_at_once():
    state = game(cards=())
    assert state.is_over and state.phase.waiting == []


def test_rules_3_a_performer_may_decline_or_do_less():
    play = Play(game(cards=("W3 S1 M5",)))
    s, a, b = play.order
    play.decide({s: "decide 1, 3", a: "decide 2", b: "decide 3"})
    free = _free_edge(play.state, s)
    play(s, f"walls {free}")
    assert len(play.state.pos.walls) == 21 and play.state.waiting == [a]


def _free_edge(state, player: str) -> str:
    from engine.board import format_edge
    from engine.rules import legal_walls

    return format_edge(legal_walls(state.pos, player)[40])


def test_rules_3_4_events_of_the_next_turn_carry_its_number():
    play = Play(game(cards=("M5 M4 M6", "W2 S1 M5")))
    s, a, b = play.order
    play.decide({s: "decide 1, 2", a: "decide 3", b: "decide 3"})
    assert play.state.turn == 2
    end = play.kinds().index("turn_end")
    assert {e["turn"] for e in play.events[: end + 1]} == {1}
    assert {e["turn"] for e in play.events[end + 1 :]} == {2}
