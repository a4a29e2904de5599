"""What a person wrote in a reply to a game email, and the commands in it (no database).

`reply_text(message)` is the new text of a reply: the text/plain part (else the HTML
one made text), decoded, without what mail clients add: the quoted original, its
attribution line ("On … wrote:", "Am … schrieb …:", "Le … a écrit :"), Outlook's
"From: … Sent: …" block and separators, and signatures ("-- ", "Sent from my iPhone").

`commands(text)` reads that text line by line. A line whose first word is a command
word (`decide`, `bid`, `knight` ...) is a command; `knight`/`expand` lines that follow
each other make one submission (`knight F7, expand G7 G8`), and a `treasure …` line
belongs to the command above it. Every other line is prose: ignored, but reported. A
command line that does not parse makes the whole email wrong, so that nothing is applied
from an email the player may have mistyped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from email.message import EmailMessage, MIMEPart
from html.parser import HTMLParser

from engine.errors import NotationError
from engine.moves import EndAlliance, Submission
from engine.notation import parse_move

# The first words `engine.notation.parse_move` knows (tests check they stay in step).
COMMAND_WORDS = frozenset({
    "place", "decide", "offer", "accept", "break", "bid", "walls", "wall", "knight",
    "expand", "pile", "look", "take", "pass", "decline", "skip",
})
STEP_WORDS = frozenset({"knight", "expand"})  # the steps of one Swords action
TREASURE = "treasure"

# --- the new text of a reply ------------------------------------------------------------------


def reply_text(message: EmailMessage) -> str:
    """The text the person wrote, without quotes and signature."""
    return strip_quoted(_body_text(message))


def _body_text(message: EmailMessage) -> str:
    plain = message.get_body(preferencelist=("plain",))
    if plain is not None:
        text = _unflow(_decoded(plain), plain)
        if text.strip():
            return text
    html = message.get_body(preferencelist=("html",))
    return html_text(_decoded(html)) if html is not None else ""


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
    lines: list[str] = []
    joining = False
    for line in text.split("\n"):
        depth = len(line) - len(line.lstrip(">"))
        body = line[depth:]
        body = body[1:] if body.startswith(" ") else body  # space-stuffing
        if joining and lines and _depth(lines[-1]) == depth:
            lines[-1] += body
        else:
            lines.append(">" * depth + (" " if depth and body else "") + body)
        joining = body.endswith(" ") and body != "-- "
        if joining and delete_space:
            lines[-1] = lines[-1][:-1]
    return "\n".join(lines)


def _depth(line: str) -> int:
    return len(line) - len(line.lstrip(">"))


_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))
_ATTRIBUTION = re.compile(
    r"(on\s.+\swrote|am\s.+\sschrieb.*|le\s.+\sa\s+écrit|el\s.+\sescribió"
    r"|op\s.+\sschreef.*|il\s.+\sha\sscritto)\s*:",
    re.IGNORECASE)
_SEPARATOR = re.compile(
    r"_{10,}|-{2,}\s*(original message|ursprüngliche nachricht|message d'origine"
    r"|forwarded message|weitergeleitete nachricht)\s*-{2,}",
    re.IGNORECASE)
_MOBILE_SIGNATURE = re.compile(
    r"(sent from my \S.*|sent from (outlook|yahoo mail|mail) for \S.*|get outlook for \S.*"
    r"|von meinem \S.* gesendet\.?|envoyé de mon \S.*)",
    re.IGNORECASE)
_HEADER_FROM = re.compile(r"\*?(from|von|de)\s?:\*?\s.*", re.IGNORECASE)
_HEADER_SENT = re.compile(r"\*?(sent|date|gesendet|datum|envoyé)\s?:\*?\s.*", re.IGNORECASE)


def strip_quoted(text: str) -> str:
    """Cut quoted text and signatures from a reply's text.

    Lines quoted with ">" are dropped wherever they are, so that a reply written below
    the quote (Thunderbird's habit) or between quoted lines is kept. An attribution line
    is dropped when a quote follows it; when unquoted text follows it, as after
    Outlook's header blocks and separators, that is the original: the rest is cut."""
    lines = text.translate(_INVISIBLE).replace("\xa0", " ").split("\n")
    kept: list[str] = []
    at = 0
    while at < len(lines):
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


def _ends_reply(lines: list[str], at: int) -> bool:
    line = lines[at].strip()
    return (lines[at].rstrip() == "--" or bool(_SEPARATOR.fullmatch(line))
            or bool(_MOBILE_SIGNATURE.fullmatch(line)) or _is_header_block(lines, at))


def _is_header_block(lines: list[str], at: int) -> bool:
    """Outlook's "From: … / Sent: … / To: … / Subject: …" before the original."""
    if not _HEADER_FROM.fullmatch(lines[at].strip()):
        return False
    return any(_HEADER_SENT.fullmatch(line.strip()) for line in lines[at + 1:at + 4])


def _attribution_lines(lines: list[str], at: int) -> int:
    """1 or 2 if an attribution ("On … wrote:") starts here, over one or two lines; else 0.
    Gmail wraps long attributions: "On …, Löwenherz <" / "play+…@host> wrote:"."""
    one = lines[at].strip()
    if _ATTRIBUTION.fullmatch(one):
        return 1
    if one and at + 1 < len(lines) and _ATTRIBUTION.fullmatch(f"{one} {lines[at + 1].strip()}"):
        return 2
    return 0


def _quote_follows(lines: list[str], at: int) -> bool:
    following = next((line.strip() for line in lines[at:] if line.strip()), "")
    return following.startswith(">")


def _tidy(text: str) -> str:
    """No space at the ends, and at most one empty line in a row."""
    return re.sub(r"\n{3,}", "\n\n", text).strip()


# --- HTML as text -----------------------------------------------------------------------------

_BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "br", "dd", "div", "dl", "dt", "footer",
    "form", "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "li", "main", "ol", "p",
    "pre", "section", "table", "td", "th", "tr", "ul",
})
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                   "source", "track", "wbr"})
_HIDDEN = frozenset({"head", "script", "style", "template", "title"})
# Mail clients mark the quoted original (and the signature) with these classes.
_QUOTE_CLASSES = frozenset({
    "gmail_quote", "gmail_quote_container", "gmail_attr", "gmail_signature", "yahoo_quoted",
    "moz-cite-prefix", "moz-signature",
})
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
        if tag not in _VOID:
            self.open.append((tag, self._skipping() or _is_quote(tag, found)))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)  # <br/> is one line break, not two

    def handle_endtag(self, tag: str) -> None:
        names = [name for name, _ in self.open]
        if tag in names:
            del self.open[len(names) - 1 - names[::-1].index(tag):]
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
    return (tag == "blockquote" or tag in _HIDDEN
            or not _QUOTE_CLASSES.isdisjoint(attrs.get("class", "").split()))


