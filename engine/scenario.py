"""Rules scenarios: a small position plus moves, as JSON (docs: SCENARIOS.md).

    python -m engine.scenario < scenario.json

This module is the file format only, as `chess/pgn.py` keeps PGN out of the
board: it checks the input and builds a `Position`, runs each move through
`engine.rules`, and writes the outcome. Exit status 0: every move was legal;
1: a move was illegal, and the output is the state before it; 2: the input is
not a valid scenario (one line on stderr, nothing on stdout).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from engine import rules
from engine.board import HILL, TERRAIN_NAMES, TOWN, Board, Cell, Edge, cell_order, make_edge
from engine.errors import IllegalMove
from engine.events import Log, new_log
from engine.position import (
    COLOURS,
    KNIGHTS_PER_COLOUR,
    START_DUCATS,
    WALLS_IN_GAME,
    Area,
    Player,
    Position,
    alliance_key,
)

NEUTRAL = "neutral"
PIECE_COLOURS = (*COLOURS, NEUTRAL)
MAX_SIDE = 30
TREASURE_VALUES = (8, 10, 12, 15)  # RULES 1: the four Treasure cards
TOP_KEYS = (
    "board",
    "players",
    "castles",
    "knights",
    "walls",
    "power",
    "ducats",
    "treasure",
    "alliances",
    "moves",
)
PAYING_MOVES = ("knight", "renegade", "break_alliance")

Apply = Callable[[Position, Log], None]


class ScenarioError(ValueError):
    """Input that is not a valid scenario; the message says where and what (exit 2)."""


@dataclass(frozen=True)
class Scenario:
    position: Position
    moves: tuple[Apply, ...]


# --- reading values -------------------------------------------------------------


def show(value: object) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


def show_cell(cell: Cell) -> str:
    return f"({cell[0]}, {cell[1]})"


def is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_list(value: object, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise ScenarioError(f"{where}: expected a list, got {show(value)}")
    return value


def parse_object(value: object, where: str, keys: Iterable[str] | None = None) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ScenarioError(f"{where}: expected an object, got {show(value)}")
    if keys is not None:
        keys = tuple(keys)
        for key in value:
            if key not in keys:
                raise ScenarioError(f"{where}: unknown key {show(key)}; expected {', '.join(keys)}")
    return value


def require(data: dict[str, Any], key: str, where: str) -> Any:
    if key not in data:
        raise ScenarioError(f"{where}: {show(key)} is missing")
    return data[key]


def parse_count(value: object, where: str) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    raise ScenarioError(f"{where}: expected a whole number 0 or more, got {show(value)}")


def parse_cell(value: object, where: str, board: Board) -> Cell:
    if not (isinstance(value, list) and len(value) == 2 and all(is_int(v) for v in value)):
        raise ScenarioError(f"{where}: expected a cell [x, y], got {show(value)}")
    cell = (value[0], value[1])
    if not board.on_board(cell):
        raise ScenarioError(
            f"{where}: {show_cell(cell)} is off the {board.width} x {board.height} board"
        )
    return cell


def parse_cells(value: object, where: str, board: Board) -> list[Cell]:
    return [parse_cell(v, f"{where}[{i}]", board) for i, v in enumerate(parse_list(value, where))]


def parse_edge(value: object, where: str, board: Board) -> Edge:
    pair = parse_list(value, where)
    if len(pair) != 2:
        raise ScenarioError(f"{where}: a wall is a pair of cells, got {show(value)}")
    a, b = (parse_cell(v, f"{where}[{i}]", board) for i, v in enumerate(pair))
    try:
        return make_edge(a, b)
    except ValueError:
        raise ScenarioError(
            f"{where}: {show_cell(a)} and {show_cell(b)} are not side by side, "
            "so no wall lies between them"
        ) from None


def parse_colour(value: object, where: str, allowed: Iterable[str]) -> str:
    allowed = tuple(allowed)
    if isinstance(value, str) and value in allowed:
        return value
    raise ScenarioError(f"{where}: {show(value)} is not one of {', '.join(allowed)}")


def parse_treasure(value: object, where: str) -> list[int]:
    cards = parse_list(value, where)
    for i, card in enumerate(cards):
        if card not in TREASURE_VALUES or not is_int(card):
            raise ScenarioError(
                f"{where}[{i}]: {show(card)} is no Treasure card "
                f"(they are worth {', '.join(map(str, TREASURE_VALUES))})"
            )
    return cards


# --- the position ------------------------------------------------------------------


def parse_board(value: object) -> Board:
    rows = parse_list(value, "board")
    if not 1 <= len(rows) <= MAX_SIDE:
        raise ScenarioError(f"board: {len(rows)} rows; a board has 1 to {MAX_SIDE}")
    for y, row in enumerate(rows):
        if not isinstance(row, str) or not 1 <= len(row) <= MAX_SIDE:
            raise ScenarioError(
                f"board[{y}]: expected a row of 1 to {MAX_SIDE} cells, got {show(row)}"
            )
        if len(row) != len(rows[0]):
            raise ScenarioError(f"board[{y}]: {len(row)} cells, but row 0 has {len(rows[0])}")
        for x, ch in enumerate(row):
            if ch not in TERRAIN_NAMES:
                raise ScenarioError(f"board[{y}]: {show(ch)} at x = {x} is no terrain; use . F H T")
    return Board(tuple(rows))


def parse_players(value: object) -> tuple[str, ...]:
    colours = parse_list(value, "players")
    if not 1 <= len(colours) <= len(COLOURS):
        raise ScenarioError(f"players: {len(colours)} players; a game has 1 to {len(COLOURS)}")
    for i, colour in enumerate(colours):
        parse_colour(colour, f"players[{i}]", COLOURS)
        if colour in colours[:i]:
            raise ScenarioError(f"players[{i}]: {colour} is listed twice")
    return tuple(colours)


def parse_pieces(
    data: dict[str, Any], key: str, board: Board, taken: dict[Cell, str]
) -> dict[Cell, str]:
    """Castles or knights by colour; `taken` names the cells already holding a piece."""
    pieces: dict[Cell, str] = {}
    for colour, cells in parse_object(data.get(key, {}), key).items():
        parse_colour(colour, key, PIECE_COLOURS)
        where = f"{key}.{colour}"
        cells = parse_cells(cells, where, board)
        if key == "knights" and len(cells) > KNIGHTS_PER_COLOUR:
            raise ScenarioError(
                f"{where}: {len(cells)} knights, but a colour has only {KNIGHTS_PER_COLOUR}"
            )
        for i, cell in enumerate(cells):
            if cell in taken or cell in pieces:
                holder = taken.get(cell) or f"a {pieces[cell]} {key[:-1]}"
                raise ScenarioError(f"{where}[{i}]: {show_cell(cell)} already holds {holder}")
            terrain = board.terrain(cell)
            if terrain in (HILL, TOWN):
                raise ScenarioError(
                    f"{where}[{i}]: {show_cell(cell)} is a "
                    f"{TERRAIN_NAMES[terrain]}; pieces stand on plain or forest"
                )
            pieces[cell] = colour
    return pieces


def parse_walls(value: object, board: Board) -> set[Edge]:
    walls: set[Edge] = set()
    for i, raw in enumerate(parse_list(value, "walls")):
        edge = parse_edge(raw, f"walls[{i}]", board)
        if edge in walls:
            raise ScenarioError(
                f"walls[{i}]: the wall between {show_cell(edge[0])} and "
                f"{show_cell(edge[1])} is listed twice"
            )
        walls.add(edge)
    if len(walls) > WALLS_IN_GAME:
        raise ScenarioError(f"walls: {len(walls)} walls, but the game has only {WALLS_IN_GAME}")
    return walls


def parse_by_player(data: dict[str, Any], key: str, players: tuple[str, ...]) -> dict[str, Any]:
    values = parse_object(data.get(key, {}), key)
    for colour in values:
        parse_colour(colour, key, players)
    return values


def parse_holdings(data: dict[str, Any], players: tuple[str, ...]) -> dict[str, Player]:
    power = parse_by_player(data, "power", players)
    ducats = parse_by_player(data, "ducats", players)
    treasure = parse_by_player(data, "treasure", players)
    result, cards_seen = {}, []
    for colour in players:
        cards = parse_treasure(treasure.get(colour, []), f"treasure.{colour}")
        for card in cards:
            if card in cards_seen:
                raise ScenarioError(
                    f"treasure.{colour}: there is only one Treasure card worth {card}"
                )
            cards_seen.append(card)
        result[colour] = Player(
            ducats=parse_count(ducats.get(colour, START_DUCATS), f"ducats.{colour}"),
            power=parse_count(power.get(colour, 0), f"power.{colour}"),
            hand=[f"treasure {card}" for card in cards],
        )
    return result


def parse_alliances(
    value: object, board: Board, castles: dict[Cell, str], players: tuple[str, ...]
) -> set[tuple[Cell, Cell]]:
    alliances: set[tuple[Cell, Cell]] = set()
    for i, raw in enumerate(parse_list(value, "alliances")):
        where = f"alliances[{i}]"
        pair = parse_cells(raw, where, board)
        if len(pair) != 2:
            raise ScenarioError(f"{where}: an alliance is a pair of castles, got {show(raw)}")
        for cell in pair:
            if castles.get(cell) not in players:
                raise ScenarioError(f"{where}: {show_cell(cell)} is not a player's castle")
        if castles[pair[0]] == castles[pair[1]]:
            raise ScenarioError(f"{where}: both castles are {castles[pair[0]]}")
        key = alliance_key(pair[0], pair[1])
        if key in alliances:
            raise ScenarioError(f"{where}: this alliance is listed twice")
        alliances.add(key)
    return alliances


def supply(pieces: dict[Cell, str], colours: Iterable[str]) -> dict[str, int]:
    """Knights not on the board are in supply (RULES 1)."""
    on_board = list(pieces.values())
    return {c: KNIGHTS_PER_COLOUR - on_board.count(c) for c in colours}


def check_no_inner_walls(pos: Position) -> None:
    """RULES 6.1 removes walls inside a region, so a position cannot hold one."""
    for edge in sorted(pos.walls, key=edge_order):
        area = pos.area_at(edge[0])
        if area.is_region and edge[1] in area.cells:
            raise ScenarioError(
                f"walls: the wall between {show_cell(edge[0])} and "
                f"{show_cell(edge[1])} lies inside the region of the "
                f"{pos.owner(area)} castle at {show_cell(area.castle)}"
            )


def parse_position(data: dict[str, Any]) -> Position:
    board = parse_board(require(data, "board", "scenario"))
    players = parse_players(require(data, "players", "scenario"))
    castles = parse_pieces(data, "castles", board, {})
    knights = parse_pieces(
        data, "knights", board, {c: f"a {colour} castle" for c, colour in castles.items()}
    )
    walls = parse_walls(data.get("walls", []), board)
    colours = dict.fromkeys([*players, *castles.values(), *knights.values()])
    pos = Position(
        board=board,
        players=parse_holdings(data, players),
        castles=castles,
        knights=knights,
        walls=walls,
        wall_supply=WALLS_IN_GAME - len(walls),
        knight_supply=supply(knights, colours),
        alliances=parse_alliances(data.get("alliances", []), board, castles, players),
    )
    check_no_inner_walls(pos)
    # Regions drawn in the input are taken as founded: they score nothing now.
    pos.founded = {region.castle for region in pos.regions()}
    return pos


# --- the moves ------------------------------------------------------------------------


def place_walls(pos: Position, player: str, edges: list[Edge], log: Log) -> None:
    """RULES 5.1: one after another, each checked and scored (6.1) before the next."""
    for edge in edges:
        rules.place_wall(pos, player, edge, log)


def place_knight(pos: Position, player: str, cell: Cell, treasure: list[int], log: Log) -> None:
    """RULES 5.2: the knight's own problems first, then the forest fee, then the knight."""
    problem = rules.knight_problem(pos, player, cell)
    if problem:
        raise IllegalMove(problem)
    rules.pay(pos, player, rules.knight_fee(pos, cell), treasure, log, "knight_on_forest")
    rules.put_knight(pos, player, cell, log)


