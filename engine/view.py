"""What one player (or a spectator) may see of a game: the only source for pages,
JSON and emails (STYLE: one view function for hidden information).

Hidden until revealed: other players' sealed decisions and bids, politics cards
in hands, the politics piles' contents, the order of the action deck, the seed,
and (unless the game shows money openly) other players' ducats. Once the game
is over, everything is public.
"""

from __future__ import annotations

from typing import Any

from engine import rules
from engine.board import HILL, TOWN, cell_order
from engine.game import GameState, legal_expansions, legal_placements
from engine.position import Area, Position
from engine.serialize import encode, phase_to_json, settings_to_json


def view(state: GameState, viewer: str | None, reveal: bool = False) -> dict[str, Any]:
    """The game as `viewer` (a playing colour, or None for a spectator) may see it.

    `reveal` shows every secret: for the archive of a finished game, whose every
    past position is public once the game is over.
    """
    if viewer is not None and viewer not in state.players:
        raise ValueError(f"{viewer} does not play in this game")
    over = state.is_over or reveal
    result: dict[str, Any] = {
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
        **board_view(state.pos, areas=state.phase.kind != "placement"),
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


def ask(state: GameState, player: str) -> dict[str, Any]:
    """What `player` may submit now, with the legal targets a page can highlight."""
    phase, pos = state.phase, state.pos
    result: dict[str, Any] = {"phase": phase.kind, "action": phase.action}
    if phase.kind == "placement":
        assert phase.colour is not None
        places = legal_placements(pos, phase.colour)
        result.update(colour=phase.colour, castles=_cells({p.castle for p in places}))
    elif phase.kind == "decision":
        result["cards"] = state.cards_to_choose(player)
        result["politics"] = sorted(c for c in pos.players[player].hand
                                    if c in ("alliance", "renegade"))
    elif phase.kind == "negotiation":
        result["offer"] = list(phase.offer) if phase.offer else None
        result["max_offer"] = pos.players[player].ducats
    elif phase.kind == "duel":
        result.update(round=phase.round, max_ducats=pos.players[player].ducats,
                      treasure=pos.players[player].treasure())
    elif phase.kind == "perform":
        result.update(_perform_targets(state, player))
    elif phase.kind == "crown":
        result["pile"] = phase.pile
    return result


def _perform_targets(state: GameState, player: str) -> dict[str, Any]:
    action, pos = state.phase.action or "", state.pos
    if action.startswith("W"):
        return {"walls": int(action[1:]),
                "edges": [[list(a), list(b)] for a, b in rules.legal_walls(pos, player)]}
    if action.startswith("S"):
        return {"swords": int(action[1:]),
                "knights": _cells(set(rules.legal_knight_cells(pos, player))),
                "expansions": _cells({e.cells[0] for e in legal_expansions(pos, player)}),
                "treasure": pos.players[player].treasure()}
    return {"piles": [len(p) for p in state.piles]}


def _cells(cells: set) -> list[list[int]]:
    return [list(c) for c in sorted(cells, key=cell_order)]


def _public_settings(state: GameState, over: bool) -> dict[str, Any]:
    settings = settings_to_json(state.settings)
    if not over:
        # The seed would tell the deck and the piles; a custom deck's piles could tell
        # its order (a pile of one card is no secret), so only its use is shown.
        settings.pop("seed")
        settings["deck"] = "custom" if settings["deck"] else "default"
    return settings


def _player(state: GameState, player: str, viewer: str | None, over: bool) -> dict[str, Any]:
    holder = state.pos.players[player]
    sees_all = over or player == viewer
    data: dict[str, Any] = {"power": holder.power, "hand_size": len(holder.hand),
                            "knights_in_supply": state.pos.knight_supply.get(player, 0)}
    if sees_all or state.settings.money == "open":
        data["ducats"] = holder.ducats
    if sees_all:
        data["hand"] = sorted(holder.hand)
    return data


def board_view(pos: Position, areas: bool = True) -> dict[str, Any]:
    """Everything on the table: public to all. While castles are being placed
    (RULES 2.3) there are no walls, so no areas are shown."""
    return {
        "board": list(pos.board.rows),
        "castles": sorted(([*c, col] for c, col in pos.castles.items()),
                          key=lambda v: (v[1], v[0])),
        "knights": sorted(([*c, col] for c, col in pos.knights.items()),
                          key=lambda v: (v[1], v[0])),
        "walls": sorted([list(a), list(b)] for a, b in pos.walls),
        "wall_supply": pos.wall_supply,
        "knight_supply": dict(pos.knight_supply),
        "alliances": sorted([list(a), list(b)] for a, b in pos.alliances),
        "regions": [_region(pos, r) for r in pos.regions()] if areas else [],
        "neutral_zones": [_zone(pos, a) for a in pos.areas if a.is_neutral_zone] if areas
        else [],
    }


def _region(pos: Position, area: Area) -> dict[str, Any]:
    return {"owner": pos.owner(area), "castle": list(area.castle),
            "cells": [list(c) for c in area.sorted_cells()], "size": len(area.cells),
            "towns": pos.board.count(TOWN, area.cells), "hills": pos.board.count(HILL, area.cells),
            "strength": pos.strength(area)}


def _zone(pos: Position, area: Area) -> dict[str, Any]:
    cells = sorted(area.cells, key=cell_order)
    return {"cells": [list(c) for c in cells], "size": len(cells),
            "towns": pos.board.count(TOWN, cells)}


def visible_events(events: list[dict], viewer: str | None) -> list[dict]:
    """Events marked `to` a player are theirs alone."""
    return [e for e in events if e.get("to") in (None, viewer)]
