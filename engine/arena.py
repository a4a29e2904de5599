"""Computer players against each other: `python -m engine.arena --players 3 --games 200
--seats search,greedy,greedy --seed 1 [--budget 0.25] [--iterations N] [--jobs 2]`.

Game g (from 0) is `engine.simulate`'s game g for the seed (its settings drawn from
(seed, g)); the kinds named by `--seats` sit rotated by g places, so over a number of
games that is a multiple of the players each kind sits in every seat equally often
(the start player is drawn by the game). Prints one JSON object: for each kind its share
of the wins (a win shared by k players counts 1/k to each), the share it would have by
chance (`parity`), a 95% interval of the share (Wilson's), its mean power, and the
seconds it took a decision (wall clock, median and 99th percentile). `--budget` is the
search player's seconds a decision; `--iterations` bounds its search instead (with
`--budget 0`, for moves that do not depend on the machine's speed).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.ai import PLAYERS, RandomPlayer, SearchPlayer
from engine.game import new_game
from engine.position import COLOURS
from engine.search import BUDGET
from engine.setup import SETUPS, Settings
from engine.simulate import MAX_SUBMISSIONS, GameDidNotEnd, game_seed, positive

Z95 = 1.959964  # the normal quantile of a two-sided 95% interval


@dataclass(frozen=True)
class Table:
    """What every game of a run shares."""

    players: int
    seats: tuple[str, ...]
    seed: int
    budget: float | None
    iterations: int | None
    setup: str = "variable"


@dataclass
class Played:
    """One game's result: each seat's kind, the winners' seats, and timings by kind."""

    kinds: list[str]
    winners: list[int]
    power: list[int]
    seconds: dict[str, list[float]] = field(default_factory=dict)


def seat_kinds(table: Table, game: int) -> list[str]:
    """The kinds rotated by `game` places."""
    shift = game % table.players
    return [table.seats[(i - shift) % table.players] for i in range(table.players)]


def make_player(kind: str, seed: str, table: Table) -> RandomPlayer:
    player = PLAYERS[kind](seed)
    if isinstance(player, SearchPlayer):
        player.search.budget = table.budget
        player.search.iterations = table.iterations
    return player


def play_game(table: Table, game: int) -> Played:
    settings = Settings(
        players=COLOURS[: table.players], setup=table.setup, seed=game_seed(table.seed, game)
    )
    kinds = seat_kinds(table, game)
    seats = {
        p: make_player(kinds[i], f"{table.seed}/{game}/{i}", table)
        for i, p in enumerate(settings.players)
    }
    kind_of = dict(zip(settings.players, kinds, strict=True))
    seconds: dict[str, list[float]] = defaultdict(list)
    state, submissions = new_game(settings), 0
    while not state.is_over:
        if submissions >= MAX_SUBMISSIONS:
            raise GameDidNotEnd(f"game {game} of seed {table.seed} did not end")
        player = state.phase.waiting[0]
        started = time.perf_counter()
        _, state, _ = seats[player].play(state, player)
        seconds[kind_of[player]].append(time.perf_counter() - started)
        submissions += 1
    return Played(
        kinds,
        [settings.players.index(w) for w in state.winners],
        [state.pos.players[p].power for p in settings.players],
        dict(seconds),
    )


def _play_one(job: tuple[Table, int]) -> Played:
    return play_game(*job)


def play_all(table: Table, games: int, jobs: int) -> list[Played]:
    """The games in order; with `jobs` > 1 in that many processes."""
    work = [(table, g) for g in range(games)]
    if jobs <= 1:
        return [_play_one(w) for w in work]
    with multiprocessing.Pool(jobs) as pool:
        return pool.map(_play_one, work, chunksize=1)


def wilson(share: float, n: int) -> tuple[float, float]:
    """Wilson's 95% interval of a share observed over `n` games."""
    if n == 0:
        return (0.0, 1.0)
    z2 = Z95 * Z95
    centre = (share + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(share * (1 - share) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def percentile(values: Sequence[float], q: float) -> float:
    """The value below which a share `q` of `values` lie (nearest rank)."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def summary(table: Table, played: Sequence[Played], seconds: float) -> dict[str, object]:
    kinds: dict[str, dict[str, object]] = {}
    for kind in dict.fromkeys(table.seats):
        seats = table.seats.count(kind)
        wins = sum(sum(1 / len(g.winners) for w in g.winners if g.kinds[w] == kind) for g in played)
        powers = [p for g in played for k, p in zip(g.kinds, g.power, strict=True) if k == kind]
        times = [t for g in played for t in g.seconds.get(kind, [])]
        share = wins / len(played)
        low, high = wilson(share, len(played))
        kinds[kind] = {
            "seats": seats,
            "share": round(share, 4),
            "parity": round(seats / table.players, 4),
            "interval95": [round(low, 4), round(high, 4)],
            "mean_power": round(sum(powers) / len(powers), 2),
            "decisions": len(times),
            "seconds_median": round(percentile(times, 0.5), 4),
            "seconds_p99": round(percentile(times, 0.99), 4),
        }
    return {
        "players": table.players,
        "games": len(played),
        "seats": list(table.seats),
        "seed": table.seed,
        "setup": table.setup,
        "budget": table.budget,
        "iterations": table.iterations,
        "kinds": kinds,
        "seconds": round(seconds, 2),
    }


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m engine.arena",
        description="Play computer players of several kinds against each other.",
    )
    parser.add_argument("--players", type=int, choices=(2, 3, 4), default=3)
    parser.add_argument("--games", type=positive, default=10)
    parser.add_argument("--seats", required=True, help="kinds, one a seat: search,greedy,greedy")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=non_negative, default=BUDGET, help="seconds a decision")
    parser.add_argument("--iterations", type=positive, default=None)
    parser.add_argument("--jobs", type=positive, default=1)
    parser.add_argument("--setup", choices=SETUPS, default="variable")
    args = parser.parse_args(argv)
    seats = args.seats.split(",")
    if len(seats) != args.players:
        parser.error(f"--seats names {len(seats)} kinds for {args.players} players")
    unknown = sorted(set(seats) - set(PLAYERS))
    if unknown:
        parser.error(f"no such kind: {', '.join(unknown)} (kinds: {', '.join(sorted(PLAYERS))})")
    if args.setup == "basic" and args.players == 2:
        parser.error("the basic setup is for 3 or 4 players (RULES 2.2)")
    if args.budget == 0 and args.iterations is None:
        parser.error("--budget 0 needs --iterations")
    args.seats = tuple(seats)
    return args


def non_negative(text: str) -> float:
    value = float(text)
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"{text} is not a number of seconds")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    table = Table(
        args.players,
        args.seats,
        args.seed,
        args.budget or None,
        args.iterations,
        args.setup,
    )
    started = time.perf_counter()
    played = play_all(table, args.games, args.jobs)
    print(json.dumps(summary(table, played, time.perf_counter() - started), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
