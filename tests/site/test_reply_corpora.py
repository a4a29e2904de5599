"""Replies built from public reply-parsing corpora, around the site's own emails.

Each entry of mail_samples/corpora/quote_styles.json is how one client of a public
corpus (sources and licences in mail_samples/corpora/README.md) set the quoted original
below a reply: the attribution or header block it wrote, whether it quoted the original
with ">" (and the attribution too), a signature it put above, and whether the reply went
below the quote. The test wraps each style around OUR emails, rendered from the real
templates for every phase (each holds example commands), with a command typed above:
exactly that one command must be read, and of the rest only the player's own lines
reported. Each email is tried as sent, without its marker line (a client that drops it,
or an email sent before it), re-wrapped at 72 columns, and as an HTML-only reply.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from email.message import EmailMessage
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from engine.ai import RandomPlayer
from engine.game import new_game, submit
from engine.setup import Settings
from engine.view import View, view
from games.mail import compose
from games.mail.replies import REPLY_MARKER, Commands, commands, reply_text, strip_quoted
from games.show import view_text
from games.show.textboard import board_text
from games.show.words import card_text, phase_text

CORPORA = Path(__file__).parent / "mail_samples" / "corpora"
STYLES: list[dict[str, Any]] = json.loads((CORPORA / "quote_styles.json").read_text("utf-8"))
SITE = "https://games.example.org"
NAMES = {"red": "Alice", "ochre": "Bob", "lilac": "Charlie"}
LABELS = {"red": "Alice (red)", "ochre": "Bob (ochre)", "lilac": "Charlie (lilac)"}
PROSE = ("Thanks, good game.", "Alice")  # what the player writes below the command
VARIANTS = ("sent", "no marker", "wrapped", "html")


@dataclass(frozen=True)
class Sent:
    """One email of ours: what it is, the command a player answers it with, its bodies."""

    name: str
    command: str
    text: str
    html: str


# --- our emails, rendered from the templates ---------------------------------------------------


@cache
def phase_views() -> dict[str, View]:
    """A view for each kind of phase (and each kind of perform), from a game of
    computer players: the emails' asks and examples come from these."""
    players = tuple(NAMES)
    state = new_game(Settings(players=players, setup="variable", seed=11))
    brains = {colour: RandomPlayer(f"corpus/{colour}") for colour in players}
    found: dict[str, View] = {}
    for _ in range(3000):
        if state.is_over:
            break
        colour = state.waiting[0]
        shown = view(state, colour)
        ask = shown.get("ask") or {}
        extra = next((f"/{k}" for k in ("walls", "swords", "piles") if k in ask), "")
        found.setdefault(state.phase.kind + extra, shown)
        state, _ = submit(state, colour, brains[colour].choose(state, colour))
    return found


def _context(v: View | None = None) -> dict[str, Any]:
    context: dict[str, Any] = {
        "game": SimpleNamespace(name="Mail game", pk=1),
        "name": "Alice",
        "site_url": SITE,
        "game_url": f"{SITE}/games/1/",
        "prefs_url": f"{SITE}/mail/preferences/",
        "unsubscribe_url": f"{SITE}/mail/unsubscribe/abc/",
        "talk_colour": "ochre",  # Bob's, whom Alice may write to
        "deadline": "Tue 4 Mar 2025, 14:00 CET (Europe/Berlin)",
        "events": [
            "Bob bid 3 ducats and won the duel for 2 walls.",
            "Charlie placed a knight on F7.",
        ],
    }
    if v is None:
        return context
    return {
        **context,
        "v": v,
        "phase_label": view_text.phase_name(v["phase"]),
        "phase_sentence": phase_text(v["phase"], NAMES),
        "asked": view_text.asked(v, NAMES),
        "examples": view_text.examples(v),
        "board": board_text(v),
        "card": v.get("card") or "",
        "card_text": card_text(v.get("card")),
        "hand": view_text.hand(v),
        "scores": view_text.scores(v, LABELS),
        "decisions": [],
        "sealed": "",
        "magic_url": f"{SITE}/m/abc/",
        "time_left": "5 hours",
    }


def _rendered(kind: str, context: dict[str, Any]) -> tuple[str, str]:
    _, text, html = compose.render(kind, context)
    return text, html


@cache
def our_emails() -> tuple[Sent, ...]:
    """Every email that invites a reply: "your move" for each phase, a reminder, the
    answers to a refused and an accepted move (which echo commands), and results."""
    emails = []
    for name, v in sorted(phase_views().items()):
        command = view_text.examples(v)[0]
        emails.append(Sent(f"your_turn/{name}", command, *_rendered("your_turn", _context(v))))
    decision = phase_views()["decision"]
    emails.append(Sent("reminder", "decide 2, 3", *_rendered("reminder", _context(decision))))
    answer = {**_context(), "may_reply": True}
    emails.append(
        Sent(
            "move_refused",
            "decide 2, 3",
            *_rendered(
                "move_refused",
                {
                    **answer,
                    "commands": ["decide 1, 3", "bid 5"],
                    "message": "Nothing was applied: one move per reply, please.",
                },
            ),
        )
    )
    emails.append(
        Sent(
            "move_accepted",
            "bid 4",
            *_rendered(
                "move_accepted", {**answer, "commands": ["bid 3"], "message": "Accepted: bid 3."}
            ),
        )
    )
    emails.append(
        Sent(
            "results",
            "decide 2, 3",
            *_rendered(
                "results", {**_context(decision), "scores": view_text.scores(decision, LABELS)}
            ),
        )
    )
    return tuple(emails)


