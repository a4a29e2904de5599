"""The Celery worker as players feel it: `resolve-latency`, `resolve-latency-hard`,
`notify-cost` and `throughput`.

Real `celery worker` subprocesses on the bench's database and Redis, laid out as the
site deploys them (`lowenherz_site.celery.WORKERS`: which processes take which queues),
each also importing `bench.tasks` for the no-op the baselines are measured with.

- resolve-latency: games of three people, each phase's moves submitted through the
  services in the bench process once the phase is told (its emails queued, as a person
  answers an email); from the commit of the last submission (its on_commit, bench clock)
  to the worker's insert of the next phase's snapshot (`Snapshot.created_at`, same clock).
  After each resolution, a no-op's round trip to the resolve queue (queued → the worker's
  clock): the baseline, taken in the same conditions. Measured twice: on idle workers,
  then while other games keep them busy (`BACKGROUND_GAMES` computer games, a person told
  every phase by email in each: emails and computers' moves); the figure is the busy
  pair. The detail also has a no-op's round trip on idle workers before anything ran.
- resolve-latency-hard (issue 26, item 5): the same, the background `HARD_GAMES` games
  of "hard" computers (the search player, `COMPUTER_SEARCH_SECONDS` a decision) on the
  computers' queue and its worker of their own; the same target. Their tasks and phases
  meanwhile are in its detail (the load was real).
- notify-cost: in process, no worker: for each phase of a game of three people,
  `services.resolve` and then `notify.phase_changed` of the phase it began, CPU time
  (`time.process_time`) and SQL queries of each. Between phases the queued emails are
  marked sent, as the sending worker does while people read them and move (no worker
  runs here): a phase's asks then supersede none (that path, when the sender is behind,
  costs two queries more: tests/site/test_notify_queries.py).
- throughput: games played by computers only, all at once, on the deployed workers;
  phases resolved per second over a window (a task plays a stretch of a game's phases:
  `services.play_computers`). The games are copies of one played in process
  past its placement (`PAST_PLACEMENT`): the computer players' placement is the engine's
  cost (figure ai-share), not the worker's. Baseline: no-op tasks per second through the
  processes that play them, the no-ops all queued before the workers are let go and the
  clock started (issue 25: the clock no longer includes the bench's own queuing).
  throughput-people and ask-latency (bench/worker_busy.py) reuse these workers and games.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import quote

import redis
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.utils import timezone
from kombu import Queue

from bench.core import COMPUTER_LEVEL, ROOT, Figure, Options, figures, median, percentile, spread
from bench.db import empty_tables
from bench.tasks import stamp
from bench.web import copy_game, no_task_queue, person, play_until
from engine.ai import RandomPlayer
from engine.errors import IllegalMove
from engine.game import default_move, is_simultaneous
from games import services
from games.mail import notify
from games.models import Game, OutgoingEmail, Seat, Snapshot
from lowenherz_site.celery import app as celery_app

# --- workers -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Spec:
    """One `celery worker` process: its name, the queues it takes (None: all), its pool."""

    name: str
    queues: tuple[str, ...] | None
    concurrency: int


def deployed(processes: int | None = None) -> list[Spec]:
    """The site's worker layout (`lowenherz_site.celery.WORKERS`); `processes`: the pool
    processes in all (the general worker gets what the dedicated ones leave)."""
    from lowenherz_site import celery as site_celery

    layout = getattr(site_celery, "WORKERS", None)
    if layout is None or os.environ.get("BENCH_WORKERS") == "single":
        # one worker taking every queue (the layout before issue 11; BENCH_WORKERS=single)
        return [Spec("worker", None, processes or 2)]
    specs = [Spec(name, tuple(queues), concurrency) for name, queues, concurrency in layout]
    if processes is not None:
        fixed = sum(s.concurrency for s in specs if s.concurrency)
        specs = [
            s if s.concurrency else Spec(s.name, s.queues, max(1, processes - fixed)) for s in specs
        ]
    return [s if s.concurrency else Spec(s.name, s.queues, 2) for s in specs]


def database_url() -> str:
    db = connection.settings_dict
    user = quote(db.get("USER") or "", safe="")
    password = quote(db.get("PASSWORD") or "", safe="")
    login = f"{user}:{password}@" if password else f"{user}@" if user else ""
    port = f":{db['PORT']}" if db.get("PORT") else ""
    return f"postgres://{login}{db.get('HOST') or ''}{port}/{quote(db['NAME'])}"


REDIRECTS = frozenset(
    {
        "APP",
        "BROKER_URL",
        "RESULT_BACKEND",
        "LOADER",
        "CONFIG_MODULE",
        "SKIP_CHECKS",
        "EMAIL_URL",
        "EMAIL_HOST",
        "EMAIL_BACKEND",
    }
)


def worker_env(var_dir: Path) -> dict[str, str]:
    kept = {
        k: v for k, v in os.environ.items() if k not in REDIRECTS and not k.startswith("CELERY_")
    }
    return {
        **kept,
        "DATABASE_URL": database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "lowenherz_site.settings",
        "LOWENHERZ_VAR": str(var_dir),
        "DEBUG": "false",
    }


def all_queues() -> list[str]:
    return [q.name for q in celery_app.conf.task_queues or ()] or ["celery"]


def purge(queues: list[str]) -> None:
    with celery_app.connection_for_write() as conn:
        for name in queues:
            Queue(name).bind(conn.default_channel).purge()


@contextmanager
def workers(specs: list[Spec], env: Mapping[str, str] | None = None) -> Iterator[list[Path]]:
    """The worker processes, each ready to take tasks, stopped (warm) at the end; yields
    their logs (level INFO: what each task took). `env`: variables of the figure's own
    (its SMTP server's EMAIL_URL), over what `worker_env` sets."""
    purge(all_queues())
    tag = uuid.uuid4().hex[:6]
    with tempfile.TemporaryDirectory(prefix="bench-worker-") as tmp:
        started, logs = [], []
        env = {**worker_env(Path(tmp)), **(env or {})}
        try:
            for spec in specs:
                name = f"bench-{spec.name}-{tag}@{socket.gethostname()}"
                queues = ["-Q", ",".join(spec.queues)] if spec.queues else []
                log = Path(tmp) / f"{spec.name}.log"
                logs.append(log)
                with log.open("wb") as out:
                    process = subprocess.Popen(
                        [
                            sys.executable,
                            "-m",
                            "celery",
                            "-A",
                            "lowenherz_site",
                            "worker",
                            "--include",
                            "bench.tasks",
                            "--pool=prefork",
                            "-c",
                            str(spec.concurrency),
                            "-O",
                            "fair",
                            "--without-mingle",
                            "--without-gossip",
                            "--without-heartbeat",
                            "-n",
                            name,
                            "--loglevel=info",
                            *queues,
                        ],
                        cwd=ROOT,
                        env=env,
                        stdin=subprocess.DEVNULL,
                        stdout=out,
                        stderr=subprocess.STDOUT,
                    )
                started.append(process)
                wait_ready(process, name, log)
            yield logs
        finally:
            for process in started:
                if process.poll() is None:
                    process.send_signal(signal.SIGTERM)
            for process in started:
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            purge(all_queues())


def wait_ready(process: subprocess.Popen, name: str, log: Path, timeout: float = 60) -> None:
    """Until the worker answers a ping."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"worker {name} ended:\n{log.read_text(errors='replace')}")
        if celery_app.control.ping(destination=[name], timeout=0.5):
            return
    raise RuntimeError(f"worker {name} did not start:\n{log.read_text(errors='replace')}")


def queue_of(task_name: str) -> str:
    """The queue a task is routed to (as `apply_async` would)."""
    options = celery_app.amqp.router.route({}, task_name, (), {})
    queue = options.get("queue")
    return getattr(queue, "name", queue) or celery_app.conf.task_default_queue


def client() -> redis.Redis:
    return redis.Redis.from_url(settings.REDIS_URL)


def noop_round_trips(count: int, queue: str, warm: int = 2) -> list[float]:
    """Seconds from queuing a no-op to its run on the worker (worker's clock), one at a
    time, each after the last one ran (the first `warm` left out: they open connections)."""
    r, key, found = client(), f"bench:stamp:{uuid.uuid4().hex}", []
    for _ in range(count + warm):
        sent = time.time()
        stamp.apply_async((key,), queue=queue)
        _, ran = r.blpop([key], timeout=30) or (None, None)
        if ran is None:
            raise RuntimeError("a no-op task did not run in 30 s")
        found.append(float(ran) - sent)
    r.delete(key)
    return found[warm:]


def noop_rate(count: int, queues: list[str]) -> float:
    """No-op tasks per second through the workers: `count` queued spread over `queues`
    while no worker takes from them, then the workers let go; the clock runs from the
    first no-op's run to the last's (the workers' clock). So it times the workers alone,
    not the bench queuing them (issue 25)."""
    r, key = client(), f"bench:rate:{uuid.uuid4().hex}"
    held = sorted(set(queues))
    with held_back(held), celery_app.producer_or_acquire() as producer:
        for i in range(count):
            stamp.apply_async((key,), queue=queues[i % len(queues)], producer=producer)
    deadline = time.monotonic() + 120
    while r.llen(key) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    stamps = sorted(float(s) for s in r.lrange(key, 0, -1))
    r.delete(key)
    if len(stamps) < count:
        raise RuntimeError(f"{len(stamps)} of {count} no-op tasks ran in 120 s")
    return (count - 1) / (stamps[-1] - stamps[0])


@contextmanager
def held_back(queues: list[str]) -> Iterator[None]:
    """No worker takes from `queues` meanwhile (Celery's remote control, to every worker:
    each answers, whether it took from the queue or not); then they all take again."""
    control = celery_app.control
    for name in queues:
        control.cancel_consumer(name, reply=True, timeout=1)
    try:
        yield
    finally:
        for name in queues:
            control.add_consumer(name, reply=True, timeout=1)


def processes_of(specs: list[Spec], queue: str) -> list[str]:
    """`queue` once for each pool process of the workers that take it: the no-ops of a
    rate through those processes (each worker takes only from its own queues)."""
    return [
        queue for s in specs if s.queues is None or queue in s.queues for _ in range(s.concurrency)
    ]


# --- games --------------------------------------------------------------------------------


def people_game(name: str) -> tuple[Game, dict[str, int]]:
    """Three people (red, ochre, lilac), sealed decisions; started."""
    users = [person(f"{name}-{i}") for i in range(3)]
    game = services.create_game(
        users[0],
        name=name,
        player_count=3,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=[],
        computer_level=COMPUTER_LEVEL,
    )
    services.join_game(game.pk, users[1], "ochre")
    services.join_game(game.pk, users[2], "lilac")
    seats = dict(Seat.objects.filter(game=game).values_list("colour", "pk"))
    return Game.objects.get(pk=game.pk), seats


def computer_game(
    creator: User, name: str, standin: bool = False, level: str = COMPUTER_LEVEL
) -> Game:
    """Three computers of `level` (the creator's seat handed to one: for good, or as a
    stand-in, so that the creator is still told every phase), started; nothing queued
    yet."""
    game = services.create_game(
        creator,
        name=name,
        player_count=3,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=["ochre", "lilac"],
        computer_level=level,
    )
    seat = Seat.objects.filter(game=game, user=creator)
    seat.update(standin=True) if standin else seat.update(user=None, is_computer=True)
    return game


def submit_phase(game: Game, seats: dict[str, int]) -> float | None:
    """Every awaited seat's move for the phase, through the services; the bench clock at
    the commit of the submission that made the phase ready (None: none did)."""
    state = game.engine_state
    movers = list(state.waiting if is_simultaneous(state) else state.waiting[:1])
    ready_at = None
    for colour in movers:
        committed: list[float] = []
        move = RandomPlayer(f"{game.pk}/{game.phase_number}/{colour}").choose(state, colour)
        try:
            with transaction.atomic():
                transaction.on_commit(partial(_stamp, committed))
                outcome = services.submit(game.pk, seats[colour], move, game.phase_number)
        except IllegalMove:  # an alliance another mover ended changed the state
            state = Game.objects.get(pk=game.pk).engine_state
            with transaction.atomic():
                transaction.on_commit(partial(_stamp, committed))
                outcome = services.submit(
                    game.pk, seats[colour], default_move(state, colour), game.phase_number
                )
        if outcome.ready:
            ready_at = committed[0]
    return ready_at


def _stamp(into: list[float]) -> None:
    into.append(time.time())


def wait_for_snapshot(game_id: int, number: int, timeout: float = 30) -> float:
    """The worker's clock when it saved the snapshot of phase `number`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        saved = (
            Snapshot.objects.filter(game_id=game_id, phase_number=number)
            .values_list("created_at", flat=True)
            .first()
        )
        if saved is not None:
            return saved.timestamp()
        time.sleep(0.004)
    raise RuntimeError(f"game {game_id}: phase {number} not resolved in {timeout} s")


# --- the figures -------------------------------------------------------------------------


def need_redis(figure: str) -> bool:
    """The worker figures run real workers on Redis; without REDIS_URL they are left out."""
    if not settings.REDIS_URL:
        print(f"bench: {figure} needs REDIS_URL (a real broker): left out", file=sys.stderr)
    return bool(settings.REDIS_URL)


@figures("resolve-latency")
def resolve_latency(options: Options) -> Iterator[Figure]:
    """Twice, each resolution followed by a no-op's round trip to the resolve queue (the
    baseline, taken in the same conditions): first with the workers idle, then with the
    background games keeping them busy. The figure is the busy pair; the idle pair is in
    its detail, with the no-op's round trip on idle workers before anything ran. The
    baseline is fair: the no-op goes through the same queue, broker and workers, right
    after each resolution and behind the same background, so the ratio is what
    resolving a phase adds to a task's round trip, not the queue or the load."""
    if not need_redis("resolve-latency"):
        return
    yield latency_figure(
        options,
        "resolve-latency",
        "last submission committed → resolution saved, p50, workers busy "
        "with other games (baseline: a no-op's round trip to the resolve queue, between the "
        "resolutions)",
        options.size(BACKGROUND_GAMES, 2),
        COMPUTER_LEVEL,
    )


@figures("resolve-latency-hard")
def resolve_latency_hard(options: Options) -> Iterator[Figure]:
    """resolve-latency's measurement, its background games at level "hard" (issue 26,
    item 5): `HARD_GAMES` games whose computers search (`COMPUTER_SEARCH_SECONDS` a
    decision) on the computers' queue, each with a person told every phase. The target
    is resolve-latency's: a phase people finished is resolved as soon as when the
    computers elsewhere play in a millisecond. The ratio alone would hide a slowdown that
    delays the no-op as much as the resolution (both on the resolve queue, both behind
    the same CPU); the detail has the idle pair, the computers' own tasks and phases
    meanwhile, so the absolute milliseconds can be read beside resolve-latency's."""
    if not need_redis("resolve-latency-hard"):
        return
    games = options.size(HARD_GAMES, 2)
    yield latency_figure(
        options,
        "resolve-latency-hard",
        f"resolve-latency while {games} games of hard computers (search, "
        f"{settings.COMPUTER_SEARCH_SECONDS:g} s a decision) think on the computers' queue",
        games,
        "hard",
    )


def latency_figure(options: Options, figure_id: str, what: str, games: int, level: str) -> Figure:
    """Resolutions timed on idle workers, then while `games` computer games of `level`
    play (see resolve_latency)."""
    count = options.size(50, 5)
    empty_tables()
    resolve_queue = queue_of("games.tasks.resolve_phase")
    specs = deployed()
    with no_task_queue():
        background = busy_games(games, level)
    with workers(specs) as logs:
        first = noop_round_trips(options.size(40, 8), resolve_queue)
        idle = Latencies(resolve_queue).measure(count)
        announce(background)
        started, phases = time.monotonic(), _phases(background)
        busy = Latencies(resolve_queue).measure(count)
        phases, seconds = _phases(background) - phases, time.monotonic() - started
        backlog = queue_lengths()
        time.sleep(1.0)  # the last phase's emails
        emails = _email_times(busy.phases)
        ran = task_seconds(logs, "games.tasks.resolve_phase")
        computers = task_seconds(logs, "games.tasks.play_computer")
    return Figure(
        figure_id,
        what,
        median(busy.latencies) * 1000,
        median(busy.noops) * 1000,
        "<= 5",
        unit="ms",
        spread=spread(busy.latencies),
        detail={
            "samples": len(busy.latencies),
            "p90_ms": round(percentile(busy.latencies, 90) * 1000, 1),
            "max_ms": round(max(busy.latencies) * 1000, 1),
            "noop_p90_ms": round(percentile(busy.noops, 90) * 1000, 2),
            "idle": idle.summary(),
            "noop_on_idle_workers_p50_ms": round(median(first) * 1000, 2),
            "emails_queued_p50_ms": emails["queued"],
            "emails_sent_p50_ms": emails["sent"],
            "background_games": len(background),
            "computer_level": level,
            "background_phases_per_s": round(phases / seconds, 2),
            "play_computer_tasks": len(computers),
            "play_computer_task_p50_ms": round(median(computers) * 1000, 1) if computers else None,
            "queued_at_end": backlog,
            "resolve_task_p50_ms": round(median(ran) * 1000, 1) if ran else None,
            "workers": described(specs),
            "resolve_queue": resolve_queue,
        },
    )


@dataclass
class Latencies:
    """Games of three people played phase by phase against the real workers: each phase
    from the commit of its last submission to the worker's snapshot of the next, then a
    no-op's round trip to the same queue."""

    queue: str
    latencies: list[float] = field(default_factory=list)
    noops: list[float] = field(default_factory=list)
    phases: list[tuple[int, int, float]] = field(default_factory=list)  # game, begun, commit

    def measure(self, count: int) -> Latencies:
        game, seats = self._new_game()
        while len(self.latencies) < count:
            game = wait_until_told(game.pk)
            if game.status != Game.Status.RUNNING:
                game, seats = self._new_game()
                continue
            number = game.phase_number
            committed = submit_phase(game, seats)
            if committed is None:
                continue
            saved = wait_for_snapshot(game.pk, number + 1)
            self.latencies.append(saved - committed)
            self.phases.append((game.pk, number + 1, committed))
            self.noops.extend(noop_round_trips(1, self.queue, warm=0))
        return self

    def _new_game(self) -> tuple[Game, dict[str, int]]:
        with no_task_queue():
            game, seats = people_game(f"latency-{uuid.uuid4().hex[:8]}")
        with transaction.atomic():
            services.announce(services.keep_due(Game.objects.select_for_update().get(pk=game.pk)))
        return game, seats

    def summary(self) -> dict[str, float]:
        return {
            "p50_ms": round(median(self.latencies) * 1000, 2),
            "noop_p50_ms": round(median(self.noops) * 1000, 2),
            "ratio": round(median(self.latencies) / median(self.noops), 2),
        }


BACKGROUND_GAMES = 8  # computer games with a person told every phase: emails, computers
HARD_GAMES = 20  # issue 26: "while 20 hard computers think"


def busy_games(count: int, level: str = COMPUTER_LEVEL) -> list[int]:
    """Games that keep the workers busy meanwhile: computers of `level` play every seat,
    one of them standing in for a person who is told every phase by email."""
    return [
        computer_game(person(f"bystander{i}"), f"background {i}", standin=True, level=level).pk
        for i in range(count)
    ]


def wait_until_told(game_id: int, timeout: float = 60) -> Game:
    """The game once its phase's emails are queued: a person answers an email."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        game = Game.objects.get(pk=game_id)
        if game.notified_phase >= game.phase_number:
            return game
        time.sleep(0.01)
    raise RuntimeError(f"game {game_id}: phase not told in {timeout} s")


def task_seconds(logs: list[Path], task: str) -> list[float]:
    """How long each run of `task` took, as the workers logged it."""
    done = re.compile(rf"Task {re.escape(task)}\[\S+\] succeeded in ([0-9.e-]+)s")
    return [float(m) for log in logs for m in done.findall(log.read_text(errors="replace"))]


def queue_lengths() -> dict[str, int]:
    r = client()
    return {name: int(r.llen(name)) for name in all_queues()}


def _email_times(phases: list[tuple[int, int, float]]) -> dict[str, float | None]:
    """Commit → the next phase's "waits for you" emails queued (first) and sent (last)."""
    queued, sent = [], []
    for game_id, number, committed in phases:
        rows = list(
            OutgoingEmail.objects.filter(
                game_id=game_id, phase_number=number, kind="your_turn"
            ).values_list("created_at", "sent_at")
        )
        if rows:
            queued.append(min(r[0] for r in rows).timestamp() - committed)
        sent_at = [r[1] for r in rows if r[1] is not None]
        if rows and len(sent_at) == len(rows):
            sent.append(max(sent_at).timestamp() - committed)
    return {
        "queued": round(median(queued) * 1000, 1) if queued else None,
        "sent": round(median(sent) * 1000, 1) if sent else None,
    }


@figures("notify-cost")
def notify_cost(options: Options) -> Iterator[Figure]:
    count = options.size(120, 6)
    empty_tables()
    resolving: list[tuple[float, float, int]] = []  # cpu, wall, queries
    notifying: list[tuple[float, float, int, int]] = []  # ... and emails queued
    with no_task_queue():
        game, seats = people_game("notify")
        notify.phase_changed(game.pk, game.phase_number)
        sent_meanwhile()
        while len(notifying) < count:
            game = Game.objects.get(pk=game.pk)
            if game.status != Game.Status.RUNNING:
                game, seats = people_game(f"notify{len(notifying)}")
                notify.phase_changed(game.pk, game.phase_number)
                sent_meanwhile()
                continue
            number = game.phase_number
            if submit_phase(game, seats) is None:
                continue
            resolving.append(_measured(partial(services.resolve, game.pk, number))[:3])
            before = OutgoingEmail.objects.count()
            cpu, wall, queries = _measured(partial(notify.phase_changed, game.pk, number + 1))
            notifying.append((cpu, wall, queries, OutgoingEmail.objects.count() - before))
            sent_meanwhile()
    n_cpu, r_cpu = median([n[0] for n in notifying]), median([r[0] for r in resolving])
    yield Figure(
        "notify-cost",
        "notifying a phase change (3 people), CPU",
        n_cpu * 1000,
        r_cpu * 1000,
        "<= 1",
        unit="ms",
        spread=spread([n[0] for n in notifying]),
        detail={
            "phases": len(notifying),
            "notify_wall_ms": round(median([n[1] for n in notifying]) * 1000, 1),
            "notify_queries": median([n[2] for n in notifying]),
            "notify_queries_max": max(n[2] for n in notifying),
            "notify_emails_per_phase": median([n[3] for n in notifying]),
            "notify_cpu_ms_per_email": round(
                median([n[0] / n[3] for n in notifying if n[3]]) * 1000, 2
            ),
            "resolve_wall_ms": round(median([r[1] for r in resolving]) * 1000, 1),
            "resolve_queries": median([r[2] for r in resolving]),
            "resolve_queries_max": max(r[2] for r in resolving),
        },
    )


def sent_meanwhile() -> None:
    """The queued emails, sent: what the sending worker does before people move."""
    OutgoingEmail.objects.filter(status=OutgoingEmail.Status.QUEUED).update(
        status=OutgoingEmail.Status.SENT, sent_at=timezone.now()
    )


def _measured(function: Callable[[], object]) -> tuple[float, float, int]:
    """CPU and wall time of `function`, and its SQL queries: counted by an execute
    wrapper, not Django's debug cursor, which would format every query with its
    parameters (the emails' bodies too), a cost the worker does not pay."""
    queries = 0

    def count(execute: Callable[..., Any], *args: Any) -> Any:
        nonlocal queries
        queries += 1
        return execute(*args)

    with connection.execute_wrapper(count):
        cpu, wall = time.process_time(), time.perf_counter()
        function()
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return cpu, wall, queries


@figures("throughput")
def throughput(options: Options) -> Iterator[Figure]:
    """Phases per second of computer games, against the no-op tasks per second of the
    worker processes that play them (those taking `play_computer`'s queue), the no-ops
    queued before the clock starts (`noop_rate`). Fair: the same processes, broker and
    database in the same run; a phase is then measured against the least a task costs
    there, and neither side's clock includes the bench queuing its work."""
    if not need_redis("throughput"):
        return
    count = options.size(200, 10)
    window = options.size(15, 2)
    empty_tables()
    with no_task_queue():  # past the placement (the computer players' slowest phases)
        games = computer_games(count)
    specs = deployed()
    computers = queue_of("games.tasks.play_computer")
    with workers(specs) as logs:
        rate = noop_rate(options.size(2000, 300), processes_of(specs, computers))
        initial = _phases(games)
        announce(games)
        # Every game's computers are asked at once: the first phases end together, after
        # the whole first wave. The window opens once half the games are past it.
        warm = time.monotonic() + options.size(90, 8)
        while _phases(games) - initial < count // 2 and time.monotonic() < warm:
            time.sleep(0.2)
        start, first = time.perf_counter(), _phases(games)
        time.sleep(window)
        done, elapsed = _phases(games) - first, time.perf_counter() - start
        took = {task.rpartition(".")[2]: task_seconds(logs, task) for task in TASKS}
    finished = Game.objects.filter(pk__in=games, status=Game.Status.FINISHED).count()
    yield Figure(
        "throughput",
        f"{count} computer games at once: phases/s (baseline: no-op tasks/s through the "
        "processes that play them, queued before the clock starts)",
        done / elapsed,
        rate,
        ">= 0.3",
        unit="/s",
        detail={
            "games": count,
            "window_s": window,
            "phases": done,
            "finished": finished,
            "noop_per_s": round(rate, 1),
            "noop_queue": computers,
            "task_p50_ms": {name: round(median(t) * 1000, 1) for name, t in took.items() if t},
            "tasks_run": {name: len(t) for name, t in took.items()},
            "workers": described(specs),
        },
    )


def computer_games(count: int) -> list[int]:
    """`count` copies of one computers' game played in process past its placement."""
    template = computer_game(person(f"computers-{uuid.uuid4().hex[:6]}"), "template")
    play_until(template.pk, turn=PAST_PLACEMENT)
    template = Game.objects.get(pk=template.pk)
    return [copy_game(template, f"computers {i}").pk for i in range(count)]


def announce(games: list[int]) -> None:
    """Each game's phase announced (its computers' task queued): as a phase begins."""
    for game_id in games:
        with transaction.atomic():
            services.announce(services.keep_due(Game.objects.select_for_update().get(pk=game_id)))


def described(specs: list[Spec]) -> list[str]:
    return [f"{s.name}: {','.join(s.queues or ['all'])} ×{s.concurrency}" for s in specs]


PAST_PLACEMENT = 2  # the turn the games start the window in
TASKS = (
    "games.tasks.play_computer",
    "games.tasks.resolve_phase",
    "games.tasks.notify_phase",
    "games.tasks.send_email",
)


def _phases(games: list[int]) -> int:
    return sum(Game.objects.filter(pk__in=games).values_list("phase_number", flat=True))
