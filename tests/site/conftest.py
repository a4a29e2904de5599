"""Shared people and games for the site's tests (healthchecks style: alice, bob and
charlie play; dave is an outsider), a real Celery worker, and a browser.

- `celery_worker`: a worker subprocess on the test database and Redis, taking tasks
  while the test runs (which makes the test commit: `transactional_db`).
- `browser`, `new_page`, `page`: Debian's Chromium through Playwright; `new_page()`
  opens a fresh context (its own cookies) on `live_server`, one per person.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn
from urllib.parse import quote

import pytest
import redis
from django.conf import settings
from django.contrib.auth.models import User
from django.utils import timezone, translation
from kombu import Queue

from games import services
from games.models import Game
from lowenherz_site.celery import app as celery_app
from tests.site import browser as chromium

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright beside live_server
PASSWORD = "a long enough passphrase"


def make_user(name: str, time_zone: str = "UTC") -> User:
    user = User.objects.create_user(name, f"{name}@example.org", PASSWORD)
    user.profile.display_name = name.title()
    user.profile.time_zone = time_zone
    user.profile.save()
    return user


@pytest.fixture
def alice(db) -> User:
    return make_user("alice", "Europe/Berlin")


@pytest.fixture
def bob(db) -> User:
    return make_user("bob", "America/New_York")


@pytest.fixture
def charlie(db) -> User:
    return make_user("charlie")


@pytest.fixture
def dave(db) -> User:
    return make_user("dave")


def new_game(creator: User, **options) -> Game:
    """A game as the new-game form makes it: 3 players, basic, sealed by default; the
    creator red, the other seats open unless `computer_colours` fills them."""
    settings = {
        "name": "Test game",
        "player_count": 3,
        "setup": "basic",
        "decisions": "sealed",
        "money": "hidden",
        "deadline_hours": 48,
        "invite_only": False,
        "colour": "red",
        "computer_colours": [],
        **options,
    }
    return services.create_game(creator, **settings)


def three_player_game(alice: User, bob: User, charlie: User, **options) -> Game:
    """A started game: alice red, bob ochre, charlie lilac (basic, sealed by default)."""
    game = new_game(alice, **options)
    services.join_game(game.pk, bob, "ochre")
    services.join_game(game.pk, charlie, "lilac")
    return Game.objects.get(pk=game.pk)


@pytest.fixture
def game(alice, bob, charlie) -> Game:
    return three_player_game(alice, bob, charlie)


# --- services: present, or a skip with the reason (a failure in CI) ----------------------

ROOT = Path(__file__).resolve().parents[2]
IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
HOW_TO_RUN = "run the tests with `python3 dev.py test`, which starts them and sets the URLs"


def unavailable(reason: str) -> NoReturn:
    """Skip on a developer's machine that lacks a service; in CI that is a failure."""
    if IN_CI:
        pytest.fail(f"{reason} (CI must provide it: scripts/services.sh)", pytrace=False)
    pytest.skip(f"{reason}: {HOW_TO_RUN}")


def require_postgresql() -> None:
    if settings.DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        unavailable("this test needs PostgreSQL (DATABASE_URL is not a postgres:// URL)")


def require_redis() -> None:
    if not settings.REDIS_URL:
        unavailable("this test needs Redis (REDIS_URL is not set)")
    try:
        redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2).ping()
    except redis.RedisError as exc:
        unavailable(f"Redis at REDIS_URL does not answer ({exc})")


@pytest.fixture(autouse=True)
def fresh_limits() -> Iterator[None]:
    """Each test starts with no rate-limit counts or login failures (they live in the
    shared cache, which survives tests). Only the site's keys go: with Redis, the cache
    may share its database with Celery's queue."""
    clear_site_cache()
    yield


@pytest.fixture(autouse=True)
def site_language() -> Iterator[None]:
    """Each test starts in the site's language. A request through the test client leaves
    its language active in this thread (LocaleMiddleware activates it and, as in any
    server, the next request activates its own), so one test's German page would
    otherwise make the next test's sentences German. The same goes for the time zone
    (games.middleware activates the person's own), which the log's times are told in."""
    translation.deactivate()
    timezone.deactivate()
    yield
    translation.deactivate()
    timezone.deactivate()


def clear_site_cache() -> None:
    backend = settings.CACHES["default"]["BACKEND"]
    if backend == "django_redis.cache.RedisCache":
        client = redis.Redis.from_url(settings.CACHES["default"]["LOCATION"])
        keys = list(client.scan_iter(f"{settings.CACHES['default']['KEY_PREFIX']}:*"))
        if keys:
            client.delete(*keys)
    else:
        from django.core.cache import cache

        cache.clear()


@pytest.fixture
def on_postgresql() -> None:
    """For a test about PostgreSQL's behaviour (row locks): skip it elsewhere."""
    require_postgresql()


# --- a real Celery worker on the test database ----------------------------------------------


