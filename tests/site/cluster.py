"""A small deployment on loopback for the fault tests: a Redis of their own (which a
test may stop, start and flush without disturbing anything else), Celery workers and
beats as real processes on the test database, and the test process publishing to that
Redis too. Faults are real: SIGKILL, a stopped or flushed Redis, terminated database
connections.

Every process gets a PostgreSQL `application_name` (PGAPPNAME) of its own, so that a
test can see in `pg_stat_activity` which process waits for a lock, and terminate the
connections of the workers only.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import psycopg
import redis
from django.conf import settings
from django.db import connection
from kombu import pools
from psycopg import sql

from lowenherz_site.celery import app as celery_app
from tests.site.conftest import ROOT, database_url, unavailable

T = TypeVar("T")

# Shortened through settings (the environment), so that no test waits for minutes.
FAST = {
    "RECOVERY_INTERVAL_SECONDS": "1",
    "RECOVERY_GRACE_SECONDS": "2",
    "TASK_TIME_LIMIT_SECONDS": "10",
    "EMAIL_TIMEOUT": "5",
}


# What a worker logs when a sweep (games.tasks.sweep: one recovery pass) has run.
SWEEP_DONE = re.compile(rb"Task games\.tasks\.sweep\[[0-9a-f-]+\] succeeded")
# A hang guard for waits counted in passes: no promise is in seconds, but a cluster that
# stops sweeping altogether must still fail the test, not hang it.
HANG_SECONDS = 180


def wait_until(condition: Callable[[], T], what: str, timeout: float = 60, every: float = 0.1) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting until {what}")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class RedisServer:
    """`redis-server` on a free port, keeping nothing on disk (a restart empties it)."""

    def __init__(self, workdir: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            unavailable("the fault tests need redis-server on the PATH")
        self.binary, self.workdir, self.port = str(binary), workdir, free_port()
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, socket_timeout=5)

    def start(self) -> None:
        log = (self.workdir / "redis.log").open("ab")
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.workdir),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        wait_until(self._answers, "the test's Redis answers", timeout=20)

    def _answers(self) -> bool:
        try:
            return bool(self.client().ping())
        except redis.RedisError:
            return False

    def stop(self) -> None:
        """Gone at once, as in a crash: what it held is lost."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None

    def flush(self) -> None:
        self.client().flushall()

    def pause(self, on: bool = True) -> None:
        """SIGSTOP (or SIGCONT): it keeps its connections and answers nothing meanwhile,
        so that a client's next command waits, as on a hung broker."""
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGSTOP if on else signal.SIGCONT)


@dataclass
class Process:
    """A worker, beat, web or SMTP listener subprocess (`python ARGS`), its own process
    group, its log."""

    name: str
    args: list[str]
    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen | None = None
    read: int = 0  # bytes of the log counted by `passes` (whole lines)
    swept: int = 0  # sweeps it ran in them

    def passes(self) -> int:
        """The recovery passes this worker has run so far (its log, read on from where
        the last call stopped)."""
        with self.log_path.open("rb") as log:
            log.seek(self.read)
            new = log.read()
        whole = new[: new.rfind(b"\n") + 1]
        self.read += len(whole)
        self.swept += len(SWEEP_DONE.findall(whole))
        return self.swept

    def start(self) -> Process:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, *self.args],
                cwd=ROOT,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return self

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def children(self) -> list[int]:
        """The pool's processes (prefork), which run the tasks."""
        path = Path(f"/proc/{self.pid}/task/{self.pid}/children")
        return [int(p) for p in path.read_text().split()] if path.exists() else []

    def kill_pool(self) -> None:
        """SIGKILL to the pool process running the task; the worker itself lives on."""
        for pid in self.children():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def kill(self) -> None:
        """SIGKILL to the worker and its pool: no warm shutdown, no acknowledgement."""
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signal.SIGKILL)
            self.process.wait()

    def pause(self, on: bool = True) -> None:
        """SIGSTOP (or SIGCONT) the whole process group: it takes nothing meanwhile."""
        os.killpg(self.pid, signal.SIGSTOP if on else signal.SIGCONT)

    def stop(self) -> None:
        self.terminate()
        self.wait()

    def terminate(self) -> None:
        """A warm shutdown begins: SIGTERM to the main process only, so that the pool
        finishes its task."""
        if self.process is None or self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signal.SIGCONT)  # a paused one must hear SIGTERM
            os.kill(self.pid, signal.SIGTERM)

    def wait(self) -> None:
        """Until it has stopped; killed after 30 seconds."""
        if self.process is None:
            return
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()


