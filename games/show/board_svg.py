"""The board as SVG markup, drawn on the server from a view dict (`engine.view.view`).

Only what the view holds is drawn, so the same function serves the game page and
the archive. Every piece of text is escaped; colours are looked up, never copied.
With `interactive`, every cell and internal edge becomes a clickable target named
in the engine's notation. Each target the view's `ask` lists says for which kinds of
field it is legal (`data-legal="knight"`, the kinds of `TARGET_KINDS`); the form fields
say which kind they fill (`data-board-kind`, games.play_forms), and games/static/games/
board.js marks "legal" only the targets of the focused field's kind. Before any script
runs, the targets of the form's default field (`default_kind`) are marked "legal".

Thumbs, keyboards and screen readers (issue 24, item 2): each cell is a button named
as a reader says it ("F7, forest, red knight"); board.js moves the focus among them with
the arrow keys and offers a cell's walls in a sheet of 44 px buttons
(templates/games/_board_sheet.html), so that no player needs to hit a thin edge; on a
phone the board is drawn at its own size (`TAP` px a cell) and pans. Colours are told
apart without colour as well: a letter on each castle and knight, a pattern on each
player's regions.

What depends only on the terrain (its cells, the rim and its coordinates, the click
targets' shapes and names) is drawn once per layout and kept in this process
(`_layout`, a few dozen layouts at most): the terrain is public and the same for every
viewer. Everything a viewer's view decides (regions, walls, pieces, alliances, which
targets are legal, the cells' names) is drawn for each view, and the whole drawing kept
by that view's parts it is drawn from (`render_board`, a few hundred drawings).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from html import escape
from math import ceil
from typing import Any, cast

from django.utils.translation import get_language, pgettext, pgettext_lazy
from django.utils.translation import gettext as _

from engine.board import column_name
from engine.notation import format_cell, format_edge
from engine.view import Ask, RegionView, View, ZoneView
from games.kept import Kept
from games.show.words import colour_letter, colour_word

CELL = 40  # pixels per cell
# CSS px of a cell where the board is shown at its own size: on a phone, where each cell
# is a thumb's target (44x44, issue 24) and the board pans; elsewhere CSS fits it to the width.
TAP = 44
MARGIN = 22  # room for the coordinates on the top and left rim
PAD = 4  # room for the frame on the bottom and right rim
WALL_WIDTH = 5
EDGE_BAND = 10  # width of an edge's click target
COLOURS = {"red": "#b3261e", "ochre": "#c58a1b", "lilac": "#8e5bb5", "grey": "#6b6f75"}
UNKNOWN_COLOUR = "#888888"
TERRAIN = {
    ".": ("plain", "#eee8cf"),
    "F": ("forest", "#b5d19a"),
    "H": ("hill", "#d8bf97"),
    "T": ("town", "#e6dccb"),
}
TERRAIN_WORDS = {
    "plain": pgettext_lazy("terrain", "plain"),
    "forest": pgettext_lazy("terrain", "forest"),
    "hill": pgettext_lazy("terrain", "hill"),
    "town": pgettext_lazy("terrain", "town"),
    "unknown": pgettext_lazy("terrain", "unknown"),
}
# Each player's regions carry a pattern of their own (defined in _DEFS), and their castles
# and knights a letter (words.colour_letter): colours told apart without colour.
PATTERNED = frozenset(COLOURS)
LETTER_INK = {"ochre": "#1d1d1d"}  # dark on the light ochre, white on the others
# A cell's neighbour in each direction, and how a cell's name says a wall on that side.
SIDES = {
    (0, -1): pgettext_lazy("a wall on a side of a cell", "wall above"),
    (1, 0): pgettext_lazy("a wall on a side of a cell", "wall to the right"),
    (0, 1): pgettext_lazy("a wall on a side of a cell", "wall below"),
    (-1, 0): pgettext_lazy("a wall on a side of a cell", "wall to the left"),
}
WALL_COLOUR = "#2b2118"
ALLIANCE_COLOUR = "#d4a017"
_COORD_STYLE = 'font-family="sans-serif" font-size="11" fill="#555"'

Cell = tuple[int, int]

_DEFS = """<defs>
<pattern id="hatch" width="8" height="8" patternUnits="userSpaceOnUse"
 patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="8" stroke="#55606e"
 stroke-width="2" stroke-opacity="0.45"/></pattern>
