"""What a person wrote in a reply to a game email, and the commands in it (no database).

`reply_text(message)` is the new text of a reply: the text/plain part (else the HTML
one made text), decoded, without what mail clients add: the quoted original, its
attribution line ("On … wrote:", "Am … schrieb …:", "Il giorno … ha scritto:"), header
blocks ("From: … Sent: …", "Gesendet: … Von: …", "Da: … Inviato: …", in any order) and
separators, and signatures ("-- ", "Sent from my iPhone", "Inviato da iPhone").

The site knows what it sent: every email that waits for a reply starts with
`REPLY_MARKER`, and where that line stands unquoted (or a block of lines the site
writes, if a client dropped it) the original begins, whatever the client wrote above
it. The wordings of clients in English, German, French, Italian, Dutch, the Nordic
languages, Spanish, Polish and Portuguese are a second line of defence, for an original
that lost both.

`commands(text)` reads that text line by line. A line whose first word is a command
word (`decide`, `bid`, `knight` ...) is a command; `knight`/`expand` lines that follow
each other make one submission (`knight F7, expand G7 G8`), and a `treasure …` line
belongs to the command above it. Every other line is prose: ignored, but reported. A
command line that does not parse makes the whole email wrong, so that nothing is applied
from an email the player may have mistyped.

The emails the site sent with the reply's address (`Original`, from the outbox) name
every line the site wrote, its examples too: a quote of them is cut wherever it starts,
however the client wrapped it, with or without ">" (`_sent_start`, `_continues`).

Everything here is bounded before it is read (security issue 9): the quote is looked for
in at most `MAX_READ_LINES` lines of `MAX_LINE_CHARS` characters each, from at most
`MAX_READ_CHARS` of text (more than the largest email taken), and what is left once the
quote is cut, the person's own text, is read as commands up to `MAX_LINES` lines and
`MAX_TEXT_CHARS`. No regular expression meets a line it could take more than linear time
on. `shown` cuts what an answer echoes of the email.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from email.message import EmailMessage, MIMEPart
from html.parser import HTMLParser
from typing import Any

from django.utils.translation import gettext, gettext_noop, ngettext, pgettext

from engine.board import column_name
from engine.errors import NotationError
from engine.moves import EndAlliance, Submission
from engine.notation import MAX_MOVE_CHARS, MAX_QUOTED_MOVE, parse_move, quote
from engine.position import COLOURS
from games.show import command_words
from games.show.command_words import fold
from games.show.words import refusal_text

# The first words `engine.notation.parse_move` knows (tests check they stay in step).
COMMAND_WORDS = frozenset(
    {
        "place",
        "decide",
        "offer",
        "accept",
        "break",
        "bid",
        "walls",
        "wall",
        "knight",
        "knights",
        "expand",
        "pile",
        "look",
        "take",
        "pass",
        "decline",
        "skip",
    }
)
STEP_WORDS = frozenset({"knight", "knights", "expand"})  # the steps of one Swords action
TREASURE = "treasure"

MAX_TEXT_CHARS = 100_000  # of the person's own text, once the quote is cut
MAX_LINES = 2_000
# What is read at all, quote and all: the largest email taken (inbound.MAX_MESSAGE_BYTES)
# decodes to fewer characters than this; a million short lines stop at MAX_READ_LINES.
MAX_READ_CHARS = 1_048_576
MAX_READ_LINES = 50_000
MAX_HTML_CHARS = MAX_READ_CHARS  # of an HTML body (its tags take room too)
MAX_LINE_CHARS = 1_000  # a longer line is no command (MAX_MOVE_CHARS), nor an attribution
MAX_ATTRIBUTION_CHARS = 400  # "On <date>, <name> <address> wrote:" is far shorter
MAX_HTML_DEPTH = 200  # open tags remembered; deeper ones are read as if not nested
ECHO_LINES = 10  # what an answer shows of what it refuses or ignores
ECHO_CHARS = 200
# Where `bounded` cut the text: a line that no client writes and no pattern here reads
# as a quote or an ending. If the reply's own text reaches it, the commands may have been
# cut, so `commands` refuses the email rather than apply part of a move.
CUT_LINE = "[Löwenherz: the rest of this email was not read]"


_TOO_LONG = gettext_noop(
    "only the first %(lines)s lines (%(thousands)s,000 characters) of what you write "
    "are read (the quoted email does not count): write your commands at the top, "
    "above the quoted email"
)
_TOO_LONG_VALUES = {"lines": MAX_LINES, "thousands": MAX_TEXT_CHARS // 1000}
TOO_LONG = _TOO_LONG % _TOO_LONG_VALUES  # in English; `commands` says it in the reader's

# --- the new text of a reply ------------------------------------------------------------------


def reply_text(message: EmailMessage, sent: Sequence[Original] = ()) -> str:
    """The text the person wrote, without quotes and signature; `sent`: the emails the
    site sent with the reply's address (`originals`), which the reply may quote."""
    return strip_quoted(_body_text(message), sent)


def bounded(text: str, chars: int = MAX_TEXT_CHARS, count: int = MAX_LINES) -> str:
    """What is read of `text`: at most `chars`, in at most `count` lines of at most
    `MAX_LINE_CHARS`. A cut line ends in "…", which no command word or cell ends in, so
    that it cannot become a shorter valid move; if lines are left out, `CUT_LINE` takes
    their place."""
    was_cut = text.endswith(f"\n{CUT_LINE}")  # bounded already (callers may nest)
    if was_cut:
        text = text[: -len(CUT_LINE) - 1]
    parts = text[:chars].split("\n", count)
    if len(text) > chars and len(parts) <= count:
        parts[-1] = parts[-1].removesuffix("…") + "…"  # the last line, cut in the middle
    lines = [
        line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "…"
        for line in parts[:count]
    ]
    if was_cut or len(text) > chars or len(parts) > count:
        lines.append(CUT_LINE)
    return "\n".join(lines)


def read_bounded(text: str) -> str:
    """What is read of a whole email, its quote included (`MAX_READ_CHARS`)."""
    return bounded(text, MAX_READ_CHARS, MAX_READ_LINES)


def _body_text(message: EmailMessage) -> str:
    plain = message.get_body(preferencelist=("plain",))
    if plain is not None:
        text = _unflow(_decoded(plain), plain)  # linear; the message is under 1 MB
        if text.strip():
            return read_bounded(text)
    html = message.get_body(preferencelist=("html",))
    if html is None:
        return ""
    source = _decoded(html)
    cut = f"\n{CUT_LINE}" if len(source) > MAX_HTML_CHARS else ""
    return read_bounded(html_text(source[:MAX_HTML_CHARS]) + cut)


