"""The web pages as players feel them: `game-page`, `profile-page`, `live-poll`,
`page-queries`, `lobby-scale`, `open-games-scale`, `archive-depth` and `web-memory`.

Server time through `django.test.Client` (the whole middleware stack and the database,
no network), DEBUG off, medians over repeats. The baseline of a page's time is a
minimal view (one trivial query, a trivial response) served through the same
middleware and database: `bench.urls` adds it for the length of the run only.

Games are made as the site makes them: `games.services` creates, joins, stores each
submission and resolves each phase, with the moves a computer player (engine.ai's
`RandomPlayer`) chooses, in process (the Celery receivers' queueing is switched off: no
worker is part of these figures). Where a person must be seated in a thousand running
games, one game started through the services is copied in bulk (its row with the full
state, its seats and its snapshot).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from unittest import mock

from django.contrib.auth.models import User
from django.db import connection, transaction
from django.template import Template
from django.test import Client
from django.test.utils import CaptureQueriesContext, _TestState, override_settings
from django.urls import reverse
from django.utils import timezone

from bench.core import COMPUTER_LEVEL, ROOT, Figure, Options, figures, median, samples, spread
from bench.db import empty_tables
from bench.urls import MINIMAL_PATH
from engine.ai import RandomPlayer
from engine.errors import IllegalMove
from engine.game import default_move, is_simultaneous
from games import ratings, services
from games.models import (
    Event,
    Game,
    PendingSubmission,
    Profile,
    RecordEntry,
    Seat,
    Snapshot,
)
from games.views.lists import MY_GAMES_PAGE, OPEN_GAMES_PAGE

SEED = 20_251_104  # a 4-player game (variable setup) that lasts past turn 25
LATER_TURN = 25  # "after 25 turns"
QUICK_TURN = 3
MAX_STEPS = 5_000  # a driver that stops making progress gives up rather than spin
FEW = 10  # games of a person with fewer than a page of them (lobby-scale's detail)


# --- making games as the site does ----------------------------------------------------------


@contextmanager
def no_task_queue() -> Iterator[None]:
    """The services announce what a worker should do next (games.tasks queues it); here
    the bench itself plays and resolves every phase, so nothing is queued."""
    with mock.patch("games.tasks.queue"):
        yield


def person(name: str) -> User:
    """A player (no password: hashing one would cost more than the game)."""
    user = User.objects.create_user(name, f"{name}@example.org")
    user.profile.display_name = name.title()
    user.profile.save()
    return user


def start_game(creator: User, other: User, name: str, seed: int = SEED) -> Game:
    """A 4-player game: `creator` red, `other` ochre, two computers; started."""
    game = services.create_game(
        creator,
        name=name,
        player_count=4,
        setup="variable",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=["lilac", "grey"],
        computer_level=COMPUTER_LEVEL,
    )
    Game.objects.filter(pk=game.pk).update(seed=seed)
    services.join_game(game.pk, other, "ochre")  # the last seat: the game starts
    return Game.objects.get(pk=game.pk)


def play_until(game_id: int, turn: int | None = None) -> Game:
    """Every seat moves as a computer player would, through the services, a phase at a
    time, until the game reaches `turn` (None: until it ends)."""
    seats = dict(Seat.objects.filter(game_id=game_id).values_list("colour", "pk"))
    for _ in range(MAX_STEPS):
        game = Game.objects.get(pk=game_id)
        if game.status != Game.Status.RUNNING or (turn is not None and game.turn >= turn):
            return game
        state = game.engine_state
        movers = list(state.waiting if is_simultaneous(state) else state.waiting[:1])
        for colour in movers:
            move = RandomPlayer(f"{game.phase_number}/{colour}").choose(state, colour)
            try:
                services.submit(game_id, seats[colour], move)
            except IllegalMove:  # an alliance another mover ended changed the state
                state = Game.objects.get(pk=game_id).engine_state
                services.submit(game_id, seats[colour], default_move(state, colour))
        services.resolve(game_id, game.phase_number)
    raise RuntimeError(f"game {game_id} made no progress in {MAX_STEPS} steps")


def copy_game(game: Game, name: str) -> Game:
    """The game's rows copied to a new game: its row, seats, snapshots, events, record."""
    skip = {"id", "invite_token", "mail_thread"}
    fields = {
        f.attname: getattr(game, f.attname)
        for f in Game._meta.concrete_fields
        if f.attname not in skip
    }
    copy = Game.objects.create(**{**fields, "name": name})
    seat_of = {}
    for seat in game.seats.order_by("position"):
        old = seat.pk
        seat.pk, seat.game_id = None, copy.pk
        seat.save()
        seat_of[old] = seat.pk
    for model in (Snapshot, Event, RecordEntry, PendingSubmission):
        rows = list(model.objects.filter(game=game))
        for row in rows:
            row.pk, row.game_id = None, copy.pk
            if isinstance(row, PendingSubmission):
                row.seat_id = seat_of[row.seat_id]
        model.objects.bulk_create(rows)
    return copy


