"""What one player (or a spectator) may see of a game: the only source for pages,
JSON and emails (STYLE: one view function for hidden information).

Hidden until revealed: other players' sealed decisions and bids, politics cards
in hands, the politics piles' contents, the order of the action deck, the seed,
and (unless the game shows money openly) other players' ducats. Once the game
is over, everything is public.
"""

from collections.abc import Mapping, Sequence
from typing import NotRequired, TypedDict, TypeVar

from engine import rules
from engine.board import HILL, TOWN, Cell, cell_order
from engine.events import CellJson, EdgeJson
from engine.position import Area, Position
from engine.serialize import EncodedMove, PhaseJson, encode, phase_to_json, settings_to_json
from engine.state import GameState

PhaseView = PhaseJson  # `engine.serialize.phase_to_json`: the phase is public
E = TypeVar("E", bound=Mapping[str, object])


class SettingsView(TypedDict):
    """`engine.serialize.settings_to_json`, less what would tell secrets while the game
    is on: no `seed`, and `deck` only "custom" or "default"."""

    players: list[str]
    setup: str
    decisions: str
    money: str
    seed: NotRequired[int]
    neutral: str | None
    tiles: list[list[str | int]] | None
    deck: dict[str, list[str]] | str | None


class PlayerView(TypedDict):
    power: int
    hand_size: int
    knights_in_supply: int
    ducats: NotRequired[int]  # one's own, all once the game is over, or with open money
    hand: NotRequired[list[str]]  # one's own, or all once the game is over


class RegionView(TypedDict):
    owner: str
    castle: CellJson
    cells: list[CellJson]
    size: int
    towns: int
    hills: int
    strength: int


class ZoneView(TypedDict):
    cells: list[CellJson]
    size: int
    towns: int


class BoardView(TypedDict):
    """Everything on the table."""

    board: list[str]  # rows of terrain letters
    castles: list[list[int | str]]  # [x, y, colour]
    knights: list[list[int | str]]
    walls: list[EdgeJson]
    wall_supply: int
    knight_supply: dict[str, int]
    alliances: list[list[CellJson]]  # pairs of castles
    regions: list[RegionView]
    neutral_zones: list[ZoneView]


class Ask(TypedDict):
    """What the viewer may submit now: `phase` and `action` always, the rest by phase.

    Every target listed (`castles`, `knights`, `expansions`, `expanding`, `edges`) is
    one the engine takes for its part of the move on its own (RULES 2.3, 5.1-5.3): a
    page highlights each list for the field it fills (games.show.board_svg)."""

    phase: str
    action: str | None
    colour: NotRequired[str]  # placement: the colour placed
    castles: NotRequired[list[CellJson]]  # placement: legal castle cells
    cards: NotRequired[int]  # decision: how many cards to choose
    politics: NotRequired[list[str]]  # decision: Alliance and Renegade cards in hand
    offer: NotRequired[list[str | int] | None]  # negotiation: the standing [offerer, ducats]
    max_offer: NotRequired[int]
    round: NotRequired[int]  # duel
    max_ducats: NotRequired[int]
    treasure: NotRequired[list[int]]  # duel, and swords (to pay forest fees)
    walls: NotRequired[int]  # perform W: the most walls
    edges: NotRequired[list[EdgeJson]]  # perform W: legal walls
    swords: NotRequired[int]  # perform S
    # placement: the knight cells of legal placements (next to one of `castles`);
    # perform S: legal knight cells whose forest fee the player can pay
    knights: NotRequired[list[CellJson]]
    expansions: NotRequired[list[CellJson]]  # perform S: first cells of legal expansions
    expanding: NotRequired[list[CellJson]]  # perform S: castles of the regions that can expand
    piles: NotRequired[list[int]]  # perform P: cards in each politics pile
    pile: NotRequired[int | None]  # crown: the pile looked through


