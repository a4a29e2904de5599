"""`open-tabs`: how many open pages one machine like this carries at the README's poll
interval (LIVE_POLL_SECONDS) with the p95 of their polls under 200 ms.

The site as a server runs it: gunicorn as the Procfile starts it (sync workers, the
rule of gunicorn's documentation for the count: 2 per core and 1), with the
production settings of the README (`dev.PRODUCTION_ENV`, the bench's own secrets,
database and Redis), on 127.0.0.1 only. Nothing of those settings is changed for
plain http on loopback: the load generator speaks for the TLS proxy in front of the
README's deployment (Host, X-Forwarded-Proto, X-Forwarded-For), as that proxy would.

The world: `PEOPLE` players signed in (a session each, made as a login makes it), each
seated in `GAMES_EACH` running 4-player games (copies of one game started through the
services). A tab is a person's page: a game page of theirs (half the tabs), the lobby
(a quarter) or another page, which polls for the navigation's count alone (a quarter),
each polling as games/static/games/live.js does (bench.loadgen).

The load generator (bench.loadgen) is a separate process, open loop on a schedule made
in advance, with the standard library only; it shares the machine's cores with the
site, so its CPU time is reported for each step. The tabs are stepped up (`STEPS`),
each step lasting `STEP_SECONDS`, until a step's p95 reaches 200 ms or a request
fails; the figure is the largest step that held. No baseline: the issue's target is a
number of tabs ("at least 5,000").
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from importlib import import_module
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import User
from django.db import connection
from django.urls import reverse
from django.utils import timezone

from bench.core import ROOT, Figure, Options, figures
from bench.db import empty_tables
from bench.web import analyze, bench_site, copy_snapshot, person, start_game
from games.models import Game, Profile, Seat

LIMIT_MS = 200.0
TARGET = 5_000
STEPS = (1_000, 2_500, 5_000, 7_500, 10_000)
STEP_SECONDS = 20.0  # more than one interval: every tab polls once or twice per step
PEOPLE = 2_000
GAMES_EACH = 2  # running games per person (two persons per game, and two computers)
WARMUP = 100  # tabs polling every second for a few seconds first, not counted
HOST = "games.example.org"  # dev.PRODUCTION_ENV's ALLOWED_HOSTS


@figures("open-tabs")
def open_tabs(options: Options) -> Iterator[Figure]:
    people = options.size(PEOPLE, 20)
    steps = list(STEPS) if not options.quick else [10, 40]
    interval = float(settings.LIVE_POLL_SECONDS) if not options.quick else 1.0
    seconds = STEP_SECONDS if not options.quick else 2.0
    workers = 2 * (os.cpu_count() or 1) + 1 if not options.quick else 1
    empty_tables()
    try:
        with bench_site():
            cookies, games_of = signed_in_world(people)
        tabs = tab_plan(cookies, games_of, max(steps))
        with gunicorn(workers) as (port, pid):
            found = load(port, pid, tabs, steps, interval, seconds)
    finally:
        empty_tables()
    held = [s["tabs"] for s in found if held_up(s)]
    yield Figure(
        "open-tabs",
        f"open pages polling every {interval:g} s on gunicorn ({workers} sync workers), "
        f"production settings, p95 < {LIMIT_MS:g} ms",
        measured=max(held, default=0),
        baseline=None,
        target=f">= {TARGET if not options.quick else 10}",
        unit="tabs",
        detail={
            "steps": found,
            "step_seconds": seconds,
            "people": people,
            "games_each": GAMES_EACH,
            "mix": "1/2 game pages (visible=1), 1/4 lobby (?lobby=1), 1/4 other pages",
            "cores": os.cpu_count(),
            "limit_ms": LIMIT_MS,
        },
    )


def held_up(step: dict[str, Any]) -> bool:
    return not step["failed"] and step["p95_ms"] is not None and step["p95_ms"] < LIMIT_MS


# --- the world --------------------------------------------------------------------------------


def signed_in_world(people: int) -> tuple[list[str], list[list[int]]]:
    """`people` persons signed in, each seated in GAMES_EACH running games: their session
    cookies, and the games of each."""
    first, second = person("rosa"), person("otto")
    template = start_game(first, second, "Open tabs 0")
    persons = [first, second, *more_people(people - 2)]
    games = copy_games(template, persons)
    games_of: list[list[int]] = [[] for _ in persons]
    for index, game_id in enumerate(games):
        for p in seated(index, len(persons)):
            games_of[p].append(game_id)
    analyze()
    return [session_cookie(p) for p in persons], games_of


def more_people(count: int) -> list[User]:
    users = User.objects.bulk_create(
        User(username=f"player{i}", email=f"player{i}@example.org") for i in range(count)
    )
    Profile.objects.bulk_create(Profile(user=u, display_name=u.username) for u in users)
    return users


def seated(index: int, people: int) -> tuple[int, int]:
    """The two persons of the index-th game: each person sits in GAMES_EACH games."""
    return index % people, (index + 1 + index // people) % people


def copy_games(template: Game, persons: list[User]) -> list[int]:
    """GAMES_EACH copies per two persons of a started game (row with its state, seats,
    latest snapshot), in bulk, with two persons of `persons` in each."""
    count = len(persons) * GAMES_EACH // 2
    seats = list(template.seats.order_by("position"))
    snapshot = template.snapshots.order_by("-phase_number").first()
    assert snapshot is not None
    skip = {"id", "invite_token", "mail_thread", "name", "deadline", "created_at"}
    fields = {
        f.attname: getattr(template, f.attname)
        for f in Game._meta.concrete_fields
        if f.attname not in skip
    }
    now = timezone.now()
    games = Game.objects.bulk_create(
        Game(**fields, name=f"Open tabs {i}", deadline=now + timedelta(hours=1 + i % 47))
        for i in range(count)
    )
    humans = [s for s in seats if not s.is_computer]
    rows = []
    for index, game in enumerate(games):
        players = dict(zip((s.pk for s in humans), seated(index, len(persons)), strict=True))
        rows += [
            Seat(
                game_id=game.pk,
                colour=s.colour,
                position=s.position,
                user_id=persons[players[s.pk]].pk if s.pk in players else None,
                is_computer=s.is_computer,
            )
            for s in seats
        ]
    Seat.objects.bulk_create(rows)
    copy_snapshot(snapshot, games)
    return [g.pk for g in games]


def session_cookie(user: User) -> str:
    """A session as a login makes it (django.contrib.auth.login), in the site's store."""
    store = import_module(settings.SESSION_ENGINE).SessionStore()
    store[SESSION_KEY] = str(user.pk)
    store[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    store[HASH_SESSION_KEY] = user.get_session_auth_hash()
    store.create()
    return f"{settings.SESSION_COOKIE_NAME}={store.session_key}"


def tab_plan(cookies: list[str], games_of: list[list[int]], count: int) -> list[list[str]]:
    """`count` tabs: [path, cookie], persons in turn, pages by the mix (`open_tabs`)."""
    rng = random.Random(20_261_127)
    tabs = []
    for t in range(count):
        p = t % len(cookies)
        kind = rng.random()
        if kind < 0.5:
            path = reverse("game_live", args=[rng.choice(games_of[p])]) + "?visible=1"
        elif kind < 0.75:
            path = reverse("live") + "?lobby=1&visible=1"
        else:
            path = reverse("live") + "?visible=1"
        tabs.append([path, cookies[p]])
    return tabs


# --- the server and the load --------------------------------------------------------------------


def server_env() -> dict[str, str]:
    """The README's production environment (dev.PRODUCTION_ENV), the bench's secrets,
    its database (the one this run made) and its Redis."""
    from dev import PRODUCTION_ENV

    url = urlsplit(os.environ["DATABASE_URL"])
    database = urlunsplit(url._replace(path="/" + str(connection.settings_dict["NAME"])))
    env = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "CACHE_URL"}}
    return {
        **env,
        **PRODUCTION_ENV,
        "DJANGO_SETTINGS_MODULE": "lowenherz_site.settings",
        "DATABASE_URL": database,
        "SECRET_KEY": settings.SECRET_KEY,  # the sessions were signed with it
        "INBOUND_SECRET": settings.INBOUND_SECRET,
        "PYTHONPATH": str(ROOT),
    }


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def gunicorn(workers: int) -> Iterator[tuple[int, int]]:
    """gunicorn as the Procfile starts it, on loopback; its port and process id."""
    port = free_port()
    command = [sys.executable, "-m", "gunicorn", "lowenherz_site.wsgi:application"]
    command += ["--bind", f"127.0.0.1:{port}", "--workers", str(workers), "--timeout", "30"]
    # Its log to a file, not a pipe: a full pipe would stop the server.
    with tempfile.TemporaryFile() as log:
        server = subprocess.Popen(command, cwd=ROOT, env=server_env(), stderr=log)
        try:
            wait_healthy(port, server, log)
            yield port, server.pid
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def wait_healthy(port: int, server: subprocess.Popen[bytes], log: IO[bytes]) -> None:
    health = urllib.request.Request(f"http://127.0.0.1:{port}/healthz", headers={"Host": HOST})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            log.seek(0)
            error = log.read().decode(errors="replace")
            raise RuntimeError(f"gunicorn stopped: {error[-2000:]}")
        try:
            with urllib.request.urlopen(health, timeout=5) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("gunicorn did not answer /healthz within 60 s")


def load(
    port: int, pid: int, tabs: list[list[str]], steps: list[int], interval: float, seconds: float
) -> list[dict[str, Any]]:
    """bench.loadgen's steps, run against the server at `port` (its master process `pid`)."""
    plan = {
        "port": port,
        "host": HOST,
        "server_pid": pid,
        "warmup": min(WARMUP, len(tabs)),
        "interval": interval,
        "seconds": seconds,
        "steps": steps,
        "limit_ms": LIMIT_MS,
        "timeout": 10.0,
        "tabs": tabs,
    }
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "plan.json"
        path.write_text(json.dumps(plan))
        done = subprocess.run(
            [sys.executable, "-m", "bench.loadgen", str(path)],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=len(steps) * (seconds + 30) + 60,
            check=False,
        )
    if done.returncode != 0:
        raise RuntimeError(f"bench.loadgen failed: {done.stderr[-2000:]}")
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return [line for line in lines if "tabs" in line]
