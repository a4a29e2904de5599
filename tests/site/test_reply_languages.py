"""Replies to a "your move" email from the mail clients of each language players write in.

The samples (mail_samples/<language>_<client>.eml) answer the site's real "your move"
email of a decision phase, whose original holds the example command 'decide 1, 3': an
original that is not cut shows up here as a second move. Each is laid out the way its
client writes a reply: GMX and web.de put "Gesendet:/Von:/An:/Betreff:" above an unquoted
original, Outlook its header block in the reader's language, phones their "sent from"
line, Yahoo and K-9 their own attributions. Some answer an email without the marker
line (sent before it, or a client that lost it): the lines the site writes show where
the original starts.
"""

from __future__ import annotations

import re

import pytest

from games.mail.replies import REPLY_MARKER, commands, html_text, reply_text
from tests.site.test_replies import html_part, sample

SAMPLES = [
    # sample, the text written (one line of it a command), whether it has the marker
    ("de_gmx.eml", "decide 1, 3\n\nViele Grüße\nAlice", True),
    ("de_webde.eml", "Hallo,\n\ndecide 2, 3\n\nGruß, Alice", True),
    ("de_outlook.eml", "decide 1, 3\n\nGrüße\nAlice", True),
    ("de_yahoo.eml", "decide 2, 3", False),
    ("de_apple_mail.eml", "Decide 1, 3\n\nViele Grüße\nAlice", True),
    ("de_k9.eml", "decide 1, 3", False),
    ("it_outlook.eml", "decide 1, 3\n\nCiao\nAlessia", True),
    ("it_libero.eml", "decide 2, 3", False),
    ("it_iphone.eml", "decide 1, 3", False),
    ("fr_outlook_com.eml", "decide 1, 3\n\nCordialement,\nAmélie", True),
    ("fr_iphone.eml", "Decide 2, 3", True),
    ("nl_outlook.eml", "decide 1, 3\n\nMet vriendelijke groet,\nDaan", True),
    ("nl_gmail.eml", "decide 2, 3", False),
    ("sv_outlook.eml", "decide 1, 3\n\nMvh\nSara", True),
    ("sv_iphone.eml", "decide 2, 3", False),
    ("da_outlook.eml", "decide 1, 3\n\nVenlig hilsen\nMads", True),
    ("no_outlook.eml", "decide 1, 3\n\nHilsen Ola", False),
    ("no_iphone.eml", "decide 2, 3", False),
    ("es_outlook.eml", "decide 1, 3\n\nSaludos,\nLucía", True),
    ("es_iphone.eml", "decide 2, 3", False),
    ("pl_outlook.eml", "decide 1, 3\n\nPozdrawiam\nPiotr", True),
    ("pl_gmail.eml", "decide 2, 3", False),
    ("pt_outlook.eml", "decide 1, 3\n\nCumprimentos,\nJoão", True),
    ("pt_gmail.eml", "decide 2, 3", False),
    ("en_hotmail.eml", "decide 1, 3\n\nCheers, Bob", True),
]


def whole_body(name: str) -> str:
    """The body as the client sent it, nothing cut (HTML made text), and without the
    quote marks (as a client that quotes without them would send it)."""
    message = sample(name)
    plain = message.get_body(preferencelist=("plain",))
    body = (
        str(plain.get_content())
        if plain is not None
        else html_text(str(html_part(message).get_content()))
    )
    return re.sub(r"(?m)^>+ ?", "", body)


@pytest.mark.parametrize(("name", "text", "marked"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_a_reply_in_each_language_reads_as_what_was_written(name, text, marked):
    command = next(line for line in text.split("\n") if line.lower().startswith("decide"))
    read = commands(reply_text(sample(name)))
    assert reply_text(sample(name)) == text
    assert (read.submissions, read.errors) == ((command,), ())
    assert list(read.ignored) == [line for line in text.split("\n") if line and line != command]


@pytest.mark.parametrize(("name", "text", "marked"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_each_sample_quotes_an_original_whose_commands_would_count(name, text, marked):
    """The samples can fail the test above: read whole, each has the original's example
    command (and the board's legend, "Walls: …") besides the player's, and is refused."""
    body = whole_body(name)
    assert (REPLY_MARKER in body) == marked
    read = commands(body)
    assert len(read.submissions) > 1 and read.errors and not read.moves


def test_the_html_alternative_of_gmx_gives_the_same_commands():
    plain = commands(reply_text(sample("de_gmx.eml")))
    html = commands(reply_text(html_part(sample("de_gmx.eml"))))
    assert (html.submissions, html.ignored, html.errors) == (plain.submissions, plain.ignored, ())


def test_every_language_and_client_named_in_the_issue_has_a_sample():
    names = {name.removesuffix(".eml") for name, _, _ in SAMPLES}
    assert {"de_gmx", "de_webde", "de_outlook", "de_yahoo", "de_apple_mail", "de_k9"} <= names
    assert {name.split("_")[0] for name in names} >= {
        "de",
        "it",
        "fr",
        "nl",
        "sv",
        "da",
        "no",
        "es",
        "pl",
        "pt",
    }