def _decoded(part: MIMEPart) -> str:
    """The part as text: transfer encoding undone, charset decoded, newlines as \\n."""
    try:
        text = part.get_content()
    except LookupError:  # a charset Python does not know: read what it can as UTF-8
        payload = part.get_payload(decode=True)
        raw = payload if isinstance(payload, bytes) else b""
        text = raw.decode("utf-8", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _unflow(text: str, part: MIMEPart) -> str:
    """RFC 3676 format=flowed (Apple Mail, Thunderbird): a line ending in a space goes on
    in the next line of the same quote depth."""
    if str(part.get_param("format", "")).lower() != "flowed":
        return text
    delete_space = str(part.get_param("delsp", "")).lower() == "yes"
    # Each line as a list of pieces, joined at the end: adding to a growing string
    # would copy it once per flowed line, quadratic in a long paragraph.
    lines: list[list[str]] = []
    depths: list[int] = []
    joining = False
    for line in text.split("\n"):
        depth = len(line) - len(line.lstrip(">"))
        body = line[depth:]
        body = body[1:] if body.startswith(" ") else body  # space-stuffing
        if joining and lines and depths[-1] == depth:
            lines[-1].append(body)
        else:
            lines.append([">" * depth + (" " if depth and body else "") + body])
            depths.append(depth)
        joining = body.endswith(" ") and body != "-- "
        if joining and delete_space:
            lines[-1][-1] = lines[-1][-1][:-1]
    return "\n".join("".join(pieces) for pieces in lines)


_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))

# --- the site's own email: the marker line, and the lines the site writes ---------------------

# The first line of every email that invites a reply (templates/emails/*-body.*). Clients
# quote it, wrap it, turn it from HTML into text; what stays is its words.
REPLY_MARKER = "## Reply above this line ##"
# The marker in the other languages the emails are written in (its words are read back
# here, whatever the reader's language: not in the catalogues, so that they cannot drift).
REPLY_MARKERS = {
    "de": "## Oberhalb dieser Zeile antworten ##",
    "it": "## Rispondi sopra questa riga ##",
}
SIGNATURE = "\n-- \n"  # the footer's delimiter (templates/emails/_footer.txt); clients know it
_NOT_LETTERS = re.compile(r"[^a-z]+")
_MARKER_WORDS = tuple(
    _NOT_LETTERS.sub("", marker.lower()) for marker in (REPLY_MARKER, *REPLY_MARKERS.values())
)
# The examples of templates/emails/_talk.txt in each language (docs/glossary.md 2.3): a
# message to everyone, and the words of one to a single player, whose colour is the
# reader's to write to (`talk_words`). Never read as a player's message: constants, like
# the markers, so that they cannot drift.
TALK_EXAMPLES_IN = {
    "en": (
        "say Shall we leave the hills to each other?",
        "I will not enter your region this turn.",
    ),
    "de": (
        "nachricht Wollen wir uns die Gebirge gegenseitig lassen?",
        "Ich erweitere diese Runde nicht in dein Gebiet.",
    ),
    "it": (
        "messaggio Ci lasciamo a vicenda le montagne?",
        "questo turno non entro nel tuo territorio.",
    ),
}


def _to_one(short: str, colour: str) -> str:
    """ "to ochre:" in the words of the language `short` ("de", "it"; English else)."""
    to_word = command_words.talk_to_reader("to", short)
    return f"{to_word} {command_words.talk_to_reader(colour, short)}:"


def _talk_examples(short: str, colour: str) -> tuple[str, str]:
    say, to_one = TALK_EXAMPLES_IN.get(short, TALK_EXAMPLES_IN["en"])
    return say, f"{_to_one(short, colour)} {to_one}"


TALK_EXAMPLES = tuple(
    dict.fromkeys(
        line
        for short in TALK_EXAMPLES_IN
        for colour in COLOURS
        for line in _talk_examples(short, colour)
    )
)

# Lines the site writes in those emails (templates/emails/, games.mail.compose,
# games.show.textboard), in lower case, as the text body says them and as a client makes
# text of the HTML body. A STRONG line says what only the site says: (how it starts, what
# it holds further on); a WEAK one could be a person's, and counts only beside a strong one.
_STRONG = (
    ("the game ", " waits for you"),
    ("a reminder: the game ", " still waits for your move"),
    ("your move in ", " accepted"),
    ("what is asked (", ")"),
    ("reply to this email with your move", ""),
    ("or reply to this email with your move", ""),
    ("or open the game, already signed in", ""),
    ("your sealed submission so far:", ""),
    ("decisions this turn:", ""),
    ("nothing worth telling happened", ""),
    ("politics cards:", ""),
    ("knights in your supply:", ""),
    ("castle/knight:", ""),
    (". plain, f forest", ""),
    ("walls: | between two cells", ""),
    ("place ", " castle and a knight beside it."),
    ("castle cells you may choose:", ""),
    ("choose ", " (1, 2 or 3) for the action card"),
    ("you may play ", " with a card."),
    ("", " or break off for a duel."),
    ("make a sealed bid", ""),
    ("place up to ", " legal), or pass."),
    ("use ", ": place knights, expand a region, or pass."),
    ("knights may go to:", ""),
    ("regions may expand into:", ""),
    ("the crown: choose a politics pile", ""),
    ("take one card from politics pile ", ""),
    ("(no command found in your email)", ""),
    ("reply to this email with a corrected move", ""),
    ("until everybody's submission is in", ""),
    ('a reply line starting with "say" writes to everyone', ""),
    ("reply to this email with one of these lines above the quoted text", ""),
    ("", " asks the table to extend the deadline by "),
    ("", " asks the table to pause the phase for "),
    ("the vote is open until ", ", or until the phase ends."),
    ("talk to the table: a reply line starting with say", ""),
    *((example.lower(), "") for example in TALK_EXAMPLES),
)
_STRONG_HEADINGS = frozenset(
    {
        "how to move",
        "the board",
        "your hand",
        "the action card",
        "what happened last",
        "what happened since our last email",
        "open the game, signed in",
        "(earlier events: see the game page.)",
        "talk to the table",
        "how to vote",
    }
)
_WEAK_STARTS = ("deadline:", "waiting for:", "ducats:", "the game: http")
_WEAK_LINES = frozenset({"scores", "next", "nothing yet.", "nothing new."})
# a score line: "Alice (red) (you): power 3, 5 ducats, 2 politics cards"
_SCORE_LINE = re.compile(r"[^:]{1,120}\): power \d+.*")
ROW_CELLS = ".FHT"  # games.show.textboard: the terrain marks that start each cell


def _key(line: str) -> str:
    """A line's letters alone, in lower case: what survives quoting, wrapping and HTML."""
    return _NOT_LETTERS.sub("", line.lower())


