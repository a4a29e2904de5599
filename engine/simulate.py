"""Play whole games between computer players: `python -m engine.simulate --players 4
--games 100 --seed 1 [--json] [--ai random|greedy] [--setup variable|basic]`.

Game i uses settings seeded from (seed, i) and seat s an AI seeded from (seed, i, s),
so the same arguments print the same games; only the timing line differs.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

from engine.ai import PLAYERS
from engine.game import GameState, new_game
from engine.moves import Submission
from engine.position import COLOURS
from engine.setup import SETUPS, Settings

MAX_SUBMISSIONS = 20_000  # far beyond any real game: a game this long is an engine bug

Record = list[tuple[str, Submission]]


class GameDidNotEnd(RuntimeError):
    """A simulated game went on past MAX_SUBMISSIONS."""


@dataclass
class Result:
    game: int
    seed: int
    state: GameState
    record: Record

    @property
    def turns(self) -> int:
        """Turns played: the game ends while revealing the card of turn `state.turn`."""
        return self.state.turn - 1

    @property
    def power(self) -> dict[str, int]:
        return {p: self.state.pos.players[p].power for p in self.state.players}

    def as_json(self) -> dict[str, object]:
        return {
            "game": self.game,
            "seed": self.seed,
            "winners": self.state.winners,
            "turns": self.turns,
            "power": self.power,
            "submissions": len(self.record),
        }

    def as_text(self) -> str:
        power = ", ".join(f"{p} {v}" for p, v in self.power.items())
        won = " and ".join(self.state.winners)
        return (
            f"game {self.game}: won by {won}; {self.turns} turns, "
            f"{len(self.record)} submissions; power {power}"
        )


def game_seed(seed: int, game: int) -> int:
    return random.Random(f"lowenherz/{seed}/{game}").getrandbits(32)


def play(settings: Settings, ai: str = "random", ai_seed: object = 0) -> tuple[GameState, Record]:
    """Play one game to its end; every seat is a computer player of kind `ai`."""
    kind = PLAYERS[ai]
    seats = {p: kind(f"{ai_seed}/{i}") for i, p in enumerate(settings.players)}
    state = new_game(settings)
    record: Record = []
    while not state.is_over:
        if len(record) >= MAX_SUBMISSIONS:
            raise GameDidNotEnd(f"seed {settings.seed}: {len(record)} submissions, no end")
        player = state.phase.waiting[0]
        move, state, _ = seats[player].play(state, player)
        record.append((player, move))
    return state, record


def simulate(players: int, game: int, seed: int, ai: str, setup: str) -> Result:
    settings = Settings(players=COLOURS[:players], setup=setup, seed=game_seed(seed, game))
    try:
        state, record = play(settings, ai, f"{seed}/{game}")
    except Exception as exc:
        exc.add_note(f"in game {game}: {settings}, computer players' seed '{seed}/{game}'")
        raise
    return Result(game, settings.seed, state, record)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m engine.simulate",
        description="Play Löwenherz games between computer players.",
    )
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=4)
    parser.add_argument("--games", type=positive, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    parser.add_argument("--ai", choices=sorted(PLAYERS), default="random")
    parser.add_argument("--setup", choices=SETUPS, default="variable")
    args = parser.parse_args(argv)
    if args.setup == "basic" and args.players == 2:
        parser.error("the basic setup is for 3 or 4 players (RULES 2.2)")
    return args


def positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a positive number")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    for game in range(1, args.games + 1):
        result = simulate(args.players, game, args.seed, args.ai, args.setup)
        print(json.dumps(result.as_json()) if args.json else result.as_text(), flush=True)
    seconds = time.perf_counter() - started
    rate = args.games / seconds if seconds else float("inf")
    if args.json:
        print(
            json.dumps(
                {
                    "games": args.games,
                    "seconds": round(seconds, 3),
                    "games_per_second": round(rate, 2),
                }
            )
        )
    else:
        print(f"{args.games} games in {seconds:.1f} s: {rate:.2f} games per second")
    return 0


if __name__ == "__main__":
    sys.exit(main())
