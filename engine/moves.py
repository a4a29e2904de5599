"""Submissions: small immutable values, one class per kind of input (RULES 9).

`engine.notation` writes and reads them as text (`decide 2`, `walls F7/F8`);
`engine.serialize` as JSON. Which ones are legal is `engine.game`'s business.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.board import Cell, Edge


@dataclass(frozen=True)
class Place:
    """Variable setup (RULES 2.3): a castle and a knight next to it."""

    castle: Cell
    knight: Cell


@dataclass(frozen=True)
class Alliance:
    """RULES 7.1: ally one's own region (by castle) with a bordering region of another."""

    own: Cell
    other: Cell


@dataclass(frozen=True)
class Renegade:
    """RULES 7.2: remove a knight, place an own one; Treasure cards may pay forest fees."""

    remove: Cell
    place: Cell
    treasure: tuple[int, ...] = ()


Politics = Alliance | Renegade


@dataclass(frozen=True)
class Choice:
    """One decision card (1, 2 or 3), optionally with an Alliance or Renegade (RULES 3.2)."""

    card: int
    politics: Politics | None = None


@dataclass(frozen=True)
class Decide:
    choices: tuple[Choice, ...]

    @property
    def cards(self) -> tuple[int, ...]:
        return tuple(c.card for c in self.choices)


@dataclass(frozen=True)
class Offer:
    """RULES 4.1: I pay you `amount` ducats and act alone."""

    amount: int


@dataclass(frozen=True)
class Accept:
    """RULES 4.1: take the other player's standing offer."""


@dataclass(frozen=True)
class BreakOff:
    """RULES 4.1: negotiation failed; duel."""


@dataclass(frozen=True)
class Bid:
    """RULES 4.2: a sealed bid of ducats plus Treasure cards at full value."""

    ducats: int
    treasure: tuple[int, ...] = ()

    @property
    def total(self) -> int:
        return self.ducats + sum(self.treasure)


@dataclass(frozen=True)
class Walls:
    """RULES 5.1: walls placed one after another."""

    walls: tuple[Edge, ...]


@dataclass(frozen=True)
class Knight:
    cell: Cell


@dataclass(frozen=True)
class Expand:
    """RULES 5.3: 1 or 2 cells; the region by its castle, or None for the only one."""

    cells: tuple[Cell, ...]
    castle: Cell | None = None


@dataclass(frozen=True)
class Swords:
    """`S1`/`S2` (RULES 5.3): knights and at most one expansion, in order;
    Treasure cards pay the action's forest fees, no change (RULES 7.3)."""

    steps: tuple[Knight | Expand, ...]
    treasure: tuple[int, ...] = ()


@dataclass(frozen=True)
class ChoosePile:
    """Crown (RULES 5.4): look through politics pile 1 or 2."""

    pile: int


@dataclass(frozen=True)
class TakeCard:
    """Crown (RULES 5.4): take this card from the pile looked through."""

    card: str


@dataclass(frozen=True)
class Pass:
    """Decline the action, or take nothing (RULES 3: a player may decline)."""


@dataclass(frozen=True)
class EndAlliance:
    """RULES 7.1: end an alliance at any time for 10 ducats."""

    own: Cell
    other: Cell
    treasure: tuple[int, ...] = ()


Submission = (
    Place
    | Decide
    | Offer
    | Accept
    | BreakOff
    | Bid
    | Walls
    | Swords
    | ChoosePile
    | TakeCard
    | Pass
    | EndAlliance
)

POLITICS_CARDS = (
    ("alliance",) * 3
    + ("renegade",) * 3
    + ("treasure 8", "treasure 10", "treasure 12", "treasure 15")
    + ("parchment 3", "parchment 4", "parchment 5")
)