def _is_marker(lines: list[str], at: int) -> bool:
    """`REPLY_MARKER` on this line, or wrapped over it and the next."""
    line = lines[at]
    if "#" not in line:
        return False
    words = _key(line)
    if any(marker in words for marker in _MARKER_WORDS):
        return True
    following = _key(lines[at + 1]) if at + 1 < len(lines) else ""
    return bool(words) and any(marker in words + following for marker in _MARKER_WORDS)


def reply_marker(language: str) -> str:
    """The marker line of an email in this language (a language code: "de", "en-gb")."""
    return REPLY_MARKERS.get(language.split("-")[0].lower(), REPLY_MARKER)


def talk_words(language: str, to_colour: str) -> dict[str, Any]:
    """What templates/emails/_talk.* shows in this language to a reader who may write to
    the player of `to_colour` alone (games.chat.addressees; "": to nobody, and the emails
    say nothing of talk): the words that start a message and the two example lines."""
    short = language.split("-")[0].lower()
    return {
        "talk_to_colour": to_colour,
        "talk_say": command_words.talk_to_reader("say", short),
        "talk_to": {"de": "an <Farbe>:", "it": "a <colore>:"}.get(short, "to <colour>:"),
        "talk_to_one": _to_one(short, to_colour) if to_colour else "",
        "talk_examples": _talk_examples(short, to_colour) if to_colour else (),
    }


def without_marker(text: str) -> str:
    """`text` without the marker line it starts with, in any language."""
    for marker in (REPLY_MARKER, *REPLY_MARKERS.values()):
        if text.startswith(marker):
            return text.removeprefix(marker)
    return text


def _site_line(line: str) -> int:
    """2 for a line only the site writes, 1 for one it writes that a person might too,
    0 for any other line."""
    text = line.strip().strip("*#").strip().lower()
    if not text or len(text) > MAX_ATTRIBUTION_CHARS:
        return 0
    if text in _STRONG_HEADINGS or any(
        text.startswith(start) and part in text for start, part in _STRONG
    ):
        return 2
    greeting = text.startswith("hello ") and text.endswith(",")
    heading = text.startswith("in the game ") and text.endswith(":")
    if (
        greeting
        or heading
        or text in _WEAK_LINES
        or text.startswith(_WEAK_STARTS)
        or _SCORE_LINE.fullmatch(text)
        or _is_board_row(line.strip())
        or _is_column_names(text)
    ):
        return 1
    return 0


def _is_board_row(line: str) -> bool:
    """A row of `games.show.textboard`: " 3 H  .R . |." is a number, then cells of a terrain
    mark and a piece, each after a space or a wall ("|"); or a line of walls ("--")."""
    if line and set(line) <= {"-", " "}:
        return "--" in line
    number, _, cells = line.partition(" ")
    if not (number.isdigit() and len(number) <= 2 and len(cells) >= 4):
        return False
    for index, char in enumerate(cells):
        place = index % 3
        if (
            (place == 0 and char not in ROW_CELLS)
            or (place == 2 and char not in " |")
            or (place == 1 and not (char == " " or char.isalpha()))
        ):
            return False
    return True


def _is_column_names(text: str) -> bool:
    """The board's first line: "A  B  C …", the columns in order."""
    names = text.upper().split()
    return len(names) >= 2 and names == [column_name(x) for x in range(len(names))]


def _original_start(lines: list[str]) -> int:
    """Where the site's own email starts among the reply's unquoted lines: at the marker
    line, or at a block of site lines (two or more, one of them strong) if the client
    dropped the marker; else the number of lines. A quoted (">") original is no reason
    to cut: the reply may go on below it."""
    run_start, run_lines, run_strong = -1, 0, False
    for at, line in enumerate(lines):
        text = line.strip()
        if not text or text.startswith(">"):
            continue
        if _is_marker(lines, at):
            return at
        kind = _site_line(text)
        if not kind:
            run_start, run_lines, run_strong = -1, 0, False
            continue
        if not run_lines:
            run_start = at
        run_lines, run_strong = run_lines + 1, run_strong or kind == 2
        if run_lines >= 2 and run_strong:
            return run_start
    return len(lines)


# --- the emails the site sent with this reply address -----------------------------------------
#
# The static lines above know the site's wording, not what one email said: its examples
# ("decide 1, 3"), the move it echoed, the board. The emails themselves are in the
# outbox, so the reply's own address names them (games.mail.inbound). Their words, in
# order, without spaces, punctuation and links, survive whatever a client does to a
# quote (wraps it, indents it, drops its ">", makes text of its HTML), so a quote is the
# reply's last lines matching the words of an email up to its end: wherever a person
# cut its top, by any one line of it. Position tells a quoted example from the same
# line typed: a typed line is above the quote, not in its unbroken run to the end.

SENT_CHARS = 200_000  # of each body kept: the site's emails are about 7,000 characters
SENT_EMAILS = 8  # the newest with one address: a reply quotes one of them
MAX_OCCURRENCES = 50  # where a wrapped line's words are looked for in an email
WRAPPED_LINES = 8  # the parts of one line of an email a client may wrap it into
CONTINUATIONS = 2_000  # lines under a quoted line looked at as wrapped parts of it
_LINK = re.compile(r"(?:https?://|mailto:|www\.)\S*", re.IGNORECASE)
_NOT_WORD = re.compile(r"[\W_]+")


@dataclass(frozen=True)
class Original:
    """One body (text or HTML) of an email the site sent: its `words` (`_words` of each
    line, joined); the places in `words` where a line of it starts, and those where a
    client may show an empty line (where the text has one; between any two blocks of
    the HTML); and how many of the words at its end are the footer (a client may leave
    a signature out of a quote)."""

    words: str
    line_starts: frozenset[int]
    breaks: frozenset[int]
    footer: int


def originals(sent: Sequence[tuple[str, str]]) -> tuple[Original, ...]:
    """The bodies (text, HTML) of the emails sent with a reply address, newest first, as
    `Original`s: both, since a client may quote either."""
    found: list[Original] = []
    for text, html in sent[:SENT_EMAILS]:
        text = text[:SENT_CHARS]
        # The footer starts with its first line ("Löwenherz by email"), in both bodies.
        _, delimiter, footer = text.rpartition(SIGNATURE)
        first = _words(footer.split("\n", 1)[0]) if delimiter else ""
        found.append(_original(text.split("\n"), first, html=False))
        if html:
            found.append(_original(html_text(html[:SENT_CHARS]).split("\n"), first, html=True))
    return tuple(found)


