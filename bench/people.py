"""`people-phase`: what a phase of a game of three people costs the workers, against
what it costs the rules (issue 25).

In process, no worker, CPU time (`time.process_time`), phase after phase of games of
three people (sealed decisions), every move submitted through the services first (a
person's request, not the workers' part, and not timed):

- measured, the workers' part of the phase: `services.resolve` (the resolve_phase task),
  `notify.phase_changed` of the phase it began (notify_phase: the emails composed and
  stored), then `outbox.send` of each email it queued (send_email: the row claimed, the
  message built and handed to a real SMTP server, aiosmtpd on loopback, recorded sent).
  What the phase holds for later (results owed, COALESCING) is told in a later email,
  whose cost is counted in the phase that sends it.
- baseline, the engine's own work for the same phase: the phase's moves applied to its
  state as `services._apply_pending` applies them (`engine.apply`, or `engine.submit`
  where an earlier move of the phase changed the state), and the new state seen by each
  of the three players (`engine.view`), the least any site that tells three people what
  happened must compute. The state and the moves are decoded before the clock starts
  (decoding the stored JSON is the site's choice of storage, so it is on the measured
  side). Median of several runs of each phase (it is a fraction of a millisecond).

Fair: both sides are CPU time of this one process, phase by phase, on the same games in
the same run; the SMTP server runs in a process of its own (its CPU is the mail
server's, not the worker's), and the database's CPU is on neither side (only the
worker's own, building queries and reading their rows, is measured). The figure is
sum(measured) / sum(baseline) over the phases.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial

from django.test import override_settings

from bench.core import Figure, Options, figures, median, spread
from bench.db import empty_tables
from bench.web import no_task_queue
from bench.worker import people_game, submit_phase
from engine import game as engine
from engine.moves import Submission
from engine.serialize import move_from_json
from engine.state import GameState
from engine.view import view
from games import services
from games.mail import notify, outbox
from games.models import Game, OutgoingEmail

ENGINE_REPEATS = 5  # runs of each phase's engine work (median): it is under a millisecond


@dataclass
class Phase:
    """One phase's CPU seconds: the workers' parts, and the engine's work."""

    resolve: float
    notify: float
    send: float
    emails: int
    engine: float

    @property
    def site(self) -> float:
        return self.resolve + self.notify + self.send


@dataclass
class Played:
    phases: list[Phase] = field(default_factory=list)

    def total(self, part: Callable[[Phase], float]) -> float:
        return sum(part(p) for p in self.phases)


@figures("people-phase")
def people_phase(options: Options) -> Iterator[Figure]:
    count = options.size(120, 6)
    empty_tables()
    with smtp_server() as port, mail_to(port), no_task_queue():
        played = play(count)
    site, rules = played.total(lambda p: p.site), played.total(lambda p: p.engine)
    phases = len(played.phases)
    yield Figure(
        "people-phase",
        "a phase of a game of 3 people: resolve, notify, its emails composed and handed to "
        "SMTP, worker CPU per phase (baseline: the engine's apply and the 3 views)",
        site / phases * 1000,
        rules / phases * 1000,
        "<= 30",
        unit="ms",
        spread=spread([p.site for p in played.phases]),
        detail={
            "phases": phases,
            "resolve_ms": round(played.total(lambda p: p.resolve) / phases * 1000, 2),
            "notify_ms": round(played.total(lambda p: p.notify) / phases * 1000, 2),
            "send_ms": round(played.total(lambda p: p.send) / phases * 1000, 2),
            "emails_per_phase": round(played.total(lambda p: p.emails) / phases, 2),
            "send_ms_per_email": round(
                played.total(lambda p: p.send) / max(1, played.total(lambda p: p.emails)) * 1000,
                2,
            ),
            "engine_ms": round(rules / phases * 1000, 3),
        },
    )


def play(count: int) -> Played:
    """`count` phases of games of three people, each measured (a new game when one ends)."""
    played = Played()
    game, seats = _begun("people")
    while len(played.phases) < count:
        game = Game.objects.get(pk=game.pk)
        if game.status != Game.Status.RUNNING:
            game, seats = _begun(f"people{len(played.phases)}")
            continue
        phase = _one_phase(game, seats)
        if phase is not None:
            played.phases.append(phase)
    return played


