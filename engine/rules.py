"""What the pieces may do and what it scores (RULES 2.3, 5, 6, 7, 8), on a `Position`.

One naming habit across the engine: `*_problem` returns the reason a thing is not
allowed (an `engine.reasons.Reason`: a code and values, read as an English sentence)
or None; `check_*` raises `IllegalMove` with that reason (and may return what it
worked out on the way); `legal_*` lists what is allowed. Where many candidates are
tested (the `legal_*` lists, the computer players), `*_refusal` returns the reason
unmade (`Refusal`), so that no sentence is built that nobody reads. What a
submission may be in each phase of the game (on a whole `GameState`) is
`engine.phase_rules`.

Every function that changes the position either raises `IllegalMove` before
changing anything, or applies the whole change. With `trusted=True` it skips its
checks: for a move already checked against this same position (`engine.game.apply`).
Events are appended to `log` as plain dicts (their shapes: `engine.events`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from functools import lru_cache

from engine.board import FOREST, HILL, PLAIN, TOWN, Board, Cell, Edge, format_cell
from engine.errors import IllegalMove
from engine.events import Log, PaidFor
from engine.moves import Alliance, Expand, Place, Politics
from engine.position import Area, Position, alliance_key, founding_points
from engine.reasons import Reason

CASTLE_DISTANCE = 7  # RULES 2.3: at least 6 cells between, i.e. Manhattan distance ≥ 7
FOREST_FEE = 5
ALLIANCE_BREAK_FEE = 10
MAX_REGIONS_FOR_WALLS = 3
TOWN_POWER = 5  # RULES 6.1, 6.2: a town's worth in a region founded, taken or lost


def at(cell: Cell) -> str:
    return format_cell(cell)


def taken(pos: Position, cell: Cell) -> Reason:
    """A cell taken by a piece (there is one at `cell`)."""
    kind, owner = pos.piece_at(cell) or ("knight", "")
    return Reason(f"taken_by_{kind}", cell=at(cell), owner=owner)


Refusal = Callable[[], Reason]
"""The reason of a refusal, made when called. The `legal_*` lists and the computer
players test thousands of candidates and read none of the sentences, so the checks they
use (`*_refusal`) return one of these; `*_problem` words it at once."""


def words(refusal: Refusal | None) -> Reason | None:
    return None if refusal is None else refusal()


def problem_of(check: Callable[[], object]) -> Reason | None:
    """The reason a `check_*` call raises, or None: a `*_problem` made of a check."""
    try:
        check()
    except IllegalMove as exc:
        return exc.reason
    return None


# --- placement (RULES 2.3) -------------------------------------------------------


def placement_problem(
    pos: Position, colour: str, move: Place, distance: int | None = None
) -> Reason | None:
    """Why `move` may not place a castle and knight of `colour`, or None. `distance`
    is `castle_distance(pos, colour)`, when the caller has it already."""
    castle, knight = move.castle, move.knight
    for cell, what in ((castle, "castle"), (knight, "knight")):
        if not pos.board.on_board(cell):
            return Reason("not_on_board", cell=at(cell))
        if pos.board.terrain(cell) != PLAIN:
            return Reason(f"{what}_not_on_plain", cell=at(cell))
        if pos.piece_at(cell):
            return taken(pos, cell)
    if abs(castle[0] - knight[0]) + abs(castle[1] - knight[1]) != 1:
        return Reason("knight_away_from_castle", cell=at(knight))
    nearest = _nearest(_own_castles(pos, colour), castle)
    if nearest is None or _distance(nearest, castle) >= CASTLE_DISTANCE:
        return None  # far enough, whatever `castle_distance` allows (never more)
    need = castle_distance(pos, colour) if distance is None else distance
    if _distance(nearest, castle) < need:
        return Reason(
            "castle_too_close", cell=at(castle), colour=colour, castle=at(nearest), between=need - 1
        )
    return None


def _distance(a: Cell, b: Cell) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def _own_castles(pos: Position, colour: str) -> list[Cell]:
    return [c for c, owner in pos.castles.items() if owner == colour]


def _nearest(castles: Sequence[Cell], cell: Cell) -> Cell | None:
    """The first of `castles` nearest to `cell` (as `min` picks it), or None."""
    return min(castles, key=lambda c: _distance(c, cell)) if castles else None


def _spacing(castles: Sequence[Cell], cell: Cell) -> int:
    """Distance from `cell` to the nearest of `castles`; with none, far enough anyway."""
    return min((_distance(c, cell) for c in castles), default=CASTLE_DISTANCE)


def castle_distance(pos: Position, colour: str) -> int:
    """RULES 2.3 asks for 6 cells between same-colour castles. When no free cell is that
    far (it happens, rarely, to the fourth castle of a 2-player game), the castle goes
    as far from its colour's others as any free cell allows (docs/rules-decisions.md).
    The scan stops at the first cell that far: mostly one of the first few."""
    own = _own_castles(pos, colour)
    best = 0
    for castle in _castle_cells(pos):
        best = max(best, _spacing(own, castle))
        if best >= CASTLE_DISTANCE:
            return CASTLE_DISTANCE
    return best


def _castle_cells(pos: Position) -> Iterator[Cell]:
    """Free plain cells with a free plain neighbour, in board order: where a castle and
    its knight fit. Lazily: most callers stop at the first that does."""
    taken = pos.castles.keys() | pos.knights.keys()
    return (
        c
        for c, around in _plain_cells(pos.board)
        if c not in taken and any(n not in taken for n in around)
    )


# Boards whose plain cells are kept: a variable setup is a board of its own (RULES 2.3),
# so a worker that plays many games keeps the most recent ones (about 10 KB each; one
# made again costs about 0.2 ms, in a placement phase only).
BOARDS_KEPT = 64


@lru_cache(maxsize=BOARDS_KEPT)
def _plain_cells(board: Board) -> tuple[tuple[Cell, tuple[Cell, ...]], ...]:
    """Each plain cell of the board with its plain neighbours: terrain never changes."""
    plain = {c for c in board.cells if board.terrain(c) == PLAIN}
    return tuple(
        (c, tuple(n for n in board.neighbours(c) if n in plain)) for c in board.cells if c in plain
    )


def can_place(pos: Position) -> bool:
    """Whether a castle and its knight can be placed now, for any colour: where they fit,
    the cell farthest from the colour's castles is as far as `castle_distance` asks."""
    return next(_castle_cells(pos), None) is not None