def _original(lines: list[str], footer_start: str, html: bool) -> Original:
    words: list[str] = []
    starts, breaks, size, empty = set(), {0}, 0, False
    for line in lines:
        key = _words(line[:MAX_LINE_CHARS])
        if not key:
            empty = empty or not line.strip()
            continue
        starts.add(size)
        if empty or html:
            breaks.add(size)
        words.append(key)
        size, empty = size + len(key), False
    joined = "".join(words)
    start = joined.rfind(footer_start) if footer_start else -1
    return Original(
        joined, frozenset(starts), frozenset(breaks), len(joined) - start if start >= 0 else 0
    )


def _words(line: str) -> str:
    """A line's words alone, in lower case, without links: what a quote keeps of it."""
    return _NOT_WORD.sub("", _LINK.sub(" ", line.lower()))


def _sent_start(lines: list[str], sent: Sequence[Original]) -> int:
    """Where a quote of an email in `sent` starts: the first of the reply's last unquoted
    lines (below any ">" line) whose words run on, unbroken, to the email's end (its
    footer may be left out; if what is read was cut, `CUT_LINE`, to anywhere in it),
    from the start of one of its lines. Else the number of lines."""
    cut = bool(lines) and lines[-1] == CUT_LINE
    keyed: list[tuple[int, str]] = []
    for at in range(len(lines) - (1 if cut else 0)):
        if lines[at].lstrip().startswith(">"):
            keyed = []  # a quote with ">" is cut already; a run starts below it
        elif words := _words(lines[at]):
            keyed.append((at, words))
    if not keyed or not sent:
        return len(lines)
    run = _Run(lines, keyed)
    first = min(run.first_quoted(original, cut) for original in sent)
    if first == len(keyed):
        return len(lines)
    start = keyed[first][0]
    while start and not _words(lines[start - 1]) and not lines[start - 1].lstrip().startswith(">"):
        start -= 1  # a line of the email without words: its link, its "-- "
    return start


class _Run:
    """The reply's last unquoted lines with words (`keyed`: line index, words), and
    where each line's words start in all of theirs joined."""

    def __init__(self, lines: list[str], keyed: list[tuple[int, str]]) -> None:
        self.lines, self.keyed = lines, keyed
        self.joined = "".join(words for _, words in keyed)
        self.offsets = [0]
        for _, words in keyed:
            self.offsets.append(self.offsets[-1] + len(words))

    def first_quoted(self, original: Original, anywhere: bool) -> int:
        """The first line (an index into `keyed`) of a quote of `original`: the least
        from which the words are the end of it (`anywhere`: in it), found by bisection,
        since a line that runs on to its end makes every line below it do so too; then
        moved down to the first line that starts one of the original's lines and is not
        set apart by an empty line the original does not have there (a line typed
        above a quote cut right under the same words, "pass" above "Or open the
        game" after an example "pass", is the person's)."""
        low, high = 0, len(self.keyed)  # the empty run, at the end, always is
        while low < high:
            middle = (low + high) // 2
            if self._found(middle, original, anywhere) >= 0:
                high = middle
            else:
                low = middle + 1
        if low == len(self.keyed):
            return low
        place = self._found(low, original, anywhere)
        low, place = self._to_line_start(low, place, original)
        if (
            low + 1 < len(self.keyed)
            and self._empty_line_after(low)
            and place + len(self.keyed[low][1]) not in original.breaks
        ):
            low, place = self._to_line_start(low + 1, place + len(self.keyed[low][1]), original)
        return low

    def _to_line_start(self, index: int, place: int, original: Original) -> tuple[int, int]:
        """The first line from `index` on (at `place` in the original) that starts one."""
        while index < len(self.keyed) and place not in original.line_starts:
            place += len(self.keyed[index][1])
            index += 1
        return index, place

    def _found(self, first: int, original: Original, anywhere: bool) -> int:
        """Where the words from line `first` on are in `original`, ending in its footer
        or at its end (`anywhere`: anywhere); -1 if not. Searched in the end alone:
        linear."""
        text = original.words
        if len(self.joined) - self.offsets[first] > len(text):
            return -1  # before the copy: the run may be a whole long email
        words = self.joined[self.offsets[first] :]
        if anywhere:
            return text.find(words)
        return text.find(words, max(0, len(text) - original.footer - len(words)))

    def _empty_line_after(self, index: int) -> bool:
        after, before = self.keyed[index][0], self.keyed[index + 1][0]
        return any(not self.lines[at].strip() for at in range(after + 1, before))


def _continues(lines: list[str], at: int, sent: Sequence[Original]) -> bool:
    """Whether unquoted `lines[at]` goes on a ">" line above it that a client wrapped
    without adding ">": the words of the quoted lines above, from the start of a line
    of an email in `sent` (up to `WRAPPED_LINES` of them), and its own follow each other
    in that email, joined in the middle of one of its lines (a line the person wrote
    under a quote starts after a whole one). A line of a link alone, under a quoted
    line, is the rest of it (a link is never a command)."""
    words = _words(lines[at])
    if not words:
        return True
    before: list[str] = []
    for above in range(at - 1, max(-1, at - 1 - WRAPPED_LINES), -1):
        text = lines[above].lstrip()
        if not text.startswith(">") or not (key := _words(text)):
            break
        before.insert(0, key)
    return any(
        _joined_inside("".join(before[first:]), words, original)
        for first in range(len(before))
        for original in sent
    )


def _joined_inside(head: str, words: str, original: Original) -> bool:
    """`head` from the start of a line of `original`, and `words` right after it, not
    at the start of a line."""
    found = original.words.find(head + words)
    for _ in range(MAX_OCCURRENCES):
        if found < 0:
            return False
        if found in original.line_starts and found + len(head) not in original.line_starts:
            return True
        found = original.words.find(head + words, found + 1)
    return False


def _quote_continuations(lines: list[str], sent: Sequence[Original]) -> list[str]:
    """The lines, with ">" before each one that goes on a quoted line (`_continues`);
    of the lines under a quoted one, the first `CONTINUATIONS` are looked at (bounded
    work; any later one is read as it stands)."""
    marked = list(lines)
    budget = CONTINUATIONS
    for at in range(1, len(marked)):
        line = marked[at]
        if (
            line.strip()
            and not line.lstrip().startswith(">")
            and marked[at - 1].lstrip().startswith(">")
        ):
            if not budget:
                break
            budget -= 1
            if _continues(marked, at, sent):
                marked[at] = ">" + line
    return marked


# --- what clients write above the original -------------------------------------------------