def score_end_game(pos: Position, log: Log) -> None:
    """RULES 6.3 and 8: hill scoring only; Parchment cards are not part of a scenario."""
    for colour in pos.players:
        hills = pos.hills_in_regions(colour)
        points = rules.change_power(pos, colour, hills)
        log.append({"kind": "end_game", "player": colour, "hills": hills, "points": points})


def parse_pair(
    value: object, where: str, board: Board, first: str, second: str
) -> tuple[Cell, Cell]:
    data = parse_object(value, where, (first, second))
    return (
        parse_cell(require(data, first, where), f"{where}.{first}", board),
        parse_cell(require(data, second, where), f"{where}.{second}", board),
    )


def paid_with(move: dict[str, Any], where: str) -> list[int]:
    return parse_treasure(move.get("treasure", []), f"{where}.treasure")


def parse_walls_move(move: dict[str, Any], where: str, board: Board, player: str) -> Apply:
    at = f"{where}.walls"
    raw = parse_list(move["walls"], at)
    edges = [parse_edge(e, f"{at}[{i}]", board) for i, e in enumerate(raw)]
    return lambda pos, log: place_walls(pos, player, edges, log)


def parse_knight_move(move: dict[str, Any], where: str, board: Board, player: str) -> Apply:
    cell, treasure = parse_cell(move["knight"], f"{where}.knight", board), paid_with(move, where)
    return lambda pos, log: place_knight(pos, player, cell, treasure, log)


