"""Every engine event reads as one plain English sentence (games.show.event_text)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

import pytest

from engine.ai import RandomPlayer
from engine.events import PaidFor
from engine.game import is_simultaneous, new_game, submit
from engine.setup import Settings
from games.show.event_text import PAID_FOR, SENTENCES, describe
from games.show.words import card_text, phase_text

NAMES = {"red": "Alice", "ochre": "Bob", "lilac": "Charlie"}
ROOT = Path(__file__).resolve().parents[2]

# One event of every kind the engine writes, as it writes them (cells are [x, y]).
SAMPLES = {
    "reveal": (
        {"kind": "reveal", "card": "W2 S1 M5", "start_player": "red"},
        "The action card W2 S1 M5 is revealed (1: 2 walls · 2: 1 sword · 3: 5 ducats); "
        "Alice is the start player.",
    ),
    "silver": (
        {"kind": "silver", "player": "ochre", "hills": 2, "points": 2},
        "Silver mine: Bob has 2 hills in their regions and gains +2 power.",
    ),
    "decided": ({"kind": "decided", "player": "lilac"}, "Charlie has decided."),
    "revealed": (
        {
            "kind": "revealed",
            "decisions": {
                "red": {"cards": [1, 3], "politics": ["alliance", None]},
                "ochre": {"cards": [2], "politics": [None]},
            },
        },
        "The decisions are revealed: Alice 1 (Alliance) and 3; Bob 2.",
    ),
    "decision": (
        {"kind": "decision", "player": "ochre", "cards": [2], "politics": ["renegade"]},
        "Bob chooses 2 (Renegade).",
    ),
    "politics_returned": (
        {
            "kind": "politics_returned",
            "player": "red",
            "card": "alliance",
            "reason": "the regions are already allied",
        },
        "Alice's Alliance card cannot be played and goes back to their "
        "hand: the regions are already allied.",
    ),
    "alliance": (
        {"kind": "alliance", "player": "red", "castles": [[2, 2], [7, 4]]},
        "Alice allies the region at C3 with the region at H5.",
    ),
    "alliance_broken": (
        {"kind": "alliance_broken", "player": "ochre", "castles": [[2, 2], [7, 4]]},
        "Bob ends the alliance of the regions at C3 and H5.",
    ),
    "renegade": (
        {"kind": "renegade", "player": "red", "removed": [5, 6], "owner": "lilac"},
        "Alice plays a Renegade: Charlie's knight at F7 goes back to its supply.",
    ),
    "knight": (
        {"kind": "knight", "player": "red", "cell": [5, 6], "fee": 5},
        "Alice places a knight at F7 (on forest, 5 ducats).",
    ),
    "wall": (
        {"kind": "wall", "player": "ochre", "wall": [[5, 6], [5, 7]]},
        "Bob places a wall at F7/F8.",
    ),
    "founded": (
        {"kind": "founded", "owner": "red", "castle": [2, 2], "size": 7, "towns": 1, "points": 10},
        "Alice founds a region of 7 cells with 1 town at C3: +10 power.",
    ),
    "expanded": (
        {
            "kind": "expanded",
            "player": "red",
            "castle": [2, 2],
            "cells": [[6, 6], [6, 7]],
            "points": 2,
        },
        "Alice expands the region at C3 by G7 and G8: +2 power.",
    ),
    "lost": (
        {"kind": "lost", "player": "lilac", "castle": [7, 4], "cells": 1, "points": -1},
        "Charlie loses 1 cell of the region at H5: -1 power.",
    ),
    "severed": (
        {
            "kind": "severed",
            "player": "lilac",
            "castle": [7, 4],
            "size": 3,
            "towns": 0,
            "points": -3,
        },
        "A piece of 3 cells is cut off Charlie's region at H5 and "
        "becomes a neutral zone: -3 power.",
    ),
    "money": (
        {"kind": "money", "action": "M5", "players": ["red", "ochre"], "each": 2},
        "Alice and Bob share 5 ducats: 2 ducats each.",
    ),
    "negotiation": (
        {"kind": "negotiation", "action": "S2", "players": ["red", "lilac"]},
        "Alice and Charlie both chose 2 swords: they negotiate.",
    ),
    "offer": (
        {"kind": "offer", "player": "red", "ducats": 3, "other": "lilac"},
        "Alice offers Charlie 3 ducats to perform the action alone.",
    ),
    "accepted": (
        {"kind": "accepted", "player": "lilac", "payer": "red", "ducats": 3},
        "Charlie accepts Alice's offer of 3 ducats; Alice acts alone.",
    ),
    "broken_off": (
        {"kind": "broken_off", "player": "lilac"},
        "Charlie breaks off the negotiation: a duel decides.",
    ),
    "duel": (
        {"kind": "duel", "action": "P", "players": ["red", "ochre", "lilac"], "round": 2},
        "Alice, Bob and Charlie make sealed bids again, after a tie for the crown.",
    ),
    "bid_made": ({"kind": "bid_made", "player": "ochre"}, "Bob has made a sealed bid."),
    "bids": (
        {
            "kind": "bids",
            "round": 1,
            "bids": {
                "red": {"ducats": 2, "treasure": [10], "total": 12},
                "ochre": {"ducats": 5, "treasure": [], "total": 5},
            },
        },
        "The bids are revealed: Alice 12 (2 ducats + Treasure 10); Bob 5.",
    ),
    "duel_won": (
        {"kind": "duel_won", "player": "red", "paid": 12},
        "Alice wins the duel and pays 12 ducats to the bank.",
    ),
    "duel_void": (
        {"kind": "duel_void", "players": ["red", "ochre"]},
        "Alice and Bob tie again: nobody performs the action.",
    ),
    "perform": ({"kind": "perform", "player": "red", "action": "W3"}, "Alice performs 3 walls."),
    "nothing_to_do": (
        {"kind": "nothing_to_do", "player": "red", "action": "S1"},
        "Alice can do nothing with 1 sword.",
    ),
    "declined": ({"kind": "declined", "player": "ochre", "action": "P"}, "Bob declines the crown."),
    "looks": (
        {"kind": "looks", "player": "red", "pile": 2},
        "Alice looks through politics pile 2.",
    ),
    "took_card": (
        {"kind": "took_card", "player": "red", "pile": 2},
        "Alice takes a card from politics pile 2.",
    ),
    "card": (
        {"kind": "card", "to": "red", "card": "treasure 12"},
        "Alice took the Treasure 12 card.",
    ),
    "paid": (
        {
            "kind": "paid",
            "player": "red",
            "amount": 10,
            "ducats": 0,
            "treasure": [10],
            "for": "alliance_break",
        },
        "Alice pays 10 ducats (Treasure 10 and 0 ducats) for breaking an alliance.",
    ),
    "placed": (
        {"kind": "placed", "player": "ochre", "colour": "grey", "castle": [2, 2], "knight": [3, 2]},
        "Bob places a grey castle at C3 and a knight at D3.",
    ),
    "turn_end": ({"kind": "turn_end", "turn": 4}, "Turn 4 ends."),
    "final_hills": (
        {"kind": "final_hills", "player": "lilac", "hills": 1, "points": 1},
        "Final scoring: Charlie has 1 hill in their regions: +1 power.",
    ),
    "end_game": (
        {"kind": "end_game", "player": "red", "hills": 2, "points": 2},
        "Final scoring: Alice has 2 hills in their regions: +2 power.",
    ),
    "parchment": (
        {"kind": "parchment", "player": "lilac", "points": 5},
        "Charlie reveals Parchment: +5 power.",
    ),
    "game_over": (
        {"kind": "game_over", "winners": ["lilac"], "power": {"red": 20, "ochre": 18, "lilac": 31}},
        "The game is over: Charlie wins. Power: Alice 20, Bob 18, Charlie 31.",
    ),
    "refused": (
        {
            "kind": "refused",
            "to": "ochre",
            "move": "walls F7/F8",
            "reason": "the wall supply is empty",
        },
        "Bob's submission 'walls F7/F8' could not be applied: the wall supply is empty.",
    ),
    # written by games.deadlines
    "paused": (
        {"kind": "paused", "players": ["ochre"], "remaining_seconds": 93600},
        "The game is paused while Bob is away; 1 day and 2 hours will be left for the "
        "phase when it resumes.",
    ),
    "resumed": (
        {"kind": "resumed", "deadline": "2030-01-02T10:00:00+00:00"},
        "The game resumes: the deadline runs again.",
    ),
    "deadline_extended": (
        {
            "kind": "deadline_extended",
            "players": ["red", "lilac"],
            "reason": "away",
            "deadline": "2030-01-02T10:00:00+00:00",
        },
        "The deadline is extended until Wed 2 Jan 2030, 10:00 UTC, while "
        "Alice and Charlie are away.",
    ),
    "deadline_missed": (
        {"kind": "deadline_missed", "players": ["ochre"]},
        "Bob missed the deadline: the default move was played for them.",
    ),
    "standin": (
        {"kind": "standin", "player": "red", "missed": 3},
        "Alice missed 3 deadlines in a row: a computer plays their seat until they take it back.",
    ),
    "seat_taken_back": (
        {"kind": "seat_taken_back", "player": "red"},
        "Alice takes their seat back from the computer.",
    ),
    # written by games.votes (issue 24)
    "vote_proposed": (
        {
            "kind": "vote_proposed",
            "player": "red",
            "proposal": "extend",
            "hours": 24,
            "until": "2030-01-02T10:00:00+00:00",
        },
        "Alice asks the table to extend the deadline by 24 hours; the vote is open until "
        "Wed 2 Jan 2030, 10:00 UTC.",
    ),
    "vote_cast": (
        {"kind": "vote_cast", "player": "ochre", "yes": False, "proposal": "pause", "days": 1},
        "Bob votes against pausing the phase for 1 day.",
    ),
    "vote_rejected": (
        {"kind": "vote_rejected", "player": "red", "proposal": "extend", "hours": 1},
        "The table rejects extending the deadline by 1 hour: no majority is left for it.",
    ),
    "vote_expired": (
        {"kind": "vote_expired", "player": "red", "proposal": "pause", "days": 3},
        "The vote on pausing the phase for 3 days closed without a majority.",
    ),
    # written by games.services
    "conceded": (
        {"kind": "conceded", "player": "red"},
        "Alice conceded: a computer plays their seat to the end.",
    ),
}


@pytest.mark.parametrize("kind", sorted(SAMPLES))
def test_each_event_kind_has_its_sentence(kind):
    event, sentence = SAMPLES[kind]
    assert describe(event, NAMES) == sentence


@pytest.mark.parametrize("purpose", get_args(PaidFor))
def test_every_purpose_of_a_payment_is_stored_as_a_code_and_read_as_words(purpose):
    paid = {**SAMPLES["paid"][0], "for": purpose}
    line = describe(paid, NAMES)
    assert purpose not in line and line.endswith(f"for {PAID_FOR[purpose]}.")


def test_a_payment_stored_in_words_before_the_codes_reads_as_it_was():
    paid = {**SAMPLES["paid"][0], "for": "breaking an alliance"}
    assert describe(paid, NAMES) == SAMPLES["paid"][1]


def test_the_creators_extension_and_a_short_pause_read_well():
    assert (
        describe(
            {
                "kind": "deadline_extended",
                "hours": 1,
                "reason": "creator",
                "player": "red",
                "deadline": "2030-01-02T11:00:00+01:00",
            },
            NAMES,
        )
        == "Alice, the game's creator, extends the deadline by 1 hour, until Wed 2 Jan 2030, "
        "10:00 UTC."
    )
    assert (
        describe(
            {
                "kind": "deadline_extended",
                "hours": 1,
                "reason": "creator",
                "player": None,
                "deadline": "2030-01-02T10:00:00+00:00",
            },
            NAMES,
        )
        == "The game's creator extends the deadline by 1 hour, until Wed 2 Jan 2030, 10:00 UTC."
    )
    assert "; 40 minutes will be left" in describe(
        {"kind": "paused", "players": ["red", "ochre"], "remaining_seconds": 2400}, NAMES
    )


def test_what_the_table_voted_reads_well():
    """Issue 24: an extension and a pause by the table's vote, in the log."""
    extended = {
        "kind": "deadline_extended",
        "reason": "vote",
        "hours": 24,
        "player": "ochre",
        "deadline": "2030-01-02T10:00:00+00:00",
    }
    assert describe(extended, NAMES) == (
        "The table votes to extend the deadline by 24 hours, until Wed 2 Jan 2030, 10:00 UTC."
    )
    paused = {
        "kind": "paused",
        "reason": "vote",
        "days": 2,
        "player": "red",
        "until": "2030-01-02T10:00:00+00:00",
        "remaining_seconds": 7200,
        "deadline": "2030-01-02T12:00:00+00:00",
    }
    assert describe(paused, NAMES) == (
        "The table votes to pause the phase for 2 days, until Wed 2 Jan 2030, 10:00 UTC; "
        "2 hours will be left for the phase when it resumes."
    )
    for kind in ("vote_proposed", "vote_cast"):  # a pause proposed, a yes to an extension
        event = dict(SAMPLES[kind][0])
        event.update(
            {"proposal": "pause", "days": 2}
            if kind == "vote_proposed"
            else {"proposal": "extend", "hours": 5, "yes": True}
        )
        event.pop("hours" if kind == "vote_proposed" else "days", None)
        assert describe(event, NAMES) in (
            "Alice asks the table to pause the phase for 2 days; the vote is open until "
            "Wed 2 Jan 2030, 10:00 UTC.",
            "Bob votes for extending the deadline by 5 hours.",
        )


