"""The game record file and `python -m engine.replay` (pure engine, no database).

A record is the settings with their seed plus the accepted submissions (STYLE: the
record plus the seed is the game), every event the game wrote and how it ended;
replaying it must write the same events and reach the same final power, ducats and
winners as the game it was written from.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.ai import RandomPlayer
from engine.game import GameState, start_game, submit
from engine.moves import Submission
from engine.replay import (
    FORMAT,
    MAX_BYTES,
    MAX_MOVES,
    RecordError,
    Result,
    read_record,
    record_to_json,
    replay_record,
)
from engine.serialize import state_from_json, state_to_json
from engine.setup import Settings

ROOT = Path(__file__).resolve().parent.parent
GAMES = [
    Settings(players=("red", "ochre", "lilac"), seed=5),
    Settings(
        players=("red", "ochre", "lilac", "grey"),
        setup="basic",
        decisions="open",
        money="open",
        seed=11,
    ),
]


def play_game(
    settings: Settings,
) -> tuple[GameState, list[tuple[str, Submission]], list[dict[str, Any]]]:
    seats = {p: RandomPlayer(f"replay-test/{i}") for i, p in enumerate(settings.players)}
    (state, log), moves = start_game(settings), []
    events: list[dict[str, Any]] = list(log)
    while not state.is_over:
        player = state.phase.waiting[0]
        move = seats[player].choose(state, player)
        state, log = submit(state, player, move)
        moves.append((player, move))
        events.extend(log)
    return state, moves, events


@pytest.fixture(scope="module", params=GAMES, ids=["3p-variable-sealed", "4p-basic-open"])
def played(request) -> tuple[GameState, dict[str, Any]]:
    state, moves, events = play_game(request.param)
    names = {p: f"Player {i}" for i, p in enumerate(request.param.players)}
    record = record_to_json(request.param, moves, Result.of(state), events=events, players=names)
    return state, record


def run_replay(
    record: dict[str, Any] | str, *args: str, tmp_path: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the command on a file in tmp_path, or on standard input without one."""
    text = record if isinstance(record, str) else json.dumps(record)
    if tmp_path is None:
        command, stdin = [sys.executable, "-m", "engine.replay", *args, "-"], text
    else:
        path = tmp_path / "record.json"
        path.write_text(text, encoding="utf-8")
        command, stdin = [sys.executable, "-m", "engine.replay", *args, str(path)], None
    return subprocess.run(
        command, input=stdin, capture_output=True, text=True, cwd=ROOT, timeout=120, check=False
    )


def tampered(record: dict[str, Any], **changes: Any) -> dict[str, Any]:
    copy = json.loads(json.dumps(record))
    copy.update(changes)
    return copy


def test_the_record_holds_settings_with_the_seed_and_moves_in_notation(played):
    state, record = played
    assert record["format"] == FORMAT == "lowenherz-record/2"
    assert record["settings"]["seed"] == state.settings.seed
    assert all(set(m) == {"player", "move"} and isinstance(m["move"], str) for m in record["moves"])
    assert record["result"] == {
        "power": {p: state.pos.players[p].power for p in state.players},
        "ducats": {p: state.pos.players[p].ducats for p in state.players},
        "winners": state.winners,
    }
    assert record["events"][-1]["kind"] == "game_over"
    assert record["players"] == {p: f"Player {i}" for i, p in enumerate(state.players)}


def test_reading_a_record_back_replays_to_the_same_end(played):
    state, record = played
    replayed = replay_record(read_record(json.dumps(record)))
    assert replayed.is_over
    assert Result.of(replayed) == Result.of(state)