def _one_phase(game: Game, seats: dict[str, int]) -> Phase | None:
    """The game's current phase played: its moves submitted (not measured), then the
    workers' part and the engine's, each measured (None: no move made it ready)."""
    number, state = game.phase_number, game.engine_state
    if submit_phase(game, seats) is None:
        return None
    moves = _moves(game, number)
    resolve = _cpu(partial(services.resolve, game.pk, number))
    told = _cpu(partial(notify.phase_changed, game.pk, number + 1))
    queued = _queued()
    send = _cpu(partial(_send_all, queued))
    rules = [_cpu(partial(engine_phase, state, moves)) for _ in range(ENGINE_REPEATS)]
    return Phase(resolve, told, send, len(queued), median(rules))


def _send_all(queued: list[int]) -> None:
    """What the send_email tasks do, one per email."""
    for pk in queued:
        outbox.send(pk)


def _begun(name: str) -> tuple[Game, dict[str, int]]:
    """A new game, its first phase told and its emails sent (not measured)."""
    game, seats = people_game(name)
    notify.phase_changed(game.pk, game.phase_number)
    _send_all(_queued())
    return game, seats


def engine_phase(state: GameState, moves: list[tuple[str, Submission]]) -> None:
    """The rules' part of a phase: its moves applied as `services._apply_pending` applies
    them (sealed: each a trusted step; else the first trusted and the rest checked), then
    the new state as each player sees it."""
    sealed = engine.is_simultaneous(state)
    for i, (colour, move) in enumerate(moves):
        step = engine.apply if sealed or not i else engine.submit
        state, _ = step(state, colour, move)
    for colour in state.players:
        view(state, colour)


def _moves(game: Game, number: int) -> list[tuple[str, Submission]]:
    """The phase's stored moves, decoded, in the order `services._apply_pending` takes
    them."""
    pending = list(
        game.pending.filter(phase_number=number)
        .select_related("seat")
        .order_by("submitted_at", "id")
    )
    players = game.engine_state.players
    if engine.is_simultaneous(game.engine_state):
        pending.sort(key=lambda p: players.index(p.seat.colour))
    return [(p.seat.colour, move_from_json(p.move)) for p in pending]


def _queued() -> list[int]:
    """The emails waiting for a send_email task (as the workers would be given their ids)."""
    rows = OutgoingEmail.objects.filter(status=OutgoingEmail.Status.QUEUED)
    return list(rows.order_by("created_at", "pk").values_list("pk", flat=True))


def _cpu(function: Callable[[], object]) -> float:
    start = time.process_time()
    function()
    return time.process_time() - start


# --- a real SMTP server in a process of its own ---------------------------------------------


@contextmanager
def smtp_server() -> Iterator[int]:
    """aiosmtpd on a free port of 127.0.0.1 (its Sink handler takes every message and
    keeps none), in its own process: its CPU is not the worker's. Yields the port."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address = f"127.0.0.1:{port}"
    server = subprocess.Popen(
        [sys.executable, "-m", "aiosmtpd", "-n", "-c", "aiosmtpd.handlers.Sink", "-l", address],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_listening(port, server)
        yield port
    finally:
        server.terminate()
        server.wait(timeout=10)


def _wait_listening(port: int, server: subprocess.Popen, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError("the SMTP server (aiosmtpd) ended as it started")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"the SMTP server (aiosmtpd) did not listen on {port} in {timeout} s")


def mail_to(port: int) -> override_settings:
    """The site's SMTP sending, to the server on `port` (as the tests' `smtp` fixture)."""
    return override_settings(
        EMAIL_BACKEND="django.core.mail.backends.smtp.EmailBackend",
        EMAIL_HOST="127.0.0.1",
        EMAIL_PORT=port,
        EMAIL_HOST_USER="",
        EMAIL_HOST_PASSWORD="",
        EMAIL_USE_TLS=False,
        EMAIL_USE_SSL=False,
        EMAIL_TIMEOUT=5,
    )