@pytest.mark.parametrize(
    ("event", "to_its_reader", "to_others"),
    [
        (
            {"kind": "card", "to": "red", "card": "parchment 3"},
            "You took the Parchment 3 card.",
            "Alice took the Parchment 3 card.",
        ),
        (
            {"kind": "refused", "to": "red", "move": "pass", "reason": "it is not your turn"},
            "Your submission 'pass' could not be applied: it is not your turn.",
            "Alice's submission 'pass' could not be applied: it is not your turn.",
        ),
    ],
)
def test_a_private_event_says_you_to_its_reader_alone(event, to_its_reader, to_others):
    assert describe(event, NAMES, "red") == to_its_reader
    for viewer in ("ochre", None):  # another player; a spectator or the archive
        assert describe(event, NAMES, viewer) == to_others


def test_no_sentence_says_you_to_anyone_but_the_reader_of_a_private_event():
    for kind, (event, _) in SAMPLES.items():
        for viewer in (None, "lilac"):
            text = describe(event, NAMES, viewer)
            assert not {"You", "Your", "you", "your"} & set(text.replace("'", " ").split()), (
                kind,
                text,
            )


def test_a_castle_of_a_colour_that_begins_with_a_vowel_takes_an():
    event = {
        "kind": "placed",
        "player": "red",
        "colour": "ochre",
        "castle": [2, 2],
        "knight": [3, 2],
    }
    assert describe(event, NAMES) == "Alice places an ochre castle at C3 and a knight at D3."
    assert (
        phase_text({"kind": "placement", "waiting": ["red"], "colour": "ochre"}, NAMES)
        == "Alice places an ochre castle and knight."
    )
    assert (
        phase_text({"kind": "placement", "waiting": ["red"], "colour": "red"}, NAMES)
        == "Alice places a red castle and knight."
    )


