"""The game record file and `python -m engine.replay` (pure engine, no database).

A record is the settings with their seed plus the accepted submissions (STYLE: the
record plus the seed is the game); replaying it must reach the same final power and
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
from engine.game import GameState, new_game, submit
from engine.moves import Submission
from engine.replay import (
    FORMAT,
    RecordError,
    Result,
    read_record,
    record_to_json,
    replay_record,
)
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


def play_game(settings: Settings) -> tuple[GameState, list[tuple[str, Submission]]]:
    seats = {p: RandomPlayer(f"replay-test/{i}") for i, p in enumerate(settings.players)}
    state, moves = new_game(settings), []
    while not state.is_over:
        player = state.phase.waiting[0]
        move = seats[player].choose(state, player)
        state, _ = submit(state, player, move)
        moves.append((player, move))
    return state, moves


@pytest.fixture(scope="module", params=GAMES, ids=["3p-variable-sealed", "4p-basic-open"])
def played(request) -> tuple[GameState, dict[str, Any]]:
    state, moves = play_game(request.param)
    return state, record_to_json(request.param, moves, Result.of(state))


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
    assert record["format"] == FORMAT == "lowenherz-record/1"
    assert record["settings"]["seed"] == state.settings.seed
    assert all(set(m) == {"player", "move"} and isinstance(m["move"], str) for m in record["moves"])
    assert record["result"] == {
        "power": {p: state.pos.players[p].power for p in state.players},
        "winners": state.winners,
    }


def test_reading_a_record_back_replays_to_the_same_end(played):
    state, record = played
    replayed = replay_record(read_record(json.dumps(record)))
    assert replayed.is_over
    assert Result.of(replayed) == Result.of(state)


def test_the_command_prints_each_players_final_power_and_the_winners(played, tmp_path):
    state, record = played
    done = run_replay(record, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    power_line, winners_line = done.stdout.splitlines()
    for player in state.players:
        assert f"{player} {state.pos.players[player].power}" in power_line
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