def legal_placements(pos: Position, colour: str) -> list[Place]:
    """Every placement `placement_problem` allows, in board order."""
    return [Place(castle, knight) for castle, knight in placement_cells(pos, colour)]


def placement_cells(pos: Position, colour: str) -> list[tuple[Cell, Cell]]:
    """`legal_placements` as (castle, knight) pairs, for callers that look at a few of
    many. The castle distance is measured once, not once per pair."""
    need = castle_distance(pos, colour)
    taken = pos.castles.keys() | pos.knights.keys()
    too_close = {
        (x + dx, y + dy) for x, y in _own_castles(pos, colour) for dx, dy in _closer_than(need)
    }
    return [
        (castle, knight)
        for castle, around in _plain_cells(pos.board)
        if castle not in taken and castle not in too_close
        for knight in around
        if knight not in taken
    ]


@lru_cache(maxsize=CASTLE_DISTANCE + 1)  # a distance is 0 to CASTLE_DISTANCE
def _closer_than(distance: int) -> tuple[tuple[int, int], ...]:
    """The steps (dx, dy) to the cells closer than `distance` (Manhattan) to a cell."""
    return tuple(
        (dx, dy)
        for dx in range(1 - distance, distance)
        for dy in range(abs(dx) + 1 - distance, distance - abs(dx))
    )


def place_castle(pos: Position, colour: str, move: Place) -> None:
    """RULES 2.3: put a castle and its knight; the caller has checked the placement."""
    pos.castles[move.castle], pos.knights[move.knight] = colour, colour
    pos.knight_supply[colour] -= 1
    pos.invalidate_areas()


# --- power and money -----------------------------------------------------------


def change_power(pos: Position, colour: str, points: int) -> int:
    """Add (or take) power; never below 0 (RULES 1). Returns the change made."""
    player = pos.players.get(colour)
    if player is None or points == 0:
        return 0
    before = player.power
    player.power = max(0, before + points)
    return player.power - before


