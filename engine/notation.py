"""Submissions as text, in both directions: `format_move` writes, `parse_move` reads.

Like python-chess's `Move.uci()` / `Move.from_uci()`: one canonical spelling
per submission (`decide 1 alliance C3 H5, 3`, `knight F7, expand G7 G8`), so
that `parse_move(format_move(x)) == x`; the reader also takes any case, extra
spaces and a few synonyms, since players type these into emails.

Parsing is about form only: a wall far from anything is read without
complaint and left to `engine.game` to refuse. Shapes no game could ever
accept (decision card 4, an expansion of three cells) are refused here, each
with a `NotationError` that says what was expected.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

from engine.board import Cell, Edge, are_adjacent, format_cell, format_edge, make_edge
from engine.errors import NotationError
from engine.moves import (
    POLITICS_CARDS,
    Accept,
    Alliance,
    Bid,
    BreakOff,
    Choice,
    ChoosePile,
    Decide,
    EndAlliance,
    Expand,
    Knight,
    Offer,
    Pass,
    Place,
    Politics,
    Renegade,
    Submission,
    Swords,
    TakeCard,
    Walls,
)
from engine.reasons import Reason

_T = TypeVar("_T")

__all__ = [
    "format_cell",
    "format_edge",
    "format_move",
    "parse_cell",
    "parse_edge",
    "parse_move",
]

# ASCII digits only (str.isdigit() would let "²" through), and not so many that int() refuses.
_NUMBER = re.compile(r"[0-9]{1,100}")
_CELL = re.compile(r"([a-z]+)([0-9]{1,100})", re.IGNORECASE)
_CARD_NAMES = tuple(dict.fromkeys(POLITICS_CARDS))  # each name once, in deck order
# Longer texts are refused before they are read: no move needs more (the longest legal
# ones, a Swords action with a few knights and Treasure cards, take well under 200), and
# a bound keeps every step of reading small whatever a person or a mail server sends.
MAX_MOVE_CHARS = 500
MAX_WORD_CHARS = 50  # a cell or a wall, as `parse_cell` and `parse_edge` take it
QUOTE_CHARS = 60  # what an error quotes of the text it refuses
MAX_QUOTED_MOVE = 200  # a whole move, quoted by the error about one of its words
_COMMAND_LIST = (
    "place, decide, offer, accept, break off, bid, walls, knight, expand, pile, take, pass, "
    "break alliance"
)

# --- cells and walls ---------------------------------------------------------------------


def parse_cell(text: str) -> Cell:
    """`F7` is `(5, 6)`; columns run A..Z, AA, AB... as `board.column_name` writes them."""
    _refuse_long(text, MAX_WORD_CHARS, "cell_too_long")
    match = _CELL.fullmatch(text.strip())
    if match is None or int(match[2]) < 1:
        raise NotationError(Reason("not_a_cell", text=quote(text.strip())))
    return _column_index(match[1]), int(match[2]) - 1


def _column_index(letters: str) -> int:
    # Spreadsheet columns are bijective base 26: A=1 .. Z=26, AA=27; the engine counts from 0.
    index = 0
    for letter in letters.upper():
        index = index * 26 + ord(letter) - ord("A") + 1
    return index - 1


def parse_edge(text: str) -> Edge:
    """`F7/F8` or `F8/F7`: the wall between two cells side by side, in its one spelling."""
    _refuse_long(text, MAX_WORD_CHARS, "wall_too_long")
    text = _close_slashes(text.strip())
    halves = text.split("/")
    if len(halves) != 2 or not all(halves):
        raise NotationError(Reason("not_a_wall", text=quote(text)))
    a, b = parse_cell(halves[0]), parse_cell(halves[1])
    if not are_adjacent(a, b):
        raise NotationError(Reason("wall_cells_apart", text=text))
    return make_edge(a, b)


def _close_slashes(text: str) -> str:
    """`F7 / F8` as `F7/F8`. By hand, not `re.sub(r"\\s*/\\s*")`: that regex tries every
    start in a run of spaces and scans the run from each, quadratic in its length."""
    return "/".join(part.strip() for part in text.split("/")) if "/" in text else text


def _refuse_long(text: str, limit: int, code: str) -> None:
    """Checked first, before any reading: a bound on the work whatever comes in."""
    if len(text) > limit:
        raise NotationError(Reason(code, text=quote(text), length=len(text), limit=limit))


def quote(text: str, limit: int = QUOTE_CHARS) -> str:
    """The start of `text` for an error message: an echo stays short whatever was sent."""
    text = " ".join(text[: limit * 4].split())  # bounded before it is split
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# --- writing -----------------------------------------------------------------------------


def format_move(sub: Submission) -> str:
    """The canonical text of a submission; `parse_move` reads it back to an equal value."""
    match sub:
        case Place(castle, knight):
            return f"place {format_cell(castle)} {format_cell(knight)}"
        case Decide(choices):
            return "decide " + ", ".join(_format_choice(c) for c in choices)
        case Offer(amount):
            return f"offer {amount}"
        case Accept():
            return "accept"
        case BreakOff():
            return "break off"
        case Bid(ducats, treasure):
            return f"bid {ducats}{_format_treasure(treasure)}"
        case Walls(walls):
            return "walls " + " ".join(format_edge(e) for e in walls)
        case Swords(steps, treasure):
            return ", ".join(_format_step(s) for s in steps) + _format_treasure(treasure)
        case ChoosePile(pile):
            return f"pile {pile}"
        case TakeCard(card):
            return f"take {card}"
        case Pass():
            return "pass"
        case EndAlliance(own, other, treasure):
            cells = f"{format_cell(own)} {format_cell(other)}"
            return f"break alliance {cells}{_format_treasure(treasure)}"
    raise TypeError(f"not a submission: {sub!r}")


def _format_choice(choice: Choice) -> str:
    match choice.politics:
        case Alliance(own, other):
            return f"{choice.card} alliance {format_cell(own)} {format_cell(other)}"
        case Renegade(remove, place, treasure):
            cells = f"{format_cell(remove)} {format_cell(place)}"
            return f"{choice.card} renegade {cells}{_format_treasure(treasure)}"
    return str(choice.card)


def _format_step(step: Knight | Expand) -> str:
    if isinstance(step, Knight):
        return f"knight {format_cell(step.cell)}"
    cells = " ".join(format_cell(c) for c in step.cells)
    return f"expand {cells}" + ("" if step.castle is None else f" from {format_cell(step.castle)}")


def _format_treasure(treasure: tuple[int, ...]) -> str:
    return " treasure " + " ".join(map(str, treasure)) if treasure else ""


# --- reading -----------------------------------------------------------------------------


class _Words:
    """The words of one move, read left to right. Errors quote the whole move and
    end with `hint`, which each command sets to say what it expects."""

    def __init__(self, text: str) -> None:
        self.text = " ".join(text.split())
        # "F7 / F8" is one wall, and a comma is a word of its own even when glued to another.
        spaced = _close_slashes(text).replace(",", " , ")
        self.words = spaced.split()
        self.at = 0
        self.hint: Reason | None = None

    def peek(self) -> str:
        """The next word in lower case, or "" at the end: keywords are case-blind."""
        return self.words[self.at].lower() if self.at < len(self.words) else ""

    def take(self) -> str:
        if self.at_end():
            raise self.fail()
        self.at += 1
        return self.words[self.at - 1]

    def take_if(self, keyword: str) -> bool:
        found = self.peek() == keyword
        self.at += found
        return found

    def at_end(self) -> bool:
        return self.at >= len(self.words)

    def rest(self) -> list[str]:
        words, self.at = self.words[self.at :], len(self.words)
        return words

    def fail(self, detail: Reason | None = None) -> NotationError:
        """The move quoted, and what is wrong with it: `detail`, else the command's hint."""
        said = detail or self.hint or Reason("unreadable")
        return NotationError(Reason("in_move", move=quote(self.text, MAX_QUOTED_MOVE), detail=said))

    def number(self) -> int:
        word = self.take()
        if not _NUMBER.fullmatch(word):
            raise self.fail()
        return int(word)

    def cell(self) -> Cell:
        return self._quoting(parse_cell, self.take())

    def edge(self) -> Edge:
        return self._quoting(parse_edge, self.take())

    def _quoting(self, parse: Callable[[str], _T], word: str) -> _T:
        """Name the whole move too: in a long email one bad cell is hard to find."""
        try:
            return parse(word)
        except NotationError as error:
            raise self.fail(error.reason) from None

    def done(self, value: Submission) -> Submission:
        """`value`, if nothing follows it: a stray word may be a typo that changes the move."""
        if not self.at_end():
            raise self.fail()
        return value