def finish_now(game: Game) -> Game:
    """The game ended as it stands (the quick version: no time to play it out)."""
    Game.objects.filter(pk=game.pk).update(
        status=Game.Status.FINISHED,
        winners=["red"],
        waiting=[],
        deadline=None,
        finished_at=timezone.now(),
    )
    return Game.objects.get(pk=game.pk)


def clone_running(template: Game, count: int, first: int) -> None:
    """`count` copies of a started game (row with its full state, seats, latest
    snapshot), in bulk: half of them await the template's first seat, deadlines spread."""
    seats = list(template.seats.order_by("position"))
    snapshot = template.snapshots.order_by("-phase_number").first()
    assert snapshot is not None
    mine, theirs = seats[0].colour, seats[-1].colour
    skip = {"id", "invite_token", "mail_thread", "name", "waiting", "deadline", "created_at"}
    fields = {
        f.attname: getattr(template, f.attname)
        for f in Game._meta.concrete_fields
        if f.attname not in skip
    }
    now = timezone.now()
    games = Game.objects.bulk_create(
        Game(
            **fields,
            name=f"Game {first + i}",
            waiting=[mine] if i % 2 else [theirs],
            deadline=now + timedelta(minutes=30 + 37 * ((first + i) % 97)),
        )
        for i in range(count)
    )
    Seat.objects.bulk_create(
        Seat(
            game_id=g.pk,
            colour=s.colour,
            position=s.position,
            user_id=s.user_id,
            is_computer=s.is_computer,
        )
        for g in games
        for s in seats
    )
    copy_snapshot(snapshot, games)
    analyze()


def copy_snapshot(snapshot: Snapshot, games: list[Game]) -> None:
    """The template's latest snapshot, copied for each of `games`, in one INSERT."""
    Snapshot.objects.bulk_create(
        Snapshot(
            game_id=g.pk,
            phase_number=snapshot.phase_number,
            turn=snapshot.turn,
            phase_kind=snapshot.phase_kind,
            state=snapshot.state,
            power=snapshot.power,
        )
        for g in games
    )


def analyze() -> None:
    """The planner's statistics brought up to date after a bulk insert, as autovacuum
    soon would on a server: without them it plans for the empty tables it last saw."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


# --- measuring pages ------------------------------------------------------------------------


def client_of(user: User | None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def fetch(client: Client, url: str) -> bytes:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return response.content


def timed(client: Client, url: str, repeat: int) -> list[float]:
    """Milliseconds per request (server time: the client calls the handler directly)."""
    return [s * 1000 for s in samples(lambda: fetch(client, url), repeat, warmup=0)]


def alternating(requests: list[tuple[Client, str]], repeat: int) -> list[list[float]]:
    """Milliseconds per request of each (client, url), requested in turn `repeat` times
    (after one request of each not counted), so that a busier moment of the machine falls
    on all of them alike."""
    found: list[list[float]] = [[] for _ in requests]
    for client, url in requests:
        fetch(client, url)
    for _ in range(repeat):
        for times, (client, url) in zip(found, requests, strict=True):
            times += timed(client, url, 1)
    return found


def queries(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        fetch(client, url)
    return len(captured)


def urls(game: Game) -> dict[str, str]:
    return {
        "game page": reverse("game", args=[game.pk]),
        "JSON view": reverse("game_json", args=[game.pk]),
        "lobby": reverse("lobby"),
    }


def step_url(game: Game, index: int) -> str:
    return f"{reverse('archive_game', args=[game.pk])}?step={index}"


def step_at(game: Game, turn: int) -> int:
    """The index (as `?step=`) of the game's first phase of `turn` (or its last phase)."""
    turns = list(game.snapshots.order_by("phase_number").values_list("turn", flat=True))
    return next((i for i, t in enumerate(turns) if t >= turn), len(turns) - 1)


