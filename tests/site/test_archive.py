"""The archive: finished games only, filterable; each game step by step with every secret
shown, a power chart, and a record that `engine.replay` replays to the same result.

Finished games are played once per module through `games.services` (a few seconds
each) inside a transaction that is rolled back when the module is done; every test
runs in a savepoint of it, as usual.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from engine.ai import RandomPlayer
from engine.replay import Result, read_record, replay_record
from engine.serialize import state_from_json
from engine.view import view
from games import services
from games.models import Event, Game, Profile, RecordEntry, Seat, Snapshot
from games.show.board_svg import render_board
from games.show.charts import power_chart
from games.show.event_text import describe
from games.show.words import card_name
from games.views.archive_search import PAGE_SIZE
from tests.site.conftest import make_user

ROOT = Path(__file__).resolve().parents[2]
COLOURS = ["red", "ochre", "lilac", "grey"]
MAX_PHASES = 2000  # far beyond a real game: more means the game never ends


# --- playing whole games through the services ---------------------------------------------


def start_game(creator: User, joiner: User, player_count: int, seed: int, name: str) -> Game:
    """creator red, computers between, joiner last; the seed fixed before the start."""
    colours = COLOURS[:player_count]
    game = services.create_game(
        creator,
        name=name,
        player_count=player_count,
        setup="variable",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour=colours[0],
        computer_colours=colours[1:-1],
    )
    Game.objects.filter(pk=game.pk).update(seed=seed)
    return services.join_game(game.pk, joiner, colours[-1])


def play_to_the_end(game_id: int, seed: int) -> Game:
    """Submit for every awaited seat, then resolve explicitly: on_commit callbacks (the
    Celery dispatch) do not run inside the test's transaction."""
    people: dict[str, RandomPlayer] = {}
    for _ in range(MAX_PHASES):
        game = Game.objects.get(pk=game_id)
        if game.is_finished:
            return game
        seats = {seat.colour: seat for seat in game.seats.all()}
        for colour in game.waiting:
            seat = seats[colour]
            if seat.is_computer:
                services.play_computer(game_id, game.phase_number, seat.pk)
                continue
            person = people.setdefault(colour, RandomPlayer(f"{seed}/{colour}"))
            move = person.choose(game.engine_state, colour)
            if services.submit_move(game_id, seat.pk, move).ready:
                break
        services.resolve(game_id, game.phase_number)
    raise AssertionError(f"game {game_id} did not end in {MAX_PHASES} phases")


def finished_game(
    creator: User, joiner: User, *, player_count: int, seed: int, name: str, finished: datetime
) -> Game:
    game = play_to_the_end(start_game(creator, joiner, player_count, seed, name).pk, seed)
    Game.objects.filter(pk=game.pk).update(finished_at=finished)
    return Game.objects.get(pk=game.pk)


@dataclass(frozen=True)
class Archive:
    alice: User
    bob: User
    charlie: User
    duel: Game  # 2 players: alice and bob, finished 2024-03-10
    trio: Game  # 3 players: alice, a computer and charlie, finished 2024-05-20


@pytest.fixture(scope="module")
def archive(django_db_setup, django_db_blocker) -> Iterator[Archive]:
    with django_db_blocker.unblock(), transaction.atomic():
        alice, bob, charlie = make_user("alice"), make_user("bob"), make_user("charlie")
        duel = finished_game(
            alice,
            bob,
            player_count=2,
            seed=1,
            name="Short duel",
            finished=datetime(2024, 3, 10, 12, tzinfo=UTC),
        )
        trio = finished_game(
            alice,
            charlie,
            player_count=3,
            seed=2,
            name="Three crowns",
            finished=datetime(2024, 5, 20, 12, tzinfo=UTC),
        )
        yield Archive(alice, bob, charlie, duel, trio)
        transaction.set_rollback(True)


@pytest.fixture
def running(archive, db) -> Game:
    return start_game(archive.bob, archive.charlie, 2, seed=3, name="Still going")