def parse_expand_move(move: dict[str, Any], where: str, board: Board, player: str) -> Apply:
    at = f"{where}.expand"
    data = parse_object(move["expand"], at, ("region", "cells"))
    castle = parse_cell(require(data, "region", at), f"{at}.region", board)
    cells = parse_cells(require(data, "cells", at), f"{at}.cells", board)
    return lambda pos, log: rules.expand(pos, player, castle, cells, log)


def parse_alliance_move(move: dict[str, Any], where: str, board: Board, player: str) -> Apply:
    own, other = parse_pair(move["alliance"], f"{where}.alliance", board, "own", "other")
    return lambda pos, log: rules.make_alliance(pos, player, own, other, log)


def parse_renegade_move(move: dict[str, Any], where: str, board: Board, player: str) -> Apply:
    remove, place = parse_pair(move["renegade"], f"{where}.renegade", board, "remove", "place")
    treasure = paid_with(move, where)
    return lambda pos, log: rules.play_renegade(pos, player, remove, place, treasure, log)


def parse_break_move(move: dict[str, Any], where: str, board: Board, player: str) -> Apply:
    at = f"{where}.break_alliance"
    own, other = parse_pair(move["break_alliance"], at, board, "own", "other")
    treasure = paid_with(move, where)
    return lambda pos, log: rules.break_alliance(pos, player, own, other, treasure, log)