<symbol id="glyph-forest" viewBox="0 0 40 40"><path d="M12 30 L17 18 L22 30 Z M20 28 L26 13
 L32 28 Z" fill="#4f7a35" fill-opacity="0.75"/></symbol>
<symbol id="glyph-hill" viewBox="0 0 40 40"><path d="M7 31 Q15 14 22 31 M17 31 Q26 11 34 31"
 fill="none" stroke="#8a6a3d" stroke-width="2.5"/></symbol>
<symbol id="glyph-town" viewBox="0 0 40 40"><path d="M11 31 V20 L17 14 L23 20 V31 Z M23 31
 V23 L28 18 L33 23 V31 Z" fill="#8d7f6e" fill-opacity="0.8"/></symbol>
<pattern id="pattern-red" width="8" height="8" patternUnits="userSpaceOnUse"><circle cx="4"
 cy="4" r="1.6" fill="#5a130f" fill-opacity="0.6"/></pattern>
<pattern id="pattern-ochre" width="8" height="8" patternUnits="userSpaceOnUse"><line x1="2"
 y1="0" x2="2" y2="8" stroke="#5e420d" stroke-width="2" stroke-opacity="0.5"/></pattern>
<pattern id="pattern-lilac" width="10" height="10" patternUnits="userSpaceOnUse"><path
 d="M0 5 H10 M5 0 V10" stroke="#3f2852" stroke-width="1.2" stroke-opacity="0.55"/></pattern>
<pattern id="pattern-grey" width="8" height="8" patternUnits="userSpaceOnUse"><line x1="0"
 y1="2" x2="8" y2="2" stroke="#2f3134" stroke-width="2" stroke-opacity="0.5"/></pattern>
<symbol id="glyph-castle" viewBox="0 0 40 40"><path d="M8 33 V14 H13 V18 H17 V14 H23 V18 H27
 V14 H32 V33 Z" stroke="#1d1d1d" stroke-width="1.5"/></symbol>