def _starts_original(tag: str, attrs: dict[str, str]) -> bool:
    return attrs.get("id") == "divRplyFwdMsg" or (
        tag == "div" and bool(_OUTLOOK_SEPARATOR.search(attrs.get("style", ""))))


# --- commands ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Commands:
    """A reply read as commands: the submissions in order (as written, and parsed once,
    here, into `moves`), prose lines, and errors (any error means nothing of the email is
    applied, and `moves` is empty)."""

    submissions: tuple[str, ...]
    ignored: tuple[str, ...]
    errors: tuple[str, ...]
    moves: tuple[Submission, ...] = ()


def commands(text: str) -> Commands:
    submissions: list[str] = []
    ignored: list[str] = []
    errors: list[str] = []
    previous = ""  # what the last non-empty line was: "step", "move" or "" (prose)
    for raw in text.split("\n"):
        line = _command_line(raw)
        word = first_word(line)
        if not line:
            continue
        if word in STEP_WORDS and previous == "step":
            submissions[-1] += f", {line}"
        elif word == TREASURE and previous:
            submissions[-1] += f" {line}"
        elif word in COMMAND_WORDS:
            submissions.append(line)
            previous = "step" if word in STEP_WORDS else "move"
        else:
            if word == TREASURE:
                errors.append(f"'{line}': write Treasure cards after the move they go with, "
                              "like 'bid 5 treasure 10'")
            else:
                ignored.append(raw.strip())
            previous = ""
    moves, problems = _parse(submissions)
    errors.extend(problems)
    return Commands(tuple(submissions), tuple(ignored), tuple(errors),
                    () if errors else tuple(moves))


def first_word(line: str) -> str:
    """The line's first word in lower case, without trailing punctuation ("Decide:")."""
    words = line.split(maxsplit=1)
    return words[0].lower().rstrip(".,:;!") if words else ""


def _command_line(raw: str) -> str:
    """A line as a command: without a list bullet, a colon after the command word
    ("Decide: 1, 3") or a full stop at the end; other lines unchanged but stripped."""
    line = re.sub(r"^(?:[-*•·]\s+|\d{1,2}[.)]\s+)", "", raw.strip())
    word = first_word(line)
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
            move = parse_move(text)
        except NotationError as error:
            errors.append(str(error))
            continue
        parsed.append(move)
        if not isinstance(move, EndAlliance):
            moves.append(text)
    if len(moves) > 1:
        found = " and ".join(f"'{m}'" for m in moves)
        errors.append(f"one move per reply, please: this reply has {found}")
    return parsed, errors