def test_the_command_prints_each_players_final_power_and_the_winners(played, tmp_path):
    state, record = played
    done = run_replay(record, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    power_line, ducats_line, winners_line = done.stdout.splitlines()
    for player in state.players:
        assert f"{player} {state.pos.players[player].power}" in power_line
        assert f"{player} {state.pos.players[player].ducats}" in ducats_line
    assert winners_line == "winners: " + " and ".join(state.winners)
    assert done.stderr == ""


def test_the_json_flag_prints_the_result_as_json(played):
    state, record = played
    done = run_replay(record, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == record["result"]


def test_a_record_without_a_result_just_replays(played):
    _, record = played
    without = tampered(record)
    del without["result"]
    done = run_replay(without, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == record["result"]


def test_a_tampered_result_exits_1_and_says_so(played):
    state, record = played
    loser = next(p for p in state.players if p not in state.winners)
    done = run_replay(tampered(record, result={**record["result"], "winners": [loser]}))
    assert done.returncode == 1
    assert "the record says" in done.stderr and loser in done.stderr
    assert "winners:" in done.stdout  # what the replay found is still printed


def test_a_tampered_power_exits_1(played):
    _, record = played
    power = {p: v + 1 for p, v in record["result"]["power"].items()}
    done = run_replay(tampered(record, result={**record["result"], "power": power}))
    assert done.returncode == 1


def test_an_illegal_move_exits_2_naming_its_index(played):
    _, record = played
    moves = [dict(m) for m in record["moves"]]
    moves[3] = {**moves[3], "move": "bid 5"}  # a bid during the placements (RULES 2.3)
    done = run_replay(tampered(record, moves=moves))
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1
    assert "move 3" in done.stderr


def test_a_malformed_move_exits_2_naming_its_index(played):
    _, record = played
    moves = [dict(m) for m in record["moves"]]
    moves[7] = {**moves[7], "move": "decide 9"}
    done = run_replay(tampered(record, moves=moves))
    assert done.returncode == 2
    assert "move 7" in done.stderr and "decide 9" in done.stderr


def test_a_move_by_the_wrong_player_exits_2(played):
    _, record = played
    moves = [dict(m) for m in record["moves"]]
    others = [p for p in record["settings"]["players"] if p != moves[0]["player"]]
    moves[0] = {**moves[0], "player": others[0]}
    done = run_replay(tampered(record, moves=moves))
    assert done.returncode == 2
    assert "move 0" in done.stderr


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("[", "not JSON"),
        ('{"format": "lowenherz-record/9", "settings": {}, "moves": []}', "unknown format"),
        (
            '{"format": "lowenherz-record/1", "settings": {"players": ["red"]}, "moves": []}',
            "settings",
        ),
        (
            '{"format": "lowenherz-record/1", "settings": {"players": ["red", "ochre"]}, '
            '"moves": [["red", "pass"]]}',
            "move 0",
        ),
        (
            '{"format": "lowenherz-record/1", "settings": {"players": ["red", "ochre"]}, '
            '"moves": [], "result": {"power": {"red": "x"}, "winners": []}}',
            "result",
        ),
    ],
)
def test_input_that_is_not_a_record_exits_2_with_one_line(text, complaint):
    done = run_replay(text)
    assert done.returncode == 2
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1
    assert complaint in done.stderr


def test_a_missing_file_exits_2(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "engine.replay", str(tmp_path / "none.json")],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "cannot read" in done.stderr


def test_read_record_raises_record_error_for_a_list():
    with pytest.raises(RecordError, match="JSON object"):
        read_record("[]")


# --- format /2: events, ducats, names; bounds --------------------------------------------


def test_a_tampered_event_exits_1_naming_it(played):
    _, record = played
    events = [dict(e) for e in record["events"]]
    index = next(i for i, e in enumerate(events) if e["kind"] == "game_over")
    events[index] = {**events[index], "winners": []}
    done = run_replay(tampered(record, events=events))
    assert done.returncode == 1
    assert len(done.stderr.splitlines()) == 1
    assert f"event {index}" in done.stderr


def test_a_missing_event_exits_1(played):
    _, record = played
    done = run_replay(tampered(record, events=record["events"][:-1]))
    assert done.returncode == 1
    assert "events" in done.stderr


def test_a_tampered_ducat_count_exits_1(played):
    _, record = played
    ducats = {p: v + 1 for p, v in record["result"]["ducats"].items()}
    done = run_replay(tampered(record, result={**record["result"], "ducats": ducats}))
    assert done.returncode == 1
    assert "the record says" in done.stderr


def test_a_record_of_format_1_is_still_read(played):
    state, record = played
    old = {
        "format": "lowenherz-record/1",
        "settings": record["settings"],
        "moves": record["moves"],
        "result": {"power": record["result"]["power"], "winners": record["result"]["winners"]},
    }
    done = run_replay(old, "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ducats"] == record["result"]["ducats"]


def deep(depth: int) -> str:
    return '{"format": "lowenherz-record/2", "settings": ' + "[" * depth + "]" * depth + "}"


HOSTILE = {
    "too big": ("too_big", lambda: " " * (MAX_BYTES + 1)),
    "deep nesting": ("not_json", lambda: "[" * 100_000 + "]" * 100_000),
    "nested settings": ("settings", lambda: deep(500)),
    "a number of 5000 digits": (
        "not_json",
        lambda: '{"format": "lowenherz-record/2", "settings": {"seed": ' + "9" * 5000 + "}}",
    ),
    "a seed beyond 64 bits": (
        "settings",
        lambda: json.dumps(
            {
                "format": FORMAT,
                "settings": {"players": ["red", "ochre"], "seed": 2**64},
                "moves": [],
            }
        ),
    ),
    "a float seed": (
        "settings",
        lambda: json.dumps(
            {"format": FORMAT, "settings": {"players": ["red", "ochre"], "seed": 1e308}}
        ),
    ),
    "too many moves": (
        "too_long",
        lambda: json.dumps(
            {
                "format": FORMAT,
                "settings": {"players": ["red", "ochre"]},
                "moves": [{"player": "red", "move": "pass"}] * (MAX_MOVES + 1),
            }
        ),
    ),
    "players of the wrong type": (
        "settings",
        lambda: json.dumps({"format": FORMAT, "settings": {"players": "red"}, "moves": []}),
    ),
    "events of the wrong type": (
        "shape",
        lambda: json.dumps(
            {"format": FORMAT, "settings": {"players": ["red", "ochre"]}, "moves": [], "events": 7}
        ),
    ),
    "not UTF-8": ("not_json", lambda: b"\xff\xfe{"),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_file_is_refused_with_its_code(name):
    code, make = HOSTILE[name]
    with pytest.raises(RecordError) as refused:
        read_record(make())
    assert refused.value.code == code


def test_a_hostile_file_exits_2_with_one_line(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    done = subprocess.run(
        [sys.executable, "-m", "engine.replay", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("not a valid record: not JSON")
    assert len(done.stderr.splitlines()) == 1


def test_a_state_read_back_from_json_keeps_the_players_in_seat_order():
    """PostgreSQL's jsonb sorts an object's keys: a state read back from it must still go
    through the players in seat order, or the silver mine's events (RULES 6.3) come in
    another order than a replay writes them (a site record would not replay to its events)."""
    settings = Settings(players=("red", "ochre", "lilac"), seed=5)
    state, _moves, _events = play_game(settings)
    data = state_to_json(state)
    players = data["position"]["players"]
    data["position"]["players"] = {
        c: players[c] for c in sorted(players, key=lambda c: (len(c), c))
    }
    assert list(state_from_json(data).pos.players) == ["red", "ochre", "lilac"]
