"""A finished game as a readable transcript, turn by turn: each phase's submissions in
the move notation, then what happened, in the reader's language (the same sentences
as the archive's, `event_text` through the presenter). The plain-text record
(templates/archive/record.txt) renders it.

Everything is shown, the events once meant for one player's eyes too: only a finished
game has a transcript (`present(..., everything=True)` refuses any other).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from games.models import Game
from games.show.presenter import present
from games.show.words import labelled


@dataclass
class TurnText:
    """One turn of the game (0: the placements before the first card)."""

    turn: int
    lines: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Score:
    name: str
    power: int
    ducats: int


def transcript(game: Game) -> list[TurnText]:
    """The game's turns, each a list of lines: "Alice (red): place C3 D3", then the
    events the moves led to. A submission is listed with the phase it was made in and
    the events with the phase they began (`games.services._store`), so a phase's moves
    come before what they caused."""
    shown = present(game, everything=True)
    labels = shown.labels
    moves: dict[int, list[str]] = {}
    for colour, text, phase in game.record.order_by("index").values_list(
        "colour", "text", "phase_number"
    ):
        moves.setdefault(phase, []).append(f"{labels.get(colour, colour)}: {text}")
    turns: list[TurnText] = []
    told: set[int] = set()
    for line in shown.events():
        for phase in sorted(p for p in moves if p < line.phase_number and p not in told):
            _turn(turns, line.turn).lines.extend(moves[phase])
            told.add(phase)
        _turn(turns, line.turn).lines.append(line.text)
    return turns


def _turn(turns: list[TurnText], number: int) -> TurnText:
    if not turns or turns[-1].turn != number:
        turns.append(TurnText(number))
    return turns[-1]


def final_scores(game: Game) -> list[Score]:
    """Each player's final power and ducats, in seat order (public: the game is over)."""
    players = game.engine_state.pos.players
    return [
        Score(
            labelled(seat.display_name, seat.colour, computer=seat.is_computer),
            players[seat.colour].power,
            players[seat.colour].ducats,
        )
        for seat in game.seats.all()
    ]
