"""What every benchmark shares: figures, their registry, timing, and the report.

A figure is one measured number against a baseline measured in the same run, on the
same machine, with a target on their ratio ("<= 5", ">= 0.3", "== 1", or "report" when
only the number is wanted). Each benchmark module registers functions with `@figures`;
a function returns the figures it measured. Timings are medians over repeats, with
the spread (interquartile range relative to the median) beside them; no test asserts
a timing (tests only run the suite's short version to prove it still runs).
"""

from __future__ import annotations

import json
import operator
import platform
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LATEST = ROOT / "bench" / "latest.json"
COMPARE: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    ">=": operator.ge,
    "==": operator.eq,
    "<": operator.lt,
    ">": operator.gt,
}


@dataclass
class Figure:
    id: str
    what: str
    measured: float
    baseline: float | None
    target: str  # "<= 5" on the ratio (or on `measured` alone when baseline is None)
    unit: str = ""
    spread: float | None = None  # relative interquartile range of the measured samples
    detail: dict[str, Any] = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        if self.baseline is None:
            return None
        return self.measured / self.baseline if self.baseline else float("inf")

    @property
    def met(self) -> bool | None:
        """Whether the target holds (None: a figure only reported)."""
        if self.target == "report":
            return None
        sign, _, bound = self.target.partition(" ")
        value = self.ratio if self.ratio is not None else self.measured
        return COMPARE[sign](round(value, 3), float(bound))

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["ratio"] = None if self.ratio is None else round(self.ratio, 3)
        data["met"] = self.met
        return data


@dataclass(frozen=True)
class Options:
    quick: bool = False  # the short version: small sizes, few repeats (CI proves it runs)

    def size(self, full: int, quick: int) -> int:
        return quick if self.quick else full


# The level of every computer the bench seats (games.models COMPUTER_KINDS): random
# players, so that the site's figures measure the site's work, not a player's thinking
# (engine_ai's figures and engine.arena measure that).
COMPUTER_LEVEL = "easy"

Bench = Callable[[Options], Iterable[Figure]]
REGISTRY: dict[str, tuple[tuple[str, ...], Bench]] = {}


def figures(*ids: str) -> Callable[[Bench], Bench]:
    """Register a benchmark function by the ids of the figures it returns."""

    def register(function: Bench) -> Bench:
        REGISTRY[function.__module__ + "." + function.__name__] = (ids, function)
        return function

    return register


MODULES = (
    "bench.web",
    "bench.open_tabs",
    "bench.sweep",
    "bench.worker",
    "bench.worker_busy",
    "bench.worker_memory",
    "bench.engine_ai",
    "bench.bot_strength",
    "bench.emails",
    "bench.people",
    "bench.archive",
)


def load_all() -> None:
    """Import every benchmark module (each registers its functions); one not written
    yet is skipped."""
    import importlib

    for name in MODULES:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as error:
            if error.name != name:
                raise


# --- measuring -------------------------------------------------------------------------------


def samples(function: Callable[[], object], repeat: int, warmup: int = 1) -> list[float]:
    """Seconds per call, `repeat` times, after `warmup` calls not counted."""
    for _ in range(warmup):
        function()
    found = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        found.append(time.perf_counter() - start)
    return found


def median(values: list[float]) -> float:
    return statistics.median(values)


def spread(values: list[float]) -> float | None:
    """Interquartile range over the median: how much the samples disagree."""
    if len(values) < 4:
        return None
    q1, _, q3 = statistics.quantiles(values, n=4)
    middle = statistics.median(values)
    return round((q3 - q1) / middle, 3) if middle else None


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


# --- the report --------------------------------------------------------------------------------


def machine() -> str:
    import os

    cores = os.cpu_count() or 0
    return (
        f"{platform.node()} · {platform.machine()} · {cores} cores · Python "
        f"{platform.python_version()} · {platform.platform(terse=True)}"
    )


def write(found: list[Figure], path: Path, options: Options) -> dict[str, Any]:
    report = {
        "machine": machine(),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "quick": options.quick,
        "figures": [f.as_json() for f in found],
    }
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")
    return report


def table(found: list[Figure]) -> str:
    """The README's table: one row per figure."""
    rows = [
        "| id | what | measured | baseline | ratio | target | met |",
        "|---|---|---|---|---|---|---|",
    ]
    for f in found:
        ratio = "—" if f.ratio is None else f"{f.ratio:.2f}×"
        base = "—" if f.baseline is None else _number(f.baseline, f.unit)
        met = {True: "yes", False: "**no**", None: "report"}[f.met]
        rows.append(
            f"| {f.id} | {f.what} | {_number(f.measured, f.unit)} | {base} | {ratio} "
            f"| {f.target} | {met} |"
        )
    return "\n".join(rows)


def _number(value: float, unit: str) -> str:
    shown = f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return f"{shown} {unit}".strip()