@contextmanager
def bench_site() -> Iterator[None]:
    """The site with the minimal view, no task queue, and templates rendered as a server
    renders them: the test environment (bench.db) instruments every template render for
    the test client (a copy of each context), which a server does not pay."""
    original = getattr(_TestState, "saved_data", None)
    render = original.template_render if original is not None else Template._render  # type: ignore[attr-defined]
    with (
        override_settings(ROOT_URLCONF="bench.urls"),
        no_task_queue(),
        mock.patch.object(Template, "_render", render),
    ):
        yield


# --- the world the page figures share -------------------------------------------------------


@dataclass
class World:
    viewer: User  # red, a person seated in the running game
    running: Game  # a 4-player game after `turn` turns
    finished: Game  # the same game played to its end (quick: ended where it stood)
    turn: int
    counts: dict[str, dict[str, int]]  # page → {"turn 1": queries, "turn N": queries}


_world: World | None = None


def world(options: Options) -> World:
    """Made once per run (and again if another benchmark emptied the tables)."""
    global _world
    if _world is not None and Game.objects.filter(pk=_world.finished.pk).exists():
        return _world
    empty_tables()
    later = options.size(LATER_TURN, QUICK_TURN)
    with bench_site():
        viewer, other = person("rosa"), person("otto")
        game = play_until(start_game(viewer, other, "Benchmark").pk, turn=1)
        client = client_of(viewer)
        early = {page: queries(client, url) for page, url in urls(game).items()}
        game = play_until(game.pk, turn=later)
        late = {page: queries(client, url) for page, url in urls(game).items()}
        finished = copy_game(game, "Benchmark, finished")
        finished = play_until(finished.pk) if not options.quick else finish_now(finished)
        if finished.status != Game.Status.FINISHED:
            finished = finish_now(finished)
    counts = {page: {"turn 1": early[page], f"turn {game.turn}": late[page]} for page in early}
    _world = World(viewer=viewer, running=game, finished=finished, turn=game.turn, counts=counts)
    return _world


# --- the figures ----------------------------------------------------------------------------


@figures("game-page")
def game_page(options: Options) -> Iterator[Figure]:
    """A seated player's page of a running 4-player game after `LATER_TURN` turns, server
    time. Baseline: the minimal view (`bench.urls`: the same middleware, session and
    database, one trivial query, a trivial response), requested in turn with the page
    by the same signed-in client in the same run: the floor any page of the site pays,
    so the ratio is what the game page itself costs, and a busier moment of the machine
    falls on both alike."""
    yield _game_page(options, "en-gb", "game-page", "")


@figures("game-page-de")
def game_page_in_german(options: Options) -> Iterator[Figure]:
    """The same page for a German reader: every sentence through the German catalogue
    (issue 23). The baseline is the same minimal view, requested in turn in the same run
    (fair as for `game-page`), so the ratio beside game-page's says what the
    translations cost the page."""
    yield _game_page(options, "de", "game-page-de", ", read in German")


def _game_page(options: Options, language: str, name: str, how: str) -> Figure:
    w = world(options)
    repeat = options.size(60, 10)
    Profile.objects.filter(user=w.viewer).update(language=language)
    with bench_site():
        client = client_of(w.viewer)
        page_url = reverse("game", args=[w.running.pk])
        page, minimal = alternating([(client, page_url), (client, MINIMAL_PATH)], repeat)
        size = len(fetch(client, page_url))
    return Figure(
        name,
        f"game page of a 4-player game after {w.turn} turns{how}, server time",
        measured=median(page),
        baseline=median(minimal),
        target="<= 5",
        unit="ms",
        spread=spread(page),
        detail={
            "turn": w.turn,
            "phase": w.running.phase_number,
            "samples": len(page),
            "minimal_view_spread": spread(minimal),
            "html_bytes": size,
            "language": language,
        },
    )