@pytest.fixture(scope="session", autouse=True)
def celery_queue() -> Iterator[str]:
    """Every task this session sends goes to a queue of its own, so that neither another
    test run on the same Redis nor `dev.py run`'s worker ever sees it."""
    queue = f"lowenherz-test-{uuid.uuid4().hex[:12]}"
    celery_app.conf.task_default_queue = queue
    if not settings.REDIS_URL:
        celery_app.conf.broker_url = "memory://"  # not var/broker, which `dev.py run` reads
    yield queue
    if settings.REDIS_URL:
        forget_queue(queue)


def purge_queue(queue: str) -> None:
    with celery_app.connection_for_write() as connection:
        connection.default_channel.queue_purge(queue)


def forget_queue(queue: str) -> None:
    purge_queue(queue)
    # kombu's Redis transport also keeps the queue's binding in a set of its own.
    redis.Redis.from_url(settings.REDIS_URL).delete(f"_kombu.binding.{queue}")


def database_url(database: dict) -> str:
    """The URL of a Django database settings dict, for the worker's DATABASE_URL."""
    user = quote(database.get("USER") or "", safe="")
    password = quote(database.get("PASSWORD") or "", safe="")
    login = f"{user}:{password}@" if password else f"{user}@" if user else ""
    port = f":{database['PORT']}" if database.get("PORT") else ""
    return f"postgres://{login}{database.get('HOST') or ''}{port}/{quote(database['NAME'])}"


TASK_LINE = re.compile(r"Task \S+\[([0-9a-f-]+)\] (received|.*)$", re.MULTILINE)


