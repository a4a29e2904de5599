"""games.mail.replies reads replies as mail clients send them: the new text, then the commands.

The samples in mail_samples/ are replies to a "the game waits for you" email whose
quoted original holds an example command ('decide 2'): a reply whose quote is not cut
shows up here as a second move.
"""

from __future__ import annotations

from email import policy
from email.message import EmailMessage
from email.parser import BytesParser
from pathlib import Path
from typing import cast

import pytest

from engine.moves import Expand, Knight, Swords
from engine.notation import _PARSERS, parse_move
from games.mail.replies import COMMAND_WORDS, commands, html_text, reply_text, strip_quoted

SAMPLES = Path(__file__).parent / "mail_samples"


def sample(name: str) -> EmailMessage:
    raw = (SAMPLES / name).read_bytes()
    return cast(EmailMessage, BytesParser(policy=policy.default).parsebytes(raw))


def html_part(message: EmailMessage) -> EmailMessage:
    """The HTML alternative alone: the email as an HTML-only client would send it."""
    part = message.get_body(preferencelist=("html",))
    assert part is not None
    return cast(EmailMessage, part)


# --- the new text, client by client ------------------------------------------------------------

CLIENTS = [
    # sample, the text written, its commands, its prose
    ("gmail_top_posted.eml", "decide 1, 3\n\nThanks, that was quick!", ["decide 1, 3"],
     ["Thanks, that was quick!"]),
    ("apple_mail.eml", "Decide 2, 3\n\nBob", ["Decide 2, 3"], ["Bob"]),
    ("iphone.eml", "Decide 1, 2", ["Decide 1, 2"], []),
    ("outlook_desktop.eml", "decide 1, 3\n\nGrüße\nCharlie", ["decide 1, 3"],
     ["Grüße", "Charlie"]),
    ("outlook_web.eml", "decide 2, 3\n\nSchöne Grüße, Bob", ["decide 2, 3"],
     ["Schöne Grüße, Bob"]),
    ("outlook_ios.eml", "Decide 1, 2", ["Decide 1, 2"], []),
    ("thunderbird.eml", "decide 2, 3\n\nCheers", ["decide 2, 3"], ["Cheers"]),
    ("html_only.eml", "Here is my action:\n\nknight F7\nexpand G7 G8\n\nGood luck!",
     ["knight F7, expand G7 G8"], ["Here is my action:", "Good luck!"]),
    ("german.eml", "decide 1, 3\n\nViele Grüße\nAlice", ["decide 1, 3"],
     ["Viele Grüße", "Alice"]),
    ("knight_expand.eml", "knight F7\nexpand G7 G8", ["knight F7, expand G7 G8"], []),
    ("prose_around.eml",
     "Hi Alice and Charlie,\n\nI'll take the walls this time:\n\nwalls F7/F8 G7/G8\n\n"
     "Good luck!\nBob", ["walls F7/F8 G7/G8"],
     ["Hi Alice and Charlie,", "I'll take the walls this time:", "Good luck!", "Bob"]),
]


@pytest.mark.parametrize(("name", "text", "submissions", "ignored"), CLIENTS,
                         ids=[c[0] for c in CLIENTS])
def test_a_reply_from_each_mail_client_reads_as_what_was_written(name, text, submissions,
                                                                ignored):
    read = commands(reply_text(sample(name)))
    assert reply_text(sample(name)) == text
    assert (list(read.submissions), list(read.ignored), read.errors) == (submissions, ignored,
                                                                         ())


@pytest.mark.parametrize("name", ["gmail_top_posted.eml", "apple_mail.eml",
                                  "outlook_desktop.eml", "outlook_ios.eml", "thunderbird.eml"])
def test_the_html_alternative_gives_the_same_commands_as_the_text(name):
    plain = commands(reply_text(sample(name)))
    html = commands(reply_text(html_part(sample(name))))
    assert html.submissions == plain.submissions and html.errors == ()
    assert html.ignored == plain.ignored


