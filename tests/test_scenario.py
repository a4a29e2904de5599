"""Rules scenarios (tests/scenarios/*.json) through `python -m engine.scenario`.

Each file is `{"rule", "title", "scenario", "expect", "exit"}`: the scenario is
run in a real subprocess, its exit status must be `exit`, and `expect` is a
subset of the output. Special keys of `expect`: `error_contains` (a part of the
output's error), `stderr_contains` (a part of the exit-2 message) and
`events_contain` (events each matched, as a subset, by some output event). A
`scenario` given as a string is fed as it is (for input that is not JSON).
Expected values are worked out by hand from RULES.md, never copied from output.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = sorted((ROOT / "tests" / "scenarios").glob("*.json"))
SPECIAL = ("error_contains", "stderr_contains", "events_contain")


def run_scenario(stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engine.scenario"],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def stdin_of(case: dict[str, Any]) -> str:
    scenario = case["scenario"]
    return scenario if isinstance(scenario, str) else json.dumps(scenario)


def assert_subset(expected: Any, actual: Any, where: str) -> None:
    """Objects match key by key (extra keys in `actual` are fine); anything else exactly."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: expected an object, got {actual!r}"
        for key, value in expected.items():
            assert key in actual, f"{where}: no {key!r} in {actual!r}"
            assert_subset(value, actual[key], f"{where}.{key}")
    else:
        assert actual == expected, f"{where}: expected {expected!r}, got {actual!r}"


def matches(expected: dict[str, Any], actual: dict[str, Any]) -> bool:
    try:
        assert_subset(expected, actual, "event")
    except AssertionError:
        return False
    return True


def assert_output(case: dict[str, Any], output: dict[str, Any]) -> None:
    expect = case["expect"]
    if "error_contains" in expect:
        assert expect["error_contains"] in output["error"]
    for event in expect.get("events_contain", []):
        assert any(matches(event, e) for e in output["events"]), (
            f"no event like {event!r} in {output['events']!r}"
        )
    assert_subset({k: v for k, v in expect.items() if k not in SPECIAL}, output, "output")


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario(path: Path) -> None:
    case = load(path)
    result = run_scenario(stdin_of(case))
    assert result.returncode == case["exit"], result.stderr or result.stdout
    if case["exit"] == 2:
        assert result.stdout == ""
        assert len(result.stderr.splitlines()) == 1
        assert case["expect"]["stderr_contains"] in result.stderr
        return
    output = json.loads(result.stdout)
    assert output["ok"] is (case["exit"] == 0)
    assert_output(case, output)


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_scenario_file_names_its_rules_section(path: Path) -> None:
    case = load(path)
    assert set(case) == {"rule", "title", "scenario", "expect", "exit"}
    assert case["exit"] in (0, 1, 2)
    prefix = "input" if case["rule"] == "input" else case["rule"].replace(".", "_")
    assert re.fullmatch(rf"{prefix}_[a-z0-9_]+", path.stem), path.stem


def test_there_are_scenarios_for_every_kind_of_outcome() -> None:
    exits = [load(p)["exit"] for p in SCENARIOS]
    assert len(exits) >= 40
    assert {0, 1, 2} <= set(exits)


# --- the interface itself (SCENARIOS.md, Errors) ------------------------------------

# 1 x 5: castles red A1, neutral D1, ochre E1.
SMALL = {
    "board": ["....."],
    "players": ["red", "ochre"],
    "castles": {"red": [[0, 0]], "neutral": [[3, 0]], "ochre": [[4, 0]]},
}


def test_bad_input_prints_one_line_on_stderr_and_nothing_on_stdout() -> None:
    scenario = {
        **SMALL,
        "board": ["...."],
        "castles": {"red": [[0, 0]]},
        "knights": {"red": [[4, 0]]},
    }
    result = run_scenario(json.dumps(scenario))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert "knights.red[0]: (4, 0) is off the 4 x 1 board" in result.stderr


def test_an_illegal_move_reports_the_state_before_it() -> None:
    scenario = {
        **SMALL,
        "moves": [
            {"player": "red", "walls": [[[0, 0], [1, 0]]]},
            {"player": "ochre", "walls": [[[1, 0], [2, 0]], [[0, 0], [1, 0]]]},
        ],
    }
    result = run_scenario(json.dumps(scenario))
    assert result.returncode == 1
    output = json.loads(result.stdout)
    assert (output["ok"], output["move"]) == (False, 1)
    assert "already a wall" in output["error"]
    # RULES 6.1: red's 1-cell region scored 3 in move 0 (the rest is free land: two
    # castles); ochre's first wall of move 1 (a neutral zone B1) is undone with it.
    assert output["power"] == {"red": 3, "ochre": 0}
    assert output["walls"] == [[[0, 0], [1, 0]]]
    assert output["walls_in_supply"] == 99
    assert {e["move"] for e in output["events"]} == {0}


def test_a_legal_scenario_reports_ok() -> None:
    result = run_scenario(json.dumps({**SMALL, "moves": [{"silver_mine": True}]}))
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)
    assert output["ok"] is True
    assert "error" not in output and "move" not in output