@dataclass
class Worker:
    """A `celery worker` subprocess; its log (level INFO) says what each task returned."""

    process: subprocess.Popen
    name: str
    queue: str
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def result_of(self, task_id: str, timeout: float = 30) -> str:
        """The return value the worker logged for a task, as text; waits for it."""
        done = re.compile(
            rf"\[{re.escape(task_id)}\] (succeeded in \S+: (.*)|raised .*)$", re.MULTILINE
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = done.search(self.log())
            if found:
                assert found.group(2) is not None, f"task {task_id} failed:\n{self.log()}"
                return found.group(2)
            time.sleep(0.05)
        raise AssertionError(f"the worker did not run task {task_id}:\n{self.log()}")

    def is_idle(self) -> bool:
        """Nothing queued, and every task it received has ended (succeeded, raised...)."""
        received, ended = set(), set()
        for task_id, what in TASK_LINE.findall(self.log()):
            (received if what == "received" else ended).add(task_id)
        return received <= ended and queue_length(self.queue) == 0

    def wait_until_idle(self, quiet: float = 0.5, timeout: float = 60) -> None:
        """Until idle for `quiet` seconds in a row: a task's last act may be to send the
        next, which the worker takes off the queue a moment before it logs it."""
        deadline, idle_since = time.monotonic() + timeout, None
        while time.monotonic() < deadline:
            if not self.is_idle():
                idle_since = None
            elif idle_since is None:
                idle_since = time.monotonic()
            elif time.monotonic() - idle_since >= quiet:
                return
            time.sleep(0.05)
        raise AssertionError(f"the worker is still busy after {timeout}s:\n{self.log()}")

    def consume(self, on: bool) -> None:
        """Start or stop taking tasks from the queue (Celery's remote control)."""
        control = celery_app.control
        change = control.add_consumer if on else control.cancel_consumer
        if not change(self.queue, destination=[self.name], reply=True, timeout=10):
            raise AssertionError(f"the worker did not answer:\n{self.log()}")

    def wait_until_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while f"{self.name} ready." not in self.log():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                pytest.fail(f"the Celery worker did not start:\n{self.log()}", pytrace=False)
            time.sleep(0.1)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # warm shutdown: finish the task
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def queue_length(queue: str) -> int:
    with celery_app.connection_for_write() as connection:
        return Queue(queue).bind(connection.default_channel).queue_declare()[1]


# `celery -A lowenherz_site worker ARGS` with the session's queue as the default queue
# too: the tasks the worker sends itself (a computer's move completes a phase: resolve)
# must come back to it, not go to the "celery" queue that nobody here consumes.
LAUNCH_WORKER = """
import sys
from lowenherz_site.celery import app
app.conf.task_default_queue = sys.argv[1]
app.worker_main(["worker", *sys.argv[2:]])
"""


# What in the environment would point the test's worker elsewhere: `celery` reads APP
# as -A (another app: the worker never starts), BROKER_URL, RESULT_BACKEND, LOADER,
# CONFIG_MODULE and SKIP_CHECKS as options, and CELERY_* (click's prefix for every
# option; Celery's own CELERY_BROKER_URL, CELERY_CONFIG_MODULE...); EMAIL_* would send
# the worker's emails for real.
WORKER_REDIRECTS = frozenset(
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
    """The environment of a test worker: this process's, without what would redirect it,
    on the test database and Redis. LOWENHERZ_VAR: the worker's emails (file backend) go
    to `var_dir`, not to the var/ of the checkout that `dev.py run` shows its user."""
    kept = {
        name: value
        for name, value in os.environ.items()
        if name not in WORKER_REDIRECTS and not name.startswith("CELERY_")
    }
    return {
        **kept,
        "DATABASE_URL": database_url(settings.DATABASES["default"]),
        "REDIS_URL": settings.REDIS_URL,
        "PYTHONPATH": str(ROOT),
        "DJANGO_SETTINGS_MODULE": "lowenherz_site.settings",
        "LOWENHERZ_VAR": str(var_dir),
    }


def launch_worker(queue: str, env: dict[str, str], log_path: Path) -> Worker:
    """A worker subprocess consuming only `queue`, ready to take tasks."""
    name = f"{queue}@{socket.gethostname()}"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-c",
                LAUNCH_WORKER,
                queue,
                "--pool=solo",
                "-c",
                "1",
                "--without-mingle",
                "--without-gossip",
                "-Q",
                queue,
                "-n",
                name,
                "--loglevel=info",
            ],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    worker = Worker(process, name, queue, log_path)
    worker.wait_until_ready()
    return worker


@pytest.fixture(scope="session")
def celery_worker_process(django_db_setup, celery_queue: str, tmp_path_factory) -> Iterator[Worker]:
    """`celery worker` as a subprocess (not eager, not a thread) on the test database.

    pytest-django has created the test database by now (django_db_setup) and renamed
    `settings.DATABASES["default"]["NAME"]` to it; the worker gets that database as its
    DATABASE_URL, and consumes only this session's queue."""
    require_postgresql()
    require_redis()
    env = worker_env(tmp_path_factory.mktemp("var"))
    purge_queue(celery_queue)
    worker = launch_worker(celery_queue, env, tmp_path_factory.mktemp("celery") / "worker.log")
    yield worker
    worker.stop()


@pytest.fixture
def celery_worker(transactional_db, celery_worker_process: Worker) -> Iterator[Worker]:
    """The session's worker, taking tasks during this test only; the test's writes are
    committed (transactional_db), or the worker would not see them.

    It starts on an empty queue (tasks left by other tests name rows that are gone),
    and the test ends when it is idle and has stopped taking tasks: the database flush
    after the test (transactional_db's teardown, after this one) must not run beside a
    task, or PostgreSQL reports a deadlock."""
    purge_queue(celery_worker_process.queue)
    celery_worker_process.consume(True)
    yield celery_worker_process
    celery_worker_process.wait_until_idle()
    celery_worker_process.consume(False)
    celery_worker_process.wait_until_idle()


# --- a browser: Debian's Chromium through Playwright --------------------------------------


@pytest.fixture(scope="session")
def browser():
    """One Chromium for the session; each test gets fresh contexts from `new_page`."""
    if not chromium.CHROMIUM.exists():
        unavailable(f"the browser tests need Chromium at {chromium.CHROMIUM}")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = chromium.launch(playwright)
        yield browser
        browser.close()


class InFlight:
    """The live server's WSGI application, counting the requests it is answering: a page
    closed at a test's end may have left a poll (games/static/games/live.js) being
    answered, and the database flush after the test must not run beside it, or
    PostgreSQL reports a deadlock (as beside a task: `celery_worker`)."""

    def __init__(self, app: Callable) -> None:
        self.app, self.count = app, 0
        self.changed = threading.Condition()

    def __call__(self, environ: dict, start_response: Callable) -> Iterator[bytes]:
        with self.changed:
            self.count += 1
        try:
            result = self.app(environ, start_response)
        except BaseException:
            self._done()
            raise
        return self._answer(result)

    def _answer(self, result: Iterator[bytes]) -> Iterator[bytes]:
        try:
            yield from result
        finally:
            try:
                getattr(result, "close", lambda: None)()  # Django's end of the request
            finally:
                self._done()

    def _done(self) -> None:
        with self.changed:
            self.count -= 1
            self.changed.notify_all()

    def wait_until_idle(self) -> None:
        """A request ends within the server's own time limits; this waits no longer."""
        with self.changed:
            if not self.changed.wait_for(
                lambda: self.count == 0, timeout=chromium.TIMEOUT_MS / 1000
            ):
                raise AssertionError(f"the live server still answers {self.count} requests")


def in_flight(live_server) -> InFlight:
    """The live server's application, counting its requests (wrapped once)."""
    httpd = live_server.thread.httpd
    app = httpd.get_app()
    if not isinstance(app, InFlight):
        app = InFlight(app)
        httpd.set_app(app)
    return app


@pytest.fixture
def new_page(browser, live_server) -> Iterator[Callable[..., object]]:
    """`new_page()` opens a page in a fresh context (its own cookies: one person) whose
    relative URLs go to `live_server`: `alice, bob = new_page(), new_page()`. At the
    end, its pages are closed and the server has answered what they asked."""
    contexts = []
    requests = in_flight(live_server)

    def open_page(**context_options):
        context = browser.new_context(base_url=live_server.url, **context_options)
        context.set_default_timeout(chromium.TIMEOUT_MS)
        contexts.append(context)
        return context.new_page()

    yield open_page
    for context in contexts:
        context.close()
    requests.wait_until_idle()


@pytest.fixture
def page(new_page):
    """A page for one person on `live_server` (use `new_page` for several)."""
    return new_page()