# "On <date>, <name> <address> wrote:" in the languages players write in; each has one
# wildcard before its verb, so that a line without the verb fails in linear time.
_ATTRIBUTION = re.compile(
    r"(on\s.+\swrote|am\s.+\sschrieb.*|am\s.+\s(folgendes\s)?geschrieben"
    r"|le\s.+\sa\s+[ée]crit|el\s.+\sescribi[óo]|op\s.+\s(schreef.*|het\svolgende\sgeschreven)"
    r"|(il|in\sdata)\s.+\sha\sscritto|em\s.+\sescreveu|(dnia|w\sdniu)\s.+\s(napisał|pisze).*"
    r"|dne\s.+\snapsal.*|den\s.+\sskrev.*)\s*:",
    re.IGNORECASE,
)
# Without a known first word, the verb needs an address or a date on the line: K-9's
# "Alice <a@b.org> wrote:", Gmail's "15. marts 2017 kl. 11.00 skrev Bob <b@c.dk>:".
_ATTRIBUTION_VERB = re.compile(
    r".+\s(wrote|schrieb|a\s+[ée]crit|escribi[óo]|ha\sscritto|schreef|skrev|napisał\(a\)"
    r"|napisał|napisała|escreveu|kirjoitti|napsal\(a\)|írta)(\s.*)?:",
    re.IGNORECASE,
)
_SEPARATOR = re.compile(
    r"\**(_{10,}|-{2,}\s*(original message|ursprüngliche nachricht|message d'origine"
    r"|mail original|message original|messaggio originale|mensaje original|mensagem original"
    r"|oorspronkelijk bericht|origineel bericht|ursprungligt meddelande|oprindelig meddelelse"
    r"|oprindelig besked|opprinnelig melding|wiadomość oryginalna|oryginalna wiadomość"
    r"|reply message|forwarded message|weitergeleitete nachricht|message transféré"
    r"|on\s.+\swrote)\s*-*)\**",  # Zoho: "---- On <date> <address> wrote ----"
    re.IGNORECASE,
)
# Signatures phones and mail apps add, in the languages above: the original may follow
# at once, without a quote mark or an attribution.
_MOBILE_SIGNATURE = re.compile(
    r"(sent from my \S.*|sent (from|with|via) (outlook|yahoo|mail|aol|gmail|proton|samsung)\w*\b.*"
    r"|get outlook for \S.*"
    r"|von meine[mr]\S* \S.* gesendet\.?|gesendet (von|mit|vom) \S.*"
    r"|diese nachricht wurde .* gesendet\.?"
    r"|envoy[ée] (de|depuis|à partir de) \S.*|télécharger outlook pour \S.*"
    r"|inviato (da|dal) \S.*|scarica outlook per \S.*"
    r"|enviad[oa] (desde|do|de|a partir d[eo]) \S.*|descargar outlook para \S.*"
    r"|obter o outlook para \S.*|baixe o outlook para \S.*"
    r"|(verzonden|verstuurd) (vanaf|met|vanuit) \S.*|outlook voor \S.* downloaden"
    r"|skickat från \S.*|hämta outlook för \S.*|sendt fra \S.*|hent outlook (for|til) \S.*"
    r"|wysłane z \S.*|wysłano z \S.*|pobierz outlook dla \S.*"
    # Russian, Ukrainian, Czech, Slovak, Finnish, Romanian, Catalan, Greek, Hebrew, Turkish,
    # Hungarian, Chinese, Japanese, Korean: phones' own wordings (bounded, each linear)
    r"|отправлено (с|из|со) \S.*|надіслано (з|із) \S.*|odesláno z \S.*|odoslané z \S.*"
    r"|lähetetty \S.*|trimis de pe \S.*|enviat (des de|des del|amb) \S.*"
    r"|(στάλθηκε|εστάλη) από \S.*|נשלח מ\S.*"
    r"|\S{1,30}(umdan|imden|ımdan|ümden) gönderildi\.?"
    r"|(az )?(iphone|ipad|android|mobil|telefon|outlook)\S{0,12} küldve"
    r"|(从|從)我的\s?\S{1,20}(发送|發送)|(发|發)自我的\s?\S{1,20}|\S{1,20}から送信"
    r"|\S{1,20}에서 보냄)",
    re.IGNORECASE,
)
# The header words of a quoted original ("From: … Sent: …"), Outlook's and webmail's, in
# English, German, French, Italian, Dutch, Swedish, Danish/Norwegian, Spanish, Polish and
# Portuguese. Two header lines in a row, in any order, start the original.
_HEADER_WORDS = (
    "from",
    "sent",
    "date",
    "to",
    "cc",
    "bcc",
    "subject",
    "reply-to",
    "von",
    "gesendet",
    "an",
    "betreff",
    "datum",
    "kopie",
    "antwort an",
    "de",
    "envoyé",
    "envoyé le",
    "à",
    "objet",
    "date d'envoi",
    "répondre à",
    "expéditeur",
    "da",
    "inviato",
    "a",
    "oggetto",
    "data",
    "risposta",
    "van",
    "verzonden",
    "aan",
    "onderwerp",
    "från",
    "skickat",
    "till",
    "ämne",
    "kopia",
    "fra",
    "sendt",
    "til",
    "emne",
    "dato",
    "kopi",
    "enviado",
    "enviado el",
    "para",
    "asunto",
    "fecha",
    "od",
    "wysłano",
    "do",
    "temat",
    "dw",
    "enviada",
    "enviada em",
    "enviado em",
    "assunto",
)
_HEADER_LINE = re.compile(
    r"[*\s]{0,4}("
    + "|".join(sorted(map(re.escape, _HEADER_WORDS), key=len, reverse=True))
    + r")[\s*]{0,3}:",
    re.IGNORECASE,
)
_COLONS = (":", "：")


def strip_quoted(text: str, sent: Sequence[Original] = ()) -> str:
    """Cut quoted text and signatures from a reply's text.

    The site's own email, wherever it stands unquoted (its marker line, or a block of
    lines the site writes), and everything below it are the original, and so is what
    the client wrote just above it (an attribution, a header block, a separator).
    Lines quoted with ">" are dropped wherever they are, so that a reply written below
    the quote (Thunderbird's habit) or between quoted lines is kept. An attribution line
    is dropped when a quote follows it; when unquoted text follows it, as after
    Outlook's header blocks and separators, that is the original: the rest is cut.
    `sent`: the emails sent with the reply's address, whose lines are quoted wherever
    they stand at the reply's end, and count as quoted when wrapped below a ">" line.

    The whole email is read up to `MAX_READ_CHARS`: the limits of what is read as
    commands bound the person's text, not the quote."""
    lines = read_bounded(text).translate(_INVISIBLE).replace("\xa0", " ").split("\n")
    if sent:
        lines = _quote_continuations(lines, sent)
    start = min(_original_start(lines), _sent_start(lines, sent))
    end = _player_end(lines, start)
    kept: list[str] = []
    at = 0
    while at < end:  # what a line means may depend on the lines after `end`
        line = lines[at]
        if _ends_reply(lines, at):
            break
        attribution = _attribution_lines(lines, at)
        if attribution:
            if not _quote_follows(lines, at + attribution):
                break
            at += attribution
            continue
        if not line.lstrip().startswith(">"):
            kept.append(line.rstrip())
        at += 1
    return _tidy("\n".join(kept))