def area_value(pos: Position, cells: Iterable[Cell]) -> int:
    """RULES 6: T(cells) + 5 × towns."""
    cells = list(cells)
    return founding_points(len(cells)) + TOWN_POWER * pos.board.count(TOWN, cells)


def check_payment(pos: Position, colour: str, amount: int, treasure: Sequence[int]) -> int:
    """The ducats a payment takes when `treasure` cards pay first, no change (RULES 7.3)."""
    player = pos.players[colour]
    held = player.treasure()
    for value in treasure:
        if held.count(value) < list(treasure).count(value):
            raise IllegalMove(Reason("no_treasure_card", colour=colour, value=value))
    if treasure and amount == 0:
        raise IllegalMove(Reason("nothing_to_pay"))
    if treasure and sum(treasure) - min(treasure) >= amount:
        raise IllegalMove(Reason("treasure_to_spare", amount=amount))
    ducats = max(0, amount - sum(treasure))
    if ducats > player.ducats:
        raise IllegalMove(
            Reason("too_few_ducats", colour=colour, ducats=player.ducats, needed=ducats)
        )
    return ducats


def payment_problem(
    pos: Position, colour: str, amount: int, treasure: Sequence[int]
) -> Reason | None:
    return problem_of(lambda: check_payment(pos, colour, amount, treasure))


def can_pay(pos: Position, colour: str, amount: int) -> bool:
    """Whether `colour` can pay `amount` to the bank with ducats and Treasure cards
    (RULES 7.3). Cards are spent whole; of any cards that cover the amount, some cover
    it with no card to spare, as `check_payment` asks."""
    player = pos.players[colour]
    return player.ducats + sum(player.treasure()) >= amount


def pay(
    pos: Position,
    colour: str,
    amount: int,
    treasure: Sequence[int],
    log: Log,
    reason: PaidFor,
    *,
    trusted: bool = False,
) -> None:
    """Pay the bank; every payment is public (RULES 1). `reason`: what for, a code."""
    ducats = (
        max(0, amount - sum(treasure)) if trusted else check_payment(pos, colour, amount, treasure)
    )
    player = pos.players[colour]
    player.ducats -= ducats
    for value in treasure:
        player.hand.remove(f"treasure {value}")
    if amount:
        log.append(
            {
                "kind": "paid",
                "player": colour,
                "amount": amount,
                "ducats": ducats,
                "treasure": list(treasure),
                "for": reason,
            }
        )


# --- founding (RULES 6.1) --------------------------------------------------------


def settle(pos: Position, log: Log) -> None:
    """After walls changed: score every newly enclosed castle, clear walls inside it."""
    for area in pos.regions():
        if area.castle in pos.founded:
            continue
        pos.founded.add(area.castle)
        owner = pos.castles[area.castle]
        points = change_power(pos, owner, area_value(pos, area.cells))
        log.append(
            {
                "kind": "founded",
                "owner": owner,
                "castle": list(area.castle),
                "size": len(area.cells),
                "towns": pos.board.count(TOWN, area.cells),
                "points": points,
            }
        )
        clear_inner_walls(pos, area)


def clear_inner_walls(pos: Position, region: Area) -> None:
    cells = region.cells
    inner = {e for e in pos.walls if e[0] in cells and e[1] in cells}
    if inner:
        pos.walls -= inner
        pos.wall_supply += len(inner)
        pos.walls_changed_in([region])


# --- walls (RULES 5.1) -----------------------------------------------------------


def wall_problem(pos: Position, colour: str, edge: Edge) -> Reason | None:
    """Why `colour` may not place a wall on `edge` now, or None if it may."""
    a, b = edge
    if not (pos.board.on_board(a) and pos.board.on_board(b)):
        return Reason("wall_not_on_board", one=at(a), other=at(b))
    if edge in pos.walls:
        return Reason("wall_already_there", one=at(a), other=at(b))
    if pos.wall_supply <= 0:
        return Reason("wall_supply_empty")
    if len(pos.regions(colour)) >= MAX_REGIONS_FOR_WALLS:
        return Reason("wall_region_limit", colour=colour, regions=MAX_REGIONS_FOR_WALLS)
    return edge_problem(pos, edge)


def edge_problem(pos: Position, edge: Edge) -> Reason | None:
    """The checks of RULES 5.1 that depend on the edge alone (not on the supply or on
    the player's regions, which are the same for every edge)."""
    return words(edge_refusal(pos, edge))


