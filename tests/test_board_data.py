"""The board data files against the spec: the six map tiles (RULES 1.1) and the
fixed layout of the basic setup (RULES 2.2, with 2.3's distance rule, 5.1's wall
rules and 6's regions).

These tests read `engine/data/*.json` directly and import nothing from the
engine, so they check the data on its own terms.
"""

from __future__ import annotations

import json
import re
from collections import deque
from collections.abc import Iterable
from functools import cache
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).resolve().parent.parent / "engine" / "data"

Cell = tuple[int, int]
Edge = tuple[Cell, Cell]

PLAIN, FOREST, HILL, TOWN = ".", "F", "H", "T"
TERRAIN = {PLAIN, FOREST, HILL, TOWN}
TILE_NAMES = ("A", "B", "C", "D", "E", "F")
TILE_SIZE = 5
WIDTH, HEIGHT = 15, 10
COLOURS = ("red", "ochre", "lilac", "grey")
CORNERS: tuple[Cell, ...] = ((0, 0), (WIDTH - 1, 0), (0, HEIGHT - 1), (WIDTH - 1, HEIGHT - 1))
# RULES 2.2: tiles A-F in alphabetical order, unrotated, A B C over D E F.
BASIC_ORDER = ("ABC", "DEF")

CELL_RE = re.compile(r"([A-Z])([1-9][0-9]?)")


# --- loading -------------------------------------------------------------------------


@cache
def load_tiles() -> dict[str, tuple[str, ...]]:
    raw = json.loads((DATA / "tiles.json").read_text(encoding="utf-8"))
    return {name: tuple(rows) for name, rows in raw.items()}


@cache
def load_layout() -> dict[str, Any]:
    return json.loads((DATA / "basic_layout.json").read_text(encoding="utf-8"))


# --- cells, edges and notation ---------------------------------------------------------


def cell_order(cell: Cell) -> tuple[int, int]:
    """Cells sort by row, then column."""
    return (cell[1], cell[0])


def on_board(cell: Cell) -> bool:
    return 0 <= cell[0] < WIDTH and 0 <= cell[1] < HEIGHT


def parse_cell(text: str) -> Cell:
    """`F7` is `(5, 6)`: column letter A.., then row number from 1."""
    match = CELL_RE.fullmatch(text)
    if match is None:
        raise ValueError(f"bad cell {text!r}")
    cell = (ord(match.group(1)) - ord("A"), int(match.group(2)) - 1)
    if not on_board(cell):
        raise ValueError(f"cell {text!r} is off the board")
    return cell


def format_cell(cell: Cell) -> str:
    return f"{chr(ord('A') + cell[0])}{cell[1] + 1}"


def adjacent(a: Cell, b: Cell) -> bool:
    return abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1


def manhattan(a: Cell, b: Cell) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def make_edge(a: Cell, b: Cell) -> Edge:
    return (a, b) if cell_order(a) <= cell_order(b) else (b, a)


def parse_wall(text: str) -> Edge:
    """`F7/F8`: two orthogonally adjacent cells on the board."""
    first, sep, second = text.partition("/")
    if not sep:
        raise ValueError(f"bad wall {text!r}")
    a, b = parse_cell(first), parse_cell(second)
    if not adjacent(a, b):
        raise ValueError(f"wall {text!r}: the cells are not side by side")
    return (a, b)


def neighbours(cell: Cell) -> list[Cell]:
    x, y = cell
    around = ((x, y - 1), (x - 1, y), (x + 1, y), (x, y + 1))
    return [c for c in around if on_board(c)]


def all_cells() -> list[Cell]:
    return [(x, y) for y in range(HEIGHT) for x in range(WIDTH)]


# --- tiles and boards ------------------------------------------------------------------


def tile_cells(rows: Iterable[str]) -> dict[Cell, str]:
    return {(x, y): ch for y, row in enumerate(rows) for x, ch in enumerate(row)}


def count(rows: Iterable[str], terrain: str) -> int:
    return sum(row.count(terrain) for row in rows)


def rotate(rows: tuple[str, ...]) -> tuple[str, ...]:
    """The tile turned 90 degrees clockwise."""
    return tuple("".join(row[x] for row in reversed(rows)) for x in range(len(rows[0])))


def rotations(rows: tuple[str, ...]) -> list[tuple[str, ...]]:
    result = [rows]
    for _ in range(3):
        result.append(rotate(result[-1]))
    return result


def on_outer_ring(cell: Cell) -> bool:
    return cell[0] in (0, TILE_SIZE - 1) or cell[1] in (0, TILE_SIZE - 1)


