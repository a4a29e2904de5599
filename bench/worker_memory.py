"""`worker-memory-variable`: a worker's resident memory does not grow with the games it
has played (issue 25).

A real `celery worker` on the bench's database, Redis and an SMTP server (aiosmtpd on
loopback), with one pool process taking every queue: every task of the workload runs in
that one process, so its resident set is what a worker keeps from all of them (with two
pool processes each would see half the phases). It plays games of three seats
with the variable setup, each game a board of its own (tiles shuffled and turned by the
game's seed, RULES 2.3): two computers, and a person the bench plays as one who answers
each "your move" email (once the phase is told, through `services.submit`). So the
worker runs all it runs for a game with people: `resolve_phase`, `play_computer`
(`services.play_computers`: the computers' moves, and the phases they complete),
`notify_phase` (`notify.phase_changed`: the emails composed from the presenter) and
`send_email` (handed to SMTP). `GAMES_AT_ONCE` games are played at a time, a new one
started as one ends, so that the phases are spread over many boards, one after another.

A probe task (`bench.tasks.resident`) reads the pool process's VmRSS and the phases
resolved so far, in that process between two tasks (nothing else runs meanwhile). The
baseline is the probe after the first `FIRST_PHASES` phases: by then the worker has
imported and run what every phase runs (Django, the emails' templates and catalogues,
the engine's tables, its database and broker connections, placement, decisions and
walls), so what it holds more after 2,000 phases is what it keeps per game, board or
email: exactly what must stay bounded. What the worker first meets later (a game's end,
its final email) counts against the figure, never for it. Baseline and figure are one
process in one run.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.db.models import F

from bench.core import COMPUTER_LEVEL, Figure, Options, figures
from bench.db import empty_tables
from bench.tasks import resident, resolved_phases
from bench.web import no_task_queue, person
from bench.worker import Spec, all_queues, client, need_redis, purge, workers
from engine.ai import RandomPlayer
from engine.errors import IllegalMove
from engine.game import default_move
from games import services
from games.models import Game, Seat

FIRST_PHASES = 100  # the baseline's phases: every path of the workload has run
GAMES_AT_ONCE = 6  # games in play together: enough to keep the worker busy, few boards
STALL_SECONDS = 120  # no phase resolved for this long: the worker is stuck, give up
PROBE_SECONDS = 120  # a probe waits behind the tasks the worker has already taken
# The probe's own queue: the worker takes from its queues in turn, so the probe runs
# after the task running and the one taken already, not behind the whole backlog.
PROBE_QUEUE = "bench-probe"


@figures("worker-memory-variable")
def worker_memory_variable(options: Options) -> Iterator[Figure]:
    """The pool process's resident set after 2,000 phases against the same process's
    after its first 100 (the baseline, and why it is fair: the module's docstring)."""
    if not need_redis("worker-memory-variable"):
        return
    first, last = options.size(FIRST_PHASES, 20), options.size(2000, 60)
    from tests.site.test_outbox import SMTPServer

    empty_tables()
    server = SMTPServer()
    server.start()
    try:
        smtp = {"EMAIL_URL": f"smtp://127.0.0.1:{server.port}"}
        queues = (*all_queues(), PROBE_QUEUE)
        with workers([Spec("memory", queues, 1)], env=smtp):
            tables = Tables(options.size(GAMES_AT_ONCE, 2))
            baseline = tables.probe_after(first)
            measured = tables.probe_after(last)
    finally:
        server.stop()
        purge([PROBE_QUEUE])
    if baseline["pid"] != measured["pid"]:
        raise RuntimeError("the worker's pool process was replaced between the probes")
    yield Figure(
        "worker-memory-variable",
        f"one worker process's resident memory after {last:,} phases of variable-setup "
        f"games, against after its first {first}",
        measured["rss_kib"] / 1024,
        baseline["rss_kib"] / 1024,
        "<= 1.2",
        unit="MiB",
        detail={
            "phases_at_probes": [baseline["phases"], measured["phases"]],
            "games_started": tables.started,
            "games_at_once": tables.at_once,
            "probe_queue": PROBE_QUEUE,
            "emails_received": len(server.messages),
        },
    )


PERSON = "red"  # the seat a person plays (the bench, answering each "your move" email)


@dataclass
class Tables:
    """Variable-setup games for the worker, `at_once` in play: one started as one ends.
    The bench plays the person: it moves once the phase is told (its emails queued)."""

    at_once: int
    seats: dict[int, int] = field(default_factory=dict)  # game → the person's seat
    started: int = 0

    def probe_after(self, phases: int) -> dict[str, Any]:
        """The probe, queued once the worker has resolved `phases` phases (it reports
        the count it found)."""
        deadline, seen = time.monotonic() + STALL_SECONDS, -1
        while (done := resolved_phases()) < phases:
            if done != seen:
                deadline, seen = time.monotonic() + STALL_SECONDS, done
            if time.monotonic() > deadline:
                raise RuntimeError(f"the worker resolved no phase in {STALL_SECONDS} s")
            self.fill()
            self.answer()
            time.sleep(0.02)
        return probe()

    def fill(self) -> None:
        running = Game.objects.filter(pk__in=self.seats, status=Game.Status.RUNNING)
        kept = set(running.values_list("pk", flat=True))
        self.seats = {game: seat for game, seat in self.seats.items() if game in kept}
        while len(self.seats) < self.at_once:
            self.start()

    def start(self) -> None:
        """A game of three seats, the variable setup (a board of its own), started: a
        person (red) and two computers."""
        self.started += 1
        name = f"memory{self.started}-{uuid.uuid4().hex[:6]}"
        creator = person(name)
        with no_task_queue():
            game = services.create_game(
                creator,
                name=name,
                player_count=3,
                setup="variable",
                decisions="sealed",
                money="hidden",
                deadline_hours=48,
                invite_only=False,
                colour=PERSON,
                computer_colours=["ochre", "lilac"],
                computer_level=COMPUTER_LEVEL,
            )
        self.seats[game.pk] = Seat.objects.get(game=game, user=creator).pk
        with transaction.atomic():  # the tasks it is owed, queued for the worker
            services.announce(services.keep_due(Game.objects.select_for_update().get(pk=game.pk)))

    def answer(self) -> None:
        """The person's move in each game whose phase waits for them and is told."""
        told = Game.objects.filter(
            pk__in=self.seats, status=Game.Status.RUNNING, notified_phase__gte=F("phase_number")
        )
        for game in told:
            submitted = game.pending.filter(phase_number=game.phase_number)
            if PERSON in game.still_waiting(set(submitted.values_list("seat__colour", flat=True))):
                self.move(game)

    def move(self, game: Game) -> None:
        state, seat = game.engine_state, self.seats[game.pk]
        choice = RandomPlayer(f"{game.pk}/{game.phase_number}").choose(state, PERSON)
        try:
            try:
                services.submit(game.pk, seat, choice, game.phase_number)
            except IllegalMove:  # an alliance a computer ended meanwhile changed the state
                state = Game.objects.get(pk=game.pk).engine_state
                services.submit(game.pk, seat, default_move(state, PERSON), game.phase_number)
        except services.GameError:  # the phase moved on meanwhile: the next poll sees it
            pass


def probe() -> dict[str, Any]:
    """What `bench.tasks.resident` found in the worker: pid, rss_kib, phases."""
    key = f"bench:resident:{uuid.uuid4().hex}"
    resident.apply_async((key,), queue=PROBE_QUEUE)
    answer = client().blpop([key], timeout=PROBE_SECONDS)
    if answer is None:
        raise RuntimeError(f"the worker did not run the memory probe in {PROBE_SECONDS} s")
    found: dict[str, Any] = json.loads(answer[1])
    return found
