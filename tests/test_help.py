"""Help at the point of need (issue 10, item 7): the help for each choice says what
that choice does, with the numbers of this game (RULES 3, 4, 5, 7)."""

from __future__ import annotations

from typing import Any

from games.show.help import help_for


def texts(v: Any) -> list[str]:
    return [line.text for line in help_for(v)]


def cited(v: Any) -> list[list[str]]:
    return [[c.section for c in line.cites] for line in help_for(v)]


def view(ask: dict[str, Any] | None, **more: Any) -> Any:
    return {"viewer": "red", "card": "W2 S1 M5", "politics_piles": [6, 7], "ask": ask, **more}


def test_nothing_asked_means_no_help():
    assert help_for(view(None)) == []


def test_the_decision_explains_each_action_of_the_card_and_the_cards_in_hand():
    lines = texts(
        view(
            {
                "phase": "decision",
                "action": None,
                "cards": 1,
                "politics": ["alliance", "treasure 10"],
            }
        )
    )
    assert lines[0].startswith("Card 1: 2 walls: place up to 2 walls")
    assert lines[1].startswith("Card 2: 1 sword: place knights")
    assert lines[2].startswith("Card 3: 5 ducats: the ducats are shared equally")
    assert any(line.startswith("Alliance:") for line in lines)  # RULES 7.1
    assert any(line.startswith("Treasure:") and "no change" in line for line in lines)


def test_accepting_an_offer_says_who_pays_whom_and_who_acts():
    lines = texts(view({"phase": "negotiation", "action": "S1", "offer": ["ochre", 1]}))
    assert lines[0] == (
        "Accept 1 ducat: you receive 1 ducat from the other player, who "
        "then performs the action alone; you do not."
    )  # RULES 4.1
    own = texts(view({"phase": "negotiation", "action": "S1", "offer": ["red", 3]}))
    assert not any(line.startswith("Accept") for line in own)


def test_the_sword_help_names_the_forest_fee():
    lines = texts(view({"phase": "perform", "action": "S2"}))
    assert "A forest costs 5 ducats" in lines[0]  # RULES 5.2


def test_the_crown_help_counts_the_cards_in_each_pile():
    lines = texts(view({"phase": "perform", "action": "P"}))
    assert lines[-1].endswith("Now pile 1: 6 cards and pile 2: 7 cards.")  # RULES 5.4
    assert "3 Alliance, 3 Renegade, 4 Treasure" in lines[-1]


def test_a_duel_explains_bids_and_ties():
    lines = texts(view({"phase": "duel", "action": "W3", "round": 1}))
    assert "Tied highest bids bid again once" in lines[0]  # RULES 4.2


def test_each_sentence_names_the_sections_of_the_rules_it_comes_from():
    """Issue 24, item 3: the page links each sentence to the rules page; the sentences
    themselves no longer cite a bare "RULES 5.4"."""
    decision = view({"phase": "decision", "action": None, "cards": 1, "politics": ["renegade"]})
    assert cited(decision) == [["5.1"], ["5.2", "5.3"], ["3"], ["3", "4"], ["7.2"]]
    assert cited(view({"phase": "perform", "action": "P"})) == [["5.4"], ["7"]]
    assert cited(view({"phase": "duel", "action": "W3", "round": 1})) == [["4.2"], ["7.3"]]
    assert not any("RULES" in text for text in texts(decision))
