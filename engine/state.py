"""The whole state of a game between submissions: the position plus the phase (RULES 9).

Kept apart from `engine.game` (the phase machine) so that the rule checks of
`engine.phase_rules` can read a state without importing the machine that uses
them. `engine.game` re-exports `GameState` and `Phase`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.moves import Bid, Choice, Decide
from engine.position import Position
from engine.setup import Settings, rotated


@dataclass
class Phase:
    """What the game waits for now, and from whom."""

    kind: str
    waiting: list[str] = field(default_factory=list)
    action: str | None = None  # the action card symbol being resolved: W2, S1, P, ...
    contenders: list[str] = field(default_factory=list)
    offer: tuple[str, int] | None = None  # negotiation: the standing (offerer, ducats)
    round: int = 1  # duel: 1, or 2 for the re-duel after a tie
    colour: str | None = None  # placement: the colour whose pieces are placed
    pile: int | None = None  # crown: the politics pile looked through (1 or 2)

    def copy(self) -> Phase:
        # Spelt out: `dataclasses.replace` costs more than the rest of a simple move.
        return Phase(
            self.kind,
            list(self.waiting),
            self.action,
            list(self.contenders),
            self.offer,
            self.round,
            self.colour,
            self.pile,
        )


@dataclass
class GameState:
    """The whole truth of a game; players see it only through `engine.view`."""

    settings: Settings
    pos: Position
    start: int  # index in settings.players of the start player
    deck: list[str]  # action cards still face down, top first
    piles: list[list[str]]  # the two politics piles
    phase: Phase
    turn: int = 1
    card: str | None = None  # the action card being played
    slot: int = 0  # index (0..2) of the card's action being resolved
    placements: list[tuple[str, str]] = field(default_factory=list)
    decisions: dict[str, tuple[Choice, ...]] = field(default_factory=dict)  # revealed
    sealed: dict[str, Decide | Bid] = field(default_factory=dict)  # not yet revealed
    discard: list[str] = field(default_factory=list)  # politics cards played
    winners: list[str] = field(default_factory=list)

    def copy(self) -> GameState:
        """A state that shares nothing mutable with this one (every field: a test holds
        it to that)."""
        return GameState(
            settings=self.settings,
            pos=self.pos.copy(),
            start=self.start,
            deck=list(self.deck),
            piles=[list(p) for p in self.piles],
            phase=self.phase.copy(),
            turn=self.turn,
            card=self.card,
            slot=self.slot,
            placements=list(self.placements),
            decisions=dict(self.decisions),
            sealed=dict(self.sealed),
            discard=list(self.discard),
            winners=list(self.winners),
        )

    @property
    def players(self) -> tuple[str, ...]:
        return self.settings.players

    @property
    def start_player(self) -> str:
        return self.players[self.start]

    @property
    def order(self) -> list[str]:
        """Seat order beginning with the start player."""
        return rotated(self.players, self.start)

    @property
    def waiting(self) -> list[str]:
        return list(self.phase.waiting)

    @property
    def is_over(self) -> bool:
        return self.phase.kind == "over"

    def cards_to_choose(self, player: str) -> int:
        """RULES 3.2: the start player of a 2- or 3-player game chooses two cards."""
        return 2 if len(self.players) <= 3 and player == self.start_player else 1

    def current_action(self) -> str:
        """The action of the card being resolved now (RULES 3.3)."""
        assert self.card is not None
        return self.card.split()[self.slot]