class View(BoardView):
    """What `view` returns; the keys marked NotRequired are there only sometimes."""

    viewer: str | None
    settings: SettingsView
    turn: int
    start_player: str
    card: str | None
    deck_left: int
    phase: PhaseView
    players: dict[str, PlayerView]
    politics_piles: list[int]  # cards in each
    discard: list[str]
    decisions: dict[str, list[EncodedMove]]  # revealed decisions: encoded `Choice`s
    submitted: list[str]  # who has made a sealed decision or bid
    winners: list[str]
    my_sealed: NotRequired[EncodedMove]  # the viewer's own sealed decision or bid
    sealed: NotRequired[dict[str, EncodedMove]]  # once the game is over
    ask: NotRequired[Ask]  # when the game waits for the viewer
    pile_cards: NotRequired[list[str]]  # crown: the pile the viewer looks through
    deck: NotRequired[list[str]]  # once the game is over
    pile_contents: NotRequired[list[list[str]]]  # once the game is over


def view(state: GameState, viewer: str | None, reveal: bool = False) -> View:
    """The game as `viewer` (a playing colour, or None for a spectator) may see it.

    `reveal` shows every secret: for the archive of a finished game, whose every
    past position is public once the game is over.
    """
    if viewer is not None and viewer not in state.players:
        raise ValueError(f"{viewer} does not play in this game")
    over = state.is_over or reveal
    board = board_view(state.pos, areas=state.phase.kind != "placement")
    result: View = {
        "viewer": viewer,
        "settings": _public_settings(state, over),
        "turn": state.turn,
        "start_player": state.start_player,
        "card": state.card,
        "deck_left": len(state.deck),
        "phase": phase_to_json(state.phase),
        "players": {p: _player(state, p, viewer, over) for p in state.players},
        "politics_piles": [len(p) for p in state.piles],
        "discard": list(state.discard),
        "decisions": {p: encode(c) for p, c in state.decisions.items()},
        "submitted": sorted(state.sealed),
        "winners": list(state.winners),
        "board": board["board"],
        "castles": board["castles"],
        "knights": board["knights"],
        "walls": board["walls"],
        "wall_supply": board["wall_supply"],
        "knight_supply": board["knight_supply"],
        "alliances": board["alliances"],
        "regions": board["regions"],
        "neutral_zones": board["neutral_zones"],
    }
    if viewer in state.sealed:
        result["my_sealed"] = encode(state.sealed[viewer])
    if over:
        result["sealed"] = {p: encode(m) for p, m in state.sealed.items()}
    if viewer in state.phase.waiting:
        result["ask"] = ask(state, viewer)
    if state.phase.kind == "crown" and viewer in state.phase.waiting and state.phase.pile:
        result["pile_cards"] = sorted(state.piles[state.phase.pile - 1])
    if over:
        result["deck"] = list(state.deck)
        result["pile_contents"] = [list(p) for p in state.piles]
    return result


def ask(state: GameState, player: str) -> Ask:
    """What `player` may submit now, with the legal targets a page can highlight."""
    phase, pos = state.phase, state.pos
    result: Ask = {"phase": phase.kind, "action": phase.action}
    if phase.kind == "placement":
        assert phase.colour is not None
        places = rules.legal_placements(pos, phase.colour)
        result["colour"] = phase.colour
        result["castles"] = _cells({p.castle for p in places})
        result["knights"] = _cells({p.knight for p in places})
    elif phase.kind == "decision":
        result["cards"] = state.cards_to_choose(player)
        result["politics"] = sorted(
            c for c in pos.players[player].hand if c in ("alliance", "renegade")
        )
    elif phase.kind == "negotiation":
        result["offer"] = list(phase.offer) if phase.offer else None
        result["max_offer"] = pos.players[player].ducats
    elif phase.kind == "duel":
        result["round"] = phase.round
        result["max_ducats"] = pos.players[player].ducats
        result["treasure"] = pos.players[player].treasure()
    elif phase.kind == "perform":
        _perform_targets(state, player, result)
    elif phase.kind == "crown":
        result["pile"] = phase.pile
    return result


