"""Hidden information: a player's view never holds another player's secrets.

Each test plants a secret value in the state and searches every other view,
serialised to JSON text, for it; the owner's view must show it (so the search
would find it if it leaked).
"""

from __future__ import annotations

import json

import pytest

from engine.game import GameState
from engine.view import view, visible_events
from tests.engine_helpers import Play, game

CARDS = ('"alliance"', '"renegade"', '"treasure ', '"parchment ')


def text(state: GameState, viewer: str | None) -> str:
    return json.dumps(view(state, viewer))


def others(state: GameState, owner: str) -> list[str | None]:
    return [p for p in state.players if p != owner] + [None]


def test_a_sealed_decision_is_hidden_until_the_reveal():
    play = Play(game(cards=("W2 S1 M5",)))
    s, a, b = play.order
    play.state.pos.players[s].hand.append("alliance")
    play(s, "decide 1, 3")
    assert '"Decide"' in text(play.state, s)
    for viewer in others(play.state, s):
        seen = text(play.state, viewer)
        assert '"Decide"' not in seen and '"Choice"' not in seen
        assert view(play.state, viewer)["submitted"] == [s]


def test_a_sealed_bid_is_hidden_until_all_bids_are_in():
    play = Play(game(cards=("W2 S1 M5",)))
    s, a, b = play.order
    play.state.pos.players[s].hand.append("treasure 15")
    play.decide({s: "decide 1, 3", a: "decide 1", b: "decide 1"})
    play(s, "bid 7 treasure 15")
    assert '"Bid"' in text(play.state, s) and '"treasure 15"' in text(play.state, s)
    for viewer in others(play.state, s):
        seen = text(play.state, viewer)
        assert '"Bid"' not in seen and "treasure 15" not in seen


def test_politics_cards_in_hand_are_seen_by_their_owner_alone():
    state = game()
    owner = state.order[0]
    state.pos.players[owner].hand.extend(["parchment 5", "renegade"])
    assert '"parchment 5"' in text(state, owner)
    for viewer in others(state, owner):
        seen = text(state, viewer)
        assert not any(card in seen for card in CARDS)
        assert view(state, viewer)["players"][owner]["hand_size"] == 2


def test_the_politics_piles_and_the_action_deck_order_are_secret():
    state = game(cards=("W2 S1 M5", "M7 S2 S1"))
    for viewer in [*state.players, None]:
        seen = text(state, viewer)
        assert "M7 S2 S1" not in seen
        assert not any(card in seen for card in CARDS)
        assert view(state, viewer)["politics_piles"] == [6, 7]


def test_the_seed_is_secret_while_the_game_runs():
    state = game(seed=987654321)
    for viewer in [*state.players, None]:
        assert "987654321" not in text(state, viewer)


def test_hidden_money_is_seen_by_its_owner_alone():
    state = game()
    owner = state.order[0]
    assert view(state, owner)["players"][owner]["ducats"] == 12
    for viewer in others(state, owner):
        assert "ducats" not in view(state, viewer)["players"][owner]


def test_open_money_is_seen_by_everyone():
    state = game(money="open")
    owner = state.order[0]
    assert all(view(state, v)["players"][owner]["ducats"] == 12 for v in others(state, owner))


def test_private_events_reach_their_owner_alone():
    events = [{"kind": "took_card", "player": "red"}, {"kind": "card", "to": "red", "card": "x"}]
    assert visible_events(events, "red") == events
    assert visible_events(events, "ochre") == events[:1]
    assert visible_events(events, None) == events[:1]


def test_after_the_end_every_secret_is_public():
    state = game(cards=(), seed=55)
    state.pos.players["red"].hand.append("parchment 3")
    seen = text(state, "ochre")
    assert '"parchment 3"' in seen and '"seed": 55' in seen


def test_a_viewer_who_does_not_play_is_refused():
    with pytest.raises(ValueError, match="grey does not play"):
        view(game(), "grey")


def test_only_an_awaited_player_is_asked_and_the_ask_names_the_legal_targets():
    play = Play(game(cards=("W2 S1 M5",)))
    s, a, b = play.order
    play.decide({s: "decide 1, 2", a: "decide 3", b: "decide 3"})
    asked = view(play.state, s)["ask"]
    assert asked["phase"] == "perform" and asked["walls"] == 2
    from engine.rules import legal_walls

    assert len(asked["edges"]) == len(legal_walls(play.state.pos, s)) > 0
    assert "ask" not in view(play.state, a) and "ask" not in view(play.state, None)


def test_reveal_shows_the_sealed_submissions_for_the_archive():
    play = Play(game(cards=("W2 S1 M5",)))
    s = play.order[0]
    play(s, "decide 1, 3")
    assert "sealed" not in view(play.state, None)
    assert view(play.state, None, reveal=True)["sealed"][s]["type"] == "Decide"


def test_no_areas_are_shown_while_castles_are_placed():
    from engine.game import new_game
    from engine.setup import Settings

    state = new_game(Settings(players=("red", "ochre"), seed=1))
    first = view(state, None)
    assert first["regions"] == [] and first["neutral_zones"] == []