def archive_page(game: Game, step: int | str | None = None, client: Client | None = None):
    url = reverse("archive_game", args=[game.pk])
    return (client or Client()).get(url, {} if step is None else {"step": step})


def listed(response) -> list[str]:
    return [game.name for game in response.context["page"]]


def snapshots(game: Game) -> list[Snapshot]:
    return list(Snapshot.objects.filter(game=game).order_by("phase_number"))


# --- the list --------------------------------------------------------------------------------


def test_the_archive_lists_finished_games_only(archive, running, client):
    response = client.get(reverse("archive"))
    assert response.status_code == 200
    assert listed(response) == ["Three crowns", "Short duel"]  # newest first
    assert b'id="archive-table"' in response.content
    assert b'id="archive-filter"' in response.content
    assert b"Still going" not in response.content


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("charl", ["Three crowns"]),  # part of a user name
        ("BOB", ["Short duel"]),  # a display name, whatever the case
        ("alice", ["Three crowns", "Short duel"]),
        ("nobody", []),
    ],
)
def test_the_archive_filters_by_player(archive, client, name, expected):
    assert listed(client.get(reverse("archive"), {"player": name})) == expected


def test_the_archive_filters_by_display_name_not_only_user_name(archive, client):
    Profile.objects.filter(user=archive.charlie).update(display_name="Lionheart")
    assert listed(client.get(reverse("archive"), {"player": "lionh"})) == ["Three crowns"]


@pytest.mark.parametrize(
    ("players", "expected"),
    [
        ("2", ["Short duel"]),
        ("3", ["Three crowns"]),
        ("4", []),
        ("", ["Three crowns", "Short duel"]),
    ],
)
def test_the_archive_filters_by_number_of_players(archive, client, players, expected):
    assert listed(client.get(reverse("archive"), {"players": players})) == expected


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"finished_from": "2024-04-01"}, ["Three crowns"]),
        ({"finished_to": "2024-04-01"}, ["Short duel"]),
        ({"finished_from": "2024-03-10", "finished_to": "2024-03-10"}, ["Short duel"]),
        ({"finished_from": "2024-06-01"}, []),
    ],
)
def test_the_archive_filters_by_date(archive, client, query, expected):
    assert listed(client.get(reverse("archive"), query)) == expected


def test_a_bad_filter_value_is_shown_and_ignored(archive, client):
    response = client.get(reverse("archive"), {"finished_from": "soon", "players": "3"})
    assert response.status_code == 200
    assert listed(response) == ["Three crowns"]
    assert response.context["form"].errors["finished_from"]


def add_finished_games(count: int, user: User) -> None:
    for i in range(count):
        game = Game.objects.create(
            name=f"Old game {i}",
            player_count=2,
            status="finished",
            finished_at=datetime(2023, 1, 1, tzinfo=UTC),
            winners=["red"],
        )
        Seat.objects.create(game=game, colour="red", position=0, user=user)
        Seat.objects.create(game=game, colour="ochre", position=1, is_computer=True)


def list_queries(client: Client) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(reverse("archive")).status_code == 200
    return len(queries)


def test_the_archive_is_paginated_with_the_filters_kept(archive, client):
    add_finished_games(PAGE_SIZE + 5, archive.bob)
    first = client.get(reverse("archive"), {"player": "bob"})
    assert len(listed(first)) == PAGE_SIZE
    assert b'id="archive-page-next"' in first.content
    assert b"player=bob&amp;page=2" in first.content
    second = client.get(reverse("archive"), {"player": "bob", "page": 2})
    assert len(listed(second)) == 6  # 30 old games and the duel


def test_the_archive_list_queries_do_not_grow_with_the_games_listed(archive, client):
    few = list_queries(client)
    add_finished_games(PAGE_SIZE - 2, archive.bob)
    assert list_queries(client) == few


# --- one game --------------------------------------------------------------------------------


def test_unfinished_games_have_no_archive_page_nor_record(archive, running, client):
    assert client.get(reverse("archive_game", args=[running.pk])).status_code == 404
    assert client.get(reverse("record_json", args=[running.pk])).status_code == 404
    assert client.get(reverse("archive_game", args=[999_999])).status_code == 404


