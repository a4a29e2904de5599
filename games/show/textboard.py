"""The board as monospace text, for plain-text emails, drawn from a view dict
(`engine.view.view`), like `games.show.board_svg` draws it as SVG.

Every cell is two characters: its terrain (`.` plain, `F` forest, `H` hill, `T` town)
and what stands on it (a colour's initial: upper case a castle, lower case a knight).
A `|` between two cells is a wall between them; a `--` under a cell is a wall below it.

       A  B  C  D
     1 H  .R . |.
          --
     2 F  .r .  .
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import pgettext_lazy

from engine.board import column_name
from engine.view import View
from games.show.words import colour_word

Cell = tuple[int, int]

# The letters stay in every language (the reply parser knows them); the legend words them.
TERRAIN_WORDS = {
    ".": pgettext_lazy("terrain", "plain"),
    "F": pgettext_lazy("terrain", "forest"),
    "H": pgettext_lazy("terrain", "hill"),
    "T": pgettext_lazy("terrain", "town"),
}
ROW_LABEL = 3  # "10 " is the widest row label of a board of up to 99 rows


def board_text(v: View) -> str:
    """The view's board, its pieces and walls, and a legend, as lines of text."""
    rows: list[str] = v["board"]
    pieces = _pieces(v)
    right, under = _walls(v)
    width = len(rows[0])
    lines = [" " * ROW_LABEL + " ".join(f"{column_name(x):<2}" for x in range(width))]
    for y, terrain in enumerate(rows):
        lines.append(_row(y, terrain, pieces, right))
        below = _walls_below(y, width, under) if y + 1 < len(rows) else ""
        if below.strip():
            lines.append(below)
    lines.append("")
    lines.append(legend(v))
    return "\n".join(line.rstrip() for line in lines)


def legend(v: View) -> str:
    colours = sorted(
        {str(piece[2]) for piece in [*v.get("castles", []), *v.get("knights", [])]},
        key=_colour_rank(v),
    )
    pieces = ", ".join(f"{c[0].upper()}/{c[0].lower()} {colour_word(c)}" for c in colours)
    terrain = ", ".join(f"{mark} {word}" for mark, word in TERRAIN_WORDS.items())
    return "\n".join(
        [
            f"{terrain}.",
            _("Castle/knight: %(pieces)s.") % {"pieces": pieces}
            if pieces
            else _("Castle/knight: none yet."),
            _("Walls: | between two cells, -- below a cell."),
        ]
    )


def _walls(v: View) -> tuple[set[Cell], set[Cell]]:
    """The view's walls as the cells they stand beside: a wall between (x-1, y) and
    (x, y) is (x, y) in the first set (a `|` before that cell), one between (x, y) and
    (x, y+1) is (x, y) in the second (a `--` under it). A cell's lookup, not a pair's
    frozenset made for every cell of every row (issue 25: every "waits for you" draws it)."""
    right: set[Cell] = set()
    under: set[Cell] = set()
    for a, b in v.get("walls", []):
        (ax, ay), (bx, by) = _cell(a), _cell(b)
        if ay == by and abs(ax - bx) == 1:
            right.add((max(ax, bx), ay))
        elif ax == bx and abs(ay - by) == 1:
            under.add((ax, min(ay, by)))
    return right, under


def _row(y: int, terrain: str, pieces: dict[Cell, str], right: set[Cell]) -> str:
    parts = [f"{y + 1:>{ROW_LABEL - 1}} "]
    for x, mark in enumerate(terrain):
        if x:
            parts.append("|" if (x, y) in right else " ")
        parts.append(mark + pieces.get((x, y), " "))
    return "".join(parts)


def _walls_below(y: int, width: int, under: set[Cell]) -> str:
    marks = ["--" if (x, y) in under else "  " for x in range(width)]
    return " " * ROW_LABEL + " ".join(marks)


def _pieces(v: View) -> dict[Cell, str]:
    """Castles and knights by cell: a colour's initial, upper case for a castle."""
    found = {(int(x), int(y)): str(colour)[0].lower() for x, y, colour in v.get("knights", [])}
    found.update(
        {(int(x), int(y)): str(colour)[0].upper() for x, y, colour in v.get("castles", [])}
    )
    return found


def _cell(pair: Any) -> Cell:
    return int(pair[0]), int(pair[1])


def _colour_rank(v: View) -> Callable[[str], tuple[int, str]]:
    """Players in seat order first, then any neutral colour."""
    order = list(v.get("players", {}))
    return lambda colour: (order.index(colour) if colour in order else len(order), colour)