PLAYER_MOVES: dict[str, Callable[[dict[str, Any], str, Board, str], Apply]] = {
    "walls": parse_walls_move,
    "knight": parse_knight_move,
    "expand": parse_expand_move,
    "alliance": parse_alliance_move,
    "renegade": parse_renegade_move,
    "break_alliance": parse_break_move,
}
GAME_MOVES: dict[str, Apply] = {"silver_mine": rules.silver_mine, "end_game": score_end_game}
MOVE_KINDS = (*PLAYER_MOVES, *GAME_MOVES)


def parse_move(value: object, where: str, board: Board, players: tuple[str, ...]) -> Apply:
    move = parse_object(value, where)
    kinds = [key for key in move if key in MOVE_KINDS]
    if len(kinds) != 1:
        raise ScenarioError(
            f"{where}: a move has exactly one of {', '.join(MOVE_KINDS)}; got {show(list(move))}"
        )
    kind = kinds[0]
    allowed = [kind]
    allowed += ["player"] if kind in PLAYER_MOVES else []
    allowed += ["treasure"] if kind in PAYING_MOVES else []
    parse_object(move, where, allowed)
    if kind in GAME_MOVES:
        if move[kind] is not True:
            raise ScenarioError(f"{where}.{kind}: expected true, got {show(move[kind])}")
        return GAME_MOVES[kind]
    player = parse_colour(require(move, "player", where), f"{where}.player", players)
    return PLAYER_MOVES[kind](move, where, board, player)