def edge_refusal(pos: Position, edge: Edge) -> Refusal | None:
    a, b = edge
    for one, other in ((a, b), (b, a)):
        if one in pos.knights and (piece := pos.piece_at(other)) and piece[1] == pos.knights[one]:
            code = f"wall_separates_knight{'s' if piece[0] == 'knight' else '_and_castle'}"
            return lambda: Reason(code, colour=piece[1], one=at(one), other=at(other))
    area = pos.area_at(a)
    if area.is_region and b in area.cells:
        owner = pos.castles[area.castle]
        return lambda: Reason("wall_inside_region", one=at(a), other=at(b), owner=owner)
    return None


def place_wall(pos: Position, colour: str, edge: Edge, log: Log, *, trusted: bool = False) -> None:
    if not trusted:
        check_wall(pos, colour, edge)
    pos.walls.add(edge)
    pos.wall_supply -= 1
    pos.wall_added(edge)
    log.append({"kind": "wall", "player": colour, "wall": [list(edge[0]), list(edge[1])]})
    settle(pos, log)


def check_wall(pos: Position, colour: str, edge: Edge) -> None:
    problem = wall_problem(pos, colour, edge)
    if problem:
        raise IllegalMove(problem)


def may_place_walls(pos: Position, colour: str) -> bool:
    return pos.wall_supply > 0 and len(pos.regions(colour)) < MAX_REGIONS_FOR_WALLS


def legal_walls(pos: Position, colour: str) -> list[Edge]:
    if not may_place_walls(pos, colour):
        return []
    return list(_open_edges(pos))


def has_legal_wall(pos: Position, colour: str) -> bool:
    return may_place_walls(pos, colour) and next(_open_edges(pos), None) is not None


def _open_edges(pos: Position) -> Iterator[Edge]:
    """The edges `edge_refusal` allows, in board order. It can refuse only an edge at a
    knight or inside a region (RULES 5.1): the others need no check."""
    suspect = pos.knights.keys() | {c for r in pos.regions() for c in r.cells}
    return (
        e
        for e in pos.board.edges
        if e not in pos.walls
        and ((e[0] not in suspect and e[1] not in suspect) or edge_refusal(pos, e) is None)
    )


def has_knight_cell(pos: Position, colour: str) -> bool:
    return bool(legal_knight_cells(pos, colour))


# --- knights (RULES 5.2) ---------------------------------------------------------


def knight_problem(pos: Position, colour: str, cell: Cell) -> Reason | None:
    return words(knight_refusal(pos, colour, cell))


def knight_refusal(pos: Position, colour: str, cell: Cell) -> Refusal | None:
    if not pos.board.on_board(cell):
        return lambda: Reason("not_on_board", cell=at(cell))
    if pos.knight_supply.get(colour, 0) <= 0:
        return lambda: Reason("no_knight_in_supply", colour=colour)
    if cell in pos.castles or cell in pos.knights:
        return lambda: taken(pos, cell)
    terrain = pos.board.terrain(cell)
    if terrain not in (PLAIN, FOREST):
        code = "knight_on_hill" if terrain == HILL else "knight_on_town"
        return lambda: Reason(code, cell=at(cell))
    for n, edge in pos.links(cell):
        piece = pos.piece_at(n)
        if piece and piece[1] == colour and edge not in pos.walls:
            return None
    return lambda: Reason("knight_not_linked", cell=at(cell), colour=colour)


def knight_fee(pos: Position, cell: Cell) -> int:
    return FOREST_FEE if pos.board.terrain(cell) == FOREST else 0


def check_knight(pos: Position, colour: str, cell: Cell) -> None:
    problem = knight_problem(pos, colour, cell)
    if problem:
        raise IllegalMove(problem)


def put_knight(pos: Position, colour: str, cell: Cell, log: Log, *, trusted: bool = False) -> None:
    """Place a knight whose fee the caller has settled."""
    if not trusted:
        check_knight(pos, colour, cell)
    pos.knights[cell] = colour
    pos.knight_supply[colour] -= 1
    log.append(
        {"kind": "knight", "player": colour, "cell": list(cell), "fee": knight_fee(pos, cell)}
    )


