"""No game ever stalls (issue 8): faults injected into a real deployment on loopback.

Each test runs PostgreSQL (the test database), a Redis of its own, an SMTP server
(aiosmtpd), two Celery workers (prefork, one pool process each) and a beat as real
processes (tests/site/cluster.py), with the recovery interval shortened to a second and
its grace to two (settings from the environment). Then it breaks something for real
and checks that afterwards every ready phase resolved once, every computer moved, and
every email went out once.

- a. a worker SIGKILLed while its resolve waits for the game's row lock;
- b. Redis stopped while people submit (from threads of their own, as concurrent web
  requests); Redis flushed with tasks queued;
- c. the workers' database connections terminated under load;
- d. two beats at once;
- e. a worker killed while an SMTP server holds its email;
- f. /healthz while the database or Redis is down;
- g. a web process (gunicorn) SIGKILLed in the middle of a request;
- h. the beat SIGKILLed and started again.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import math
import os
import re
import smtplib
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from email.message import EmailMessage

import psycopg
import pytest
import requests
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.db.models import Count
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from engine.ai import RandomPlayer
from engine.game import replay
from engine.notation import format_move, parse_move
from engine.serialize import move_from_json
from games import services
from games.mail import notify
from games.models import Event, Game, OutgoingEmail, PendingSubmission, RecordEntry, Seat
from lowenherz_site.celery import COMPUTER_QUEUE, DEFAULT_QUEUE
from tests.site.cluster import (
    FAST,
    HANG_SECONDS,
    Cluster,
    RedisServer,
    connected,
    database_refusing_connections,
    lock_waiters,
    publishing_to,
    terminate_connections,
    wait_until,
)
from tests.site.conftest import PASSWORD, database_url, make_user
from tests.site.test_outbox import Collector, SMTPServer

# A fault test that hangs fails, and its teardown still stops its processes.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

Status = OutgoingEmail.Status
INTERVAL = int(FAST["RECOVERY_INTERVAL_SECONDS"])
GRACE = int(FAST["RECOVERY_GRACE_SECONDS"])


@pytest.fixture
def mailbox() -> Iterator[SMTPServer]:
    server = SMTPServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def cluster(on_postgresql, transactional_db, tmp_path, mailbox) -> Iterator[Cluster]:
    server = RedisServer(tmp_path)
    server.start()
    deployment = Cluster(
        server, tmp_path, extra_env={"EMAIL_URL": f"smtp://127.0.0.1:{mailbox.port}"}
    )
    try:
        with publishing_to(server.url):
            yield deployment
    finally:
        deployment.stop()
        server.stop()


# --- games and what must hold of them --------------------------------------------------------


def fresh(game: Game) -> Game:
    return Game.objects.get(pk=game.pk)


def computer_game(person: User, name: str, patches: dict | None = None) -> Game:
    """Three seats played by computers: two computers, and a person's seat a computer
    stands in for (so that the person is told every phase by email)."""
    with pytest.MonkeyPatch.context() as patch:
        for target, value in (patches or {}).items():
            patch.setattr(target, value)
        game = services.create_game(
            person,
            name=name,
            player_count=3,
            setup="basic",
            decisions="sealed",
            money="hidden",
            deadline_hours=48,
            invite_only=False,
            colour="red",
            computer_colours=["ochre", "lilac"],
        )
    Seat.objects.filter(game=game, user=person).update(standin=True)
    with transaction.atomic():  # the stand-in's first move, asked for as a phase would
        services.announce(services.keep_due(Game.objects.select_for_update().get(pk=game.pk)))
    return fresh(game)


def assert_each_phase_once(game: Game) -> None:
    """One snapshot per phase and a record that replays to the stored state: a phase
    applied twice would show in both."""
    game = fresh(game)
    assert game.snapshots.count() == game.phase_number, game.pk
    record = [(e.colour, move_from_json(e.move)) for e in game.record.all()]
    colours = tuple(game.seats.values_list("colour", flat=True))
    assert replay(game.settings_for(colours), record) == game.engine_state, game.pk


def assert_every_email_once(cluster: Cluster, mailbox: SMTPServer, killed_sends: int = 0) -> None:
    """Every email the outbox queued before now goes out, and none reaches the SMTP
    server twice. The cluster stops (warm) before the count, so that nothing is sent
    while it is taken. `killed_sends`: how many sends a SIGKILL may have cut between
    the server's "250" and the row's SENT (the outbox's one documented window: such an
    email went twice, its second attempt after the dead worker's)."""
    mark = timezone.now()
    # Held for the digest, or for the person's next email (issue 10: COALESCING, told in
    # a later one: FOLDED) is not due.
    wait_until(
        lambda: (
            not OutgoingEmail.objects.filter(created_at__lte=mark)
            .exclude(status__in=[Status.SENT, Status.HELD, Status.COALESCING, Status.FOLDED])
            .exists()
        ),
        "every due email is sent",
        timeout=60,
    )
    cluster.stop()
    received = Counter(
        int(MESSAGE_ID.match(str(m["Message-ID"])).group(1))  # type: ignore
        for m in mailbox.messages
    )
    twice = {pk: n for pk, n in received.items() if n > 1}
    cut = set(
        OutgoingEmail.objects.filter(pk__in=twice, attempts__gte=2).values_list("pk", flat=True)
    )
    assert (
        len(twice) <= killed_sends and set(twice) == cut and max(twice.values(), default=1) <= 2
    ), f"emails received more than once: {twice}"
    assert set(received) == set(
        OutgoingEmail.objects.filter(status=Status.SENT).values_list("pk", flat=True)
    )


MESSAGE_ID = re.compile(r"<lowenherz\.(\d+)\.")


def settled(games: list[Game]) -> bool:
    """Nothing is owed to any game: every phase told, resolved, every computer moved...
    or, for a game still running between computers, it moves on."""
    return not Game.objects.filter(
        pk__in=[g.pk for g in games], work_due_since__isnull=False
    ).exists()


def progress(games: list[Game]) -> dict[int, int]:
    return dict(Game.objects.filter(pk__in=[g.pk for g in games]).values_list("pk", "phase_number"))


def all_moved_on(games: list[Game], since: dict[int, int], phases: int) -> bool:
    now = progress(games)
    return all(
        now[pk] >= since[pk] + phases or fresh_status(pk) == Game.Status.FINISHED for pk in since
    )


def fresh_status(pk: int) -> str:
    return Game.objects.values_list("status", flat=True).get(pk=pk)


# --- b. Redis flushed with tasks queued ------------------------------------------------------


def test_redis_flushed_with_tasks_queued_stalls_no_game(cluster, alice, mailbox):
    games = [computer_game(alice, f"Flush {n}") for n in range(4)]
    workers = [cluster.worker("worker-1"), cluster.worker("worker-2")]
    cluster.beat("beat")
    wait_until(
        lambda: all_moved_on(games, {g.pk: 1 for g in games}, 3),
        "every game plays a few phases",
        timeout=90,
    )
    for round_ in range(2):
        for worker in workers:
            worker.pause()
        games += [computer_game(alice, f"Queued {round_}.{n}") for n in range(4)]
        before = progress(games)
        client = cluster.redis.client()
        queued = client.llen(DEFAULT_QUEUE) + client.llen(COMPUTER_QUEUE)
        assert queued >= 8, f"{queued} tasks queued"  # each new game's computers, emails
        cluster.redis.flush()  # every queued and unacknowledged task message is gone
        for worker in workers:
            worker.pause(False)
        wait_until(
            lambda before=before, games=games: all_moved_on(games, before, 3),
            "every game moves on after the flush",
            timeout=60,
        )
    assert_every_email_once(cluster, mailbox)  # and the cluster stops: the games stand still
    for game in games:
        assert_each_phase_once(game)


# --- a. a worker SIGKILLed in the middle of a resolve ----------------------------------------


def people_game(alice: User, bob: User, charlie: User, name: str) -> Game:
    game = services.create_game(
        alice,
        name=name,
        player_count=3,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=[],
    )
    services.join_game(game.pk, bob, "ochre")
    services.join_game(game.pk, charlie, "lilac")
    return fresh(game)


def legal_move(game: Game, seat: Seat) -> str:
    state = fresh(game).engine_state
    return format_move(RandomPlayer(f"{game.pk}/{seat.colour}").choose(state, seat.colour))


def submit_all(game: Game) -> int:
    """Every seat submits (as people do); returns the phase number they submitted in."""
    number = fresh(game).phase_number
    for seat in fresh(game).seats.all():
        services.submit(game.pk, seat.pk, parse_move(legal_move(game, seat)))
    return number


@contextlib.contextmanager
def row_locked(game: Game) -> Iterator[None]:
    """The game's row locked by a connection of its own, as a slow transaction would."""
    url = database_url(settings.DATABASES["default"])
    with psycopg.connect(url) as other:
        other.execute("SELECT id FROM games_game WHERE id = %s FOR UPDATE", [game.pk])
        yield
        other.rollback()


def assert_resolved_once(game: Game, number: int) -> None:
    game = fresh(game)
    assert game.phase_number == number + 1
    assert game.record.filter(phase_number=number).count() == 3
    assert_each_phase_once(game)


@pytest.mark.parametrize("kill", ["the pool process", "the whole worker"])
def test_a_worker_killed_in_the_middle_of_a_resolve_resolves_it_once(
    cluster, alice, bob, charlie, kill
):
    game = people_game(alice, bob, charlie, "Killed")
    workers = [cluster.worker("worker-1"), cluster.worker("worker-2")]
    cluster.beat("beat")
    wait_until(lambda: fresh(game).notified_phase == game.phase_number, "the game is told")
    for worker in workers:
        worker.pause()
    number = submit_all(game)  # its resolve is queued
    with row_locked(game):
        for worker in workers:
            worker.pause(False)
        name = wait_until(lambda: lock_waiters(), "a worker's resolve waits for the lock")[0]
        victim = next(w for w in workers if name == f"lowenherz-{w.name}")
        victim.kill_pool() if kill == "the pool process" else victim.kill()
        time.sleep(0.5)
    if kill == "the whole worker":
        workers.append(cluster.worker(f"{victim.name}-again"))
    wait_until(lambda: fresh(game).phase_number > number, "the phase is resolved", timeout=30)
    # A recovered twin would be queued by the first pass after the grace, and run.
    cluster.wait_passes(math.ceil(GRACE / INTERVAL) + 2, "a recovered twin would have run")
    assert_resolved_once(game, number)


# --- b. Redis stopped while people submit ----------------------------------------------------


def submit_by_web_thread(
    person: User,
    games: list[Game],
    numbers: dict[int, int],
    start: threading.Barrier,
    answers: dict,
) -> None:
    """One person's moves in every game, posted from a thread of its own with its own
    database connection, as a web server's request threads run beside each other."""
    client = Client()
    client.force_login(person)
    start.wait()
    try:
        for game in games:
            seat = Seat.objects.get(game=game, user=person)
            response = client.post(
                reverse("submit", args=[game.pk]),
                {"move": legal_move(game, seat), "phase": str(numbers[game.pk])},
                follow=True,
            )
            answers[(person.username, game.pk)] = (response.status_code, response.content.decode())
    finally:
        connection.close()


def test_redis_stopped_while_people_submit_loses_no_move(cluster, alice, bob, charlie, mailbox):
    games = [people_game(alice, bob, charlie, f"Down {n}") for n in range(3)]
    cluster.worker("worker-1"), cluster.worker("worker-2"), cluster.beat("beat")
    wait_until(
        lambda: all(fresh(g).notified_phase == g.phase_number for g in games), "the games are told"
    )
    cluster.redis.stop()
    numbers = {g.pk: fresh(g).phase_number for g in games}
    people, answers = (alice, bob, charlie), {}
    start = threading.Barrier(len(people))
    threads = [
        threading.Thread(target=submit_by_web_thread, args=(person, games, numbers, start, answers))
        for person in people
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(answers) == len(people) * len(games)
    for (name, pk), (status, page) in answers.items():  # each accepted, none an error page
        assert status == 200 and "Your submission:" in page, (name, pk, status)
    assert all(fresh(g).phase_number == numbers[g.pk] for g in games)  # nothing ran
    time.sleep(2)
    cluster.redis.start()  # empty: whatever was queued before is lost too
    wait_until(
        lambda: all(fresh(g).phase_number > numbers[g.pk] for g in games),
        "every phase is resolved once Redis is back",
        timeout=45,
    )
    wait_until(
        lambda: all(fresh(g).notified_phase == fresh(g).phase_number for g in games),
        "every new phase is told",
        timeout=30,
    )
    for game in games:
        assert_resolved_once(game, numbers[game.pk])
        awaited = Seat.objects.filter(game=game, colour__in=fresh(game).waiting).count()
        assert (
            OutgoingEmail.objects.filter(
                game=game, kind="your_turn", phase_number=numbers[game.pk] + 1
            ).count()
            == awaited
        )
    assert_every_email_once(cluster, mailbox)


# --- c. database connections terminated under load ----------------------------------------


def test_database_connections_cut_under_load_lose_no_task(cluster, alice, mailbox):
    games = [computer_game(alice, f"Cut {n}") for n in range(6)]
    cluster.worker("worker-1"), cluster.worker("worker-2"), cluster.beat("beat")
    wait_until(
        lambda: all_moved_on(games, {g.pk: 1 for g in games}, 2), "every game plays", timeout=90
    )
    cut, until = 0, time.monotonic() + 8
    while time.monotonic() < until:
        cut += terminate_connections("lowenherz-worker")
        time.sleep(0.25)
    assert cut >= 10, f"only {cut} connections were cut"
    before = progress(games)
    wait_until(lambda: all_moved_on(games, before, 3), "every game moves on", timeout=60)
    assert_every_email_once(cluster, mailbox)  # and the cluster stops: the games stand still
    for game in games:
        assert_each_phase_once(game)


# --- d. two beats at once ----------------------------------------------------------------------


def test_two_beats_at_once_act_once(cluster, alice, bob, charlie, mailbox, monkeypatch):
    defaulted = people_game(alice, bob, charlie, "Deadline passed")
    reminded = people_game(alice, bob, charlie, "Reminder due")
    lost = people_game(alice, bob, charlie, "Resolve lost")
    for game in (defaulted, reminded, lost):
        Game.objects.filter(pk=game.pk).update(
            notified_phase=game.phase_number, work_due_since=None
        )
    cluster.worker("worker-1"), cluster.worker("worker-2")
    cluster.beat("beat-1"), cluster.beat("beat-2")
    Game.objects.filter(pk=defaulted.pk).update(deadline=timezone.now() - timedelta(minutes=1))
    # The 2-hour reminder, armed where a deadline is set (here by hand, so armed as the
    # site arms it), comes due five seconds from now.
    Game.objects.filter(pk=reminded.pk).update(
        deadline=timezone.now() + timedelta(hours=2, seconds=5)
    )
    notify.arm_reminders(timezone.now(), fresh(reminded))
    with monkeypatch.context() as patch:
        patch.setattr(services, "_dispatch_resolve", lambda *args: None)  # lost
        lost_number = submit_all(lost)
    default_number = defaulted.phase_number
    wait_until(
        lambda: (
            fresh(defaulted).phase_number > default_number
            and fresh(lost).phase_number > lost_number
            and OutgoingEmail.objects.filter(game=reminded, kind="reminder").count() >= 3
        ),
        "the deadline passes, the reminders go and the lost resolve runs",
        timeout=45,
    )
    cluster.wait_passes(8, "four more sweeps from each beat")
    assert Event.objects.filter(game=defaulted, kind="deadline_missed").count() == 1
    assert dict(Seat.objects.filter(game=defaulted).values_list("colour", "missed_deadlines")) == {
        "red": 1,
        "ochre": 1,
        "lilac": 1,
    }
    assert OutgoingEmail.objects.filter(game=reminded, kind="reminder").count() == 3
    assert_resolved_once(lost, lost_number)
    assert fresh(defaulted).phase_number == default_number + 1
    assert_each_phase_once(defaulted)
    beats = [p.log() for p in cluster.processes if p.name.startswith("beat")]
    assert all("Sending due task sweep" in log for log in beats)  # both beats ran
    assert_every_email_once(cluster, mailbox)


# --- e. a worker killed while sending an email -------------------------------------------------


@dataclass
class HoldingCollector(Collector):
    """Holds every DATA until released, so that no send completes while the workers
    are killed. A client gone meanwhile delivered nothing: aiosmtpd cancels its session
    (no "250" was given: the server has not taken the message)."""

    holding: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    held: list = field(default_factory=list)  # the sessions (aiosmtpd's SMTP protocols)

    def gone(self, sessions: list) -> bool:
        return all(server.transport is None for server in sessions)

    async def handle_DATA(self, server, session, envelope) -> str:
        self.held.append(server)
        self.holding.set()
        while not self.release.is_set():
            await asyncio.sleep(0.05)
        return await super().handle_DATA(server, session, envelope)


def test_a_worker_killed_while_sending_an_email_sends_it_once(
    cluster, alice, bob, charlie, mailbox
):
    mailbox.collector = HoldingCollector()
    mailbox.stop()
    mailbox.start()
    workers = [cluster.worker("worker-1"), cluster.worker("worker-2")]
    cluster.beat("beat")
    people_game(alice, bob, charlie, "Sending")  # its "your move" emails go out
    wait_until(mailbox.collector.holding.is_set, "a worker is sending", timeout=30)
    sending = wait_until(
        lambda: list(OutgoingEmail.objects.filter(status=Status.SENDING)), "the email is claimed"
    )
    held = list(mailbox.collector.held)
    for worker in workers:  # the pool processes in the middle of a send die
        worker.kill_pool()
    wait_until(lambda: mailbox.collector.gone(held), "the server sees those clients gone")
    mailbox.collector.release.set()
    wait_until(
        lambda: OutgoingEmail.objects.get(pk=sending[0].pk).status == Status.SENT,
        "the email the worker was sending is sent",
        timeout=60,
    )
    assert_every_email_once(cluster, mailbox)


# --- f. /healthz while the database or Redis is down -------------------------------------------


def health(url: str) -> tuple[int, dict]:
    answer = requests.get(f"{url}/healthz", timeout=30)
    return answer.status_code, answer.json()


UP = {"database": "ok", "broker": "ok"}


def test_healthz_answers_503_while_the_database_or_redis_is_down(cluster):
    """README (operations): 200 when both answer, else 503 naming the one down; and 200
    again once it is back, from the same web process."""
    _, url = cluster.web("web")
    assert health(url) == (200, UP)
    cluster.redis.stop()
    assert health(url) == (503, {"database": "ok", "broker": "down"})
    cluster.redis.start()
    assert health(url) == (200, UP)
    with database_refusing_connections():
        assert health(url) == (503, {"database": "down", "broker": "ok"})
    assert health(url) == (200, UP)


# --- g. a web process killed in the middle of a request ----------------------------------------


def post_in_thread(
    session: requests.Session, url: str, game: Game, number: int, text: str
) -> tuple[threading.Thread, dict]:
    """The move posted by a browser that waits for the answer; what it got, or the error."""
    got: dict = {}

    def post() -> None:
        try:
            got["answer"] = move_by_web(session, url, game, number, text)
        except requests.RequestException as error:
            got["error"] = error

    thread = threading.Thread(target=post)
    thread.start()
    return thread, got


@pytest.mark.parametrize(
    "when", ["waiting for the game's row lock", "after its commit, queuing the resolve"]
)
def test_a_web_process_killed_mid_request_stores_the_move_whole_or_not_at_all(
    cluster, alice, bob, charlie, when
):
    """The last move of a phase, posted to gunicorn, which is SIGKILLed (master and
    workers) in the middle of the request: before the move's transaction committed (the
    database drops it whole) or after (it is stored, and the resolve its request could
    not queue is owed in the game's row, so the recovery pass queues it). Either way the
    phase resolves once, and a restarted web serves the person, who may move again."""
    game = people_game(alice, bob, charlie, "Web killed")
    cluster.worker("worker-1"), cluster.beat("beat")
    web, url = cluster.web("web")
    session = web_session(url, alice)
    for seat in Seat.objects.filter(game=game).exclude(user=alice):  # alice moves last
        services.submit(game.pk, seat.pk, parse_move(legal_move(game, seat)))
    seat = Seat.objects.get(game=game, user=alice)
    number, text = fresh(game).phase_number, legal_move(game, seat)
    before = fresh(game).state
    if when.startswith("waiting"):
        with row_locked(game):
            thread, got = post_in_thread(session, url, game, number, text)
            wait_until(
                lambda: "lowenherz-web" in lock_waiters(),
                "the request waits for the game's row lock",
            )
            web.kill()
            thread.join()
        # The request's transaction ends with its connection: nothing of it is kept.
        wait_until(lambda: not connected("lowenherz-web"), "its connection is gone")
        assert not PendingSubmission.objects.filter(seat=seat).exists()
        assert fresh(game).phase_number == number and fresh(game).state == before
    else:
        cluster.redis.pause()  # the request's queuing of the resolve hangs
        try:
            thread, got = post_in_thread(session, url, game, number, text)
            wait_until(
                lambda: PendingSubmission.objects.filter(seat=seat).exists(),
                "the move is committed",
            )
            web.kill()
            thread.join()
        finally:
            cluster.redis.pause(False)
        stored = PendingSubmission.objects.get(seat=seat)
        assert (stored.phase_number, stored.text) == (number, text)
        assert fresh(game).work_due_since is not None  # owed, for the recovery pass
    assert "error" in got, got  # the browser got no answer: the process died mid-request
    web, url = cluster.web("web-again")  # restarted (healthz answered 200)
    session = web_session(url, alice)
    if when.startswith("waiting"):
        assert move_by_web(session, url, game, number, text)[0]  # the person moves again
    wait_until(lambda: fresh(game).phase_number > number, "the phase is resolved", timeout=60)
    assert_resolved_once(game, number)
    assert session.get(f"{url}/games/{game.pk}/", timeout=30).status_code == 200


# --- h. a beat killed and started again ---------------------------------------------------------


def sweeps_run(cluster: Cluster) -> int:
    """How many of the beat's sweeps the workers have run."""
    done = re.compile(r"Task games\.tasks\.sweep\[[^]]*\] succeeded")
    return sum(len(done.findall(p.log())) for p in cluster.processes if p.name.startswith("worker"))


def test_a_killed_beat_started_again_sweeps_on_and_does_nothing_twice(
    cluster, alice, bob, charlie, mailbox
):
    """The beat SIGKILLed (its schedule file left as the kill found it) and started again
    on the same file: the deadline that passed and the reminders that came due while it
    was dead are acted on, each once, however many sweeps follow."""
    defaulted = people_game(alice, bob, charlie, "Deadline passed while dead")
    reminded = people_game(alice, bob, charlie, "Reminder due while dead")
    for game in (defaulted, reminded):
        Game.objects.filter(pk=game.pk).update(
            notified_phase=game.phase_number, work_due_since=None
        )
    cluster.worker("worker-1")
    beat = cluster.beat("beat")
    wait_until(lambda: sweeps_run(cluster) >= 1, "a sweep runs")
    beat.kill()
    Game.objects.filter(pk=defaulted.pk).update(deadline=timezone.now() - timedelta(minutes=1))
    Game.objects.filter(pk=reminded.pk).update(  # the 2-hour reminder, due in two seconds
        deadline=timezone.now() + timedelta(hours=2, seconds=2)
    )
    notify.arm_reminders(timezone.now(), fresh(reminded))
    number = defaulted.phase_number
    cluster.beat("beat")  # the same schedule file
    wait_until(
        lambda: (
            fresh(defaulted).phase_number > number
            and OutgoingEmail.objects.filter(game=reminded, kind="reminder").count() >= 3
        ),
        "the deadline passes and the reminders go",
        timeout=60,
    )
    ran = sweeps_run(cluster)
    wait_until(lambda: sweeps_run(cluster) >= ran + 3, "three more sweeps run", timeout=60)
    assert Event.objects.filter(game=defaulted, kind="deadline_missed").count() == 1
    assert dict(Seat.objects.filter(game=defaulted).values_list("colour", "missed_deadlines")) == {
        "red": 1,
        "ochre": 1,
        "lilac": 1,
    }
    assert OutgoingEmail.objects.filter(game=reminded, kind="reminder").count() == 3
    assert fresh(defaulted).phase_number == number + 1
    assert_each_phase_once(defaulted)
    assert_every_email_once(cluster, mailbox)


# --- the soak: many games, people by web and by email, a worker killed, Redis restarted ----

# The CI runs a short soak; a longer one: SOAK_SECONDS=600 SOAK_GAMES=200 (README).
SOAK_SECONDS = int(os.environ.get("SOAK_SECONDS", "20"))
SOAK_GAMES = int(os.environ.get("SOAK_GAMES", "50"))
# What the recovery pass promises (games.recovery), counted in passes, not seconds: a game
# owed work is queued again by the first pass that starts more than the grace after its
# work fell due (or was last queued again). Passes that may end meanwhile without
# touching it: one a beat starting within the grace, one begun earlier on each of the two
# workers, and the pass that queues it again; the monitor, sampling, sees the change up
# to a pass late. (On a 2-core machine at load 5 to 14: 3 or 4; with the grace tripled, 7.)
MISSED_PASSES = math.ceil(GRACE / INTERVAL) + 2 + 1 + 1


def play_in_process(game: Game, phases: int | None = None) -> int:
    """Play a computer game here, as the workers would (`services.play_computers`), to
    phase `phases` or to the end; returns the phase number reached. Its moves depend
    only on the game's seed."""
    game = fresh(game)
    with pytest.MonkeyPatch.context() as patch:
        for kind in ("notify", "resolve", "computer"):  # no backlog for the workers
            patch.setattr(services, f"_dispatch_{kind}", lambda *args: None)
        while game.status == Game.Status.RUNNING and (phases is None or game.phase_number < phases):
            # Many phases a transaction (14 s for a game phase by phase, 0.5 s so).
            left = ALL_PHASES if phases is None else phases - game.phase_number
            if not services.play_computers(game.pk, game.phase_number, phases=left):
                services.resolve(game.pk, game.phase_number)  # their moves were in
            game = fresh(game)
    return game.phase_number


ALL_PHASES = 10_000  # more than any game has


def nearly_finished(person: User, seed: int) -> Game:
    """A computer game a few phases before its end, for the workers to finish: a twin
    with the same seed is played to the end here first, to learn where the end is."""
    with_seed = {"games.models.secrets.randbits": lambda bits: seed}
    twin = computer_game(person, "Twin", patches=with_seed)
    end = play_in_process(twin)
    twin.delete()
    game = computer_game(person, f"Nearly over {seed}", patches=with_seed)
    play_in_process(game, end - 3)
    return fresh(game)


@dataclass
class Soak:
    """What the soak's people did and what the monitor saw."""

    # (game, phase, colour, how, move text); a refusal also says why (the web's answer)
    accepted: list[tuple[int, int, str, str, str]] = field(default_factory=list)
    refused: list[tuple[int, int, str, str, str, str]] = field(default_factory=list)
    stalls: dict[int, float] = field(default_factory=dict)  # longest wait per game, s
    # per game, the most passes that ran while it was owed work, neither moving on nor
    # queued again (its work_due_since unchanged)
    missed: dict[int, int] = field(default_factory=dict)


def web_session(base: str, user: User) -> requests.Session:
    """A person logged in on one web server, as a browser would be."""
    session = requests.Session()
    session.get(f"{base}/accounts/login/", timeout=10).raise_for_status()
    answer = session.post(
        f"{base}/accounts/login/",
        timeout=10,
        data={
            "username": user.username,
            "password": PASSWORD,
            "csrfmiddlewaretoken": session.cookies["csrftoken"],
        },
    )
    assert answer.ok and "sessionid" in session.cookies, answer.text[:500]
    return session


def move_by_web(
    session: requests.Session, base: str, game: Game, number: int, text: str
) -> tuple[bool, str]:
    """The game page's text form, made for phase `number` (the form says which); whether
    it was accepted, and the page's answer."""
    answer = session.post(
        f"{base}/games/{game.pk}/submit/",
        timeout=10,
        data={
            "move": text,
            "phase": str(number),
            "csrfmiddlewaretoken": session.cookies["csrftoken"],
        },
    )
    assert answer.status_code == 200, answer.status_code
    page = html.unescape(answer.text)
    return "Your submission:" in page or "Done:" in page, page


def move_by_email(port: int, user: User, reply_to: str, text: str) -> bool:
    """A reply through the SMTP listener, read by the site as a mail server hands it on."""
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = user.email, reply_to, "Re: your move"
    message.set_content(text)
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
        smtp.ehlo()
        smtp.mail(user.email)
        smtp.rcpt(reply_to)
        code, answer = smtp.data(message.as_bytes())
    return code == 250 and b"accepted" in answer


def awaited_people(games: list[Game]) -> list[tuple[Game, Seat]]:
    """The people the running games wait for who have not submitted yet."""
    found = []
    for game in Game.objects.filter(pk__in=[g.pk for g in games], status=Game.Status.RUNNING):
        submitted = set(
            game.pending.filter(phase_number=game.phase_number).values_list("seat_id", flat=True)
        )
        found += [
            (game, seat)
            for seat in game.seats.filter(
                colour__in=game.waiting, is_computer=False, standin=False
            ).select_related("user")
            if seat.pk not in submitted
        ]
    return found


def kept_or_refused_for_its_phase(game_id: int, number: int, colour: str, text: str) -> bool:
    """An accepted move is in the record of its phase (ending an alliance, for no phase:
    of the phase it came in or a later one), or still stored for it, or dropped with a
    "refused" event naming that move: while its phase lasted (an ended alliance changed
    the state, RULES 7.1: the event is of that phase) or when it was resolved (the event
    is stored with the phase that follows). A refusal of another phase excuses nothing."""
    phases = {"phase_number__gte" if text.startswith("break alliance") else "phase_number": number}
    return (
        RecordEntry.objects.filter(game_id=game_id, colour=colour, text=text, **phases).exists()
        or PendingSubmission.objects.filter(
            game_id=game_id, phase_number=number, seat__colour=colour, text=text
        ).exists()
        or Event.objects.filter(
            game_id=game_id,
            kind="refused",
            to_colour=colour,
            data__move=text,
            phase_number__in=(number, number + 1),
        ).exists()
    )


def refused_for_its_phase(game_id: int, number: int, colour: str, how: str, page: str) -> bool:
    """A legal move is refused only as of a phase gone by: the web says the game moved on
    from the very phase its form was made for; an email's reply address was for a phase
    the game has left (its answer says no more than "refused"). Or the state changed
    within the phase: an alliance ended (RULES 7.1, at any time) may make it illegal."""
    if Event.objects.filter(game_id=game_id, phase_number=number, kind="alliance_broken").exists():
        return True
    if how == "web":
        return (
            re.search(rf"This form was for phase {number}\b[^;]*; the game has moved on", page)
            is not None
        )
    game = Game.objects.get(pk=game_id)
    return game.phase_number > number or game.is_finished


def watch(games: list[Game], soak: Soak, stop: threading.Event, passes: Callable[[], int]) -> None:
    """How long each game waits for the machine (work owed, nothing changing), in
    seconds and in the recovery passes that ran meanwhile without queuing it again."""
    last: dict[int, tuple] = {}
    since: dict[int, float] = {}
    marked: dict[int, tuple] = {}
    since_pass: dict[int, int] = {}
    try:
        while not stop.is_set():
            now, done = time.monotonic(), passes()
            rows = (
                Game.objects.filter(pk__in=[g.pk for g in games])
                .annotate(stored=Count("pending"))
                .values_list("pk", "phase_number", "notified_phase", "stored", "work_due_since")
            )
            for pk, *seen, owed in rows:
                if last.get(pk) != tuple(seen) or owed is None:
                    last[pk], since[pk] = tuple(seen), now
                if marked.get(pk) != (*seen, owed) or owed is None:
                    marked[pk], since_pass[pk] = (*seen, owed), done
                soak.stalls[pk] = max(soak.stalls.get(pk, 0.0), now - since[pk])
                soak.missed[pk] = max(soak.missed.get(pk, 0), done - since_pass[pk])
            time.sleep(0.25)
    finally:
        connection.close()


@pytest.mark.timeout(SOAK_SECONDS + 300)
def test_a_soak_with_a_killed_worker_and_a_restarted_redis_loses_nothing(cluster, mailbox):
    people = [make_user(f"player{n}") for n in range(6)]
    games = [nearly_finished(people[0], seed) for seed in (1, 2)]  # they end in the soak
    games += [
        computer_game(people[n % 6], f"Soak computers {n}")
        for n in range(SOAK_GAMES * 3 // 5 - len(games))
    ]
    for n in range(SOAK_GAMES - len(games)):
        game = services.create_game(
            people[n % 6],
            name=f"Soak people {n}",
            player_count=3,
            setup="basic",
            decisions="sealed",
            money="hidden",
            deadline_hours=48,
            invite_only=False,
            colour="red",
            computer_colours=["lilac"],
        )
        services.join_game(game.pk, people[(n + 1) % 6], "ochre")
        games.append(fresh(game))
    workers = [cluster.worker("worker-1"), cluster.worker("worker-2")]
    cluster.beat("beat")
    webs = [cluster.web("web-1")[1], cluster.web("web-2")[1]]
    _, smtpd_port = cluster.smtpd("smtpd")
    sessions = {(user.pk, base): web_session(base, user) for user in people for base in webs}

    soak, stop = Soak(), threading.Event()
    monitor = threading.Thread(target=watch, args=(games, soak, stop, cluster.passes))
    monitor.start()
    start, turn = time.monotonic(), 0
    killed = restarted = False
    try:
        # On a busy machine one round of moves may outlast the rest of the soak: it goes
        # on until its faults have happened, whatever the clock says.
        while not restarted or time.monotonic() - start < SOAK_SECONDS:
            elapsed = time.monotonic() - start
            if not killed and elapsed > SOAK_SECONDS / 3:
                workers[0].kill()  # SIGKILL, mid-task most likely
                workers.append(cluster.worker("worker-3"))
                killed = True
            if not restarted and elapsed > 2 * SOAK_SECONDS / 3:
                cluster.redis.stop()
                time.sleep(1)
                cluster.redis.start()  # empty
                restarted = True
            for game, seat in awaited_people(games):
                turn += 1
                try:
                    number, text = game.phase_number, legal_move(game, seat)
                except ValueError:  # the phase ended since we looked (a negotiation)
                    continue
                ask = OutgoingEmail.objects.filter(
                    user=seat.user, game=game, kind="your_turn", phase_number=number
                ).first()
                if seat.colour == "ochre":  # plays by email: answers the "your move" email
                    if ask is None:
                        continue  # not asked yet
                    how, ok = "email", move_by_email(smtpd_port, seat.user, ask.reply_to, text)
                    page = ""
                else:
                    base = webs[turn % 2]
                    how = "web"
                    ok, page = move_by_web(sessions[(seat.user_id, base)], base, game, number, text)
                if ok:
                    soak.accepted.append((game.pk, number, seat.colour, how, text))
                else:
                    soak.refused.append((game.pk, number, seat.colour, how, text, page))
            time.sleep(0.1)
        # What is in flight lands, and the games that were nearly over end.
        wait_until(
            lambda: all(fresh(g).is_finished for g in games[:2]),
            "the nearly finished games end",
            timeout=90,
        )
    finally:
        stop.set()
        monitor.join()
    assert killed and restarted

    # One worker is SIGKILLed mid-task: one send may be cut after the server's "250".
    assert_every_email_once(cluster, mailbox, killed_sends=1)  # and everything stops
    lost = [a for a in soak.accepted if not kept_or_refused_for_its_phase(*a[:3], a[4])]
    assert not lost, f"accepted submissions lost: {lost}"
    unexcused = [r[:5] for r in soak.refused if not refused_for_its_phase(*r[:4], r[5])]
    assert not unexcused, f"legal moves refused, not for their phase: {unexcused}"
    for game in games:
        assert_each_phase_once(game)
        game = fresh(game)
        if game.is_finished:  # replayed (above) to the stored state: scores and winners
            assert game.winners and game.engine_state.winners == game.winners
    longest, most = max(soak.stalls.values()), max(soak.missed.values())
    by = Counter(a[3] for a in soak.accepted)
    print(
        f"\nsoak: {len(games)} games, {sum(fresh(g).phase_number for g in games)} phases, "
        f"{sum(fresh(g).is_finished for g in games)} finished; people's moves accepted "
        f"{dict(by)}, refused {len(soak.refused)}; emails sent "
        f"{OutgoingEmail.objects.filter(status=Status.SENT).count()}; lost 0; "
        f"{cluster.passes()} recovery passes; a game owed work was passed over by at most "
        f"{most} (bound {MISSED_PASSES}); longest wait for the machine {longest:.1f}s "
        f"(a hang guard: {HANG_SECONDS}s)"
    )
    assert by["web"] > 0 and by["email"] > 0
    assert most <= MISSED_PASSES, sorted(soak.missed.items(), key=lambda kv: -kv[1])[:5]
    assert longest <= HANG_SECONDS, sorted(soak.stalls.items(), key=lambda kv: -kv[1])[:5]