def test_stepping_through_shows_each_phase_board_and_events(archive, db):
    game = archive.trio
    shots = snapshots(game)
    names = {s.colour: s.display_name for s in game.seats.all()}
    for index in (0, 1, len(shots) // 2, len(shots) - 1):
        shot = shots[index]
        response = archive_page(game, index)
        assert response.status_code == 200
        assert response.context["index"] == index
        board = render_board(view(state_from_json(shot.state), None, reveal=True))
        assert board in response.content.decode()
        for event in Event.objects.filter(game=game, phase_number=shot.phase_number):
            assert escape(describe(event.data, names)) in response.content.decode()
        assert f'id="step-number">{index}</span> of {len(shots) - 1}' in response.content.decode()


def test_the_step_links_lead_to_the_neighbouring_phases(archive, db):
    response = archive_page(archive.trio, 3)
    url = reverse("archive_game", args=[archive.trio.pk])
    last = Snapshot.objects.filter(game=archive.trio).count() - 1
    html = response.content.decode()
    for link, step in (("first", 0), ("prev", 2), ("next", 4), ("last", last)):
        assert re.search(rf'id="step-{link}" href="{re.escape(url)}\?step={step}"', html)
    assert 'id="download-record"' in html


@pytest.mark.parametrize(("step", "index"), [(None, 0), ("abc", 0), ("-3", 0), ("99999", -1)])
def test_a_step_out_of_range_shows_the_nearest_phase(archive, db, step, index):
    last = Snapshot.objects.filter(game=archive.duel).count() - 1
    response = archive_page(archive.duel, step)
    assert response.context["index"] == (last if index == -1 else index)


def test_the_boards_differ_between_the_first_and_the_last_step(archive, db):
    first, last = archive_page(archive.duel, 0), archive_page(archive.duel, 99999)
    assert first.context["board"] != last.context["board"]


def test_hands_of_the_finished_game_are_shown(archive, db):
    """While a game runs only the holder sees a hand; in the archive everyone does."""
    shot, colour, hand = next(
        (shot, colour, player["hand"])
        for shot in snapshots(archive.trio)
        for colour, player in shot.state["position"]["players"].items()
        if player["hand"]
    )
    index = snapshots(archive.trio).index(shot)
    html = archive_page(archive.trio, index).content.decode()
    row = re.search(rf'<tr data-colour="{colour}">(.*?)</tr>', html, re.S)
    assert row is not None
    for card in hand:
        assert card_name(card) in row.group(1)


def test_private_events_of_the_finished_game_are_shown(archive, db):
    event = Event.objects.filter(game=archive.trio).exclude(to_colour="").first()
    assert event is not None, "the game should have a secret event (a politics card taken)"
    index = [s.phase_number for s in snapshots(archive.trio)].index(event.phase_number)
    names = {s.colour: s.display_name for s in archive.trio.seats.all()}
    html = archive_page(archive.trio, index).content.decode()
    assert escape(describe({**event.data, "to": event.to_colour}, names)) in html
    assert "only" in html and "saw this" in html


def test_sealed_bids_and_decisions_are_shown_as_submitted(archive, db):
    entry = RecordEntry.objects.filter(game=archive.trio, text__startswith="bid").first()
    assert entry is not None, "the game should have a duel"
    index = [s.phase_number for s in snapshots(archive.trio)].index(entry.phase_number + 1)
    html = archive_page(archive.trio, index).content.decode()
    assert f"<code>{escape(entry.text)}</code>" in html


def test_the_page_shows_every_players_power_and_ducats_at_that_step(archive, db):
    shot = snapshots(archive.trio)[-1]
    response = archive_page(archive.trio, 99999)
    rows = {row["seat"].colour: row for row in response.context["players"]}
    for colour, player in shot.state["position"]["players"].items():
        assert (rows[colour]["power"], rows[colour]["ducats"]) == (
            player["power"],
            player["ducats"],
        )


def test_the_power_chart_has_one_line_per_player(archive, db):
    html = archive_page(archive.trio).content.decode()
    chart = re.search(r'<figure id="power-chart".*?</figure>', html, re.S)
    assert chart is not None
    lines = re.findall(r'<polyline class="power-line" data-colour="(\w+)"', chart.group(0))
    assert lines == ["red", "ochre", "lilac"]
    assert "Computer (ochre, no…" in chart.group(0)  # the legend names the players, cut short


def test_the_archive_page_uses_as_many_queries_whatever_the_game_length(archive, db):
    def queries(game: Game, step: int) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert archive_page(game, step).status_code == 200
        return len(captured)

    lengths = {Snapshot.objects.filter(game=g).count() for g in (archive.duel, archive.trio)}
    assert len(lengths) == 2, "the two games should differ in length"
    counts = {
        queries(archive.duel, 0),
        queries(archive.duel, 99999),
        queries(archive.trio, 0),
        queries(archive.trio, 99999),
    }
    assert len(counts) == 1


def test_the_archive_page_loads_one_state_only(archive, db):
    with CaptureQueriesContext(connection) as captured:
        archive_page(archive.trio, 5)
    states = [q["sql"] for q in captured if '"games_snapshot"."state"' in q["sql"]]
    assert len(states) == 1
    assert not any('"games_game"."state"' in q["sql"] for q in captured)


def test_a_player_logged_in_sees_the_same_archive(archive, db):
    client = Client()
    client.force_login(archive.alice)
    assert archive_page(archive.duel, 2, client).status_code == 200


# --- the record --------------------------------------------------------------------------------


def download(client: Client, game: Game):
    response = client.get(reverse("record_json", args=[game.pk]))
    assert response.status_code == 200
    return response


def test_the_record_is_an_attachment_named_after_the_game(archive, client):
    response = download(client, archive.duel)
    assert response["Content-Type"] == "application/json; charset=utf-8"
    assert (
        response["Content-Disposition"]
        == f'attachment; filename="lowenherz-game-{archive.duel.pk}.json"'
    )


@pytest.mark.parametrize("which", ["duel", "trio"])
def test_the_record_replays_to_the_stored_final_power_and_winners(archive, client, which):
    game = getattr(archive, which)
    record = read_record(download(client, game).content)
    state = game.engine_state
    stored = Result({c: p.power for c, p in state.pos.players.items()}, game.winners)
    assert record.settings.seed == game.seed
    assert len(record.moves) == RecordEntry.objects.filter(game=game).count()
    assert record.result is not None and record.result.matches(stored)
    assert Result.of(replay_record(record)).matches(stored)


def test_the_downloaded_record_passes_the_replay_command(archive, client):
    done = subprocess.run(
        [sys.executable, "-m", "engine.replay", "--json", "-"],
        input=download(client, archive.trio).content,
        capture_output=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["winners"] == archive.trio.winners


# --- the chart on its own -------------------------------------------------------------------------


def test_the_power_chart_draws_a_line_per_colour_through_every_point():
    svg = power_chart(
        [(0, {"red": 0, "grey": 0}), (1, {"red": 4, "grey": 2}), (2, {"red": 9, "grey": 12})],
        ["red", "grey"],
    )
    lines = dict(re.findall(r'data-colour="(\w+)"[^>]*stroke="(#\w+)"', svg))
    assert lines == {"red": "#b3261e", "grey": "#6b6f75"}
    points = re.findall(r'points="([^"]*)"', svg)
    assert [len(p.split()) for p in points] == [3, 3]
    assert "Red 9" in svg and "Grey 12" in svg  # the legend, with the final power


def test_the_power_chart_escapes_its_text():
    svg = power_chart(
        [(0, {"<b>": 1})], ["<b>"], x_label="turn & phase", labels={"<b>": "Tom & <i>Jerry</i>"}
    )
    assert "<b>" not in svg and "<i>" not in svg
    assert 'data-colour="&lt;b&gt;"' in svg
    assert "turn &amp; phase" in svg and "Tom &amp; &lt;i&gt;Jerry&lt;/i&gt; 1" in svg