PROFILE_FINISHED = 200  # a regular's history: finished games, each rated
PROFILE_RUNNING = 10


@figures("profile-page")
def profile_page(options: Options) -> Iterator[Figure]:
    """A person's page (issue 27: games running and finished, wins, rating with its chart,
    reliability, results against computers) of a regular with `PROFILE_FINISHED`
    finished games, each rated (a rating history of as many points), and
    `PROFILE_RUNNING` running, seen by another person, server time. Baseline: the
    minimal view, requested in turn by the same signed-in client in the same run (fair
    as for `game-page`: the floor any page pays). The person's yearly figures are kept
    in the cache (games.people: `STATS_SECONDS`), as a server keeps them between the
    visits of a page; the first request, not counted, counts them. The history is removed
    afterwards: the other figures' world is as it was."""
    w = world(options)
    repeat = options.size(60, 10)
    with bench_site():
        regular, others = profile_history(w)
        try:
            client = client_of(w.viewer)
            page_url = reverse("person", args=[regular.pk])
            page, minimal = alternating([(client, page_url), (client, MINIMAL_PATH)], repeat)
            size = len(fetch(client, page_url))
            count = queries(client, page_url)
        finally:
            Game.objects.filter(seats__user=regular).delete()
            User.objects.filter(pk__in=[regular.pk, *(o.pk for o in others)]).delete()
    yield Figure(
        "profile-page",
        f"a person's page with {PROFILE_FINISHED} finished (rated) and {PROFILE_RUNNING} "
        "running games, server time",
        measured=median(page),
        baseline=median(minimal),
        target="<= 5",
        unit="ms",
        spread=spread(page),
        detail={
            "samples": len(page),
            "minimal_view_spread": spread(minimal),
            "html_bytes": size,
            "queries": count,
        },
    )


def profile_history(w: World) -> tuple[User, list[User]]:
    """A regular (and the three people they play with): `PROFILE_FINISHED` finished
    4-player games of people only, rated in turn through games.ratings' own update, and
    `PROFILE_RUNNING` running ones, rows copied from the world's games (without their
    states: the page reads none)."""
    regular = person("petra")
    others = [person(name) for name in ("quentin", "ruth", "sven")]
    users = [regular, *others]
    colours = [s.colour for s in w.finished.seats.order_by("position")]
    now = timezone.now()
    skip = {"id", "invite_token", "mail_thread", "name", "state", "created_at"}

    def copies(template: Game, count: int, name: str) -> list[Game]:
        fields = {
            f.attname: getattr(template, f.attname)
            for f in Game._meta.concrete_fields
            if f.attname not in skip
        }
        games = Game.objects.bulk_create(
            Game(**{**fields, "name": f"{name} {i}"}) for i in range(count)
        )
        Seat.objects.bulk_create(
            Seat(game_id=g.pk, colour=c, position=i, user_id=users[(i + g.pk) % 4].pk)
            for g in games
            for i, c in enumerate(colours)
        )
        return games

    finished = copies(w.finished, PROFILE_FINISHED, "Finished")
    for i, game in enumerate(finished):
        Game.objects.filter(pk=game.pk).update(
            finished_at=now - timedelta(days=PROFILE_FINISHED - i)
        )
        order = [(regular, 1 + i % 4), *((o, 1 + (i + j + 1) % 4) for j, o in enumerate(others))]
        people = [ratings.Placed(u.pk, place) for u, place in order]
        with transaction.atomic():
            ratings.store_ratings(game, people)
    copies(w.running, PROFILE_RUNNING, "Running")
    analyze()
    return regular, others