def _player_end(lines: list[str], end: int) -> int:
    """Where the person's text ends above an original starting at `end`: without what the
    client put between them (blank lines, a header block in any language, a separator,
    an attribution in any wording that names an address or a date)."""
    if end >= len(lines):
        return end
    for _ in range(4):  # each kind at most once, in any order
        start = end
        end = _skip_blank(lines, end)
        end = _skip_headers(lines, end)
        end = _skip_blank(lines, end)
        if end and (
            _SEPARATOR.fullmatch(lines[end - 1].strip())
            or _MOBILE_SIGNATURE.fullmatch(lines[end - 1].strip())
        ):
            end -= 1
        end -= _trailing_attribution(lines, end)
        if end == start:
            break
    return end


def _skip_blank(lines: list[str], end: int) -> int:
    while end and not lines[end - 1].strip():
        end -= 1
    return end


def _skip_headers(lines: list[str], end: int) -> int:
    """Before `end`: two or more "Word: …" lines in a row are a header block, in any
    language (only here, right above the site's email, is that safe to say)."""
    start = end
    while start and _is_any_header(lines[start - 1]):
        start -= 1
    return start if end - start >= 2 else end


def _is_any_header(line: str) -> bool:
    name, colon, _ = line.strip().strip("*").partition(":")
    name = name.strip(" *")
    return (
        bool(colon)
        and 0 < len(name) <= 30
        and command_word(name) not in COMMAND_WORDS
        and all(part.isalpha() for part in name.replace("-", " ").replace("'", " ").split())
    )


def _trailing_attribution(lines: list[str], end: int) -> int:
    """1 to 3 if the lines before `end` are an attribution, wrapped over up to three
    lines, none of them a command: known wording, or ending in a colon with an address
    or a date in it."""
    parts: list[str] = []
    found = 0
    for count in range(1, 4):
        at = end - count
        if at < 0 or not _may_attribute(lines[at]):
            break
        parts.insert(0, lines[at].strip())
        joined, loose = " ".join(parts), found == 0 or _wraps(lines[at])
        if _is_attribution(joined, loose) or (loose and _introduces(joined)):
            found = count
    return found


def _introduces(line: str) -> bool:
    """Any wording ("… írta:", "… 写道：") that names an address or a date and ends in a
    colon: right above the site's email, that is the client's attribution."""
    return len(line) <= MAX_ATTRIBUTION_CHARS and line.endswith(_COLONS) and _names_someone(line)


def _names_someone(line: str) -> bool:
    return "@" in line or any(char.isdigit() for char in line)


def _ends_reply(lines: list[str], at: int) -> bool:
    line = lines[at].strip()
    return (
        lines[at].rstrip() == "--"
        or bool(_SEPARATOR.fullmatch(line))
        or bool(_MOBILE_SIGNATURE.fullmatch(line))
        or _is_header_block(lines, at)
    )


def _is_header_block(lines: list[str], at: int) -> bool:
    """A header line ("From: …", "Gesendet: …", "Da: …") with another one right after
    it (a wrapped address may stand between): Outlook's and the webmailers' header
    blocks, in any order."""
    if not _is_header(lines[at]):
        return False
    return any(_is_header(line) for line in lines[at + 1 : at + 3])


def _is_header(line: str) -> bool:
    text = line.strip()
    return (
        not text.startswith(">") and len(text) <= MAX_LINE_CHARS and bool(_HEADER_LINE.match(text))
    )


def _attribution_lines(lines: list[str], at: int) -> int:
    """1 to 3 if an attribution ("On … wrote:") starts here, over up to three lines;
    else 0. Gmail wraps long attributions: "On …, Löwenherz <" / "play+…@host> wrote:".
    A command line is never part of one."""
    parts: list[str] = []
    for count in range(1, 4):
        if at + count > len(lines) or not _may_attribute(lines[at + count - 1]):
            return 0
        parts.append(lines[at + count - 1].strip())
        joined = " ".join(parts)
        if _is_attribution(joined, count == 1 or _wraps(lines[at])):
            return count
        # Any wording ("… пишет:", "… 写道：") that names someone, if a quote or nothing
        # follows it: what the person wrote never ends so.
        if (
            (count == 1 or _wraps(lines[at]))
            and _introduces(joined)
            and _quote_or_end_follows(lines, at + count)
        ):
            return count
    return 0


def _may_attribute(line: str) -> bool:
    text = line.strip()
    return (
        bool(text)
        and not text.startswith(">")
        and command_word(text) not in COMMAND_WORDS
        and said_on(text) is None
    )


def _wraps(line: str) -> bool:
    """The first line of an attribution the client wrapped: a name or date goes on."""
    return _names_someone(line) or line.rstrip().endswith(("<", "(", ","))


def _is_attribution(line: str, loose: bool = True) -> bool:
    """Short, ending in a colon, and then the patterns: on a line ending in ':', each
    `.+`/`.*` of `_ATTRIBUTION` finds its end at once instead of trying every split of the
    line (quadratic on a long line with many " schrieb"). `loose`: also a verb without a
    known first word, on a line with an address or a date."""
    if len(line) > MAX_ATTRIBUTION_CHARS or not line.endswith(_COLONS):
        return False
    if _ATTRIBUTION.fullmatch(line):
        return True
    return loose and _names_someone(line) and bool(_ATTRIBUTION_VERB.fullmatch(line))


def _quote_follows(lines: list[str], at: int) -> bool:
    return _following(lines, at).startswith(">")


def _quote_or_end_follows(lines: list[str], at: int) -> bool:
    following = _following(lines, at)
    return not following or following.startswith(">")


def _following(lines: list[str], at: int) -> str:
    """The next line with text from `at` on, stripped ("" if none). By index, not a
    slice: a copy of the rest per attribution would be quadratic."""
    return next((lines[n].strip() for n in range(at, len(lines)) if lines[n].strip()), "")


def _tidy(text: str) -> str:
    """No space at the ends, and at most one empty line in a row."""
    return re.sub(r"\n{3,}", "\n\n", text).strip()


# --- HTML as text -----------------------------------------------------------------------------