def assemble(order: Iterable[Iterable[tuple[str, ...]]]) -> list[str]:
    """A board from rows of (already rotated) tiles."""
    board: list[str] = []
    for tile_row in order:
        tiles = list(tile_row)
        for y in range(TILE_SIZE):
            board.append("".join(tile[y] for tile in tiles))
    return board


@cache
def basic_board() -> tuple[str, ...]:
    tiles = load_tiles()
    return tuple(assemble([[tiles[name] for name in row] for row in BASIC_ORDER]))


def terrain_at(board: Iterable[str], cell: Cell) -> str:
    return list(board)[cell[1]][cell[0]]


def adjacent_towns(board: list[str] | tuple[str, ...]) -> list[tuple[Cell, Cell]]:
    towns = {cell for cell, ch in tile_cells(board).items() if ch == TOWN}
    return [(a, b) for a, b in combinations(sorted(towns), 2) if adjacent(a, b)]


# --- the basic layout ------------------------------------------------------------------


def castles() -> dict[str, list[Cell]]:
    return {c: [parse_cell(t) for t in cells] for c, cells in load_layout()["castles"].items()}


def knights() -> dict[str, list[Cell]]:
    return {c: [parse_cell(t) for t in cells] for c, cells in load_layout()["knights"].items()}


def walls() -> list[Edge]:
    return [parse_wall(text) for text in load_layout()["walls"]]


def wall_set() -> set[Edge]:
    return {make_edge(a, b) for a, b in walls()}


def areas(blocked: set[Edge]) -> list[frozenset[Cell]]:
    """Connected sets of cells; cells connect unless a wall is on their edge (RULES 6)."""
    seen: set[Cell] = set()
    result: list[frozenset[Cell]] = []
    for start in all_cells():
        if start in seen:
            continue
        seen.add(start)
        area = {start}
        queue = deque([start])
        while queue:
            cell = queue.popleft()
            for other in neighbours(cell):
                if other not in seen and make_edge(cell, other) not in blocked:
                    seen.add(other)
                    area.add(other)
                    queue.append(other)
        result.append(frozenset(area))
    return result


def castle_owner() -> dict[Cell, str]:
    return {cell: colour for colour, cells in castles().items() for cell in cells}


def castles_in(area: frozenset[Cell]) -> list[Cell]:
    return sorted((c for c in castle_owner() if c in area), key=cell_order)


def regions() -> dict[Cell, frozenset[Cell]]:
    """Areas with exactly one castle, keyed by that castle."""
    result = {}
    for area in areas(wall_set()):
        inside = castles_in(area)
        if len(inside) == 1:
            result[inside[0]] = area
    return result


def regions_of(colour: str) -> list[frozenset[Cell]]:
    owner = castle_owner()
    return [area for castle, area in regions().items() if owner[castle] == colour]


def area_of(cell: Cell) -> frozenset[Cell]:
    return next(area for area in areas(wall_set()) if cell in area)


def names(cells: Iterable[Cell]) -> list[str]:
    return [format_cell(c) for c in sorted(cells, key=cell_order)]


# === RULES 1.1: the map tiles ============================================================


def test_rules_1_1_six_tiles_of_5x5_with_known_terrain() -> None:
    tiles = load_tiles()
    assert sorted(tiles) == list(TILE_NAMES)
    for name, rows in tiles.items():
        assert len(rows) == TILE_SIZE, name
        for row in rows:
            assert len(row) == TILE_SIZE, (name, row)
            assert set(row) <= TERRAIN, (name, row)


@pytest.mark.parametrize("name", TILE_NAMES)
def test_rules_1_1_every_tile_has_at_least_one_town(name: str) -> None:
    assert count(load_tiles()[name], TOWN) >= 1


@pytest.mark.parametrize("name", TILE_NAMES)
def test_rules_1_1_every_tile_has_at_least_two_hills(name: str) -> None:
    assert count(load_tiles()[name], HILL) >= 2


@pytest.mark.parametrize("name", TILE_NAMES)
def test_rules_1_1_every_tile_has_at_least_three_forests(name: str) -> None:
    assert count(load_tiles()[name], FOREST) >= 3


@pytest.mark.parametrize("name", TILE_NAMES)
def test_rules_1_1_every_tile_has_at_least_twelve_plains(name: str) -> None:
    assert count(load_tiles()[name], PLAIN) >= 12


# The whole board is always all six tiles; placing and rotating them moves cells but never
# changes how many of each terrain there are, so the sums over the tiles hold for every
# arrangement.