</defs>"""


# What of a view the board is drawn from: `_draw` is handed these keys alone, so nothing
# else of the view can change the drawing, and a drawing kept by them (`render_board`) is
# the one drawn afresh.
DRAWN = ("board", "regions", "neutral_zones", "walls", "alliances", "castles", "knights", "ask")
BOARDS_KEPT = 64  # drawings kept per process (an interactive one ~110 KB): some 7 MB at most
_boards: Kept[tuple[str, bool, str | None, str | None], str] = Kept(BOARDS_KEPT)


def render_board(v: View, interactive: bool = False, element_id: str | None = None) -> str:
    """The board of view `v` as one `<svg>` element, with the DOM id `element_id`; kept in
    this process by what it is drawn from (the view's `DRAWN` parts, as text), how and in
    which language: a page drawn again for the same board (every poll that finds the game
    changed, each reader of the same view) draws it once. The key is the view's own
    content, so a kept drawing is never one of a view another reader was given."""
    drawn = {key: v[key] for key in DRAWN if key in v}  # type: ignore[literal-required]
    key = (repr(drawn), interactive, element_id, get_language())
    return _boards.get_or_make(key, lambda: _draw(cast(View, drawn), interactive, element_id))


def _draw(v: View, interactive: bool, element_id: str | None) -> str:
    rows: list[str] = v["board"]
    width, height = len(rows[0]), len(rows)
    layout = _layout(tuple(rows), get_language())
    # The picture is hidden from screen readers: the cells' names say what it shows.
    parts = [_open_svg(width, height, interactive, element_id), _DEFS, '<g aria-hidden="true">']
    parts.append(layout.terrain)
    parts += _regions(v.get("regions", []))
    parts += _neutral_zones(v.get("neutral_zones", []))
    parts += _walls(v.get("walls", []))
    parts.append(layout.rim)
    parts += _alliances(v.get("alliances", []), v.get("regions", []))
    parts += _pieces(v.get("castles", []), "castle")
    parts += _pieces(v.get("knights", []), "knight")
    parts.append("</g>")
    if interactive:
        ask = v.get("ask")
        default = default_kind(ask)
        kinds = _cell_kinds(ask)
        labels = _cell_labels(v, layout.names)
        parts += _cell_buttons(layout.cells, kinds, labels, default)
        walls = {edge: [WALL] for edge in _legal_edges(ask)}
        # A cell's sheet offers its walls to keyboards and screen readers (board.js).
        parts.append('<g aria-hidden="true">')
        parts += _marked_targets(layout.edges, "edge-targets", "edge", walls, default)
        parts.append("</g>")
    parts.append("</svg>")
    return "\n".join(parts)


# --- what depends on the terrain alone, drawn once per layout ------------------------------

LAYOUTS_KEPT = 32  # layouts drawn and kept per process (a variable setup: one per game)


@dataclass(frozen=True)
class _Target:
    """A click target drawn but for its legal marks: `<rect class="KIND` + the class
    added + `middle` + the data-legal attribute + `tail`; `plain` is it unmarked."""

    key: Any  # the cell, or the edge as a frozenset of its two cells
    middle: str
    tail: str
    plain: str


@dataclass(frozen=True)
class _Layout:
    terrain: str
    rim: str  # the frame and the coordinates
    cells: tuple[_Target, ...]
    edges: tuple[_Target, ...]
    names: Mapping[Cell, str]  # each cell's name and terrain: "F7, forest"


@lru_cache(maxsize=LAYOUTS_KEPT)
def _layout(rows: tuple[str, ...], language: str | None) -> _Layout:
    """Everything drawn from the terrain alone (the same for every viewer of one
    `language`, the active one, which its titles are in)."""
    width, height = len(rows[0]), len(rows)
    return _Layout(
        terrain="\n".join(_terrain(list(rows))),
        rim="\n".join([_frame(width, height), *_coordinates(width, height)]),
        cells=tuple(_split(cell, "cell", target) for cell, target in _cell_targets(list(rows))),
        edges=tuple(
            _split(frozenset(edge), "edge", target) for edge, target in _edge_targets(width, height)
        ),
        names=dict(_cell_names(list(rows))),
    )


def _split(key: Any, kind: str, target: tuple[str, str]) -> _Target:
    middle, tail = target
    return _Target(key, middle, tail, f'<rect class="{kind}{middle}{tail}')


def _cell_buttons(
    targets: tuple[_Target, ...],
    legal: Mapping[Any, list[str]],
    labels: Mapping[Cell, str],
    default: str | None,
) -> Iterator[str]:
    """The cells as buttons named by `labels`, each marked with the kinds of field it is
    legal for. One takes the Tab key (the first legal one): the arrow keys move on."""
    first = next((t.key for t in targets if default in legal.get(t.key, ())), targets[0].key)
    yield '<g class="cell-targets">'
    for target in targets:
        extra, marks = _legal_marks(legal.get(target.key, []), default)
        tab = "0" if target.key == first else "-1"
        yield (
            f'<rect class="cell{extra}{target.middle}{marks} role="button" tabindex="{tab}" '
            f'aria-pressed="false" aria-label="{escape(labels[target.key])}"{target.tail}'
        )
    yield "</g>"


def _marked_targets(
    targets: tuple[_Target, ...],
    group: str,
    kind: str,
    legal: Mapping[Any, list[str]],
    default: str | None,
) -> Iterator[str]:
    """The group of targets, each marked with the kinds of field it is legal for."""
    yield f'<g class="{group}">'
    for target in targets:
        kinds = legal.get(target.key)
        if not kinds:
            yield target.plain
            continue
        extra, marks = _legal_marks(kinds, default)
        yield f'<rect class="{kind}{extra}{target.middle}{marks}{target.tail}'
    yield "</g>"


# --- geometry ----------------------------------------------------------------------------


def _left(x: int) -> int:
    return MARGIN + x * CELL


def _top(y: int) -> int:
    return MARGIN + y * CELL


def _centre(cell: Cell) -> tuple[float, float]:
    return _left(cell[0]) + CELL / 2, _top(cell[1]) + CELL / 2


def _edge_line(a: Cell, b: Cell) -> tuple[int, int, int, int]:
    """The line between two side-by-side cells (a before b in reading order)."""
    (ax, ay), (bx, by) = sorted((a, b), key=lambda c: (c[1], c[0]))
    if ay == by:  # side by side: a vertical line right of a
        return _left(bx), _top(ay), _left(bx), _top(ay + 1)
    return _left(ax), _top(by), _left(ax + 1), _top(by)


def _cell(pair: Iterable[int]) -> Cell:
    x, y = pair
    return int(x), int(y)


def _colour(name: str) -> str:
    return COLOURS.get(name, UNKNOWN_COLOUR)


# --- layers ------------------------------------------------------------------------------


def _open_svg(width: int, height: int, interactive: bool, element_id: str | None) -> str:
    w, h = MARGIN + width * CELL + PAD, MARGIN + height * CELL + PAD
    ident = f' id="{escape(element_id)}"' if element_id else ""
    # A picture, or a group of buttons whose keys are told beside it (#board-keys,
    # templates/games/_board_sheet.html); board.js finds a cell's neighbours by its columns.
    kind = (
        f' interactive" role="group" data-columns="{width}" aria-describedby="board-keys'
        if interactive
        else '" role="img'
    )
    return (
        f'<svg{ident} class="board-svg{kind}" xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="0 0 {w} {h}" width="{_at_tap_size(w)}" height="{_at_tap_size(h)}" '
        f'aria-label="{escape(_label(width, height))}">'
    )


def _at_tap_size(length: int) -> int:
    """A length of the drawing in CSS px at the size where a cell is TAP px (rounded up)."""
    return ceil(length * TAP / CELL)


def _label(width: int, height: int) -> str:
    return _("Game board, %(width)s by %(height)s cells") % {"width": width, "height": height}


def _terrain(rows: list[str]) -> Iterator[str]:
    for y, row in enumerate(rows):
        for x, mark in enumerate(row):
            name, fill = TERRAIN.get(mark, ("unknown", UNKNOWN_COLOUR))
            yield (
                f'<rect class="terrain {name}" x="{_left(x)}" y="{_top(y)}" width="{CELL}" '
                f'height="{CELL}" fill="{fill}" stroke="#c9c2a8" stroke-width="0.5"/>'
            )
            if name in ("forest", "hill", "town"):
                yield (
                    f'<use href="#glyph-{name}" x="{_left(x)}" y="{_top(y)}" '
                    f'width="{CELL}" height="{CELL}"/>'
                )


def _regions(regions: list[RegionView]) -> Iterator[str]:
    for region in regions:
        fill, owner = _colour(region.get("owner", "")), escape(str(region.get("owner", "")))
        for cell in region["cells"]:
            x, y = _cell(cell)
            yield (
                f'<rect class="region region-{owner}" x="{_left(x)}" y="{_top(y)}" '
                f'width="{CELL}" height="{CELL}" fill="{fill}" fill-opacity="0.3"/>'
            )
            if region.get("owner") in PATTERNED:
                yield (
                    f'<rect class="region-pattern" x="{_left(x)}" y="{_top(y)}" '
                    f'width="{CELL}" height="{CELL}" fill="url(#pattern-{owner})"/>'
                )


def _neutral_zones(zones: list[ZoneView]) -> Iterator[str]:
    for zone in zones:
        for cell in zone["cells"]:
            x, y = _cell(cell)
            yield (
                f'<rect class="neutral-zone" x="{_left(x)}" y="{_top(y)}" width="{CELL}" '
                f'height="{CELL}" fill="url(#hatch)"/>'
            )


def _walls(walls: list[list[list[int]]]) -> Iterator[str]:
    for a, b in walls:
        x1, y1, x2, y2 = _edge_line(_cell(a), _cell(b))
        name = escape(format_edge((_cell(a), _cell(b))))
        yield (
            f'<line class="wall" data-wall-at="{name}" x1="{x1}" y1="{y1}" x2="{x2}" '
            f'y2="{y2}" stroke="{WALL_COLOUR}" stroke-width="{WALL_WIDTH}" '
            'stroke-linecap="round"/>'
        )


def _frame(width: int, height: int) -> str:
    return (
        f'<rect class="rim" x="{MARGIN}" y="{MARGIN}" width="{width * CELL}" '
        f'height="{height * CELL}" fill="none" stroke="{WALL_COLOUR}" '
        f'stroke-width="{WALL_WIDTH}"/>'
    )


def _coordinates(width: int, height: int) -> Iterator[str]:
    for x in range(width):
        yield (
            f'<text class="coord" x="{_left(x) + CELL // 2}" y="{MARGIN - 7}" '
            f'{_COORD_STYLE} text-anchor="middle">{escape(column_name(x))}</text>'
        )
    for y in range(height):
        yield (
            f'<text class="coord" x="{MARGIN - 6}" y="{_top(y) + CELL // 2 + 4}" '
            f'{_COORD_STYLE} text-anchor="end">{y + 1}</text>'
        )


def _alliances(alliances: list[list[list[int]]], regions: list[RegionView]) -> Iterator[str]:
    """A ring on a border edge of the two allied regions, or a dashed line between their
    castles when they no longer touch."""
    cells_of = {_cell(r["castle"]): {_cell(c) for c in r["cells"]} for r in regions}
    for a, b in alliances:
        one, two = _cell(a), _cell(b)
        label = escape(
            _("alliance of %(one)s and %(other)s")
            % {"one": format_cell(one), "other": format_cell(two)}
        )
        edge = _shared_edge(cells_of.get(one, set()), cells_of.get(two, set()))
        yield _alliance_mark(edge, one, two, label)


def _shared_edge(one: set[Cell], two: set[Cell]) -> tuple[Cell, Cell] | None:
    for x, y in sorted(one, key=lambda c: (c[1], c[0])):
        for other in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if other in two:
                return (x, y), other
    return None


def _alliance_mark(edge: tuple[Cell, Cell] | None, one: Cell, two: Cell, label: str) -> str:
    if edge is None:
        (x1, y1), (x2, y2) = _centre(one), _centre(two)
        return (
            f'<line class="alliance" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" '
            f'stroke="{ALLIANCE_COLOUR}" stroke-width="3" stroke-dasharray="6 5">'
            f"<title>{label}</title></line>"
        )
    x1, y1, x2, y2 = _edge_line(*edge)
    return (
        f'<circle class="alliance" cx="{(x1 + x2) / 2}" cy="{(y1 + y2) / 2}" r="7" '
        f'fill="#fff8dc" stroke="{ALLIANCE_COLOUR}" stroke-width="3">'
        f"<title>{label}</title></circle>"
    )


def _pieces(pieces: list[list[Any]], kind: str) -> Iterator[str]:
    # Translated once for all the pieces, not once a piece.
    castle, knight = _("%(colour)s castle at %(cell)s"), _("%(colour)s knight at %(cell)s")
    sentence = castle if kind == "castle" else knight
    colours = _ColourWords()
    for x, y, owner in pieces:
        cell, name = _cell((x, y)), escape(str(owner))
        said = sentence % {"colour": colours.word(str(owner)), "cell": format_cell(cell)}
        title = f"<title>{escape(said)}</title>"
        cx, cy = _centre(cell)
        if kind == "castle":
            yield (
                f'<use class="castle castle-{name}" href="#glyph-castle" x="{_left(cell[0])}" '
                f'y="{_top(cell[1])}" width="{CELL}" height="{CELL}" '
                f'fill="{_colour(owner)}">{title}</use>'
            )
            # On the castle's wall, below its battlements.
            yield _letter(str(owner), colours, cx, cy + 9)
        else:
            yield (
                f'<circle class="knight knight-{name}" cx="{cx}" cy="{cy}" r="9" '
                f'fill="{_colour(owner)}" stroke="#1d1d1d" stroke-width="1.5">'
                f"{title}</circle>"
            )
            yield _letter(str(owner), colours, cx, cy)


class _ColourWords:
    """The colours' words and letters in the active language, each translated once."""

    def __init__(self) -> None:
        self.words: dict[str, str] = {}
        self.letters: dict[str, str] = {}

    def word(self, colour: str) -> str:
        if colour not in self.words:
            self.words[colour] = colour_word(colour)
        return self.words[colour]

    def letter(self, colour: str) -> str:
        if colour not in self.letters:
            self.letters[colour] = colour_letter(colour)
        return self.letters[colour]


def _letter(owner: str, colours: _ColourWords, cx: float, cy: float) -> str:
    """The colour's letter, centred on (cx, cy)."""
    letter = escape(colours.letter(owner))
    return (
        f'<text class="piece-letter" x="{cx}" y="{cy + 4}" text-anchor="middle" '
        f'font-family="sans-serif" font-size="11" font-weight="bold" '
        f'fill="{LETTER_INK.get(owner, "#ffffff")}">{letter}</text>'
    )


# --- click targets ------------------------------------------------------------------------


# The kind of field each list of the ask's targets is legal for (the same words as the
# fields' data-board-kind, games.play_forms): a castle of a placement (RULES 2.3), a
# knight (2.3, 5.2), the first cell of an expansion and the castle of the region that
# expands (5.3), a wall (5.1).
CELL_KINDS = (
    ("castle", "castles"),
    ("knight", "knights"),
    ("expansion", "expansions"),
    ("region", "expanding"),
)
WALL = "wall"
# The field a form fills before any is focused: the first of these with targets.
DEFAULT_ORDER = ("castle", "knight", "expansion", WALL)


def default_kind(ask: Ask | Mapping[str, Any] | None) -> str | None:
    """The kind of field clicks fill before one is focused: the first kind in
    `DEFAULT_ORDER` the ask lists targets for, else None."""
    if not ask:
        return None
    keys = {**dict(CELL_KINDS), WALL: "edges"}
    return next((kind for kind in DEFAULT_ORDER if ask.get(keys[kind])), None)


def _cell_kinds(ask: Ask | None) -> dict[Cell, list[str]]:
    found: dict[Cell, list[str]] = {}
    lists: Mapping[str, Any] = ask or {}
    for kind, key in CELL_KINDS:
        for c in lists.get(key) or ():
            found.setdefault(_cell(c), []).append(kind)
    return found


def _legal_edges(ask: Ask | None) -> set[frozenset[Cell]]:
    if not ask:
        return set()
    return {frozenset((_cell(a), _cell(b))) for a, b in ask.get("edges") or ()}


def _legal_marks(kinds: list[str], default: str | None) -> tuple[str, str]:
    """The class to add and the data-legal attribute of a target legal for `kinds`."""
    if not kinds:
        return "", ""
    extra = " legal" if default in kinds else ""
    return extra, f' data-legal="{escape(" ".join(kinds))}"'


def _cell_targets(rows: list[str]) -> Iterator[tuple[Cell, tuple[str, str]]]:
    """Each cell's target, split where its legal marks and name go (`_Target`)."""
    for y, row in enumerate(rows):
        for x, _mark in enumerate(row):
            name = escape(format_cell((x, y)))
            yield (
                (x, y),
                (
                    f'" data-cell="{name}"',
                    f' x="{_left(x)}" y="{_top(y)}" width="{CELL}" height="{CELL}" '
                    'fill="transparent"/>',
                ),
            )


def _cell_names(rows: list[str]) -> Iterator[tuple[Cell, str]]:
    for y, row in enumerate(rows):
        for x, mark in enumerate(row):
            terrain = _terrain_word(TERRAIN.get(mark, ("unknown", ""))[0])
            words = {"cell": format_cell((x, y)), "terrain": terrain}
            yield (x, y), pgettext("a cell of the board", "%(cell)s, %(terrain)s") % words


def _cell_labels(v: View, names: Mapping[Cell, str]) -> dict[Cell, str]:
    """Each cell's name as a screen reader says it: "F7, forest, red knight, red region,
    wall below". The parts are names of things, listed, not a sentence."""
    things: dict[Cell, list[str]] = {}

    def add(cell: Iterable[int], what: str) -> None:
        things.setdefault(_cell(cell), []).append(what)

    # Each name translated once for all the cells it is said of.
    colours = _ColourWords()
    castle, knight = _("%(colour)s castle"), _("%(colour)s knight")
    for x, y, owner in v.get("castles", []):
        add((int(x), int(y)), castle % {"colour": colours.word(str(owner))})
    for x, y, owner in v.get("knights", []):
        add((int(x), int(y)), knight % {"colour": colours.word(str(owner))})
    for region in v.get("regions", []):
        said = _("%(colour)s region") % {"colour": colours.word(str(region.get("owner", "")))}
        for c in region["cells"]:
            add(c, said)
    neutral = _("neutral zone")
    for zone in v.get("neutral_zones", []):
        for c in zone["cells"]:
            add(c, neutral)
    sides = {step: str(words) for step, words in SIDES.items()}
    for a, b in v.get("walls", []):
        one, two = _cell(a), _cell(b)
        add(one, sides[(two[0] - one[0], two[1] - one[1])])
        add(two, sides[(one[0] - two[0], one[1] - two[1])])
    return {cell: ", ".join([name, *things.get(cell, [])]) for cell, name in names.items()}


def _edge_targets(width: int, height: int) -> Iterator[tuple[tuple[Cell, Cell], tuple[str, str]]]:
    """A thin band over each edge: a shape with an area, so that a browser (and a
    browser test) can click it; its corners are left to the cells. Split where its legal
    marks go (`_Target`)."""
    for a, b in _internal_edges(width, height):
        name = escape(format_edge((a, b)))
        x, y, w, h = _edge_band(a, b)
        yield (
            (a, b),
            (
                f'" data-wall="{name}"',
                f' x="{x}" y="{y}" width="{w}" height="{h}" fill="transparent">'
                f"<title>{name}</title></rect>",
            ),
        )


def _edge_band(a: Cell, b: Cell) -> tuple[int, int, int, int]:
    x1, y1, x2, y2 = _edge_line(a, b)
    half, inset = EDGE_BAND // 2, EDGE_BAND // 2
    if x1 == x2:
        return x1 - half, y1 + inset, EDGE_BAND, CELL - 2 * inset
    return x1 + inset, y1 - half, CELL - 2 * inset, EDGE_BAND


def _internal_edges(width: int, height: int) -> Iterator[tuple[Cell, Cell]]:
    for y in range(height):
        for x in range(width):
            if x + 1 < width:
                yield (x, y), (x + 1, y)
            if y + 1 < height:
                yield (x, y), (x, y + 1)


def _terrain_word(name: str) -> str:
    return str(TERRAIN_WORDS.get(name, name))
