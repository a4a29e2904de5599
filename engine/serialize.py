"""JSON for settings, submissions and whole game states, lossless both ways.

Kept apart from the rules (as chess/pgn.py is kept apart from chess.Board):
`from_json(to_json(x)) == x` for every value the engine makes.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, TypedDict

from engine import moves
from engine.board import Board
from engine.events import CellJson, EdgeJson
from engine.moves import Bid, Choice, Decide, Submission
from engine.position import Player, Position
from engine.setup import Settings
from engine.state import GameState, Phase

EncodedMove = dict[str, Any]  # `encode` of a submission: {"type": "Walls", "walls": [...]}


class SettingsJson(TypedDict):
    players: list[str]
    setup: str
    decisions: str
    money: str
    seed: int
    neutral: str | None
    tiles: list[list[str | int]] | None  # [[tile, rotation], ...]
    deck: dict[str, list[str]] | None  # pile name: cards


class PhaseJson(TypedDict):
    """`engine.state.Phase` as JSON."""

    kind: str
    waiting: list[str]
    action: str | None
    contenders: list[str]
    offer: list[str | int] | None  # [offerer, ducats]
    round: int
    colour: str | None
    pile: int | None


class PlayerJson(TypedDict):
    ducats: int
    power: int
    hand: list[str]


class PositionJson(TypedDict):
    board: list[str]
    castles: list[list[int | str]]  # [x, y, colour]
    knights: list[list[int | str]]
    walls: list[EdgeJson]
    wall_supply: int
    knight_supply: dict[str, int]
    players: dict[str, PlayerJson]
    alliances: list[list[CellJson]]
    founded: list[CellJson]


class StateJson(TypedDict):
    settings: SettingsJson
    position: PositionJson
    start: int
    deck: list[str]
    piles: list[list[str]]
    phase: PhaseJson
    turn: int
    card: str | None
    slot: int
    placements: list[list[str]]
    decisions: dict[str, list[EncodedMove]]
    sealed: dict[str, EncodedMove]
    discard: list[str]
    winners: list[str]


MOVE_TYPES: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        moves.Place,
        moves.Decide,
        moves.Offer,
        moves.Accept,
        moves.BreakOff,
        moves.Bid,
        moves.Walls,
        moves.Swords,
        moves.ChoosePile,
        moves.TakeCard,
        moves.Pass,
        moves.EndAlliance,
        moves.Knight,
        moves.Expand,
        moves.Choice,
        moves.Alliance,
        moves.Renegade,
    )
}


def encode(value: Any) -> Any:
    """Dataclasses become {"type": name, field: ...}; tuples become lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"type": type(value).__name__, **fields}
    if isinstance(value, tuple | list):
        return [encode(v) for v in value]
    return value