def parse_move(text: str) -> Submission:
    """Read one submission; raises `NotationError` saying what was expected. Linear in the
    text, and a text over `MAX_MOVE_CHARS` is refused before any reading."""
    if len(text) > MAX_MOVE_CHARS:
        raise NotationError(
            Reason("move_too_long", limit=MAX_MOVE_CHARS, length=len(text), text=quote(text))
        )
    words = _Words(text)
    if words.at_end():
        raise NotationError(Reason("empty_move"))
    command = words.peek()
    parser = _PARSERS.get(command)
    if parser is None:
        raise NotationError(
            Reason("unknown_command", word=quote(words.words[0]), commands=_COMMAND_LIST)
        )
    if command not in ("knight", "knights", "expand"):  # they begin the move's first step
        words.take()
    return parser(words)


def _parse_place(w: _Words) -> Submission:
    w.hint = Reason("hint_place")
    return w.done(Place(w.cell(), w.cell()))


def _parse_decide(w: _Words) -> Submission:
    w.hint = Reason("hint_decide")
    choices = [_choice(w)]
    while not w.at_end():
        w.take_if(",")  # optional: "decide 1 3" is as clear as "decide 1, 3"
        choices.append(_choice(w))
    if len(choices) > 2:
        raise w.fail(Reason("decide_one_or_two"))
    return Decide(tuple(choices))