def test_text_is_preferred_to_html():
    message = sample("gmail_top_posted.eml")
    plain = message.get_body(preferencelist=("plain",))
    assert plain is not None
    plain.set_content("decide 2, 3\n", subtype="plain")  # the HTML still says decide 1, 3
    assert reply_text(message) == "decide 2, 3"


def test_an_empty_text_part_falls_back_to_the_html():
    message = sample("gmail_top_posted.eml")
    plain = message.get_body(preferencelist=("plain",))
    assert plain is not None
    plain.set_content("\n \n", subtype="plain")
    assert commands(reply_text(message)).submissions == ("decide 1, 3",)


def test_charsets_and_transfer_encodings_are_decoded():
    assert "Grüße" in reply_text(sample("outlook_desktop.eml"))  # windows-1252, QP
    assert "Schöne Grüße" in reply_text(sample("outlook_web.eml"))  # HTML only, QP
    assert "Viele Grüße" in reply_text(sample("german.eml"))  # iso-8859-1, QP
    assert reply_text(sample("outlook_ios.eml")) == "Decide 1, 2"  # base64


def test_an_unknown_charset_is_read_as_utf8():
    message = EmailMessage()
    message.set_content("decide 1, 3\n", cte="8bit")
    message.replace_header("Content-Type", 'text/plain; charset="x-made-up"')
    assert reply_text(message) == "decide 1, 3"


def test_format_flowed_lines_are_joined():
    # thunderbird.eml writes "decide 2, " and "3" as one flowed line.
    assert commands(reply_text(sample("thunderbird.eml"))).submissions == ("decide 2, 3",)


# --- quotes and signatures, line by line -----------------------------------------------------


@pytest.mark.parametrize("tail", [
    "On Mon, 3 Mar 2025 at 10:15, Löwenherz <play+x@localhost> wrote:\n> decide 2",
    "On Mon, 3 Mar 2025 at 10:15, Löwenherz <\nplay+x@localhost> wrote:\n\n> decide 2",
    "Am 03.03.2025 um 10:15 schrieb Löwenherz <play+x@localhost>:\n> decide 2",
    "Le lun. 3 mars 2025 à 10:15, Löwenherz <play+x@localhost> a écrit :\n> decide 2",
    "Le lun. 3 mars 2025 à 10:15, Löwenherz <\nplay+x@localhost> a écrit :\n\n> decide 2",
    "-----Original Message-----\nFrom: Löwenherz\nSent: Monday\n\ndecide 2",
    "________________________________\nFrom: Löwenherz\nSent: Monday\n\ndecide 2",
    "From: Löwenherz <play+x@localhost>\nSent: Monday, March 3, 2025 10:15\nTo: Alice\n\n"
    "decide 2",
    "Von: Löwenherz <play+x@localhost>\nGesendet: Montag, 3. März 2025 10:15\n\ndecide 2",
    "On Monday, Löwenherz wrote:\nThe game waits for you.\ndecide 2",  # an unquoted original
    "-- \nAlice\ndecide 2 (my favourite)",
    "--\nAlice",
    "Sent from my iPhone\n\ndecide 2",
    "Sent from my Android phone\ndecide 2",
    "Get Outlook for Android\ndecide 2",
    "> decide 2\n> pass",
])
def test_quotes_and_signatures_are_cut(tail):
    assert strip_quoted(f"decide 1, 3\n\n{tail}\n") == "decide 1, 3"


def test_a_reply_below_the_quote_and_between_quoted_lines_is_kept():
    text = ("On 03.03.25 10:15, Löwenherz wrote:\n> The game waits for you.\n>\n"
            "> What is your decision?\ndecide 1, 3\n> And your bid?\nbid 5\n")
    assert strip_quoted(text) == "decide 1, 3\nbid 5"