@figures("live-poll", "live-poll-lobby")
def live_poll(options: Options) -> Iterator[Figure]:
    """What an open page costs while nothing happens: its poll (`/games/ID/live/` for the
    game page, `/live/?lobby=1` for the lobby), each answered in full (a 200 with its JSON,
    not the 304 a browser that has it gets), against the minimal view in the same run,
    requested in turn. The minimal view is the fair floor: the same middleware (session,
    account, profile, language) and one trivial query, which no answer can do without;
    the polls go a quicker way through it (games.views.live `QuickPollMiddleware`: no
    profile, the person found with one statement), so they may cost less than it."""
    w = world(options)
    repeat = options.size(200, 10)
    Profile.objects.filter(user=w.viewer).update(language="en-gb")
    with bench_site():
        client = client_of(w.viewer)
        game_url, lobby_url = reverse("game_live", args=[w.running.pk]), reverse("live")
        lobby_url += "?lobby=1"
        game, lobby, minimal = alternating(
            [(client, game_url), (client, lobby_url), (client, MINIMAL_PATH)], repeat
        )
        counts = {"game": queries(client, game_url), "lobby": queries(client, lobby_url)}
        counts["minimal"] = queries(client, MINIMAL_PATH)
    for name, times, what in (
        ("live-poll", game, "the game page's poll"),
        ("live-poll-lobby", lobby, "the lobby's poll"),
    ):
        yield Figure(
            name,
            f"{what}, answered in full, server time",
            measured=median(times),
            baseline=median(minimal),
            target="<= 1.2",
            unit="ms",
            spread=spread(times),
            detail={"samples": len(times), "queries": counts, "minimal_spread": spread(minimal)},
        )


@figures("page-queries")
def page_queries(options: Options) -> Iterator[Figure]:
    """The SQL queries of the game page, its JSON view, the lobby and the archive's step
    page, after `LATER_TURN` turns. Baseline: the same pages' queries for the same
    viewer at turn 1 of the same game. A count is exact (no noise, no machine), so the
    comparison is fair as it stands: the ratio is 1 unless a page's queries grow with the
    game (target "== 1"; `what` also says whether each stays within 10)."""
    w = world(options)
    counts = {page: dict(c) for page, c in w.counts.items()}
    with bench_site():
        client = client_of(w.viewer)
        counts["archive step page"] = {
            "turn 1": queries(client, step_url(w.finished, step_at(w.finished, 1))),
            f"turn {w.turn}": queries(client, step_url(w.finished, step_at(w.finished, w.turn))),
        }
    earlier = {page: c["turn 1"] for page, c in counts.items()}
    later = {page: c[f"turn {w.turn}"] for page, c in counts.items()}
    measured, baseline = max(later.values()), max(earlier.values())
    changed = [page for page in counts if earlier[page] != later[page]]
    if changed:  # the ratio tells of a page whose queries changed, not just the largest
        measured, baseline = later[changed[0]], earlier[changed[0]]
    over = [f"{page} {n}" for page, n in later.items() if n > 10]
    bound = "each <= 10" if not over else f"not each <= 10: {', '.join(over)}"
    yield Figure(
        "page-queries",
        "SQL queries of the game page, JSON view, lobby and archive step "
        f"page after {w.turn} turns, against turn 1 ({bound})",
        measured=measured,
        baseline=baseline,
        target="== 1",
        unit="queries",
        detail={
            "by_page": counts,
            "changed": changed,
            "at_most_10": not over,
            "viewer": "a seated player, signed in",
        },
    )


@figures("archive-depth")
def archive_depth(options: Options) -> Iterator[Figure]:
    """The archive's step page of a finished game at its last phase, server time.
    Baseline: the same page of the same game at its first phase, requested in turn by
    the same anonymous client: the only difference is how deep into the game the step
    is, so the ratio says whether a step page's cost grows with the history before it."""
    w = world(options)
    repeat = options.size(40, 8)
    last = w.finished.snapshots.count() - 1
    with bench_site():
        client = client_of(None)
        first_ms, last_ms = alternating(
            [(client, step_url(w.finished, 0)), (client, step_url(w.finished, last))], repeat
        )
    yield Figure(
        "archive-depth",
        "archive step page at a finished game's last phase, server time",
        measured=median(last_ms),
        baseline=median(first_ms),
        target="<= 1.5",
        unit="ms",
        spread=spread(last_ms),
        detail={
            "phases": last + 1,
            "turns": w.finished.turn,
            "first_phase_spread": spread(first_ms),
        },
    )


