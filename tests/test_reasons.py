"""A refusal's reason is a code and its values (engine.reasons): every code has one
English sentence, and a reason raised by the real rules reads as that sentence."""

from __future__ import annotations

import json
import pickle
import re
import string
from pathlib import Path

import pytest

from engine.errors import IllegalMove
from engine.game import submit
from engine.notation import parse_move
from engine.reasons import SENTENCES, Reason, sentence
from tests.engine_helpers import Play, game

ENGINE = Path(__file__).resolve().parent.parent / "engine"


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


@pytest.mark.parametrize("code", sorted(SENTENCES))
def test_every_code_has_a_whole_sentence_that_its_values_fill(code):
    names = placeholders(SENTENCES[code])
    text = sentence(code, dict.fromkeys(names, "X7"))
    assert text and "{" not in text and "}" not in text
    assert all(name.isidentifier() for name in names)  # named, never positional


def test_every_code_the_engine_writes_has_a_sentence():
    """The literal codes of `Reason("...")` in the engine's source, and the few made from
    a kind (`f"taken_by_{kind}"` ...), each with the sentences it may make."""
    source = "\n".join(p.read_text() for p in ENGINE.glob("*.py"))
    literal = set(re.findall(r'Reason\(\s*"([a-z_]+)"', source))
    made = {
        "taken_by_castle",
        "taken_by_knight",
        "castle_not_on_plain",
        "knight_not_on_plain",
        "wall_separates_knights",
        "wall_separates_knight_and_castle",
        "alliance_cards_in_hand",
        "renegade_cards_in_hand",
        "knight_on_hill",
        "knight_on_town",
        "one_decision_card",
        "decision_cards",
        "one_sword",
        "two_swords",
        "cell_too_long",  # engine.notation._refuse_long, by what is too long
        "wall_too_long",
    }
    assert len(literal) > 40  # the scan finds them
    assert literal | made <= set(SENTENCES), sorted((literal | made) - set(SENTENCES))
    assert set(SENTENCES) <= literal | made, sorted(set(SENTENCES) - literal - made)


def test_a_reason_raised_by_the_rules_carries_its_code_and_reads_as_its_sentence():
    state = game()
    first, second, _ = state.order
    with pytest.raises(IllegalMove) as raised:
        submit(state, first, parse_move("decide 2, 2"))
    reason = raised.value.reason
    assert reason.code == "decision_card_numbers" and reason.values == {}
    assert str(raised.value) == reason == "decision cards are 1, 2 and 3, each at most once"
    play = Play(game(decisions="open"))
    with pytest.raises(IllegalMove) as raised:
        play(play.order[1], "decide 1")
    reason = raised.value.reason
    assert reason.as_json() == {
        "code": "waiting_for_others",
        "values": {"waiting": [play.order[0]], "colour": play.order[1]},
    }
    stored = json.loads(json.dumps(reason.as_json()))  # as the site keeps it
    assert sentence(stored["code"], stored["values"]) == str(raised.value)
    assert f"waiting for {play.order[0]}, not for {play.order[1]}" in str(raised.value)


def test_a_reason_survives_a_pickle_and_lists_its_values_in_english():
    reason = Reason(
        "borders_several_regions", cell="E5", colour="red", castles=["C3", "H5"], castle="C3"
    )
    assert "(castles C3 and H5)" in reason
    again = pickle.loads(pickle.dumps(IllegalMove(reason)))
    assert again.reason.code == reason.code and again.reason.values == reason.values
    assert str(again) == str(reason)


def test_an_unknown_code_is_an_error_not_a_vague_sentence():
    with pytest.raises(KeyError, match="comet_sighted"):
        Reason("comet_sighted")
