"""How fast the engine plays for a search: `python scripts/engine_speed.py [--games N]`.

Three figures, from greedy 3-player games of `engine.simulate`'s seed 5 (CPU time of
this process, so the load of a shared machine counts little):

- `applies_per_second`: the games' submissions applied again by `engine.game.apply`
  (trusted, no check): the copy-and-apply path alone;
- `greedy_decisions_per_second`: a greedy player's `play` (choose, check and apply)
  over the same games: what a rollout costs a move;
- `rollouts_per_second`: the search's rollouts (to the end of the next turn, greedy
  players in every seat) from every decision of the search player at a fixed number
  of iterations, as `engine.search.Stats` counts them.
"""

from __future__ import annotations

import argparse
import json
import time

from engine.ai import PLAYERS, SearchPlayer
from engine.game import apply, new_game
from engine.position import COLOURS
from engine.setup import Settings
from engine.simulate import game_seed, play

SEED = 5


def measure(games: int) -> dict[str, float]:
    records = []
    started = time.process_time()
    for g in range(games):
        settings = Settings(players=COLOURS[:3], seed=game_seed(SEED, g))
        _, record = play(settings, "greedy", f"{SEED}/{g}")
        records.append((settings, record))
    greedy = time.process_time() - started
    moves = sum(len(r) for _, r in records)
    started = time.process_time()
    for settings, record in records:
        state = new_game(settings)
        for player, move in record:
            state, _ = apply(state, player, move)
    applying = time.process_time() - started
    rollouts, seconds = 0, 0.0
    for g in range(max(1, games // 5)):
        settings = Settings(players=COLOURS[:3], seed=game_seed(SEED + 1, g))
        seats = {p: PLAYERS["greedy"](f"{g}/{p}") for p in settings.players}
        searcher = SearchPlayer(f"{g}", budget=None, iterations=2)
        seats[settings.players[0]] = searcher
        state = new_game(settings)
        while not state.is_over:
            player = state.phase.waiting[0]
            started = time.process_time()
            _, state, _ = seats[player].play(state, player)
            if seats[player] is searcher and searcher.search.stats.rollouts:
                seconds += time.process_time() - started
                rollouts += searcher.search.stats.rollouts
                searcher.search.stats.rollouts = 0
    return {
        "games": games,
        "moves": moves,
        "applies_per_second": round(moves / applying),
        "greedy_decisions_per_second": round(moves / greedy),
        "greedy_game_ms": round(1000 * greedy / games, 1),
        "rollouts_per_second": round(rollouts / seconds, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20)
    print(json.dumps(measure(parser.parse_args().games)))


if __name__ == "__main__":
    main()
