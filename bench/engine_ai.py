"""The engine and its computer players alone (no database): `simulate` and `ai-share`.

Whole 4-player games between computer players (`engine.simulate`'s seeds), each
submission timed in two parts: the computer player choosing (`choose`) and the engine
checking and applying the choice (`submit`), as the site does with a computer's move.
The time of each is bucketed by the phase it was for. Times are the process's CPU time:
"one core", and not the other work of a shared machine. The games are played in rounds
(the same games each round, after one round not counted); the figures are the median
round's, with the spread over rounds. One more round, under cProfile, names where the
time goes (`detail.top_costs`).
"""

from __future__ import annotations

import cProfile
import pstats
import time
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field

from bench.core import Figure, Options, figures, median, spread
from engine.ai import PLAYERS
from engine.game import new_game, submit
from engine.position import COLOURS
from engine.setup import Settings
from engine.simulate import game_seed

SEED = 11
TOP_COSTS = 8  # functions named in the profile's summary


@dataclass
class Round:
    """CPU seconds of one round of games, choosing and submitting, per phase kind."""

    choosing: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    applying: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    submissions: int = 0

    @property
    def seconds(self) -> float:
        return sum(self.choosing.values()) + sum(self.applying.values())

    def phase(self, kind: str) -> float:
        return self.choosing.get(kind, 0.0) + self.applying.get(kind, 0.0)

    @property
    def placement_share(self) -> float:
        return self.phase("placement") / self.seconds


def play_timed(game: int, into: Round, ai: str = "random") -> None:
    """One game, its CPU time added to `into`."""
    settings = Settings(players=COLOURS[:4], setup="variable", seed=game_seed(SEED, game))
    seats = {p: PLAYERS[ai](f"{SEED}/{game}/{i}") for i, p in enumerate(settings.players)}
    state = new_game(settings)
    while not state.is_over:
        kind, player = state.phase.kind, state.phase.waiting[0]
        start = time.process_time()
        move = seats[player].choose(state, player)
        chosen = time.process_time()
        state, _ = submit(state, player, move)
        into.choosing[kind] += chosen - start
        into.applying[kind] += time.process_time() - chosen
        into.submissions += 1


def play_round(games: int) -> Round:
    played = Round()
    for game in range(1, games + 1):
        play_timed(game, played)
    return played


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
    play_round(games)  # warm-up, not counted: the computer players' caches fill up
    played = sorted((play_round(games) for _ in range(rounds)), key=lambda r: r.placement_share)
    typical = played[len(played) // 2]
    kinds = sorted(set(typical.choosing) | set(typical.applying))
    yield Figure(
        "ai-share",
        "placement's time in a simulated 4-player game, against the whole game's",
        measured=typical.phase("placement") * 1000,
        baseline=typical.seconds * 1000,
        target="<= 0.1",
        unit="ms CPU",
        spread=spread([r.placement_share for r in played]),
        detail={
            "games": games,
            "rounds": rounds,
            "by_phase_ms": {k: round(typical.phase(k) * 1000, 1) for k in kinds},
        },
    )
    rates = [games / r.seconds for r in played]
    yield Figure(
        "simulate",
        "complete 4-player games per second, one core",
        measured=median(rates),
        baseline=None,
        target="report",
        unit="games/s",
        spread=spread(rates),
        detail={
            "games": games,
            "rounds": rounds,
            "submissions": typical.submissions,
            "engine_ms_per_submission": round(
                sum(typical.applying.values()) * 1000 / typical.submissions, 3
            ),
            "computer_ms_per_submission": round(
                sum(typical.choosing.values()) * 1000 / typical.submissions, 3
            ),
            "top_costs": top_costs(games),
        },
    )