_BLOCKS = frozenset(
    {
        "address",
        "article",
        "aside",
        "blockquote",
        "br",
        "dd",
        "div",
        "dl",
        "dt",
        "footer",
        "form",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "header",
        "hr",
        "li",
        "main",
        "ol",
        "p",
        "pre",
        "section",
        "table",
        "td",
        "th",
        "tr",
        "ul",
    }
)
_VOID = frozenset(
    {
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "source",
        "track",
        "wbr",
    }
)
_HIDDEN = frozenset({"head", "script", "style", "template", "title"})
# Mail clients mark the quoted original (and the signature) with these classes.
_QUOTE_CLASSES = frozenset(
    {
        "gmail_quote",
        "gmail_quote_container",
        "gmail_attr",
        "gmail_signature",
        "yahoo_quoted",
        "moz-cite-prefix",
        "moz-signature",
        "protonmail_quote",
        "x_gmail_quote",
    }
)
# GMX and web.de name the quote's <div> (and the original inside it) instead.
_QUOTE_NAMES = frozenset({"quote", "quoted-content"})
# Outlook's reply header (also as Outlook forwards it: "x_"), Zimbra's rule above it.
_ORIGINAL_IDS = frozenset({"divRplyFwdMsg", "x_divRplyFwdMsg", "zwchr"})
_OUTLOOK_SEPARATOR = re.compile(r"border-top\s*:[^;]*solid", re.IGNORECASE)


def html_text(html: str) -> str:
    """HTML as the lines a person sees, without the quoted original."""
    parser = _HtmlText()
    parser.feed(html)
    parser.close()
    return parser.text()


class _HtmlText(HTMLParser):
    """Text of an HTML email: blocks and <br> make lines; quotes are skipped; Outlook's
    reply header (id divRplyFwdMsg, or a div with a top border) ends the reply."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.open: list[tuple[str, bool]] = []  # (tag, inside something skipped)
        self.line_has_text = False
        self.stopped = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {name: value or "" for name, value in attrs}
        if _starts_original(tag, found):
            self.stopped = True
        self._new_line(tag, hard=tag == "br")
        if tag not in _VOID and len(self.open) < MAX_HTML_DEPTH:
            # Bounded: each end tag searches this list, so an email of a million
            # unclosed <div>s would otherwise take quadratic time.
            self.open.append((tag, self._skipping() or _is_quote(tag, found)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)  # <br/> is one line break, not two

    def handle_endtag(self, tag: str) -> None:
        names = [name for name, _ in self.open]
        if tag in names:
            del self.open[len(names) - 1 - names[::-1].index(tag) :]
        self._new_line(tag, hard=False)

    def handle_data(self, data: str) -> None:
        if self.stopped or self._skipping():
            return
        in_pre = any(name == "pre" for name, _ in self.open)
        text = data if in_pre else re.sub(r"[ \t\r\n\f]+", " ", data)
        self.parts.append(text)
        # &nbsp; alone is a line (Outlook's empty paragraphs); spaces between tags are not.
        self.line_has_text = self.line_has_text or bool(text.strip(" "))

    def _new_line(self, tag: str, hard: bool) -> None:
        """<br> always breaks the line; a block only ends a line that has text, so that
        nested <div>s make one line, not several empty ones."""
        if hard or (tag in _BLOCKS and self.line_has_text):
            self.parts.append("\n")
            self.line_has_text = False

    def _skipping(self) -> bool:
        return bool(self.open) and self.open[-1][1]

    def text(self) -> str:
        lines = (line.strip() for line in "".join(self.parts).replace("\xa0", " ").split("\n"))
        return _tidy("\n".join(lines))


def _is_quote(tag: str, attrs: dict[str, str]) -> bool:
    return (
        tag == "blockquote"
        or tag in _HIDDEN
        or attrs.get("name") in _QUOTE_NAMES
        or not _QUOTE_CLASSES.isdisjoint(attrs.get("class", "").split())
    )


def _starts_original(tag: str, attrs: dict[str, str]) -> bool:
    style = attrs.get("style", "")[:MAX_LINE_CHARS]  # bounded: the pattern backtracks per match
    return attrs.get("id") in _ORIGINAL_IDS or (
        tag == "div" and bool(_OUTLOOK_SEPARATOR.search(style))
    )


# --- commands ---------------------------------------------------------------------------------


def _talk_start(to: str) -> str:
    """How a message to the table begins (`say`, `to ochre`), in the reader's words."""
    if not to:
        return command_words.talk_to_reader(SAY)
    return f"{command_words.talk_to_reader('to')} {command_words.talk_to_reader(to)}"


@dataclass(frozen=True)
class Said:
    """A message to the table in a reply: to everyone (`to` "") or to a colour."""

    to: str
    text: str


@dataclass(frozen=True)
class Commands:
    """A reply read as commands: the submissions in order (as written, and parsed once,
    here, into `moves`), the messages to the table (`said`), prose lines, and errors (any
    error means nothing of the email is applied: `moves` and `said` are empty)."""

    submissions: tuple[str, ...]
    ignored: tuple[str, ...]
    errors: tuple[str, ...]
    moves: tuple[Submission, ...] = ()
    said: tuple[Said, ...] = ()
    # A vote on the table's open proposal (games.votes): (the line as written, yes?); one
    # per reply at most.
    vote: tuple[str, bool] | None = None


SAY = "say"
SAY_WORDS = frozenset({SAY, *command_words.SAY_WORDS})  # German "nachricht", Italian "messaggio"
EVERYONE = frozenset({"everyone", "everybody", "all", *command_words.EVERYONE_WORDS})
# "to ochre: text", "To Lilac - text", "an ocker: …", "a ocra: …": the colour (or
# "everyone") and the text.
_TO_WORDS = "|".join(sorted({"to", *command_words.TO_WORDS}, key=len, reverse=True))
_TO = re.compile(
    rf"(?:{_TO_WORDS})\s+([a-z]{{2,12}})\s*[:\-–—]\s*(.*)",
    re.IGNORECASE,
)