def legal_knight_cells(pos: Position, colour: str) -> list[Cell]:
    """In board order. Only cells next to a piece of `colour` can be legal (RULES 5.2):
    the full check is made on those alone."""
    if pos.knight_supply.get(colour, 0) <= 0:
        return []
    near = {
        n
        for cell, owner in (*pos.castles.items(), *pos.knights.items())
        if owner == colour
        for n, _ in pos.links(cell)
    }
    return [c for c in pos.board.cells if c in near and knight_refusal(pos, colour, c) is None]


def affordable_knight_cells(pos: Position, colour: str) -> list[Cell]:
    """The legal knight cells whose fee `colour` can pay: a forest only with the
    forest fee in ducats or Treasure cards (RULES 5.2, 7.3)."""
    return [c for c in legal_knight_cells(pos, colour) if can_pay(pos, colour, knight_fee(pos, c))]


# --- expansion (RULES 5.3, 6.2) ----------------------------------------------------


def expanding_region(pos: Position, colour: str, castle: Cell | None, first: Cell) -> Area:
    """The region named by its castle, or the only one of `colour` bordering `first`."""
    if castle is not None:
        region = pos.region_of_castle(castle) if pos.board.on_board(castle) else None
        if region is None or pos.castles.get(castle) != colour:
            raise IllegalMove(Reason("no_own_region_at", colour=colour, castle=at(castle)))
        return region
    near = (
        [r for r in pos.regions(colour) if any(n in r.cells for n, _ in pos.links(first))]
        if pos.board.on_board(first)
        else []
    )
    if not near:
        raise IllegalMove(Reason("borders_no_region", cell=at(first), colour=colour))
    if len(near) > 1:
        raise IllegalMove(
            Reason(
                "borders_several_regions",
                cell=at(first),
                colour=colour,
                castles=[at(r.castle) for r in near],
                castle=at(near[0].castle),
            )
        )
    return near[0]


def take_problem(
    pos: Position, colour: str, castle: Cell, grown: AbstractSet[Cell], cell: Cell
) -> Reason | None:
    """Why the region (grown so far) may not take `cell`, or None (RULES 5.3)."""
    if not pos.board.on_board(cell):
        return Reason("not_on_board", cell=at(cell))
    if cell in grown:
        return Reason("already_in_region", cell=at(cell))
    if not any(n in grown for n, _ in pos.links(cell)):
        return Reason("not_next_to_region", cell=at(cell))
    if cell in pos.castles:
        return Reason("region_holds_castle", cell=at(cell), owner=pos.castles[cell])
    if (knight := pos.knights.get(cell, colour)) != colour:
        return Reason("cell_holds_knight", cell=at(cell), owner=knight)
    area = pos.area_at(cell)
    if not area.is_region:
        return None
    owner = pos.castles[area.castle]
    if owner == colour:
        return Reason("own_other_region", cell=at(cell), colour=colour)
    if pos.allied(castle, area.castle):
        return Reason("allied_region", owner=owner, castle=at(area.castle))
    mine = sum(1 for c in grown if pos.knights.get(c) == colour)
    theirs = sum(1 for c in area.cells - grown if pos.knights.get(c) == owner)
    if theirs >= mine:
        return Reason(
            "stronger_region", owner=owner, castle=at(area.castle), theirs=theirs, mine=mine
        )
    return None


def border_walls(pos: Position, cells: set[Cell]) -> tuple[set[Edge], set[Edge]]:
    """Walls to remove (inside `cells`) and to add (on its border) to enclose it."""
    inside = {e for e in pos.walls if e[0] in cells and e[1] in cells}
    border = {e for c in cells for n, e in pos.links(c) if n not in cells and e not in pos.walls}
    return inside, border


def check_expansion(
    pos: Position, colour: str, castle: Cell | None, cells: Sequence[Cell]
) -> tuple[Area, set[Cell]]:
    if not 1 <= len(cells) <= 2:
        raise IllegalMove(Reason("expansion_size"))
    region = expanding_region(pos, colour, castle, cells[0])
    grown = set(region.cells)
    for cell in cells:
        problem = take_problem(pos, colour, region.castle, grown, cell)
        if problem:
            raise IllegalMove(problem)
        grown.add(cell)
    inside, border = border_walls(pos, grown)
    if len(border) > pos.wall_supply + len(inside):
        needed = len(border) - len(inside)
        raise IllegalMove(Reason("walls_to_enclose", needed=needed, supply=pos.wall_supply))
    return region, grown


