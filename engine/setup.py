"""Settings and the start of a game: board, decks, pieces (RULES 1.2, 2).

All chance in a game is drawn here, from the seed recorded in its settings:
tile arrangement, start player, the action deck and the politics piles. The
settings plus the list of accepted submissions therefore replay a game exactly.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from functools import cache

from engine.board import (
    BASIC_ARRANGEMENT,
    DATA,
    TILE_NAMES,
    Board,
    Cell,
    Edge,
    Placement,
)
from engine.moves import POLITICS_CARDS
from engine.position import COLOURS, KNIGHTS_PER_COLOUR, WALLS_IN_GAME, Player, Position

PILES = ("A", "B", "C", "D", "E")
SETUPS = ("basic", "variable")
DECISION_MODES = ("sealed", "open")
MONEY_MODES = ("hidden", "open")


@cache
def default_deck() -> dict[str, tuple[str, ...]]:
    """The default action deck of RULES 1.2, kept as data (engine/data/deck.json)."""
    raw = json.loads((DATA / "deck.json").read_text(encoding="utf-8"))
    return {pile: tuple(raw[pile]) for pile in PILES}


@dataclass(frozen=True)
class Settings:
    """Everything that fixes a game before its first submission."""

    players: tuple[str, ...]
    setup: str = "variable"
    decisions: str = "sealed"
    money: str = "hidden"
    seed: int = 0
    tiles: tuple[Placement, ...] | None = None
    deck: tuple[tuple[str, tuple[str, ...]], ...] | None = None
    neutral: str | None = field(default=None)

    def __post_init__(self) -> None:
        problem = settings_problem(self)
        if problem:
            raise ValueError(problem)

    @property
    def neutral_colour(self) -> str | None:
        """RULES 2: with 2 or 3 players one unplayed colour is neutral."""
        if len(self.players) == 4:
            return None
        return self.neutral or next(c for c in COLOURS if c not in self.players)

    @property
    def castles_per_player(self) -> int:
        return 4 if len(self.players) == 2 else 3

    def deck_piles(self) -> dict[str, tuple[str, ...]]:
        return dict(self.deck) if self.deck is not None else default_deck()


def settings_problem(s: Settings) -> str | None:
    if not 2 <= len(s.players) <= 4:
        return "a game has 2, 3 or 4 players"
    if len(set(s.players)) != len(s.players) or any(c not in COLOURS for c in s.players):
        return f"players are distinct colours among {', '.join(COLOURS)}"
    if s.setup not in SETUPS or s.decisions not in DECISION_MODES or s.money not in MONEY_MODES:
        return "setup is basic or variable, decisions sealed or open, money hidden or open"
    if s.setup == "basic" and len(s.players) == 2:
        return "the basic setup is for 3 or 4 players (RULES 2.2)"
    if s.neutral is not None and (s.neutral not in COLOURS or s.neutral in s.players):
        return "the neutral colour must be a colour nobody plays"
    if s.tiles is not None and sorted(t for t, _ in s.tiles) != list(TILE_NAMES):
        return "a tile arrangement places each of the tiles A–F once"
    return None


def arrangement(settings: Settings, rng: random.Random) -> tuple[Placement, ...]:
    """RULES 2.3: tiles shuffled into the six positions, each rotated at random."""
    if settings.setup == "basic":
        return BASIC_ARRANGEMENT
    if settings.tiles is not None:
        return settings.tiles
    names = list(TILE_NAMES)
    rng.shuffle(names)
    return tuple((name, rng.randrange(4)) for name in names)


def shuffled_deck(settings: Settings, rng: random.Random) -> list[str]:
    """RULES 1.2: each pile shuffled on its own, stacked A (variable only) on top to E."""
    deck: list[str] = []
    for name, cards in settings.deck_piles().items():
        if name == "A" and settings.setup == "basic":
            continue
        pile = list(cards)
        rng.shuffle(pile)
        deck.extend(pile)
    return deck


def politics_piles(rng: random.Random) -> list[list[str]]:
    """RULES 2.1: shuffled and split face down into piles of 6 and 7."""
    cards = list(POLITICS_CARDS)
    rng.shuffle(cards)
    return [cards[:6], cards[6:]]


@cache
def basic_layout() -> tuple[dict[Cell, str], dict[Cell, str], frozenset[Edge]]:
    """The fixed start of RULES 2.2 (engine/data/basic_layout.json)."""
    from engine.notation import parse_cell, parse_edge

    raw = json.loads((DATA / "basic_layout.json").read_text(encoding="utf-8"))
    castles = {parse_cell(c): colour for colour, cells in raw["castles"].items() for c in cells}
    knights = {parse_cell(c): colour for colour, cells in raw["knights"].items() for c in cells}
    walls = frozenset(parse_edge(w) for w in raw["walls"])
    return castles, knights, walls


def initial_position(settings: Settings, board: Board) -> Position:
    colours = [*settings.players, *filter(None, [settings.neutral_colour])]
    pos = Position(
        board=board,
        players={c: Player() for c in settings.players},
        knight_supply={c: KNIGHTS_PER_COLOUR for c in colours},
    )
    if settings.setup == "basic":
        castles, knights, walls = basic_layout()
        pos.castles, pos.knights = dict(castles), dict(knights)
        pos.walls, pos.wall_supply = set(walls), WALLS_IN_GAME - len(walls)
        for colour in COLOURS:
            pos.knight_supply[colour] = KNIGHTS_PER_COLOUR - list(knights.values()).count(colour)
        # RULES 2.2: the starting regions exist already and score nothing.
        pos.founded = {r.castle for r in pos.regions()}
    return pos


def placement_order(settings: Settings, start: int) -> list[tuple[str, str]]:
    """RULES 2.3: (player, colour placed) for every castle-and-knight placement."""
    order = rotated(settings.players, start)
    queue = [(p, p) for _ in range(settings.castles_per_player) for p in order]
    neutral = settings.neutral_colour
    if neutral and len(order) == 3:
        queue += [(p, neutral) for p in order]
    elif neutral:
        queue += [(order[i % 2], neutral) for i in range(4)]
    return queue


def rotated(players: tuple[str, ...], start: int) -> list[str]:
    return [*players[start:], *players[:start]]