def _choice(w: _Words) -> Choice:
    card = w.number()
    if card not in (1, 2, 3):
        raise w.fail(Reason("decision_cards_are"))
    politics = _politics(w)
    if politics is not None and w.peek() in ("alliance", "renegade"):
        raise w.fail(Reason("one_politics_per_card"))
    return Choice(card, politics)


def _politics(w: _Words) -> Politics | None:
    if w.take_if("alliance"):
        return Alliance(w.cell(), w.cell())
    if w.take_if("renegade"):
        return Renegade(w.cell(), w.cell(), _treasure(w))
    return None


def _treasure(w: _Words) -> tuple[int, ...]:
    """An optional `treasure 10 12`: the values of Treasure cards, as many as are written."""
    if not w.take_if("treasure"):
        return ()
    values = []
    while _NUMBER.fullmatch(w.peek()):
        values.append(int(w.take()))
    if not values or 0 in values:
        raise w.fail(Reason("treasure_values"))
    return tuple(values)


def _parse_offer(w: _Words) -> Submission:
    w.hint = Reason("hint_offer")
    return w.done(Offer(w.number()))


def _parse_accept(w: _Words) -> Submission:
    w.hint = Reason("takes_nothing", command="accept")
    return w.done(Accept())


def _parse_break(w: _Words) -> Submission:
    w.hint = Reason("hint_break")
    if w.take_if("alliance"):
        return _end_alliance(w)
    w.take_if("off")  # plain "break" is enough: nothing else could be meant
    return w.done(BreakOff())


def _end_alliance(w: _Words) -> Submission:
    w.hint = Reason("hint_end_alliance")
    return w.done(EndAlliance(w.cell(), w.cell(), _treasure(w)))


def _parse_bid(w: _Words) -> Submission:
    w.hint = Reason("hint_bid")
    ducats = 0 if w.peek() == "treasure" else w.number()  # "bid treasure 8": cards alone
    return w.done(Bid(ducats, _treasure(w)))


def _parse_walls(w: _Words) -> Submission:
    w.hint = Reason("hint_walls")
    walls = [w.edge()]
    while not w.at_end():
        w.take_if(",")
        walls.append(w.edge())
    return Walls(tuple(walls))


def _parse_swords(w: _Words) -> Submission:
    w.hint = Reason("hint_swords")
    steps = [_step(w)]
    while not w.at_end() and w.peek() != "treasure":
        w.take_if(",")  # optional: a newline or the next keyword separates steps as well
        if isinstance(steps[-1], Knight) and _CELL.fullmatch(w.peek()):
            # "knight F7 G7" (or "F7, G7"): more knights, as the page's knights field takes them
            steps.append(Knight(w.cell()))
        else:
            steps.append(_step(w))
    treasure = _treasure(w)
    if not w.at_end():
        raise w.fail(Reason("treasure_last"))
    return Swords(tuple(steps), treasure)


def _step(w: _Words) -> Knight | Expand:
    if w.take_if("knight") or w.take_if("knights"):
        return Knight(w.cell())
    if w.take_if("expand"):
        return _expand(w)
    raise w.fail()


def _expand(w: _Words) -> Expand:
    cells = []
    while _CELL.fullmatch(w.peek()):
        cells.append(w.cell())
    if not 1 <= len(cells) <= 2:
        raise w.fail(Reason("expansion_cells"))
    return Expand(tuple(cells), w.cell() if w.take_if("from") else None)


def _parse_pile(w: _Words) -> Submission:
    w.hint = Reason("hint_pile", command=w.words[0].lower())
    pile = w.number()
    if pile not in (1, 2):
        raise w.fail()
    return w.done(ChoosePile(pile))


def _parse_take(w: _Words) -> Submission:
    names = ", ".join(_CARD_NAMES)
    w.hint = Reason("hint_take", names=names)
    card = " ".join(w.rest()).lower()
    if card not in _CARD_NAMES:
        raise w.fail(Reason("unknown_card", card=quote(card), names=names) if card else None)
    return TakeCard(card)


def _parse_pass(w: _Words) -> Submission:
    w.hint = Reason("takes_nothing", command=w.words[0].lower())
    return w.done(Pass())


_PARSERS: dict[str, Callable[[_Words], Submission]] = {
    "place": _parse_place,
    "decide": _parse_decide,
    "offer": _parse_offer,
    "accept": _parse_accept,
    "break": _parse_break,
    "bid": _parse_bid,
    "walls": _parse_walls,
    "wall": _parse_walls,
    "knight": _parse_swords,
    "knights": _parse_swords,
    "expand": _parse_swords,
    "pile": _parse_pile,
    "look": _parse_pile,
    "take": _parse_take,
    "pass": _parse_pass,
    "decline": _parse_pass,
    "skip": _parse_pass,
}