def expansion_problem(
    pos: Position, colour: str, castle: Cell | None, cells: Sequence[Cell]
) -> Reason | None:
    return problem_of(lambda: check_expansion(pos, colour, castle, cells))


def legal_expansions(pos: Position, player: str) -> list[Expand]:
    """Every legal one-cell expansion (a two-cell one starts with one of these)."""
    found = []
    for region in pos.regions(player):
        near = {n for c in region.cells for n, _ in pos.links(c) if n not in region.cells}
        for cell in sorted(near, key=lambda c: (c[1], c[0])):
            if take_problem(pos, player, region.castle, region.cells, cell) is not None:
                continue
            # One cell adds at most 3 walls and frees the walled edge it shares with the
            # region: with 2 walls in supply it is always enclosed (the one check left of
            # `check_expansion`, made in full only when walls run short; the search's
            # rollouts ask this list thousands of times a second).
            if (
                pos.wall_supply >= 2
                or expansion_problem(pos, player, region.castle, [cell]) is None
            ):
                found.append(Expand((cell,), region.castle))
    return found


def expand(
    pos: Position,
    colour: str,
    castle: Cell | None,
    cells: Sequence[Cell],
    log: Log,
    *,
    trusted: bool = False,
) -> None:
    if trusted:
        region = expanding_region(pos, colour, castle, cells[0])
        grown = set(region.cells)
        for cell in cells:  # as `check_expansion` grows it: the walls' set order follows
            grown.add(cell)
    else:
        region, grown = check_expansion(pos, colour, castle, cells)
    victims = {a.castle: a for c in cells if (a := pos.area_at(c)).is_region}
    # The walls that move lie inside the grown region or on its border: each between two
    # cells of the areas that the grown region's cells are in now.
    touched = {id(a): a for a in map(pos.area_at, grown)}
    inside, border = border_walls(pos, grown)
    pos.walls = (pos.walls - inside) | border
    pos.wall_supply += len(inside) - len(border)
    pos.walls_changed_in(touched.values())
    gained = change_power(pos, colour, area_gain(pos, cells))
    log.append(
        {
            "kind": "expanded",
            "player": colour,
            "castle": list(region.castle),
            "cells": [list(c) for c in cells],
            "points": gained,
        }
    )
    for victim in victims.values():
        score_loss(pos, victim, set(cells), log)
    settle(pos, log)


def area_gain(pos: Position, cells: Iterable[Cell]) -> int:
    """RULES 6.2: 1 per cell and 5 per town."""
    cells = list(cells)
    return len(cells) + TOWN_POWER * pos.board.count(TOWN, cells)


def score_loss(pos: Position, victim: Area, taken: set[Cell], log: Log) -> None:
    """RULES 6.2: the victim loses the cells taken, and the value of each severed piece."""
    owner = pos.castles[victim.castle]
    lost_cells = victim.cells & taken
    points = change_power(pos, owner, -area_gain(pos, lost_cells))
    log.append(
        {
            "kind": "lost",
            "player": owner,
            "castle": list(victim.castle),
            "cells": len(lost_cells),
            "points": points,
        }
    )
    kept = pos.area_at(victim.castle).cells
    pieces: dict[int, set[Cell]] = {}
    for cell in victim.cells - taken - kept:
        pieces.setdefault(id(pos.area_at(cell)), set()).add(cell)
    for piece in pieces.values():
        points = change_power(pos, owner, -area_value(pos, piece))
        log.append(
            {
                "kind": "severed",
                "player": owner,
                "castle": list(victim.castle),
                "size": len(piece),
                "towns": pos.board.count(TOWN, piece),
                "points": points,
            }
        )


# --- politics (RULES 7) -----------------------------------------------------------


def own_region(pos: Position, colour: str, castle: Cell) -> Area:
    region = pos.region_of_castle(castle) if pos.board.on_board(castle) else None
    if region is None or pos.castles.get(castle) != colour:
        raise IllegalMove(Reason("no_own_region_at", colour=colour, castle=at(castle)))
    return region