def parse_scenario(data: object) -> Scenario:
    data = parse_object(data, "scenario", TOP_KEYS)
    pos = parse_position(data)
    moves = parse_list(data.get("moves", []), "moves")
    return Scenario(
        pos,
        tuple(
            parse_move(move, f"moves[{i}]", pos.board, tuple(pos.players))
            for i, move in enumerate(moves)
        ),
    )


def reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ScenarioError(f"the key {show(key)} appears twice in one object")
        result[key] = value
    return result


def read_scenario(raw: bytes) -> Scenario:
    try:
        data = json.loads(raw.decode("utf-8"), object_pairs_hook=reject_duplicate_keys)
    except ScenarioError:
        raise
    except (ValueError, RecursionError) as exc:
        raise ScenarioError(f"not JSON: {exc}") from None
    return parse_scenario(data)


# --- running and the output ---------------------------------------------------------------


def plain(value: Any) -> Any:
    """Log entries may hold tuples; JSON output wants lists."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def edge_order(edge: Edge) -> tuple[tuple[int, int], tuple[int, int]]:
    return (cell_order(edge[0]), cell_order(edge[1]))


def format_cells(cells: Iterable[Cell]) -> list[list[int]]:
    return [list(c) for c in sorted(cells, key=cell_order)]


def format_region(pos: Position, area: Area) -> dict[str, Any]:
    return {
        "owner": pos.owner(area),
        "castle": list(area.castle),
        "cells": format_cells(area.cells),
        "size": len(area.cells),
        "towns": pos.board.count(TOWN, area.cells),
        "hills": pos.board.count(HILL, area.cells),
        "strength": pos.strength(area),
    }


def format_zone(pos: Position, area: Area) -> dict[str, Any]:
    return {
        "cells": format_cells(area.cells),
        "size": len(area.cells),
        "towns": pos.board.count(TOWN, area.cells),
    }


def format_state(pos: Position, events: list[dict[str, Any]]) -> dict[str, Any]:
    zones = sorted(
        (a for a in pos.areas if a.is_neutral_zone), key=lambda a: cell_order(a.sorted_cells()[0])
    )
    return {
        "power": {c: p.power for c, p in pos.players.items()},
        "ducats": {c: p.ducats for c, p in pos.players.items()},
        "regions": [format_region(pos, r) for r in pos.regions()],
        "neutral_zones": [format_zone(pos, z) for z in zones],
        "walls": [[list(a), list(b)] for a, b in sorted(pos.walls, key=edge_order)],
        "walls_in_supply": pos.wall_supply,
        "knights_in_supply": {c: pos.knight_supply[c] for c in pos.players},
        "alliances": [[list(a), list(b)] for a, b in sorted(pos.alliances, key=edge_order)],
        "events": events,
    }


def run(scenario: Scenario) -> tuple[int, dict[str, Any]]:
    """Play the moves in order; each on a copy, kept only if the whole move was legal."""
    pos = scenario.position
    events: list[dict[str, Any]] = []
    for index, apply in enumerate(scenario.moves):
        trial, log = pos.copy(), new_log()
        try:
            apply(trial, log)
        except IllegalMove as exc:
            return 1, {"ok": False, "move": index, "error": str(exc), **format_state(pos, events)}
        pos = trial
        events += [{"move": index, **plain(entry)} for entry in log]
    return 0, {"ok": True, **format_state(pos, events)}


def main() -> int:
    try:
        scenario = read_scenario(sys.stdin.buffer.read())
    except ScenarioError as exc:
        print(f"not a valid scenario: {exc}", file=sys.stderr)
        return 2
    status, output = run(scenario)
    print(json.dumps(output, indent=2))
    return status


if __name__ == "__main__":
    sys.exit(main())
