"""The engine and its computer players alone (no database): `simulate` and `ai-share`.

Both figures measure one thing: whole 4-player games of the variable setup between
computer players, played exactly as `python -m engine.simulate --seed 11` plays them
(`engine.simulate.play`: its seeds, each move chosen and applied once by the player's
`play`). Each submission's time is bucketed by the phase it was for. Times are the
process's CPU time: "one core", and not the other work of a shared machine. The games
are played in rounds (the same games each round, after one round not counted, played by
`engine.simulate.simulate` itself: its submissions are checked to be those the rounds
time); both figures come from the same round, the median by its time, so they agree by
construction: `simulate` is the round's games over its seconds, `ai-share`'s baseline is
the same round's milliseconds (games per second = games * 1000 / that baseline). Their
spreads are over the rounds. One more round, under cProfile, names where the time goes
(`detail.top_costs`).

Baselines. `simulate` has none (a rate reported, target "report"): the engine's speed on
this machine, for the capacity of the workers. `ai-share` is placement's part of the same
games against the whole games' time: both parts of one measurement, so the machine's
speed and its load at the time cancel in the ratio, which makes it fair.
"""

from __future__ import annotations

import cProfile
import pstats
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from bench.core import Figure, Options, figures, spread
from engine.ai import PLAYERS
from engine.game import new_game
from engine.position import COLOURS
from engine.setup import Settings
from engine.simulate import game_seed, simulate

SEED = 11
AI = "random"  # engine.simulate's default computer player
SETUP = "variable"
TOP_COSTS = 8  # functions named in the profile's summary


@dataclass
class Round:
    """CPU seconds of one round of games, per phase kind, and its submissions."""

    by_phase: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    submissions: int = 0

    @property
    def seconds(self) -> float:
        return sum(self.by_phase.values())

    @property
    def placement_share(self) -> float:
        return self.by_phase.get("placement", 0.0) / self.seconds


def play_timed(game: int, into: Round) -> None:
    """One game, as `engine.simulate.play` plays it (the same seeds, each move chosen
    and applied once), its CPU time added to `into` by phase kind."""
    settings = Settings(players=COLOURS[:4], setup=SETUP, seed=game_seed(SEED, game))
    seats = {p: PLAYERS[AI](f"{SEED}/{game}/{i}") for i, p in enumerate(settings.players)}
    state = new_game(settings)
    while not state.is_over:
        kind, player = state.phase.kind, state.phase.waiting[0]
        start = time.process_time()
        _, state, _ = seats[player].play(state, player)
        into.by_phase[kind] += time.process_time() - start
        into.submissions += 1


def play_round(games: int) -> Round:
    played = Round()
    for game in range(1, games + 1):
        play_timed(game, played)
    return played


def simulated_submissions(games: int) -> int:
    """The submissions of the same games played by `engine.simulate` itself (the
    round not counted: the computer players' caches fill up)."""
    return sum(len(simulate(4, game, SEED, AI, SETUP).record) for game in range(1, games + 1))


def top_costs(games: int) -> list[str]:
    """The functions that take the most time of their own in one profiled round."""
    profile = cProfile.Profile()
    profile.runcall(play_round, games)
    stats = pstats.Stats(profile)
    total = sum(row[2] for row in stats.stats.values())  # type: ignore[attr-defined]
    rows = sorted(stats.stats.items(), key=lambda item: -item[1][2])  # type: ignore[attr-defined]
    return [
        f"{path.rsplit('/', 1)[-1]}:{line} {name} {own / total:.0%}"
        for (path, line, name), (_, _, own, *_) in rows[:TOP_COSTS]
    ]


@figures("ai-share", "simulate")
def engine_figures(options: Options) -> Iterator[Figure]:
    games, rounds = options.size(20, 2), options.size(5, 1)
    expected = simulated_submissions(games)
    played = sorted((play_round(games) for _ in range(rounds)), key=lambda r: r.seconds)
    assert all(r.submissions == expected for r in played), "not engine.simulate's games"
    typical = played[len(played) // 2]  # one round for both figures
    common = {"games": games, "rounds": rounds, "submissions": typical.submissions}
    yield Figure(
        "ai-share",
        "placement's time in a simulated 4-player game, against the whole game's",
        measured=typical.by_phase["placement"] * 1000,
        baseline=typical.seconds * 1000,
        target="<= 0.1",
        unit="ms CPU",
        spread=spread([r.placement_share for r in played]),
        detail={
            **common,
            "by_phase_ms": {k: round(v * 1000, 1) for k, v in sorted(typical.by_phase.items())},
        },
    )
    yield Figure(
        "simulate",
        "complete 4-player games per second, one core (engine.simulate's games)",
        measured=games / typical.seconds,
        baseline=None,
        target="report",
        unit="games/s",
        spread=spread([games / r.seconds for r in played]),
        detail={
            **common,
            "ms_per_submission": round(typical.seconds * 1000 / typical.submissions, 3),
            "top_costs": top_costs(games),
        },
    )