def rival_region(pos: Position, colour: str, castle: Cell) -> Area:
    region = pos.region_of_castle(castle) if pos.board.on_board(castle) else None
    owner = pos.castles.get(castle)
    if region is None or owner is None:
        raise IllegalMove(Reason("no_region_at", castle=at(castle)))
    if owner == colour:
        raise IllegalMove(Reason("region_is_own", castle=at(castle), colour=colour))
    if not pos.is_player(owner):
        raise IllegalMove(Reason("region_is_neutral", castle=at(castle)))
    return region


def check_alliance(pos: Position, colour: str, own: Cell, other: Cell) -> None:
    mine, theirs = own_region(pos, colour, own), rival_region(pos, colour, other)
    if not pos.borders(mine, theirs):
        raise IllegalMove(Reason("no_shared_wall", own=at(own), other=at(other)))
    if pos.allied(own, other):
        raise IllegalMove(Reason("already_allied", own=at(own), other=at(other)))


def make_alliance(
    pos: Position, colour: str, own: Cell, other: Cell, log: Log, *, trusted: bool = False
) -> None:
    """RULES 7.1: the two regions (by their castles) may not expand into each other."""
    if not trusted:
        check_alliance(pos, colour, own, other)
    pos.alliances.add(alliance_key(own, other))
    log.append({"kind": "alliance", "player": colour, "castles": [list(own), list(other)]})


def alliance_end_problem(pos: Position, colour: str, own: Cell, other: Cell) -> Reason | None:
    """Why `colour` may not end the alliance of `own` and `other` (the fee aside)."""
    if alliance_key(own, other) not in pos.alliances:
        return Reason("not_allied", own=at(own), other=at(other))
    if colour not in (pos.castles[own], pos.castles[other]):
        return Reason("not_a_party", colour=colour, own=at(own), other=at(other))
    return None


def break_alliance(
    pos: Position,
    colour: str,
    own: Cell,
    other: Cell,
    treasure: Sequence[int],
    log: Log,
    *,
    trusted: bool = False,
) -> None:
    """RULES 7.1: either of the two players ends it by paying 10 ducats to the bank."""
    key = alliance_key(own, other)
    problem = None if trusted else alliance_end_problem(pos, colour, own, other)
    if problem:
        raise IllegalMove(problem)
    pay(pos, colour, ALLIANCE_BREAK_FEE, treasure, log, "alliance_break", trusted=trusted)
    pos.alliances.discard(key)
    log.append(
        {"kind": "alliance_broken", "player": colour, "castles": [list(key[0]), list(key[1])]}
    )


def is_only_link(pos: Position, cell: Cell) -> bool:
    """RULES 7.2: the knight alone joins another knight of its colour to its castle
    or to another knight (adjacency with no wall between)."""
    colour = pos.knights[cell]

    def linked(c: Cell, skip: Cell | None) -> set[Cell]:
        seen, stack = {c}, [c]
        while stack:
            for n, edge in pos.links(stack.pop()):
                piece = pos.piece_at(n)
                if (
                    n != skip
                    and n not in seen
                    and piece
                    and piece[1] == colour
                    and edge not in pos.walls
                ):
                    seen.add(n)
                    stack.append(n)
        return seen

    rest = linked(cell, None) - {cell}
    parts: list[set[Cell]] = []
    for c in rest:
        if not any(c in part for part in parts):
            parts.append(linked(c, cell))
    return len(parts) > 1 and any(any(c in pos.knights for c in part) for part in parts)


def check_renegade_removal(pos: Position, colour: str, remove: Cell) -> Area:
    """RULES 7.2: the knight `colour` may remove, and the region it stands in."""
    owner = pos.knights.get(remove) if pos.board.on_board(remove) else None
    if owner is None:
        raise IllegalMove(Reason("no_knight_at", cell=at(remove)))
    if owner == colour:
        raise IllegalMove(Reason("knight_is_own", cell=at(remove), colour=colour))
    if not pos.is_player(owner):
        raise IllegalMove(Reason("knight_is_neutral", cell=at(remove)))
    region = pos.area_at(remove)
    if pos.owner(region) != owner:
        raise IllegalMove(Reason("knight_outside_region", cell=at(remove), owner=owner))
    if not any(pos.borders(region, mine) for mine in pos.regions(colour)):
        raise IllegalMove(
            Reason("region_borders_none", owner=owner, castle=at(region.castle), colour=colour)
        )
    if is_only_link(pos, remove):
        raise IllegalMove(Reason("only_link", cell=at(remove), owner=owner))
    return region


