"""The position: pieces, walls, money and power, and the areas they make (RULES 1, 6).

The position knows nothing of turns or phases; `engine.rules` changes it and
`engine.game` decides when. Areas (regions, neutral zones, free land) are
derived from walls and castles, computed when first asked for, and afterwards
kept up to date where walls change them: a castle placed makes them be computed
afresh; walls added or removed refill only the areas they lie in; and a wall that
leaves its area in one piece (most walls, in open land) changes nothing.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

from engine.board import BOARD_SIZES_KEPT, Board, Cell, Edge, cell_order

COLOURS = ("red", "ochre", "lilac", "grey")
KNIGHTS_PER_COLOUR = 12
WALLS_IN_GAME = 100
START_DUCATS = 12


@lru_cache(maxsize=BOARD_SIZES_KEPT)
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
    # Derived from walls and castles. Never changed in place: a copy shares them until
    # one of the two changes its walls (copy-on-write).
    _area_of: dict[Cell, Area] | None = field(default=None, repr=False, compare=False)
    _areas: list[Area] | None = field(default=None, repr=False, compare=False)
    # `regions(colour)` by colour (None: all), for the `_areas` list they were found in;
    # shared by copies as the areas are (a castle's colour never changes).
    _regions: tuple[list[Area], dict[str | None, list[Area]]] | None = field(
        default=None, repr=False, compare=False
    )

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
        twin._area_of, twin._areas, twin._regions = self._area_of, self._areas, self._regions
        return twin

    # --- areas -----------------------------------------------------------------

    def invalidate_areas(self) -> None:
        """Castles or walls changed anywhere: areas are computed afresh when next asked."""
        self._area_of, self._areas = None, None

    def wall_added(self, edge: Edge) -> None:
        """`edge` has just been walled: only its area can change, and only by splitting in
        two. When its two cells stay joined the area is kept as it was (its cells may
        then be in another order than a fill would give them: that matters only for a
        region, and no wall goes inside a region, RULES 5.1)."""
        if self._area_of is None or self._joined(*edge):
            return
        self.walls_changed_in([self._area_of[edge[0]]])

    def walls_changed_in(self, areas: Iterable[Area]) -> None:
        """Walls were added or removed, each between two cells of `areas` (as they were
        before): only those areas can have changed, and they are filled again, also when
        their cells stay the same (walls cleared inside a region). So a region's cells
        are always in the order a fill of the whole board finds them, as the engine's
        output follows that order (the order of the walls an expansion adds)."""
        if self._area_of is None:
            return
        cells = sorted({c for a in areas for c in a.cells}, key=cell_order)
        # A new mapping, never the old one changed: copies may share the old one.
        self._area_of, self._areas = self._filled(cells, dict(self._area_of)), None

    @property
    def areas(self) -> list[Area]:
        """Every area, in the order of its first cell (row by row)."""
        if self._areas is None:
            area_of, seen, areas = self._fill(), set(), []
            for cell in self.board.cells:
                area = area_of[cell]
                if id(area) not in seen:
                    seen.add(id(area))
                    areas.append(area)
            self._areas = areas
        return self._areas

    def area_at(self, cell: Cell) -> Area:
        return self._fill()[cell]

    def _fill(self) -> dict[Cell, Area]:
        if self._area_of is None:
            self._area_of = self._filled(self.board.cells, {})
        return self._area_of

    def _filled(self, cells: Iterable[Cell], area_of: dict[Cell, Area]) -> dict[Cell, Area]:
        """`area_of` with an area filled from each of `cells` (in board order) that no
        earlier one of them reached."""
        done: set[Cell] = set()
        for start in cells:
            if start in done:
                continue
            filled = self._flood(start)
            castles = sorted((c for c in filled if c in self.castles), key=cell_order)
            area = Area(frozenset(filled), tuple(castles))
            for cell in filled:
                area_of[cell] = area
            done.update(filled)
        return area_of

    def _flood(self, start: Cell) -> list[Cell]:
        """The cells joined to `start` with no wall between, in the order found: a fill of
        the whole board gives each area's cells in this order, from its first cell."""
        links, walls = _links(self.board.width, self.board.height), self.walls
        found, stack = {start}, [start]
        cells = [start]
        while stack:
            for n, edge in links[stack.pop()]:
                if n not in found and edge not in walls:
                    found.add(n)
                    stack.append(n)
                    cells.append(n)
        return cells

    def _joined(self, a: Cell, b: Cell) -> bool:
        """Whether a path with no wall joins `a` and `b`. Searched from both ends at once,
        breadth first: it costs a few cells round a wall in open land, and the smaller
        piece when the wall cuts an area in two."""
        links, walls = _links(self.board.width, self.board.height), self.walls
        seen: tuple[set[Cell], set[Cell]] = ({a}, {b})
        queues = (deque([a]), deque([b]))
        while queues[0] and queues[1]:
            for side in (0, 1):
                for n, edge in links[queues[side].popleft()]:
                    if edge in walls or n in seen[side]:
                        continue
                    if n in seen[1 - side]:
                        return True
                    seen[side].add(n)
                    queues[side].append(n)
                if not queues[side]:
                    return False
        return False

    def regions(self, colour: str | None = None) -> list[Area]:
        """Regions (areas with exactly one castle), of one colour or all, by castle.
        Kept until the areas change: rules and players ask for them after every wall."""
        areas = self.areas
        if self._regions is None or self._regions[0] is not areas:
            self._regions = (areas, {})
        kept = self._regions[1]
        if colour not in kept:
            found = [
                a
                for a in areas
                if a.is_region and (colour is None or self.castles[a.castle] == colour)
            ]
            kept[colour] = sorted(found, key=lambda a: cell_order(a.castle))
        return list(kept[colour])

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
