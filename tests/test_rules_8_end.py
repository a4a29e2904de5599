"""RULES 8: the end — hills, Parchment, most power, ties by ducats with Treasure."""

from __future__ import annotations

from engine.position import Player, Position
from engine.rules import finish_places, winners
from tests.engine_helpers import Play, game


def test_rules_8_the_king_scores_hills_then_parchment_and_names_the_winner():
    play = Play(game(cards=("W2 S1 M5",)))
    s, a, b = play.order
    play.state.pos.players[s].hand.append("parchment 4")
    play.decide({s: "decide 1, 2", a: "decide 3", b: "decide 3"})
    play(s, "pass")(s, "pass")
    assert play.state.is_over
    power = {p: play.state.pos.players[p].power for p in (s, a, b)}
    assert power == {s: 5, a: 1, b: 1}  # one hill in each starting region, +4 parchment
    assert play.state.winners == [s]
    final = next(e for e in play.events if e["kind"] == "game_over")
    assert final["winners"] == [s]


def standings(
    power: dict[str, int], ducats: dict[str, int], hands: dict[str, list[str]] | None = None
) -> list[str]:
    hands = hands or {}
    pos = Position(
        board=game().pos.board,
        players={p: Player(ducats[p], power[p], hands.get(p, [])) for p in power},
    )
    return winners(pos, list(power))


def test_rules_8_most_power_wins():
    assert standings({"red": 9, "ochre": 8}, {"red": 0, "ochre": 30}) == ["red"]


def test_rules_8_a_tie_goes_to_the_most_ducats_treasure_included():
    assert standings({"red": 9, "ochre": 9}, {"red": 5, "ochre": 12}, {"red": ["treasure 8"]}) == [
        "red"
    ]
    assert standings({"red": 9, "ochre": 9}, {"red": 5, "ochre": 12}) == ["ochre"]


def test_rules_8_a_further_tie_is_shared():
    assert standings(
        {"red": 9, "ochre": 9, "lilac": 2},
        {"red": 12, "ochre": 4, "lilac": 1},
        {"ochre": ["treasure 8"]},
    ) == ["red", "ochre"]


def test_rules_8_the_finish_order_by_power_then_wealth_with_ties_shared():
    """The places a rating reads (games.ratings): competition ranking, ties equal."""
    power = {"red": 9, "ochre": 9, "lilac": 9, "grey": 2}
    ducats = {"red": 12, "ochre": 4, "lilac": 3, "grey": 40}
    pos = Position(
        board=game().pos.board,
        players={
            p: Player(ducats[p], power[p], ["treasure 8"] if p == "ochre" else []) for p in power
        },
    )
    assert finish_places(pos, list(power)) == {"red": 1, "ochre": 1, "lilac": 3, "grey": 4}