def check_renegade(
    pos: Position, colour: str, remove: Cell, place: Cell, treasure: Sequence[int]
) -> int:
    """Validate on a scratch copy; returns the fees (RULES 7.2)."""
    scratch = pos.copy()
    victim = check_renegade_removal(scratch, colour, remove)
    owner = scratch.knights.pop(remove)
    scratch.knight_supply[owner] += 1
    problem = knight_problem(scratch, colour, place)
    if problem:
        raise IllegalMove(problem)
    target = scratch.area_at(place)
    if scratch.owner(target) != colour or not scratch.borders(target, victim):
        raise IllegalMove(
            Reason(
                "renegade_not_bordering",
                cell=at(place),
                colour=colour,
                owner=owner,
                castle=at(victim.castle),
            )
        )
    fees = knight_fee(pos, remove) + knight_fee(pos, place)
    check_payment(pos, colour, fees, treasure)
    return fees


def play_renegade(
    pos: Position,
    colour: str,
    remove: Cell,
    place: Cell,
    treasure: Sequence[int],
    log: Log,
    *,
    trusted: bool = False,
) -> None:
    fees = (
        knight_fee(pos, remove) + knight_fee(pos, place)
        if trusted
        else check_renegade(pos, colour, remove, place, treasure)
    )
    owner = pos.knights.pop(remove)
    pos.knight_supply[owner] += 1
    log.append({"kind": "renegade", "player": colour, "removed": list(remove), "owner": owner})
    pay(pos, colour, fees, treasure, log, "renegade_knights_on_forest", trusted=trusted)
    put_knight(pos, colour, place, log, trusted=trusted)


def politics_card(play: Politics) -> str:
    """The politics card a play is made with (RULES 7): 'alliance' or 'renegade'."""
    return "alliance" if isinstance(play, Alliance) else "renegade"


def check_politics(pos: Position, colour: str, play: Politics) -> None:
    if isinstance(play, Alliance):
        check_alliance(pos, colour, play.own, play.other)
    else:
        check_renegade(pos, colour, play.remove, play.place, play.treasure)


def politics_problem(pos: Position, colour: str, play: Politics) -> Reason | None:
    return problem_of(lambda: check_politics(pos, colour, play))


def play_politics(
    pos: Position, colour: str, play: Politics, log: Log, *, trusted: bool = False
) -> None:
    """RULES 7: the card takes effect and leaves the hand (the caller discards it)."""
    if isinstance(play, Alliance):
        make_alliance(pos, colour, play.own, play.other, log, trusted=trusted)
    else:
        play_renegade(pos, colour, play.remove, play.place, play.treasure, log, trusted=trusted)
    pos.players[colour].hand.remove(politics_card(play))


# --- silver and the end (RULES 6.3, 8) -----------------------------------------------


def silver_mine(pos: Position, log: Log) -> None:
    """RULES 6.3: 1 power per hill cell inside each player's regions."""
    for colour in pos.players:
        hills = pos.hills_in_regions(colour)
        points = change_power(pos, colour, hills)
        log.append({"kind": "silver", "player": colour, "hills": hills, "points": points})


def wealth(pos: Position, player: str) -> int:
    """RULES 8: ducats with Treasure cards, for the tie-break."""
    return pos.players[player].ducats + sum(pos.players[player].treasure())


def standing(pos: Position, player: str) -> tuple[int, int]:
    """RULES 8: what orders the players at the end: power, then wealth."""
    return (pos.players[player].power, wealth(pos, player))


def winners(pos: Position, players: Sequence[str]) -> list[str]:
    """RULES 8: the most power wins; ties are broken by wealth."""
    best = max(standing(pos, p) for p in players)
    return [p for p in players if standing(pos, p) == best]


def finish_places(pos: Position, players: Sequence[str]) -> dict[str, int]:
    """RULES 8: each player's place in the finish order (1 is first): by power, then
    wealth; a further tie is shared (both 2nd, the next 4th: competition ranking)."""
    keys = {p: standing(pos, p) for p in players}
    return {p: 1 + sum(1 for q in players if keys[q] > keys[p]) for p in players}
