"""Records to take away (issue 27): a finished game's record as JSON (every move, every
event, the final scores) and as a transcript in the reader's language, checked by
`python -m engine.replay` in a fresh process; an import that replays a record and keeps
it in the archive, or refuses it clearly and stores nothing; no record of a running
game, whose seed and moves would tell what its players cannot see yet.

The finished games are played once per module through `games.services`, as
tests/site/test_archive.py plays them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.test import Client
from django.urls import reverse

from engine.events import ENGINE_EVENT_KINDS
from engine.replay import FORMAT, MAX_BYTES, MAX_MOVES, Result, record_to_json
from engine.setup import Settings as EngineSettings
from games.models import Event, Game, Profile, RecordEntry, Seat, Snapshot
from games.records import game_record
from tests.site.conftest import make_user
from tests.site.test_archive import finished_game, start_game
from tests.test_replay import play_game

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Games:
    alice: User
    bob: User
    duel: Game  # alice and bob, 2 players
    trio: Game  # alice, a computer and bob


@pytest.fixture(scope="module")
def games(django_db_setup, django_db_blocker) -> Iterator[Games]:
    with django_db_blocker.unblock(), transaction.atomic():
        alice, bob = make_user("alice"), make_user("bob")
        when = datetime(2025, 1, 5, 12, tzinfo=UTC)
        duel = finished_game(alice, bob, player_count=2, seed=7, name="Duel", finished=when)
        trio = finished_game(alice, bob, player_count=3, seed=8, name="Trio", finished=when)
        yield Games(alice, bob, duel, trio)
        transaction.set_rollback(True)


def record_of(client: Client, game: Game) -> dict[str, Any]:
    response = client.get(reverse("record_json", args=[game.pk]))
    assert response.status_code == 200
    return json.loads(response.content)


def replay_file(tmp_path: Path, record: dict[str, Any] | str) -> subprocess.CompletedProcess[str]:
    """`python -m engine.replay --json FILE` in a fresh process, without the site."""
    path = tmp_path / "record.json"
    path.write_text(record if isinstance(record, str) else json.dumps(record), encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "engine.replay", "--json", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},  # no Django settings
    )


# --- export ----------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["duel", "trio"])
def test_an_exported_record_replays_in_a_fresh_process_to_the_stored_scores(
    games, client, tmp_path, which
):
    game = getattr(games, which)
    record = record_of(client, game)
    done = replay_file(tmp_path, record)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    players = game.engine_state.pos.players
    assert result == {
        "power": {c: players[c].power for c in game.engine_state.players},
        "ducats": {c: players[c].ducats for c in game.engine_state.players},
        "winners": game.winners,
    }
    assert record["result"] == result


def test_the_record_holds_every_move_and_engine_event_and_the_names(games, db, client):
    game = games.trio
    record = record_of(client, game)
    assert record["format"] == FORMAT
    assert record["name"] == "Trio"
    assert record["settings"]["seed"] == game.seed
    assert [m["move"] for m in record["moves"]] == list(
        game.record.order_by("index").values_list("text", flat=True)
    )
    assert len(record["events"]) == game.events.filter(kind__in=ENGINE_EVENT_KINDS).count()
    private = game.events.exclude(to_colour="").first()
    assert private is not None
    assert {**private.data, "to": private.to_colour} in record["events"]
    assert record["players"]["red"] == "Alice" and record["players"]["lilac"] == "Bob"
    assert record["players"]["ochre"].startswith("Computer")


def test_both_records_are_attachments_named_after_the_game(games, db, client):
    game = games.duel
    for name, extension, kind in [
        ("record_json", "json", "application/json"),
        ("record_text", "txt", "text/plain"),
    ]:
        response = client.get(reverse(name, args=[game.pk]))
        assert response.status_code == 200
        assert response["Content-Type"].startswith(kind)
        assert response["Content-Disposition"] == (
            f'attachment; filename="lowenherz-game-{game.pk}.{extension}"'
        )


def test_the_archived_game_links_both_records(games, db, client):
    page = client.get(reverse("archive_game", args=[games.duel.pk])).content.decode()
    assert reverse("record_json", args=[games.duel.pk]) in page
    assert reverse("record_text", args=[games.duel.pk]) in page


def test_the_transcript_is_in_the_readers_language_turn_by_turn(games, db, client):
    game = games.trio
    german = client.get(reverse("record_text", args=[game.pk]), HTTP_ACCEPT_LANGUAGE="de")
    text = german.content.decode()
    assert text.startswith("Trio\n3 Spieler")
    assert "Runde 1\n" in text and "Endstand" in text
    first = game.record.order_by("index").first()
    assert first is not None and f": {first.text}" in text
    last_event = game.events.order_by("-index").first()
    assert last_event is not None and last_event.kind == "game_over"
    power = game.engine_state.pos.players["red"].power
    assert f"Alice (Rot): Machtpunkte {power}, Dukaten" in text
    english = client.get(reverse("record_text", args=[game.pk])).content.decode()
    assert "Turn 1\n" in english and f"Alice (red): power {power}, ducats" in english


# --- a running game has no record ---------------------------------------------------------


def test_a_running_game_has_no_record_to_download(games, db):
    running = start_game(games.alice, games.bob, 2, seed=987_654_321_012, name="Going")
    client = Client()
    client.force_login(games.alice)  # even its own player
    for name in ("record_json", "record_text"):
        response = client.get(reverse(name, args=[running.pk]))
        assert response.status_code == 404
        assert str(running.seed).encode() not in response.content


def test_a_running_games_record_is_refused_by_the_site_itself(games, db):
    running = start_game(games.alice, games.bob, 2, seed=987_654_321_012, name="Going")
    with pytest.raises(AssertionError, match="secrets"):
        game_record(running)


# --- import ------------------------------------------------------------------------------------


def upload(client: Client, content: bytes | str, name: str = "record.json"):
    data = content.encode() if isinstance(content, str) else content
    return client.post(
        reverse("import_record"), {"record": SimpleUploadedFile(name, data, "application/json")}
    )


def stored_counts() -> tuple[int, ...]:
    return tuple(m.objects.count() for m in (Game, Seat, RecordEntry, Event, Snapshot))


@pytest.fixture
def importer(games, db) -> Client:
    client = Client()
    client.force_login(games.bob)
    return client


def test_the_import_page_needs_a_login(games, db, client):
    response = client.get(reverse("import_record"))
    assert response.status_code == 302 and "login" in response["Location"]


def test_an_imported_record_is_a_finished_archived_game_that_exports_the_same(
    games, client, importer
):
    record = record_of(client, games.trio)
    response = upload(importer, json.dumps(record))
    assert response.status_code == 302, refusal(response)
    game = Game.objects.get(pk=int(response["Location"].rstrip("/").split("/")[-1]))
    assert game.imported and game.is_finished and game.creator == games.bob
    assert [s.display_name for s in game.seats.all()] == list(record["players"].values())
    assert all(s.user is None for s in game.seats.all())
    again = record_of(client, game)
    assert {**again, "name": None, "finished_at": None} == {
        **record,
        "name": None,
        "finished_at": None,
    }
    # its phases, step by step for the archive: one after each move (a sealed phase's
    # after its last), numbered as the site numbers them, the last the final position
    phases = list(game.snapshots.values_list("phase_number", flat=True))
    assert phases == list(range(1, len(phases) + 1)) and len(phases) > 100
    assert game.snapshots.last().power == record["result"]["power"]
    assert game.phase_number == phases[-1]
    page = client.get(reverse("archive_game", args=[game.pk]), {"step": 5})
    assert page.status_code == 200 and b"archive-imported" in page.content


def refusal(response) -> str:
    page = response.content.decode()
    return page[page.find('id="import-refused"') :][:400]


def tamper(record: dict[str, Any], where: str) -> dict[str, Any]:
    copy = json.loads(json.dumps(record))
    if where == "move":
        copy["moves"][4]["move"] = "pass"
    elif where == "score":
        first = next(iter(copy["result"]["power"]))
        copy["result"]["power"][first] += 1
    elif where == "event":
        over = copy["events"][-1]
        over["winners"] = [c for c in copy["settings"]["players"] if c not in over["winners"]][:1]
    return copy


@pytest.mark.parametrize(
    ("where", "code", "sentence"),
    [
        ("move", 2, "Zug 5 des Spielprotokolls"),
        ("score", 1, "Endstände"),
        ("event", 1, "Ereignis"),
    ],
)
def test_a_tampered_record_is_refused_by_the_command_and_by_the_import(
    games, client, importer, tmp_path, where, code, sentence
):
    record = tamper(record_of(client, games.duel), where)
    done = replay_file(tmp_path, record)
    assert done.returncode == code
    assert len(done.stderr.splitlines()) == 1
    before = stored_counts()
    Profile.objects.filter(user=games.bob).update(language="de")
    response = upload(importer, json.dumps(record))
    assert response.status_code == 400
    assert sentence in refusal(response)
    assert stored_counts() == before


def deep(depth: int) -> str:
    return "[" * depth + "]" * depth


HOSTILE: dict[str, tuple[Any, str]] = {
    "too big": (lambda: b"{" + b" " * (MAX_BYTES + 10) + b"}", "512 KB"),
    "deep nesting": (lambda: deep(200_000), "JSON"),
    "not JSON": (lambda: b"\x89PNG\r\n\x1a\n", "JSON"),
    "a huge number": (
        lambda: '{"format": "lowenherz-record/2", "settings": {"seed": 1' + "0" * 10_000 + "}}",
        "JSON",
    ),
    "a million moves": (
        lambda: json.dumps(
            {
                "format": FORMAT,
                "settings": {"players": ["red", "ochre"]},
                "moves": [{"player": "red", "move": "pass"}] * 1_000_000,
            }
        ),
        "512 KB",
    ),
    "more moves than a game": (
        lambda: json.dumps(
            {
                "format": FORMAT,
                "settings": {"players": ["red", "ochre"]},
                "moves": [{"player": "red", "move": "pass"}] * (MAX_MOVES + 1),
            }
        ),
        "longer than any game",
    ),
    "wrong types": (
        lambda: json.dumps({"format": FORMAT, "settings": {"players": "red", "seed": "x"}}),
        "settings",
    ),
    "unknown format": (lambda: json.dumps({"format": "pgn", "moves": []}), "format"),
    "a game not over": (
        lambda: json.dumps(
            {
                "format": FORMAT,
                "settings": {"players": ["red", "ochre"], "seed": 3},
                "moves": [],
                "events": [],
                "result": {"power": {"red": 0, "ochre": 0}, "ducats": {}, "winners": []},
            }
        ),
        "not over",
    ),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_file_gets_a_clear_refusal_and_nothing_is_stored(importer, name):
    make, words = HOSTILE[name]
    before = stored_counts()
    response = upload(importer, make())
    assert response.status_code == 400
    page = response.content.decode()
    assert 'id="import-refused"' in page or "invalid-feedback" in page
    assert words in page
    assert stored_counts() == before


def test_a_file_too_big_is_dropped_as_it_streams_in_before_any_replay(importer, monkeypatch):
    """`BoundedUpload` stops keeping the file past the limit: the engine never reads it."""

    def never(data: bytes, user: User) -> Game:
        raise AssertionError(f"the import read {len(data)} bytes")

    monkeypatch.setattr("games.views.imports.import_record", never)
    response = upload(importer, b"[" * (MAX_BYTES + 1))
    assert response.status_code == 400
    assert "512 KB" in refusal(response)


def test_imports_are_limited_per_person(importer, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "record_import": "2/h"}
    assert [upload(importer, b"nope").status_code for _ in range(3)] == [400, 400, 429]


def test_a_private_games_records_are_for_its_players_only(games, db):
    Game.objects.filter(pk=games.duel.pk).update(invite_only=True)
    outsider, player = Client(), Client()
    outsider.force_login(make_user("eve"))
    player.force_login(games.bob)
    for name in ("record_json", "record_text"):
        url = reverse(name, args=[games.duel.pk])
        assert outsider.get(url).status_code == 404
        assert player.get(url).status_code == 200


def test_a_record_written_by_the_engine_alone_imports_and_exports_the_same(games, importer, client):
    """A four-player game, basic setup and open decisions, written without the site and
    without names: its players are named by their colours."""
    settings = EngineSettings(
        players=("red", "ochre", "lilac", "grey"), setup="basic", decisions="open", seed=11
    )
    state, moves, events = play_game(settings)
    record = record_to_json(settings, moves, Result.of(state), events=events)
    response = upload(importer, json.dumps(record))
    assert response.status_code == 302, refusal(response)
    game = Game.objects.get(imported=True)
    assert [s.display_name for s in game.seats.all()] == ["red", "ochre", "lilac", "grey"]
    again = record_of(client, game)
    assert (again["moves"], again["events"], again["result"]) == (
        record["moves"],
        record["events"],
        record["result"],
    )
    assert client.get(reverse("archive_game", args=[game.pk]), {"step": 40}).status_code == 200


def test_the_import_page_is_a_form_for_one_file(importer):
    page = importer.get(reverse("import_record"))
    assert page.status_code == 200
    assert b'enctype="multipart/form-data"' in page.content and b'type="file"' in page.content