def test_html_blocks_and_breaks_make_lines_and_quotes_are_skipped():
    html = ("<html><head><style>p {margin:0}</style></head><body>"
            "<p>Hello,<br>my move:</p><ul><li>knight F7</li><li>expand G7&nbsp;G8</li></ul>"
            "<div><div>pass</div></div>"
            "<blockquote type='cite'>decide 2</blockquote>"
            "<div class='gmail_signature'>Alice</div>"
            "<div class='yahoo_quoted'>walls F7/F8</div><p>after</p></body></html>")
    assert html_text(html) == "Hello,\nmy move:\nknight F7\nexpand G7 G8\npass\nafter"


def test_html_source_layout_makes_no_lines_but_an_empty_paragraph_does():
    html = ("<div>\n  <div>decide 1, 3</div>\n  <div>Bye</div>\n</div>\n"
            "<p class=MsoNormal><o:p>&nbsp;</o:p></p>\n<p>Alice</p>")
    assert html_text(html) == "decide 1, 3\nBye\n\nAlice"


@pytest.mark.parametrize("separator", [
    '<div id="divRplyFwdMsg"><b>From:</b> Löwenherz</div>',
    '<div style="border:none;border-top:solid #E1E1E1 1.0pt;padding:3.0pt 0cm 0cm 0cm">',
    '<div style="border-top: 1pt solid rgb(225, 225, 225)">',
])
def test_outlook_separators_end_the_html_reply(separator):
    html = f"<div>decide 1, 3</div>{separator}<p>The game waits.</p><p>decide 2</p>"
    assert html_text(html) == "decide 1, 3"


# --- commands -----------------------------------------------------------------------------------


def test_the_command_words_are_those_the_notation_reads():
    assert set(_PARSERS) == COMMAND_WORDS


def test_knight_and_expand_lines_in_a_row_are_one_action():
    read = commands("knight F7\n\nexpand G7 G8\ntreasure 10\n")
    assert read.submissions == ("knight F7, expand G7 G8 treasure 10",)
    assert parse_move(read.submissions[0]) == Swords(
        (Knight((5, 6)), Expand(((6, 6), (6, 7)))), (10,))


def test_prose_between_two_actions_makes_two_moves_which_is_an_error():
    read = commands("knight F7\nand then\nexpand G7 G8\n")
    assert read.submissions == ("knight F7", "expand G7 G8")
    assert read.ignored == ("and then",)
    assert read.errors == ("one move per reply, please: this reply has 'knight F7' and "
                           "'expand G7 G8'",)


def test_ending_an_alliance_may_come_with_a_move():
    read = commands("break alliance C3 H5\nbid 5\ntreasure 10\n")
    assert read.submissions == ("break alliance C3 H5", "bid 5 treasure 10")
    assert read.errors == ()


def test_a_command_line_that_does_not_parse_is_an_error_with_the_notations_sentence():
    read = commands("decide 1, 3\nbid five\n")
    assert read.errors == ("'bid five': after 'bid' write an amount of ducats, like 'bid 5' "
                           "or 'bid 5 treasure 10'",)


def test_prose_that_starts_with_a_command_word_is_an_error_not_a_guess():
    assert commands("decide 1, 3\nTake care,\n").errors != ()


def test_a_treasure_line_without_a_move_above_it_is_an_error():
    assert "write Treasure cards after the move" in commands("Hi\ntreasure 10\n").errors[0]


@pytest.mark.parametrize(("line", "submission"), [
    ("Decide: 1, 3", "Decide 1, 3"),
    ("- decide 1, 3.", "decide 1, 3"),
    ("* pass!", "pass"),
    ("2. accept", "accept"),
    ("  BREAK OFF  ", "BREAK OFF"),
])
def test_bullets_colons_and_full_stops_around_a_command_are_dropped(line, submission):
    read = commands(f"Hi,\n{line}\nBye\n")
    assert read.submissions == (submission,) and read.errors == ()
    assert read.ignored == ("Hi,", "Bye")


def test_a_reply_without_a_command_has_no_submissions():
    read = commands("Sorry, I am not sure yet.\n\nAlice")
    assert read == type(read)((), ("Sorry, I am not sure yet.", "Alice"), ())
