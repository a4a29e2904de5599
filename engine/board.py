"""The board: terrain, cells, edges and the map tiles (RULES 1, 1.1).

A cell is `(x, y)`: column then row, 0-based from the top-left. An edge is the
pair of orthogonally adjacent cells it separates, the smaller by `(y, x)`
first, so that every edge has exactly one spelling.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path

Cell = tuple[int, int]
Edge = tuple[Cell, Cell]

PLAIN, FOREST, HILL, TOWN = ".", "F", "H", "T"
TERRAIN_NAMES = {PLAIN: "plain", FOREST: "forest", HILL: "hill", TOWN: "town"}
TILE_SIZE = 5
TILE_NAMES = ("A", "B", "C", "D", "E", "F")
DATA = Path(__file__).resolve().parent / "data"


def cell_order(cell: Cell) -> tuple[int, int]:
    """Sort key of cells everywhere in the engine: by row, then column."""
    return (cell[1], cell[0])


def are_adjacent(a: Cell, b: Cell) -> bool:
    return abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1


def make_edge(a: Cell, b: Cell) -> Edge:
    """The edge between two orthogonally adjacent cells, in its one spelling."""
    if not are_adjacent(a, b):
        raise ValueError(f"{format_cell(a)} and {format_cell(b)} are not side by side")
    return (a, b) if cell_order(a) <= cell_order(b) else (b, a)


def column_name(x: int) -> str:
    """A, B, ..., Z, AA, AB, ...: spreadsheet-style, so any board width has names."""
    name = ""
    x += 1
    while x:
        x, rest = divmod(x - 1, 26)
        name = chr(ord("A") + rest) + name
    return name


def format_cell(cell: Cell) -> str:
    """`(5, 6)` is `F7`: column letter, then row number counted from 1."""
    return f"{column_name(cell[0])}{cell[1] + 1}"


def format_edge(edge: Edge) -> str:
    return f"{format_cell(edge[0])}/{format_cell(edge[1])}"


@dataclass(frozen=True)
class Board:
    """Terrain only: pieces and walls live in the position. Immutable and shared."""

    rows: tuple[str, ...]
    width: int = field(init=False)
    height: int = field(init=False)

    def __post_init__(self) -> None:
        if not self.rows or not self.rows[0]:
            raise ValueError("a board needs at least one row of at least one cell")
        if any(len(row) != len(self.rows[0]) for row in self.rows):
            raise ValueError("every row of the board must have the same length")
        bad = {ch for row in self.rows for ch in row} - set(TERRAIN_NAMES)
        if bad:
            raise ValueError(f"unknown terrain {sorted(bad)}; use . F H T")
        object.__setattr__(self, "width", len(self.rows[0]))
        object.__setattr__(self, "height", len(self.rows))

    def terrain(self, cell: Cell) -> str:
        return self.rows[cell[1]][cell[0]]

    def on_board(self, cell: Cell) -> bool:
        return 0 <= cell[0] < self.width and 0 <= cell[1] < self.height

    @property
    def cells(self) -> tuple[Cell, ...]:
        return _cells(self.width, self.height)

    @property
    def edges(self) -> tuple[Edge, ...]:
        """Every edge between two cells of the board; the rim is not an edge."""
        return _edges(self.width, self.height)

    def neighbours(self, cell: Cell) -> tuple[Cell, ...]:
        return _neighbours(self.width, self.height)[cell]

    def count(self, terrain: str, cells: Iterable[Cell] | None = None) -> int:
        cells = self.cells if cells is None else cells
        return sum(1 for c in cells if self.terrain(c) == terrain)


# Kept per board size, never per board: the site plays on one size (RULES 1: six 5 × 5
# tiles), scenarios and tests on a few more; the oldest size is dropped past these.
BOARD_SIZES_KEPT = 8


@lru_cache(maxsize=BOARD_SIZES_KEPT)
def _cells(width: int, height: int) -> tuple[Cell, ...]:
    return tuple((x, y) for y in range(height) for x in range(width))


@lru_cache(maxsize=BOARD_SIZES_KEPT)
def _neighbours(width: int, height: int) -> dict[Cell, tuple[Cell, ...]]:
    result = {}
    for x, y in _cells(width, height):
        around = ((x, y - 1), (x - 1, y), (x + 1, y), (x, y + 1))
        result[(x, y)] = tuple(
            (nx, ny) for nx, ny in around if 0 <= nx < width and 0 <= ny < height
        )
    return result


@lru_cache(maxsize=BOARD_SIZES_KEPT)
def _edges(width: int, height: int) -> tuple[Edge, ...]:
    neighbours = _neighbours(width, height)
    return tuple(
        make_edge(c, n)
        for c in _cells(width, height)
        for n in neighbours[c]
        if cell_order(c) < cell_order(n)
    )


# --- the map tiles (RULES 1.1) -------------------------------------------------

Placement = tuple[str, int]  # (tile letter, quarter turns clockwise)
BASIC_ARRANGEMENT: tuple[Placement, ...] = tuple((name, 0) for name in TILE_NAMES)


@cache
def load_tiles() -> dict[str, tuple[str, ...]]:
    """The six 5 × 5 tiles of our own design, kept as data (engine/data/tiles.json)."""
    raw = json.loads((DATA / "tiles.json").read_text(encoding="utf-8"))
    return {name: tuple(raw[name]) for name in TILE_NAMES}


def rotate(rows: Sequence[str], quarter_turns: int) -> tuple[str, ...]:
    """Turn a square tile clockwise by `quarter_turns` × 90 degrees."""
    result = tuple(rows)
    for _ in range(quarter_turns % 4):
        size = len(result)
        result = tuple("".join(result[size - 1 - r][c] for r in range(size)) for c in range(size))
    return result


def assemble(arrangement: Sequence[Placement]) -> Board:
    """Lay six tiles in 2 rows of 3 (RULES 1: A B C over D E F in the basic game)."""
    if sorted(name for name, _ in arrangement) != list(TILE_NAMES):
        raise ValueError("an arrangement places each of the tiles A–F exactly once")
    tiles = load_tiles()
    rows = ["" for _ in range(2 * TILE_SIZE)]
    for position, (name, turns) in enumerate(arrangement):
        top = (position // 3) * TILE_SIZE
        for i, line in enumerate(rotate(tiles[name], turns)):
            rows[top + i] += line
    return Board(tuple(rows))