def test_rules_1_1_board_holds_6_to_9_towns() -> None:
    assert 6 <= sum(count(rows, TOWN) for rows in load_tiles().values()) <= 9


def test_rules_1_1_board_holds_12_to_18_hills() -> None:
    assert 12 <= sum(count(rows, HILL) for rows in load_tiles().values()) <= 18


def test_rules_1_1_board_holds_24_to_36_forests() -> None:
    assert 24 <= sum(count(rows, FOREST) for rows in load_tiles().values()) <= 36


def test_rules_1_1_basic_board_counts_match_tile_sums() -> None:
    board = basic_board()
    assert len(board) == HEIGHT and all(len(row) == WIDTH for row in board)
    for terrain in TERRAIN:
        assert count(board, terrain) == sum(count(t, terrain) for t in load_tiles().values())


# No two towns adjacent in ANY arrangement (6 positions x 4 rotations per tile, 6! x 4^6
# boards: too many to build). Proof instead: rotation maps a tile's outer ring onto itself,
# so a tile whose towns are all in its inner 3 x 3 keeps them there in every rotation; two
# cells of different tiles that touch are both on their tiles' outer rings, so no town can
# touch a town of another tile. Within a tile, rotation keeps adjacency, so it is enough
# that no two towns of the unrotated tile touch. The two tests below check exactly these
# two facts; the third builds some arrangements anyway, as a cross-check.


@pytest.mark.parametrize("name", TILE_NAMES)
def test_rules_1_1_towns_only_in_inner_3x3_of_every_tile(name: str) -> None:
    ring_towns = [
        cell
        for cell, ch in tile_cells(load_tiles()[name]).items()
        if ch == TOWN and on_outer_ring(cell)
    ]
    assert ring_towns == []


@pytest.mark.parametrize("name", TILE_NAMES)
def test_rules_1_1_no_two_towns_adjacent_within_a_tile(name: str) -> None:
    assert adjacent_towns(load_tiles()[name]) == []


def test_rules_1_1_no_two_towns_adjacent_in_sample_arrangements() -> None:
    tiles = load_tiles()
    boards = [list(basic_board())]
    for shift in range(len(TILE_NAMES)):
        order = TILE_NAMES[shift:] + TILE_NAMES[:shift]
        for turn in range(4):
            placed = [rotations(tiles[name])[(turn + i) % 4] for i, name in enumerate(order)]
            boards.append(assemble([placed[:3], placed[3:]]))
    for board in boards:
        assert adjacent_towns(board) == [], board


@pytest.mark.parametrize("name", TILE_NAMES)
def test_rules_1_1_no_2x2_block_of_non_plain_cells(name: str) -> None:
    # A 2 x 2 block stays a 2 x 2 block under rotation, so the unrotated tile suffices.
    cells = tile_cells(load_tiles()[name])
    blocks = [
        (x, y)
        for y in range(TILE_SIZE - 1)
        for x in range(TILE_SIZE - 1)
        if all(cells[(x + dx, y + dy)] != PLAIN for dx in (0, 1) for dy in (0, 1))
    ]
    assert blocks == []


def test_rules_1_1_tiles_differ() -> None:
    tiles = load_tiles()
    for a, b in combinations(TILE_NAMES, 2):
        assert tiles[b] not in rotations(tiles[a]), f"tile {b} is a rotation of tile {a}"
    assert len({count(rows, TOWN) for rows in tiles.values()}) > 1
    assert len({count(rows, HILL) for rows in tiles.values()}) > 1


# === RULES 2.2 / 2.3: the pieces of the basic layout =====================================


def test_rules_2_2_layout_has_the_four_colours() -> None:
    layout = load_layout()
    assert set(layout) == {"castles", "knights", "walls"}
    assert sorted(layout["castles"]) == sorted(COLOURS)
    assert sorted(layout["knights"]) == sorted(COLOURS)


def test_rules_2_2_every_colour_has_three_castles_and_three_knights() -> None:
    for colour in COLOURS:
        assert len(castles()[colour]) == 3, colour
        assert len(knights()[colour]) == 3, colour


def test_rules_2_2_castles_and_knights_stand_on_plain_cells() -> None:
    board = basic_board()
    for kind in (castles(), knights()):
        for colour, cells in kind.items():
            for cell in cells:
                assert terrain_at(board, cell) == PLAIN, (colour, format_cell(cell))


def test_rules_2_2_no_two_pieces_on_one_cell() -> None:
    placed = [cell for kind in (castles(), knights()) for cells in kind.values() for cell in cells]
    assert len(placed) == len(set(placed))


