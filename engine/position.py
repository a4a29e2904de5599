"""The position: pieces, walls, money and power, and the areas they make (RULES 1, 6).

The position knows nothing of turns or phases; `engine.rules` changes it and
`engine.game` decides when. Areas (regions, neutral zones, free land) are
derived from walls and castles and recomputed lazily after every wall change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from engine.board import Board, Cell, Edge, cell_order

COLOURS = ("red", "ochre", "lilac", "grey")
KNIGHTS_PER_COLOUR = 12
WALLS_IN_GAME = 100
START_DUCATS = 12


@cache
def _links(width: int, height: int) -> dict[Cell, tuple[tuple[Cell, Edge], ...]]:
    """For each cell, its neighbours with the edge between: the hot loop of flood fills."""
    result: dict[Cell, tuple[tuple[Cell, Edge], ...]] = {}
    for y in range(height):
        for x in range(width):
            pairs = []
            for n in ((x, y - 1), (x - 1, y), (x + 1, y), (x, y + 1)):
                if 0 <= n[0] < width and 0 <= n[1] < height:
                    edge = ((x, y), n) if (y, x) <= (n[1], n[0]) else (n, (x, y))
                    pairs.append((n, edge))
            result[(x, y)] = tuple(pairs)
    return result


def founding_points(size: int) -> int:
    """The founding table of RULES 6: 1–4 → 3, 5–10 → 5, 11–20 → 7, 21–30 → 9, 31+ → 12."""
    for limit, points in ((4, 3), (10, 5), (20, 7), (30, 9)):
        if size <= limit:
            return points
    return 12


@dataclass(frozen=True)
class Area:
    """A set of cells enclosed by walls and the rim (RULES 6)."""

    cells: frozenset[Cell]
    castles: tuple[Cell, ...]

    @property
    def is_region(self) -> bool:
        return len(self.castles) == 1

    @property
    def is_neutral_zone(self) -> bool:
        return not self.castles

    @property
    def castle(self) -> Cell:
        return self.castles[0]

    def sorted_cells(self) -> list[Cell]:
        return sorted(self.cells, key=cell_order)


@dataclass
class Player:
    """What a player holds: ducats, power and a hidden hand of politics cards."""

    ducats: int = START_DUCATS
    power: int = 0
    hand: list[str] = field(default_factory=list)

    def copy(self) -> Player:
        return Player(self.ducats, self.power, list(self.hand))

    def treasure(self) -> list[int]:
        return sorted(int(card.split()[1]) for card in self.hand if card.startswith("treasure"))


@dataclass
class Position:
    """Pieces, walls and players' holdings. Colours not in `players` are neutral."""

    board: Board
    players: dict[str, Player]
    castles: dict[Cell, str] = field(default_factory=dict)
    knights: dict[Cell, str] = field(default_factory=dict)
    walls: set[Edge] = field(default_factory=set)
    wall_supply: int = WALLS_IN_GAME
    knight_supply: dict[str, int] = field(default_factory=dict)
    alliances: set[tuple[Cell, Cell]] = field(default_factory=set)
    founded: set[Cell] = field(default_factory=set)
    _areas: list[Area] | None = field(default=None, repr=False, compare=False)
    _area_of: dict[Cell, int] = field(default_factory=dict, repr=False, compare=False)

    def copy(self) -> Position:
        twin = Position(
            board=self.board,
            players={c: p.copy() for c, p in self.players.items()},
            castles=dict(self.castles),
            knights=dict(self.knights),
            walls=set(self.walls),
            wall_supply=self.wall_supply,
            knight_supply=dict(self.knight_supply),
            alliances=set(self.alliances),
            founded=set(self.founded),
        )
        # Areas are immutable, so the copy may share them until its walls change.
        twin._areas, twin._area_of = self._areas, self._area_of
        return twin

    # --- areas -----------------------------------------------------------------

    def invalidate_areas(self) -> None:
        self._areas = None

    @property
    def areas(self) -> list[Area]:
        if self._areas is None:
            self._compute_areas()
        assert self._areas is not None
        return self._areas

    def area_at(self, cell: Cell) -> Area:
        areas = self.areas
        return areas[self._area_of[cell]]

    def _compute_areas(self) -> None:
        links = _links(self.board.width, self.board.height)
        walls, area_of = self.walls, {}
        areas: list[Area] = []
        for start in self.board.cells:
            if start in area_of:
                continue
            index, stack, cells = len(areas), [start], [start]
            area_of[start] = index
            while stack:
                for n, edge in links[stack.pop()]:
                    if n not in area_of and edge not in walls:
                        area_of[n] = index
                        stack.append(n)
                        cells.append(n)
            castles = tuple(sorted((c for c in cells if c in self.castles), key=cell_order))
            areas.append(Area(frozenset(cells), castles))
        self._areas, self._area_of = areas, area_of

    def regions(self, colour: str | None = None) -> list[Area]:
        """Regions (areas with exactly one castle), of one colour or all, by castle."""
        found = [
            a for a in self.areas
            if a.is_region and (colour is None or self.castles[a.castle] == colour)
        ]
        return sorted(found, key=lambda a: cell_order(a.castle))

    def region_of_castle(self, castle: Cell) -> Area | None:
        area = self.area_at(castle)
        return area if area.is_region else None

    def owner(self, area: Area) -> str | None:
        return self.castles[area.castle] if area.is_region else None

    def strength(self, area: Area) -> int:
        """RULES 5.3: the owner's knights inside the region."""
        owner = self.owner(area)
        return sum(1 for c in area.cells if self.knights.get(c) == owner)

    def links(self, cell: Cell) -> tuple[tuple[Cell, Edge], ...]:
        return _links(self.board.width, self.board.height)[cell]

    def borders(self, a: Area, b: Area) -> bool:
        """Two areas share at least one (walled) edge."""
        small, large = (a, b) if len(a.cells) <= len(b.cells) else (b, a)
        return any(n in large.cells for c in small.cells for n, _ in self.links(c))

    def piece_at(self, cell: Cell) -> tuple[str, str] | None:
        if cell in self.castles:
            return ("castle", self.castles[cell])
        if cell in self.knights:
            return ("knight", self.knights[cell])
        return None

    def is_player(self, colour: str) -> bool:
        return colour in self.players

    def allied(self, a: Cell, b: Cell) -> bool:
        return alliance_key(a, b) in self.alliances

    def hills_in_regions(self, colour: str) -> int:
        return sum(self.board.count("H", r.cells) for r in self.regions(colour))


def alliance_key(a: Cell, b: Cell) -> tuple[Cell, Cell]:
    return (a, b) if cell_order(a) <= cell_order(b) else (b, a)
