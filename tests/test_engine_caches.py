"""The engine's caches are bounded (issue 25: a worker's memory must not grow with the
games it plays). A variable setup is a board of its own (RULES 2.3), so a cache keyed
by a board, a castle's cell or anything else a game brings keeps at most a fixed number
of entries, whatever the number of games a process has played; the boxes the computer
players keep for every castle cell of the site's board stay small.
bench/worker_memory.py measures a real worker's memory over 2,000 phases."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import engine
from engine import ai, rules
from engine.game import new_game
from engine.setup import Settings

THREE = ("red", "ochre", "lilac")


def caches_of(package: Any) -> Iterator[tuple[str, Any]]:
    """Every functools cache defined in the package's modules, by its qualified name."""
    seen: set[int] = set()
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if hasattr(value, "cache_parameters") and id(value) not in seen:
                seen.add(id(value))
                yield f"{value.__module__}.{name}", value


def takes_a_key(cached: Callable[..., Any]) -> bool:
    """Whether the cache holds one entry per argument (not the one result of a function
    of nothing: a data file read once)."""
    return bool(inspect.signature(inspect.unwrap(cached)).parameters)


def test_every_engine_cache_with_a_key_keeps_a_bounded_number_of_entries() -> None:
    keyed = {name: c for name, c in caches_of(engine) if takes_a_key(c)}
    assert "engine.rules._plain_cells" in keyed and "engine.ai.boxes_around" in keyed
    unbounded = [name for name, c in keyed.items() if c.cache_parameters()["maxsize"] is None]
    assert unbounded == []


def test_placements_on_more_boards_than_are_kept_keep_only_the_newest() -> None:
    kept = rules._plain_cells.cache_parameters()["maxsize"]
    boards = []
    for seed in range(kept + 20):
        state = new_game(Settings(players=THREE, setup="variable", seed=seed))
        assert rules.legal_placements(state.pos, "red")
        boards.append(state.pos.board)
    assert len(set(boards)) > kept  # each variable setup a board of its own
    assert rules._plain_cells.cache_info().currsize <= kept
    misses = rules._plain_cells.cache_info().misses
    rules.legal_placements(new_game(Settings(THREE, seed=kept + 19)).pos, "red")
    assert rules._plain_cells.cache_info().misses == misses  # the newest is still kept


def test_the_boxes_kept_for_a_castle_take_a_few_kilobytes() -> None:
    """The boxes of every castle cell of the site's board are kept (CASTLES_KEPT): a
    castle's must be small. Measured on every fifth cell of the board."""
    board = new_game(Settings(players=THREE, setup="variable", seed=1)).pos.board
    castles = board.cells[::5]
    ai.board_bits(board.width, board.height)  # the board's bits, kept per size: not counted
    ai.boxes_around.cache_clear()
    tracemalloc.start()
    try:
        for cell in castles:
            ai.boxes_around(board.width, board.height, cell)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(board.cells) <= ai.CASTLES_KEPT
    assert held / len(castles) < 40 * 1024  # 18 KB measured; boxes that spelt out their
    # cells and border took 350 KB a castle, 50 MB for the whole board