def test_an_unknown_kind_is_an_error_not_a_vague_sentence():
    with pytest.raises(KeyError, match="comet_sighted"):
        describe({"kind": "comet_sighted"}, NAMES)


def test_every_kind_the_code_can_write_has_a_sentence_and_a_sample():
    written = written_event_kinds()
    assert {"wall", "refused", "paused", "standin"} <= written  # the scan finds them
    assert written <= set(SENTENCES), f"no sentence for {sorted(written - set(SENTENCES))}"
    assert written <= set(SAMPLES), f"no sample for {sorted(written - set(SAMPLES))}"


def written_event_kinds() -> set[str]:
    """Every event kind a literal in engine/ or games/ writes: `{"kind": "wall", ...}`
    and the site's `_note(game, "paused", ...)`."""
    kinds: set[str] = set()
    for path in [*ROOT.joinpath("engine").rglob("*.py"), *ROOT.joinpath("games").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            kinds.update(_kinds_in(node))
    return kinds


def _kinds_in(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Dict):
        return [
            v.value
            for k, v in zip(node.keys, node.values, strict=True)
            if isinstance(k, ast.Constant)
            and k.value == "kind"
            and isinstance(v, ast.Constant)
            and isinstance(v.value, str)
            and v.value  # "": a history page's run of a phase not yet named, no event
        ]
    if (
        isinstance(node, ast.Call)
        and getattr(node.func, "id", "") == "_note"
        and len(node.args) > 1
        and isinstance(node.args[1], ast.Constant)
    ):
        return [node.args[1].value]
    return []


def test_a_malformed_event_is_an_error_rather_than_a_vague_sentence():
    with pytest.raises(KeyError, match="wall"):
        describe({"kind": "wall", "player": "red"}, NAMES)


def test_colours_without_a_name_are_called_by_their_colour():
    assert (
        describe(
            {
                "kind": "placed",
                "player": "grey",
                "colour": "grey",
                "castle": [0, 0],
                "knight": [1, 0],
            },
            {},
        )
        == "Grey places a grey castle at A1 and a knight at B1."
    )


def test_the_silver_mine_and_the_king_are_named():
    assert card_text("SILVER") == "Silver mine"
    assert (
        describe({"kind": "reveal", "card": "KING"}, NAMES)
        == "The action card The King is dead! is revealed."
    )


def test_a_phase_reads_as_a_sentence():
    phase = {
        "kind": "negotiation",
        "waiting": ["lilac"],
        "action": "S2",
        "contenders": ["red", "lilac"],
        "offer": ["red", 3],
    }
    assert (
        phase_text(phase, NAMES)
        == "Alice and Charlie negotiate over 2 swords. Alice offers 3 ducats."
    )


def test_every_event_of_whole_random_games_has_its_own_sentence():
    kinds = set()
    for seed in range(4):
        for event in _random_game_events(seed):
            kinds.add(event["kind"])
            text = describe(event, NAMES)
            assert text, event
            assert text.endswith((".", "!")) and "{" not in text and "[" not in text
    assert {"reveal", "revealed", "wall", "knight", "founded", "game_over"} <= kinds


def _random_game_events(seed: int) -> list[dict]:
    state = new_game(Settings(players=("red", "ochre", "lilac"), setup="basic", seed=seed))
    players = {p: RandomPlayer(f"{seed}/{p}") for p in state.players}
    events: list[dict] = []
    while not state.is_over:
        movers = state.waiting if is_simultaneous(state) else state.waiting[:1]
        for player in movers:
            state, log = submit(state, player, players[player].choose(state, player))
            events.extend(log)
    return events