def _perform_targets(state: GameState, player: str, result: Ask) -> None:
    action, pos = state.phase.action or "", state.pos
    if action.startswith("W"):
        result["walls"] = int(action[1:])
        result["edges"] = [[list(a), list(b)] for a, b in rules.legal_walls(pos, player)]
    elif action.startswith("S"):
        result["swords"] = int(action[1:])
        # RULES 5.2: a forest only when the fee can be paid (ducats or Treasure, 7.3)
        result["knights"] = _cells(set(rules.affordable_knight_cells(pos, player)))
        expansions = rules.legal_expansions(pos, player)
        result["expansions"] = _cells({e.cells[0] for e in expansions})
        result["expanding"] = _cells({e.castle for e in expansions if e.castle is not None})
        result["treasure"] = pos.players[player].treasure()
    else:
        result["piles"] = [len(p) for p in state.piles]


def _cells(cells: set[Cell]) -> list[CellJson]:
    return [list(c) for c in sorted(cells, key=cell_order)]


def _public_settings(state: GameState, over: bool) -> SettingsView:
    settings: SettingsView = {**settings_to_json(state.settings)}
    if not over:
        # The seed would tell the deck and the piles; a custom deck's piles could tell
        # its order (a pile of one card is no secret), so only its use is shown.
        settings.pop("seed")
        settings["deck"] = "custom" if settings["deck"] else "default"
    return settings


def _player(state: GameState, player: str, viewer: str | None, over: bool) -> PlayerView:
    holder = state.pos.players[player]
    sees_all = over or player == viewer
    data: PlayerView = {
        "power": holder.power,
        "hand_size": len(holder.hand),
        "knights_in_supply": state.pos.knight_supply.get(player, 0),
    }
    if sees_all or state.settings.money == "open":
        data["ducats"] = holder.ducats
    if sees_all:
        data["hand"] = sorted(holder.hand)
    return data


def board_view(pos: Position, areas: bool = True) -> BoardView:
    """Everything on the table: public to all. While castles are being placed
    (RULES 2.3) there are no walls, so no areas are shown."""
    return {
        "board": list(pos.board.rows),
        "castles": sorted(
            ([*c, col] for c, col in pos.castles.items()), key=lambda v: (v[1], v[0])
        ),
        "knights": sorted(
            ([*c, col] for c, col in pos.knights.items()), key=lambda v: (v[1], v[0])
        ),
        "walls": sorted([list(a), list(b)] for a, b in pos.walls),
        "wall_supply": pos.wall_supply,
        "knight_supply": dict(pos.knight_supply),
        "alliances": sorted([list(a), list(b)] for a, b in pos.alliances),
        "regions": [_region(pos, r) for r in pos.regions()] if areas else [],
        "neutral_zones": [_zone(pos, a) for a in pos.areas if a.is_neutral_zone] if areas else [],
    }


def _region(pos: Position, area: Area) -> RegionView:
    return {
        "owner": pos.castles[area.castle],
        "castle": list(area.castle),
        "cells": [list(c) for c in area.sorted_cells()],
        "size": len(area.cells),
        "towns": pos.board.count(TOWN, area.cells),
        "hills": pos.board.count(HILL, area.cells),
        "strength": pos.strength(area),
    }


def _zone(pos: Position, area: Area) -> ZoneView:
    cells = sorted(area.cells, key=cell_order)
    return {
        "cells": [list(c) for c in cells],
        "size": len(cells),
        "towns": pos.board.count(TOWN, cells),
    }


def visible_events(events: Sequence[E], viewer: str | None) -> list[E]:
    """Events marked `to` a player are theirs alone."""
    return [e for e in events if e.get("to") in (None, viewer)]