def commands(text: str) -> Commands:
    pieces: list[list[str]] = []  # each submission's lines with their separators
    said: list[tuple[str, list[str]]] = []  # each message's colour ("" all) and lines
    talking = False  # the last non-empty line was part of a message: prose goes on it
    ignored: list[str] = []
    errors: list[str] = []
    votes: list[str] = []  # the lines that start with `vote`
    previous = ""  # what the last non-empty line was: "step", "move" or "" (prose)
    for raw in bounded(text).split("\n"):
        line = _command_line(raw)
        word = command_word(line)
        if not line:
            talking = False  # a blank line ends a message
            continue
        if line == CUT_LINE:
            errors.append(gettext(_TOO_LONG) % _TOO_LONG_VALUES)
            break
        if first_word(line) in command_words.VOTE_WORDS:
            votes.append(line)
            talking, previous = False, ""
            continue
        message = said_on(raw.strip())
        if message is not None:
            said.append((message[0], [message[1]] if message[1] else []))
            talking, previous = True, ""
            continue
        if talking and word not in COMMAND_WORDS and word != TREASURE:  # the message goes on
            said[-1][1].append(raw.strip())
            continue
        talking = False
        if word in STEP_WORDS and previous == "step":
            pieces[-1].append(f", {line}")
        elif word == TREASURE and previous:
            pieces[-1].append(f" {line}")
        elif word in COMMAND_WORDS:
            pieces.append([line])
            previous = "step" if word in STEP_WORDS else "move"
        else:
            if word == TREASURE:
                errors.append(
                    gettext(
                        "'%(line)s': write Treasure cards after the move they go with, "
                        "like '%(example)s'"
                    )
                    % {"line": line, "example": "bid 5 treasure 10"}
                )
            else:
                ignored.append(raw.strip())
            previous = ""
    submissions = [_joined(parts) for parts in pieces]
    moves, problems = _parse(submissions)
    errors.extend(problems)
    messages = [Said(to, "\n".join(lines).strip()) for to, lines in said]
    errors.extend(
        gettext("'%(start)s' needs the message after it, on the same line or the lines below")
        % {"start": _talk_start(m.to)}
        for m in messages
        if not m.text
    )
    vote, problem = _vote(votes)
    if problem:
        errors.append(problem)
    return Commands(
        tuple(submissions),
        tuple(ignored),
        tuple(errors),
        () if errors else tuple(moves),
        () if errors else tuple(messages),
        None if errors else vote,
    )


def _vote(lines: list[str]) -> tuple[tuple[str, bool] | None, str]:
    """The reply's vote (the line, yes?) and what is wrong with its vote lines ("")."""
    if not lines:
        return None, ""
    if len(lines) > 1:
        return None, gettext("one vote per reply, please: this reply has %(count)s") % {
            "count": len(lines)
        }
    line = lines[0]
    words = [fold(word.strip(".,:;!")) for word in line.split()]
    if len(words) == 2 and words[1] in command_words.YES_WORDS:
        return (line, True), ""
    if len(words) == 2 and words[1] in command_words.NO_WORDS:
        return (line, False), ""
    return None, gettext("'%(line)s': vote with '%(yes)s' or '%(no)s'") % {
        "line": cut(line, 60),
        "yes": command_words.vote_to_reader(True),
        "no": command_words.vote_to_reader(False),
    }


def said_on(line: str) -> tuple[str, str] | None:
    """A line that starts a message: ("", text) for `say text`, (colour, text) for
    `to colour: text` ("everyone" is ""); None for any other line, or one of the
    examples the emails show (TALK_EXAMPLES)."""
    if line in TALK_EXAMPLES or len(line) > MAX_LINE_CHARS:
        return None
    line = re.sub(r"^(?:[-*•·]\s+)", "", line)
    if first_word(line) in SAY_WORDS:
        return "", line.split(maxsplit=1)[1].lstrip(":").strip() if " " in line else ""
    found = _TO.fullmatch(line)
    if found is None:
        return None
    name = found.group(1).lower()
    if name in EVERYONE:
        return "", found.group(2).strip()
    name = command_words.COLOUR_OF.get(name, name)
    return (name, found.group(2).strip()) if name in COLOURS else None


def _joined(parts: list[str]) -> str:
    """One submission's lines as one text; past what any move takes the rest is dropped,
    since `parse_move` refuses the text on its length alone."""
    text, size = [], 0
    for part in parts:
        text.append(part)
        size += len(part)
        if size > MAX_MOVE_CHARS:
            break
    return "".join(text)


def first_word(line: str) -> str:
    """The line's first word in lower case, without trailing punctuation ("Decide:")."""
    words = line.split(maxsplit=1)
    return words[0].lower().rstrip(".,:;!") if words else ""


def command_word(line: str) -> str:
    """The English command (or keyword) the line's first word stands for, in any of the
    languages' words (games.show.command_words: "Ritter" is `knight`, "tesoro" `treasure`)."""
    return command_words.english_word(first_word(line))


def _command_line(raw: str) -> str:
    """A line as a command: without a list bullet, a colon after the command word
    ("Decide: 1, 3") or a full stop at the end; other lines unchanged but stripped."""
    line = re.sub(r"^(?:[-*•·]\s+|\d{1,2}[.)]\s+)", "", raw.strip())
    word = command_word(line)
    if word not in COMMAND_WORDS and word != TREASURE:
        return raw.strip()
    head, _, rest = line.partition(" ")
    return f"{head.rstrip(':')} {rest}".strip().rstrip(".!").strip()


def _parse(submissions: list[str]) -> tuple[list[Submission], list[str]]:
    """Each submission parsed, and the notation's sentence for each that does not parse;
    and one move per reply: a reply address is for one phase, so a second move could
    only overwrite the first. Ending an alliance (RULES 7.1: at any time) may come
    besides it."""
    errors: list[str] = []
    parsed: list[Submission] = []
    moves: list[str] = []
    for text in submissions:
        try:
            move = parse_move(command_words.to_english(text))
        except NotationError as error:
            errors.append(_as_written(refusal_text(error), text))
            continue
        parsed.append(move)
        if not isinstance(move, EndAlliance):
            moves.append(text)
    if len(moves) > 1:
        found = pgettext("between the moves of a list", " and ").join(
            f"'{cut(m, 60)}'" for m in moves[:3]
        )
        if len(moves) > 3:
            errors.append(
                gettext("one move per reply, please: this reply has %(moves)s and %(count)s more")
                % {"moves": found, "count": len(moves) - 3}
            )
        else:
            errors.append(
                gettext("one move per reply, please: this reply has %(moves)s") % {"moves": found}
            )
    return parsed, errors


def _as_written(error: str, text: str) -> str:
    """The notation's sentence quoting the move as the player wrote it, not as it was
    read in English ("'ritter Z9': …", not "'knight Z9': …")."""
    read = f"'{quote(' '.join(command_words.to_english(text).split()), MAX_QUOTED_MOVE)}'"
    if not error.startswith(read):
        return error
    return f"'{quote(' '.join(text.split()), MAX_QUOTED_MOVE)}'" + error[len(read) :]


# --- echoes -----------------------------------------------------------------------------------


def cut(text: str, chars: int = ECHO_CHARS) -> str:
    """`text` at most `chars` long, "…" marking a cut."""
    return text if len(text) <= chars else text[: chars - 1] + "…"


def shown(lines: Sequence[str], count: int = ECHO_LINES, chars: int = ECHO_CHARS) -> list[str]:
    """What an answer echoes of many lines: the first `count`, each cut at `chars`, and a
    line saying how many more there were."""
    kept = [cut(line, chars) for line in lines[:count]]
    if len(lines) > count:
        more = len(lines) - count
        kept.append(
            ngettext("… %(count)s more line not shown", "… %(count)s more lines not shown", more)
            % {"count": more}
        )
    return kept