@figures("web-memory")
def web_memory(options: Options) -> Iterator[Figure]:
    """A separate process serves the pages (`bench.web_memory`), so that only its own
    memory counts: its resident set after 1,000 page views. Baseline: the same process's
    resident set after its first 10 views of the same pages (by then it has imported
    and rendered what every view needs), so what it holds more is what it keeps per
    view: one process, one run, nothing else counted."""
    w = world(options)
    views = options.size(1000, 50)
    pages = [
        *urls(w.running).values(),
        step_url(w.finished, step_at(w.finished, w.turn)),
        reverse("archive"),
        reverse("live") + "?lobby=1",
    ]
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "DEBUG": "false",
        "DJANGO_SETTINGS_MODULE": os.environ.get(
            "DJANGO_SETTINGS_MODULE", "lowenherz_site.test_settings"
        ),
        "BENCH_DATABASE": str(connection.settings_dict["NAME"]),
        "BENCH_USER": str(w.viewer.pk),
        "BENCH_URLS": " ".join(pages),
        "BENCH_VIEWS": f"10,{views}",
    }
    done = subprocess.run(
        [sys.executable, "-m", "bench.web_memory"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"bench.web_memory failed: {done.stderr[-2000:]}")
    rss: dict[str, int] = json.loads(done.stdout.strip().splitlines()[-1])
    yield Figure(
        "web-memory",
        f"one web process's resident memory after {views:,} page views",
        measured=rss[str(views)] / 1024,
        baseline=rss["10"] / 1024,
        target="<= 1.2",
        unit="MiB",
        detail={"pages": pages, "rss_kib": rss},
    )


@figures("lobby-scale")
def lobby_scale(options: Options) -> Iterator[Figure]:
    """The lobby of a person seated in `large` running games against a person seated in
    `small` games of the same kind: the same page, in the same database, measured in
    alternation (so that a busier moment of the machine falls on both). `small` is a
    page of them (MY_GAMES_PAGE), as in open-games-scale: both lobbies draw as many
    rows, so the ratio is what the number of games costs, not what drawing more rows
    does. The baseline is fair: the same page, code, database and moment; only the
    number of the viewer's games differs. A person seated in `FEW` games is measured
    beside them (the detail), the baseline of earlier runs."""
    global _world
    small, large = MY_GAMES_PAGE, options.size(1000, 100)
    repeat = options.size(30, 6)
    empty_tables()
    _world = None
    found: dict[int, dict[str, Any]] = {}
    try:
        with bench_site():
            other = person("lars")
            clients: dict[int, Client] = {}
            for size, name in ((FEW, "lea"), (small, "lena"), (large, "lukas")):
                viewer = person(name)
                template = start_game(viewer, other, f"{name.title()}'s game 0")
                clone_running(template, size - 1, first=1)
                clients[size] = client_of(viewer)
            lobby, live = reverse("lobby"), reverse("live") + "?lobby=1"
            sizes = list(clients)
            measured = alternating([(clients[n], lobby) for n in sizes], repeat)
            polled = alternating([(clients[n], live) for n in sizes], repeat)
            times, polls = (
                dict(zip(sizes, measured, strict=True)),
                dict(zip(sizes, polled, strict=True)),
            )
            for size, client in clients.items():
                found[size] = lobby_seen(client, times[size], polls[size], b'id="my-game-')
    finally:
        empty_tables()
    yield lobby_figure(
        "lobby-scale",
        f"lobby of a person seated in {large:,} running games, server time",
        found[small],
        found[large],
        MY_GAMES_PAGE,
        {
            "baseline": f"a person seated in {small} games of the same kind (a page of "
            "them), in the same database, requests alternated with the measured person's",
            f"ratio to {FEW} games": round(found[large]["ms"] / found[FEW]["ms"], 3),
            **{f"{size} games": rounded(m) for size, m in found.items()},
        },
    )


def lobby_seen(
    client: Client, times: list[float], polls: list[float], row: bytes
) -> dict[str, Any]:
    """What a lobby figure reports of one size: the page's and the live poll's times
    (medians of `times` and `polls`), their queries, the page's bytes and its rows."""
    lobby, live = reverse("lobby"), reverse("live") + "?lobby=1"
    response = client.get(lobby)
    return {
        "ms": median(times),
        "spread": spread(times),
        "queries": queries(client, lobby),
        "html_bytes": len(response.content),
        "games_shown": response.content.count(row),
        "live_ms": median(polls),
        "live_queries": queries(client, live),
    }


def lobby_figure(
    figure_id: str,
    what: str,
    small: dict[str, Any],
    large: dict[str, Any],
    page_size: int,
    detail: dict[str, Any],
) -> Figure:
    """A lobby figure: the large lobby's time against the small one's (`lobby_seen`)."""
    return Figure(
        figure_id,
        what,
        measured=large["ms"],
        baseline=small["ms"],
        target="<= 1.5",
        unit="ms",
        spread=large["spread"],
        detail={"page_size": page_size, **detail},
    )


def rounded(measures: dict[str, Any]) -> dict[str, Any]:
    return {k: round(v, 3) if isinstance(v, float) else v for k, v in measures.items()}


def clone_open(template: Game, count: int, first: int) -> None:
    """`count` copies of a game gathering players (its row and its creator's seat)."""
    skip = {"id", "invite_token", "mail_thread", "name", "created_at"}
    fields = {
        f.attname: getattr(template, f.attname)
        for f in Game._meta.concrete_fields
        if f.attname not in skip
    }
    games = Game.objects.bulk_create(Game(**fields, name=f"Open {first + i}") for i in range(count))
    seats = list(template.seats.all())
    Seat.objects.bulk_create(
        Seat(game_id=g.pk, colour=s.colour, position=s.position, user_id=s.user_id)
        for g in games
        for s in seats
    )
    analyze()


@figures("open-games-scale")
def open_games_scale(options: Options) -> Iterator[Figure]:
    """The lobby when `large` games gather players against the same lobby when `small`
    do (a page of them: both show as many rows). The open games are everyone's, so the
    two cannot stand in one database at once: the small lobby is measured before the
    others are made and again once they are gone, and its figure is taken over both,
    so that a machine getting busier or idler during the run falls on both sides (an
    operator's question: does one busy evening of new games slow every visit to the
    lobby?)."""
    global _world
    small, large = OPEN_GAMES_PAGE, options.size(1000, 100)
    repeat = options.size(30, 6)
    empty_tables()
    _world = None
    found: dict[int, dict[str, Any]] = {}
    try:
        with bench_site():
            creator, viewer = person("olga"), person("otto")
            template = services.create_game(
                creator,
                name="Open 0",
                player_count=4,
                setup="variable",
                decisions="sealed",
                money="hidden",
                deadline_hours=48,
                invite_only=False,
                colour="red",
                computer_colours=[],
                computer_level=COMPUTER_LEVEL,
            )
            client = client_of(viewer)
            lobby, live = reverse("lobby"), reverse("live") + "?lobby=1"
            clone_open(template, small - 1, first=1)
            kept = max(Game.objects.values_list("pk", flat=True))
            row = b'id="open-game-'
            small_times: list[float] = []
            small_polls: list[float] = []
            for size in (small, large, small):
                if size == large:
                    clone_open(template, large - small, first=small)
                else:  # the others gone (the first time: not made yet)
                    Game.objects.filter(pk__gt=kept).delete()
                    analyze()
                times, polls = alternating([(client, lobby), (client, live)], repeat)
                if size == large:
                    found[large] = lobby_seen(client, times, polls, row)
                else:
                    small_times += times
                    small_polls += polls
            found[small] = lobby_seen(client, small_times, small_polls, row)
    finally:
        empty_tables()
    yield lobby_figure(
        "open-games-scale",
        f"lobby while {large:,} games gather players, server time",
        found[small],
        found[large],
        OPEN_GAMES_PAGE,
        {
            "baseline": f"the same lobby of the same person while {small} games gather "
            "players, measured before the others were made and after they were "
            "deleted",
            **{f"{size} open games": rounded(m) for size, m in found.items()},
        },
    )