def decode(data: Any, hint: Any) -> Any:
    """Rebuild a value of type `hint` from `encode`'s output."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return _decode_union(data, args)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(decode(v, args[0]) for v in data)
        return tuple(decode(v, a) for v, a in zip(data, args, strict=True))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _decode_dataclass(data, hint)
    if hint is int and (isinstance(data, bool) or not isinstance(data, int)):
        raise ValueError(f"expected a whole number, got {data!r}")
    return data


def _decode_union(data: Any, options: tuple[Any, ...]) -> Any:
    if data is None and type(None) in options:
        return None
    if isinstance(data, dict):
        cls = MOVE_TYPES.get(data.get("type", ""))
        if cls is None or cls not in options:
            raise ValueError(f"unexpected type {data.get('type')!r}")
        return _decode_dataclass(data, cls)
    for option in options:
        if option is not type(None):
            return decode(data, option)
    raise ValueError(f"cannot decode {data!r}")


def _decode_dataclass(data: Any, cls: type) -> Any:
    if not isinstance(data, dict) or data.get("type") != cls.__name__:
        raise ValueError(f"expected a {cls.__name__}, got {data!r}")
    hints = typing.get_type_hints(cls, vars(moves))
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{name: decode(data[name], hints[name]) for name in names if name in data})


def move_to_json(move: Submission) -> EncodedMove:
    encoded: EncodedMove = encode(move)
    return encoded


def move_from_json(data: EncodedMove) -> Submission:
    cls = MOVE_TYPES.get(data.get("type", "")) if isinstance(data, dict) else None
    if cls is None:
        raise ValueError(f"not a submission: {data!r}")
    move: Submission = _decode_dataclass(data, cls)
    return move


# --- settings and state ---------------------------------------------------------------


def settings_to_json(s: Settings) -> SettingsJson:
    return {
        "players": list(s.players),
        "setup": s.setup,
        "decisions": s.decisions,
        "money": s.money,
        "seed": s.seed,
        "neutral": s.neutral,
        "tiles": [list(t) for t in s.tiles] if s.tiles is not None else None,
        "deck": {name: list(cards) for name, cards in s.deck} if s.deck is not None else None,
    }


def settings_from_json(d: Mapping[str, Any]) -> Settings:
    return Settings(
        players=tuple(d["players"]),
        setup=d.get("setup", "variable"),
        decisions=d.get("decisions", "sealed"),
        money=d.get("money", "hidden"),
        seed=int(d.get("seed", 0)),
        neutral=d.get("neutral"),
        tiles=tuple((t, int(r)) for t, r in d["tiles"]) if d.get("tiles") else None,
        deck=tuple((k, tuple(v)) for k, v in d["deck"].items()) if d.get("deck") else None,
    )


def _cell(c: Any) -> tuple[int, int]:
    return (int(c[0]), int(c[1]))


def position_to_json(pos: Position) -> PositionJson:
    return {
        "board": list(pos.board.rows),
        "castles": [[*c, colour] for c, colour in pos.castles.items()],
        "knights": [[*c, colour] for c, colour in pos.knights.items()],
        "walls": [[list(a), list(b)] for a, b in pos.walls],
        "wall_supply": pos.wall_supply,
        "knight_supply": dict(pos.knight_supply),
        "players": {
            c: {"ducats": p.ducats, "power": p.power, "hand": list(p.hand)}
            for c, p in pos.players.items()
        },
        "alliances": [[list(a), list(b)] for a, b in pos.alliances],
        "founded": [list(c) for c in pos.founded],
    }


def position_from_json(d: Mapping[str, Any]) -> Position:
    return Position(
        board=Board(tuple(d["board"])),
        players={
            c: Player(p["ducats"], p["power"], list(p["hand"])) for c, p in d["players"].items()
        },
        castles={(x, y): colour for x, y, colour in d["castles"]},
        knights={(x, y): colour for x, y, colour in d["knights"]},
        walls={(_cell(a), _cell(b)) for a, b in d["walls"]},
        wall_supply=d["wall_supply"],
        knight_supply=dict(d["knight_supply"]),
        alliances={(_cell(a), _cell(b)) for a, b in d["alliances"]},
        founded={_cell(c) for c in d["founded"]},
    )


def phase_to_json(p: Phase) -> PhaseJson:
    return {
        "kind": p.kind,
        "waiting": list(p.waiting),
        "action": p.action,
        "contenders": list(p.contenders),
        "offer": list(p.offer) if p.offer else None,
        "round": p.round,
        "colour": p.colour,
        "pile": p.pile,
    }


def phase_from_json(d: Mapping[str, Any]) -> Phase:
    return Phase(**{**d, "offer": tuple(d["offer"]) if d.get("offer") else None})


def state_to_json(state: GameState) -> StateJson:
    return {
        "settings": settings_to_json(state.settings),
        "position": position_to_json(state.pos),
        "start": state.start,
        "deck": list(state.deck),
        "piles": [list(p) for p in state.piles],
        "phase": phase_to_json(state.phase),
        "turn": state.turn,
        "card": state.card,
        "slot": state.slot,
        "placements": [list(p) for p in state.placements],
        "decisions": {p: encode(c) for p, c in state.decisions.items()},
        "sealed": {p: encode(m) for p, m in state.sealed.items()},
        "discard": list(state.discard),
        "winners": list(state.winners),
    }


def state_from_json(d: Mapping[str, Any]) -> GameState:
    settings = settings_from_json(d["settings"])
    pos = position_from_json(d["position"])
    # The players in seat order, as `initial_position` made them: a database may keep a
    # JSON object's keys in another order (PostgreSQL's jsonb sorts them), and rules that
    # go through the players (the silver mine, RULES 6.3) write their events in this order,
    # which a replay from the record must meet.
    pos.players = {c: pos.players[c] for c in settings.players}
    return GameState(
        settings=settings,
        pos=pos,
        start=d["start"],
        deck=list(d["deck"]),
        piles=[list(p) for p in d["piles"]],
        phase=phase_from_json(d["phase"]),
        turn=d["turn"],
        card=d["card"],
        slot=d["slot"],
        placements=[(p, c) for p, c in d["placements"]],
        decisions={p: decode(c, tuple[Choice, ...]) for p, c in d["decisions"].items()},
        sealed={p: _sealed_from_json(m) for p, m in d["sealed"].items()},
        discard=list(d["discard"]),
        winners=list(d["winners"]),
    )


def _sealed_from_json(data: EncodedMove) -> Decide | Bid:
    move = move_from_json(data)
    if not isinstance(move, Decide | Bid):
        raise ValueError(f"a sealed submission is a decision or a bid, not {data!r}")
    return move