# --- replies in each style ---------------------------------------------------------------------


def plain_reply(style: dict[str, Any], sent: Sent, variant: str) -> str:
    """The text/plain body a client of this style writes when the player types
    `sent.command` (and a line of thanks) and sends."""
    original = sent.text.split("\n")
    if variant == "no marker":
        original = [line for line in original if line != REPLY_MARKER]
    elif variant == "wrapped":
        original = [part for line in original for part in _wrapped(line)]
    quote = style["quote"]
    if quote:
        original = [f"{quote}{line}" if line else quote.rstrip() for line in original]
    header = (
        [f"{quote}{line}".rstrip() for line in style["header"]]
        if style["quoted_header"]
        else style["header"]
    )
    player = [sent.command, "", *PROSE, ""]
    if style["below"]:
        return "\n".join([*header, *original, "", *player])
    return "\n".join([*player, *style["above"], *header, *original])


def _wrapped(line: str) -> list[str]:
    if len(line) <= 72:
        return [line]
    return textwrap.wrap(line, 72, break_long_words=False, break_on_hyphens=False)


def html_reply(style: dict[str, Any], sent: Sent) -> EmailMessage:
    """An HTML-only reply: the player's lines, the style's signature, and its header with
    our HTML body: in the quote container of a client that quotes (as Gmail's and
    Thunderbird's are marked), else as they are (Outlook, GMX)."""
    body = re.search(r"<body[^>]*>(.*)</body>", sent.html, re.DOTALL)
    assert body is not None
    original = _divs(style["header"]) + (
        f'<blockquote type="cite">{body.group(1)}</blockquote>' if style["quote"] else body.group(1)
    )
    if style["quote"]:
        original = f'<div class="gmail_quote">{original}</div>'
    player = _divs([sent.command, "", *PROSE, ""])
    parts = [original, player] if style["below"] else [player, _divs(style["above"]), original]
    message = EmailMessage()
    message.set_content(f"<html><body>{''.join(parts)}</body></html>", subtype="html")
    return message


def _divs(lines: list[str]) -> str:
    return "".join(f"<div>{_escaped(line) or '<br>'}</div>" for line in lines)


def _escaped(line: str) -> str:
    return line.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def read(style: dict[str, Any], sent: Sent, variant: str) -> Commands:
    if variant == "html":
        return commands(reply_text(html_reply(style, sent)))
    return commands(strip_quoted(plain_reply(style, sent, variant)))


def wrong(style: dict[str, Any]) -> Iterator[str]:
    """What goes wrong with this style, email by email and variant by variant."""
    for sent in our_emails():
        for variant in VARIANTS:
            got = read(style, sent, variant)
            if (got.submissions, got.errors, got.ignored) != ((sent.command,), (), PROSE):
                yield (
                    f"{sent.name} ({variant}): read {got.submissions}, errors "
                    f"{got.errors}, ignored {got.ignored[:4]}"
                )


def refused(style: dict[str, Any]) -> int:
    """How many of this style's replies would be refused (an error, or no command)."""
    return sum(
        1
        for sent in our_emails()
        for variant in VARIANTS
        if read(style, sent, variant).errors or not read(style, sent, variant).moves
    )


# --- the tests ---------------------------------------------------------------------------------


def test_every_email_that_invites_a_reply_would_be_misread_if_not_cut():
    """The test can fail: each email starts with the marker line, and below a reply, not
    cut, it is read as more commands (the examples, the echoed move) or more lines."""
    for sent in our_emails():
        assert sent.text.startswith(f"{REPLY_MARKER}\n"), sent.name
        assert REPLY_MARKER in sent.html, sent.name
        whole = commands("\n".join([sent.command, "", *PROSE, "", sent.text]))
        assert (whole.submissions, whole.errors, whole.ignored) != ((sent.command,), (), PROSE)
        assert len(whole.ignored) > len(PROSE) + 5, sent.name
    assert sum(1 for sent in our_emails() if commands(sent.text).submissions) >= 10


def test_the_styles_cover_quoted_and_unquoted_originals_from_every_corpus():
    sources = {
        style["source"].split("/")[0] + "/" + style["source"].split("/")[1] for style in STYLES
    }
    assert sources == {
        "github/email_reply_parser",
        "mailgun/talon",
        "discourse/email_reply_trimmer",
        "crisp-oss/email-reply-parser",
        "alfonsrv/mail-parser-reply",
        "fiedl/extended_email_reply_parser",
    }
    assert sum(1 for s in STYLES if not s["quote"]) >= 20
    assert len(our_emails()) >= 10


@pytest.mark.parametrize("style", STYLES, ids=[s["source"].rsplit("/", 1)[1] for s in STYLES])
def test_a_reply_in_each_corpus_style_reads_the_one_command_typed(style):
    problems = list(wrong(style))
    total = len(our_emails()) * len(VARIANTS)
    assert not problems, f"{len(problems)} of {total} wrong:\n" + "\n".join(problems[:6])
