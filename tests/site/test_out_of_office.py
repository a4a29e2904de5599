"""Issue 21 item 3: an out-of-office reply that no header marks as automatic is known by
its subject (games.mail.out_of_office.SUBJECTS) and dropped unanswered, where it used to
be answered "No command was found in your reply". The outgoing side (the headers that
stop such replies at the source) is tested on the real SMTP server in test_outbox.
"""

from __future__ import annotations

from email import message_from_bytes, policy

import pytest

from games.mail.inbound import Verdict, handle_message
from games.mail.out_of_office import SUBJECTS, is_out_of_office
from tests.site import test_inbound as base
from tests.site.test_inbound import Outbox, address_of, email, pending, snapshot
from tests.site.test_inbound_bounds import rates

fast_passwords, outbox, starter = base.fast_passwords, base.outbox, base.starter

ANSWERED = "Test game: the game waits for your decision (turn 1)"
PHRASES = [(language, phrase) for language, phrases in SUBJECTS.items() for phrase in phrases]
HOLIDAY = "I am away until 10 March and read no email.\n\nRegards,\nAlice"


@pytest.mark.parametrize(("language", "phrase"), PHRASES, ids=[p for _, p in PHRASES])
@pytest.mark.parametrize(
    "layout",
    [
        "{phrase}: {answered}",
        "{phrase} - {answered}",
        "[{upper}] {answered}",
        "{phrase}",
        "{lower}:{answered}",
    ],
)
def test_each_phrase_of_the_table_makes_an_out_of_office_subject(language, phrase, layout):
    subject = layout.format(
        phrase=phrase, upper=phrase.upper(), lower=phrase.lower(), answered=ANSWERED
    )
    assert is_out_of_office(subject), subject


def test_the_languages_the_issue_names_are_in_the_table():
    assert {"en", "de", "it", "fr", "es", "nl"} <= set(SUBJECTS)
    named = [
        "Out of office",
        "Automatic reply",
        "Abwesenheitsnotiz",
        "Automatische Antwort",
        "Risposta automatica",
        "Fuori sede",
        "Réponse automatique",
        "Absence",
        "Respuesta automática",
        "Afwezig",
    ]
    assert set(named) <= {phrase for _, phrase in PHRASES}


@pytest.mark.parametrize(
    "subject",
    [
        "Reponse automatique : Test game",  # the accents lost on the way
        "RÉPONSE AUTOMATIQUE: Test game",
        "=?utf-8?q?Risposta_automatica=3A_Test_game?=",  # as the header carries it (RFC 2047)
        "=?iso-8859-1?q?R=E9ponse_automatique_=3A_Test_game?=",
        "  Out  of  Office:  Test game",
    ],
)
def test_spelling_case_and_encoding_do_not_hide_one(subject):
    assert is_out_of_office(subject)


@pytest.mark.parametrize(
    "subject",
    [
        f"Re: {ANSWERED}",
        f"AW: {ANSWERED}",
        "Re: Out of office",  # a person answering a responder: not the responder
        "Absences in the hills: a question about the rules",  # a word that starts alike
        "Absentee",
        "Outing: Test game",
        "Test game: the game waits for your decision",
        "",
        "=?utf-8?q?broken",  # a malformed encoded word is only text
    ],
)
def test_a_persons_subject_is_no_out_of_office_reply(subject):
    assert not is_out_of_office(subject)


# --- handled: dropped unanswered, nothing changes, no limit spent ------------------------------


def holiday_reply(game, starter, subject: str) -> bytes:
    """A responder's reply, without Auto-Submitted or any other header that says so."""
    message = message_from_bytes(
        email(HOLIDAY, to=address_of(game, starter.colour), sender=starter.email),
        policy=policy.default,
    )
    message.replace_header("Subject", subject)  # non-ASCII: written as RFC 2047 words
    return message.as_bytes()


@pytest.mark.parametrize(
    "subject",
    [
        f"Automatic reply: {ANSWERED}",
        f"Abwesenheitsnotiz: {ANSWERED}",
        f"Risposta automatica: {ANSWERED}",
        f"Réponse automatique : {ANSWERED}",
        f"Respuesta automática: {ANSWERED}",
        f"Afwezig: {ANSWERED}",
        "Fuori sede",
    ],
)
def test_an_out_of_office_reply_is_dropped_without_an_answer(game, outbox, starter, subject):
    raw = holiday_reply(game, starter, subject)
    before = snapshot(game)
    result = handle_message(raw)
    assert result.verdict == Verdict.IGNORED
    assert outbox == Outbox() and snapshot(game) == before


def test_the_same_text_as_a_persons_reply_is_answered(game, outbox, starter):
    """What a responder's reply got before: the "no command" refusal."""
    raw = holiday_reply(game, starter, f"Re: {ANSWERED}")
    assert handle_message(raw).verdict == Verdict.REFUSED
    [(_, accepted, _, message)] = outbox.move_replies
    assert not accepted and message.startswith("No command was found in your reply")


def test_out_of_office_replies_spend_none_of_the_players_emails(game, outbox, starter):
    with rates(inbound="2/h"):
        for _ in range(3):
            handle_message(holiday_reply(game, starter, f"Out of Office: {ANSWERED}"))
        move = handle_message(
            email("decide 1, 3", to=address_of(game, starter.colour), sender=starter.email)
        )
    assert move.verdict == Verdict.ACCEPTED and pending(game) == {starter.colour: "decide 1, 3"}
