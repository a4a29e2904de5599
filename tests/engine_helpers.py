"""Small builders for rules tests: games with a chosen deck, moves typed in notation."""

from __future__ import annotations

from engine.game import GameState, new_game, submit
from engine.notation import parse_move
from engine.setup import Settings

THREE = ("red", "ochre", "lilac")
FOUR = ("red", "ochre", "lilac", "grey")


def stacked_deck(cards: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """A deck whose order is fixed: one card per pile, so no shuffle can move it."""
    return tuple((f"P{i}", (card,)) for i, card in enumerate((*cards, "KING")))


def game(cards: tuple[str, ...] = ("W2 S1 M5",), players: tuple[str, ...] = THREE,
         decisions: str = "sealed", seed: int = 1, setup: str = "basic",
         money: str = "hidden") -> GameState:
    settings = Settings(players=players, setup=setup, decisions=decisions, seed=seed,
                        money=money, deck=stacked_deck(cards))
    return new_game(settings)


class Play:
    """A game being played in a test, keeping every event."""

    def __init__(self, state: GameState) -> None:
        self.state = state
        self.events: list[dict] = []

    def __call__(self, player: str, text: str) -> Play:
        self.state, events = submit(self.state, player, parse_move(text))
        self.events.extend(events)
        return self

    def kinds(self) -> list[str]:
        return [e["kind"] for e in self.events]

    def decide(self, choices: dict[str, str]) -> Play:
        """Every player's decision, given as {player: 'decide ...'} in any order."""
        for player, text in choices.items():
            self(player, text)
        return self

    @property
    def order(self) -> list[str]:
        return self.state.order