def test_rules_2_2_every_knight_next_to_a_castle_of_its_colour() -> None:
    for colour, cells in knights().items():
        for knight in cells:
            assert any(adjacent(knight, c) for c in castles()[colour]), (colour, knight)


def test_rules_2_2_every_castle_has_a_knight_of_its_colour_beside_it() -> None:
    for colour, cells in castles().items():
        for castle in cells:
            assert any(adjacent(castle, k) for k in knights()[colour]), (colour, castle)


def test_rules_2_3_same_colour_castles_at_manhattan_distance_7_or_more() -> None:
    for colour, cells in castles().items():
        for a, b in combinations(cells, 2):
            assert manhattan(a, b) >= 7, (colour, format_cell(a), format_cell(b))


# === RULES 5.1: the walls of the basic layout ============================================


def test_rules_5_1_walls_are_spelled_canonically() -> None:
    # parse_wall fails on bad notation, on cells off the board and on non-adjacent cells.
    for text, (a, b) in zip(load_layout()["walls"], walls(), strict=True):
        assert cell_order(a) < cell_order(b), f"{text}: write the cell smaller by (y, x) first"
        assert f"{format_cell(a)}/{format_cell(b)}" == text


def test_rules_5_1_walls_only_on_internal_edges() -> None:
    # Both cells are on the board and side by side: the edge is between two cells, not rim.
    for a, b in walls():
        assert on_board(a) and on_board(b) and adjacent(a, b)


def test_rules_5_1_no_duplicate_walls() -> None:
    assert len(walls()) == len(wall_set())


def test_rules_5_1_no_wall_separates_a_knight_from_its_own_colour() -> None:
    blocked = wall_set()
    for colour, cells in knights().items():
        friends = set(cells) | set(castles()[colour])
        for knight in cells:
            for friend in friends:
                if adjacent(knight, friend):
                    edge = make_edge(knight, friend)
                    assert edge not in blocked, (colour, names(edge))


# === RULES 6 (with 2.2): the areas at the start ==========================================


def test_rules_6_every_colour_owns_exactly_one_region() -> None:
    for colour in COLOURS:
        assert len(regions_of(colour)) == 1, colour


def test_rules_2_2_starting_regions_have_4_to_10_cells() -> None:
    for colour in COLOURS:
        for region in regions_of(colour):
            assert 4 <= len(region) <= 10, (colour, len(region))


def test_rules_2_2_starting_regions_have_no_town() -> None:
    board = basic_board()
    for colour in COLOURS:
        for region in regions_of(colour):
            towns = [c for c in region if terrain_at(board, c) == TOWN]
            assert towns == [], (colour, names(towns))


def test_rules_2_2_other_two_castles_of_every_colour_are_in_free_land() -> None:
    # Free land: an area with two or more castles (RULES 6); the castles there are not enclosed.
    for colour, cells in castles().items():
        free = [c for c in cells if len(castles_in(area_of(c))) >= 2]
        assert len(free) == len(cells) - 1, (colour, names(free))


def test_rules_6_no_neutral_zone_at_start() -> None:
    empty = [names(area) for area in areas(wall_set()) if not castles_in(area)]
    assert empty == []


def test_rules_6_everything_outside_the_regions_is_one_free_land_area() -> None:
    all_areas = areas(wall_set())
    in_regions = set().union(*regions().values())
    rest = [area for area in all_areas if not area <= in_regions]
    assert len(rest) == 1
    assert rest[0] == frozenset(all_cells()) - in_regions
    assert len(castles_in(rest[0])) >= 2


def test_rules_6_1_no_wall_inside_a_region() -> None:
    for castle, region in regions().items():
        inside = [names(e) for e in wall_set() if e[0] in region and e[1] in region]
        assert inside == [], (format_cell(castle), inside)


def test_rules_2_2_no_loose_wall_inside_free_land() -> None:
    # Not forbidden by 5.1, but a starting wall with the same area on both sides does nothing.
    for edge in wall_set():
        assert area_of(edge[0]) != area_of(edge[1]), names(edge)


def test_rules_2_2_one_starting_region_in_each_corner() -> None:
    # Fairness of the layout (our design): every colour starts from its own corner.
    corners = []
    for colour in COLOURS:
        (region,) = regions_of(colour)
        inside = [c for c in CORNERS if c in region]
        assert len(inside) == 1, (colour, names(inside))
        corners.append(inside[0])
    assert sorted(corners) == sorted(CORNERS)


def test_rules_2_2_starting_regions_of_similar_size() -> None:
    sizes = [len(region) for colour in COLOURS for region in regions_of(colour)]
    assert max(sizes) - min(sizes) <= 2, sizes
