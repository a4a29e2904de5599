"""Sentences are not stored as English (issue 22): a refused submission's event and an
email's summary hold a code and its values, worded when read; rows stored before, with
the English itself, still read as they did."""

from __future__ import annotations

import json

import pytest

from engine.errors import IllegalMove
from games import services
from games.mail import compose
from games.models import OutgoingEmail, PendingSubmission, Seat
from games.show.event_text import describe
from games.show.words import reason_text
from tests.engine_helpers import Play
from tests.engine_helpers import game as engine_game
from tests.site.test_emails import seat

NAMES = {"red": "Alice", "ochre": "Bob", "lilac": "Charlie"}


def refusal() -> IllegalMove:
    """A real refusal of the rules: a player submits out of turn in an open decision."""
    play = Play(engine_game(decisions="open"))
    with pytest.raises(IllegalMove) as raised:
        play(play.order[1], "decide 1")
    return raised.value


def test_a_refused_submission_stores_the_reasons_code_and_values_not_its_words():
    exc = refusal()
    item = PendingSubmission(seat=Seat(colour="ochre"), text="decide 1", move={})
    data = json.loads(json.dumps(services._refused(item, exc, 3)))  # as the row keeps it
    assert data["reason"] == {"code": "waiting_for_others", "values": exc.reason.values}
    assert "waiting for" not in json.dumps(data)  # no sentence in the row
    told = reason_text(exc.reason.code, exc.reason.values, "ochre")  # "not for you"
    assert told != str(exc) and told.endswith("not for you")
    assert describe(data, NAMES, "ochre") == (
        f"Your submission 'decide 1' could not be applied: {told}."
    )


def test_a_returned_politics_card_is_worded_from_its_code():
    event = {
        "kind": "politics_returned",
        "player": "red",
        "card": "alliance",
        "reason": {"code": "already_allied", "values": {"own": "C3", "other": "H5"}},
    }
    assert describe(event, NAMES) == (
        "Alice's Alliance card cannot be played and goes back to their hand: "
        "the regions at C3 and H5 are already allied."
    )


def test_an_emails_summary_is_a_code_and_the_digest_words_it_as_before(game, alice):
    compose.move_reply(seat(game, alice), True, ["decide 3"], "Accepted: decide 3.")
    accepted = OutgoingEmail.objects.get(user=alice, kind="move_accepted")
    assert accepted.status == OutgoingEmail.Status.COALESCING
    assert accepted.summary == {"code": "move_accepted", "values": {"commands": ["decide 3"]}}
    assert "Your move" not in json.dumps(accepted.summary)
    # A row stored before summaries were codes holds its line, shown as it is.
    legacy = OutgoingEmail.objects.create(
        kind="results",
        user=alice,
        game=game,
        to=alice.email,
        subject="Old",
        text="News.",
        summary="What happened (turn 3)",
    )
    legacy.refresh_from_db()
    digest = compose.digest(alice, [accepted, legacy])
    assert digest is not None
    assert f"{accepted.subject}: Your move by email was accepted: decide 3. (" in digest.text
    assert "Old: What happened (turn 3) (" in digest.text


def test_every_summary_code_has_a_line():
    values = {
        "phase": {"kind": "duel", "action": "W2"},
        "turn": 4,
        "commands": ["pass"],
        "changes": [{"reason": "creator", "hours": 2, "you": True, "who": "Alice"}],
        "kind": "extend",
        "amount": 2,
    }
    lines = {
        code: compose.summary_line({"code": code, "values": values})
        for code in compose.SUMMARY_LINES
    }
    assert lines["your_turn"] == "Your move: duel for 2 walls, turn 4"
    assert lines["deadline_extended"] == "You extended the deadline by 2 hours."
    assert lines["vote_proposed"] == "A vote: extend the deadline by 2 hours?"
    assert lines["vote_accepted"] == "Your vote by email was counted: pass."
    assert all(lines.values()) and compose.summary_line({}) == ""


def test_the_migration_keeps_stored_lines_and_words_codes_on_the_way_back(transactional_db):
    """0012 turns the English line into a JSON string (shown as it is) and, backwards,
    every summary into its line again: no summary is lost either way."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    before, after = [("games", "0011_repair")], [("games", "0012_summary_codes")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps.get_model("games", "OutgoingEmail")
    row = old.objects.create(
        kind="results", to="a@b.c", subject="s", text="t", summary="What happened (turn 3)"
    )
    executor = MigrationExecutor(connection)
    executor.migrate(after)
    new = executor.loader.project_state(after).apps.get_model("games", "OutgoingEmail")
    assert new.objects.get(pk=row.pk).summary == "What happened (turn 3)"
    coded = new.objects.create(
        kind="results",
        to="a@b.c",
        subject="s",
        text="t",
        summary={"code": "results", "values": {"turn": 5}},
    )
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    assert dict(old.objects.values_list("pk", "summary")) == {
        row.pk: "What happened (turn 3)",
        coded.pk: "What happened (turn 5)",
    }
    MigrationExecutor(connection).migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
