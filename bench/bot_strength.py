"""The search player against greedy players (`engine.arena`): `bot-strength-3p`, `-4p`,
`-2p` and `bot-decision-time`.

A share of wins has no baseline to time against: its fair comparison is parity, the
share a kind has by chance (1/players), and the targets are absolute (issue 26: at
0.25 s a decision, at least 0.60 of 3-player games against two greedy players over 200
games, 0.45 of 4-player games, 0.75 of 2-player games). The decision time's baseline
is the budget itself: the median decision within it, the 99th percentile within 3
times it. The budget is wall-clock time, so a loaded machine lowers the strength: run
these on an idle machine.

Not yet in `bench.core.MODULES`: a full run takes about 40 minutes on 2 cores, and
bench/latest.json must hold every registered figure from one run.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from bench.core import Figure, Options, figures
from engine.arena import Table, play_all, summary

BUDGET = 0.25
SEED = 26
TARGETS = {3: ">= 0.6", 4: ">= 0.45", 2: ">= 0.75"}
GAMES = {3: 200, 4: 100, 2: 100}
JOBS = 2


def arena(players: int, options: Options) -> dict[str, Any]:
    seats = ("search",) + ("greedy",) * (players - 1)
    budget = 0.02 if options.quick else BUDGET
    table = Table(players, seats, SEED, budget, None)
    games = options.size(GAMES[players], 1)
    return summary(table, play_all(table, games, 1 if options.quick else JOBS), 0.0)


@figures("bot-strength-3p", "bot-strength-4p", "bot-strength-2p", "bot-decision-time")
def strength_figures(options: Options) -> Iterator[Figure]:
    times: list[dict[str, Any]] = []
    for players in (3, 4, 2):
        result = arena(players, options)
        search = result["kinds"]["search"]
        times.append(search)
        yield Figure(
            f"bot-strength-{players}p",
            f"the search player's share of {players}-player games against greedy players",
            measured=search["share"],
            baseline=None,
            target=TARGETS[players],
            unit="share",
            detail={
                "games": result["games"],
                "budget_s": result["budget"],
                "parity": search["parity"],
                "interval95": search["interval95"],
                "mean_power": search["mean_power"],
            },
        )
    p99 = max(t["seconds_p99"] for t in times)
    yield Figure(
        "bot-decision-time",
        "the search player's 99th percentile decision time, against its budget",
        measured=p99,
        baseline=0.02 if options.quick else BUDGET,
        target="<= 3",
        unit="s",
        detail={"median_s": max(t["seconds_median"] for t in times)},
    )