@dataclass
class Cluster:
    """The test's Redis, its workers and beats, and the environment they share."""

    redis: RedisServer
    workdir: Path
    extra_env: dict[str, str] = field(default_factory=dict)
    processes: list[Process] = field(default_factory=list)
    database: str = ""  # its DATABASE_URL; by default the test database

    def env(self, name: str) -> dict[str, str]:
        return {
            **os.environ,
            **FAST,
            **self.extra_env,
            "DATABASE_URL": self.database or database_url(settings.DATABASES["default"]),
            "REDIS_URL": self.redis.url,
            "PYTHONPATH": str(ROOT),
            "DJANGO_SETTINGS_MODULE": "lowenherz_site.settings",
            "LOWENHERZ_VAR": str(self.workdir / "var"),
            "PGAPPNAME": f"lowenherz-{name}",
        }

    def worker(self, name: str) -> Process:
        """A prefork worker with one pool process, like one machine's worker."""
        hostname = f"{name}@{self.redis.port}"
        process = Process(
            name,
            [
                *CELERY,
                "worker",
                "--pool=prefork",
                "-c",
                "1",
                "--without-mingle",
                "--without-gossip",
                "-n",
                hostname,
                "--loglevel=info",
            ],
            self.env(name),
            self.workdir / f"{name}.log",
        ).start()
        self.processes.append(process)
        wait_until(
            lambda: f"{hostname} ready." in process.log() or process.process.poll() is not None,  # type: ignore[union-attr]
            f"worker {name} starts",
            timeout=60,
        )
        assert f"{hostname} ready." in process.log(), process.log()
        return process

    def beat(self, name: str) -> Process:
        process = Process(
            name,
            [
                *CELERY,
                "beat",
                "--loglevel=info",
                "--schedule",
                str(self.workdir / f"{name}-schedule"),
            ],
            self.env(name),
            self.workdir / f"{name}.log",
        ).start()
        self.processes.append(process)
        return process

    def web(self, name: str) -> tuple[Process, str]:
        """A gunicorn web server (two processes); returns it and its base URL."""
        port = free_port()
        process = Process(
            name,
            [
                "-m",
                "gunicorn",
                "lowenherz_site.wsgi:application",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "2",
                "--timeout",
                "30",
            ],
            self.env(name),
            self.workdir / f"{name}.log",
        ).start()
        self.processes.append(process)
        url = f"http://127.0.0.1:{port}"
        wait_until(lambda: _answers(url + "/healthz"), f"{name} answers", timeout=60)
        return process, url

    def smtpd(self, name: str) -> tuple[Process, int]:
        """The SMTP listener for replies (`manage.py run_smtpd`); returns it and its port."""
        port = free_port()
        process = Process(
            name,
            ["manage.py", "run_smtpd", "--port", str(port)],
            self.env(name),
            self.workdir / f"{name}.log",
        ).start()
        self.processes.append(process)
        wait_until(lambda: _connects(port), f"{name} listens", timeout=60)
        return process, port

    def passes(self) -> int:
        """The recovery passes the workers have run so far (each sweep is one:
        games.tasks.sweep_once). The fault tests count what the recovery pass promises in
        passes, not seconds: on a busy machine the passes slow down with everything else."""
        return sum(
            p.passes() for p in self.processes if p.args[: len(CELERY) + 1] == [*CELERY, "worker"]
        )

    def wait_passes(self, passes: int, what: str) -> None:
        """Until the workers have run `passes` more recovery passes."""
        until = self.passes() + passes
        wait_until(
            lambda: self.passes() >= until,
            f"{passes} more passes ({what})",
            timeout=HANG_SECONDS,
            every=0.2,
        )

    def stop(self) -> None:
        """Every process at once (each finishing its task), not one after another."""
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            process.wait()

    def logs(self) -> str:
        return "\n".join(f"--- {p.name} ---\n{p.log()[-6000:]}" for p in self.processes)


CELERY = ["-m", "celery", "-A", "lowenherz_site"]


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def _connects(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@contextlib.contextmanager
def publishing_to(url: str) -> Iterator[None]:
    """The test process sends its tasks to `url` (the cluster's Redis, default queue)."""
    conf = celery_app.conf
    before = conf.broker_url, conf.task_default_queue, conf.broker_transport_options

    def reset() -> None:
        # kombu keeps one pool per broker URL in a registry: close them all and forget
        # them, or the next test would be handed a closed pool for its URL.
        pools.reset()
        celery_app._pool = None
        celery_app.amqp._producer_pool = None

    reset()
    conf.broker_url, conf.task_default_queue = url, "celery"
    conf.broker_transport_options = {**settings.CELERY_BROKER_TRANSPORT_OPTIONS}
    try:
        yield
    finally:
        reset()
        conf.broker_url, conf.task_default_queue, conf.broker_transport_options = before


def connected(prefix: str) -> list[str]:
    """The application names of the database connections of the processes named so."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute(
            "SELECT application_name FROM pg_stat_activity WHERE datname = "
            "current_database() AND application_name LIKE %s",
            [prefix + "%"],
        )
        return [row[0] for row in cursor.fetchall()]


@contextlib.contextmanager
def database_refusing_connections() -> Iterator[None]:
    """The test database takes no new connection (ALLOW_CONNECTIONS false, set from the
    maintenance database: a database cannot refuse its own session), as when PostgreSQL
    is down for a process that connects now; the cluster's processes' connections are
    cut. The test process keeps its own."""
    name = connection.settings_dict["NAME"]

    def allow(on: bool) -> None:
        url = database_url(settings.DATABASES["default"])
        with psycopg.connect(url, dbname="postgres", autocommit=True) as maintenance:
            maintenance.execute(
                sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS {}").format(
                    sql.Identifier(name), sql.SQL("true" if on else "false")
                )
            )

    connection.ensure_connection()  # opened now: once refused, it could not be
    allow(False)
    try:
        terminate_connections("lowenherz-")
        yield
    finally:
        allow(True)


def lock_waiters(prefix: str = "lowenherz-") -> list[str]:
    """The application names of the connections waiting for a lock now."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")  # else frozen in a transaction
        cursor.execute(
            "SELECT application_name FROM pg_stat_activity WHERE datname = "
            "current_database() AND wait_event_type = 'Lock' "
            "AND application_name LIKE %s",
            [prefix + "%"],
        )
        return [row[0] for row in cursor.fetchall()]


def terminate_connections(prefix: str = "lowenherz-worker") -> int:
    """Cut the database connections of the processes named so (as a fail-over does)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND application_name LIKE %s",
            [prefix + "%"],
        )
        return int(cursor.fetchone()[0])
