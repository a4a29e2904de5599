#!/usr/bin/env python3
"""One entry point that sets up everything on a fresh machine, then runs.

    python3 dev.py run [ADDRESS]  # migrate, seed a demo, serve with a Celery worker
    python3 dev.py test [ARGS]    # lint, import contract, the suite on PostgreSQL and Redis

Set-up means: create `.venv` (only Python 3.11+ is needed) and install the pinned
dependencies from pyproject.toml when they changed. `run` needs no server (SQLite
and a broker on the file system, unless DATABASE_URL / REDIS_URL say otherwise);
`test` first makes sure PostgreSQL, Redis and Chromium are installed and running
(scripts/services.sh) and points DATABASE_URL / REDIS_URL at them unless set.
It uses only the standard library, because it runs before anything is installed.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / "python"


def ensure_venv() -> None:
    """Create the virtual environment and (re)install when pyproject.toml changed."""
    if sys.version_info < (3, 11):  # noqa: UP036 - runs before the venv exists
        sys.exit("Python 3.11 or newer is needed; this is " + sys.version.split()[0])
    if not PYTHON.exists():
        print("Creating the virtual environment in .venv ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
    stamp = VENV / f".installed-{digest}"
    if stamp.exists():
        return
    print("Installing the pinned dependencies ...", flush=True)
    pip = [str(PYTHON), "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "install", "--upgrade", "pip"], check=True)
    subprocess.run([*pip, "install", "-e", f"{ROOT}[dev]"], check=True)
    for old in VENV.glob(".installed-*"):
        old.unlink()
    stamp.touch()


def run(*args: str) -> None:
    """Run a command inside the virtual environment; stop with its status on failure."""
    result = subprocess.run(list(args), cwd=ROOT, env=venv_env())
    if result.returncode != 0:
        sys.exit(result.returncode)


def venv_env() -> dict[str, str]:
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def manage(*args: str) -> None:
    run(str(PYTHON), "manage.py", *args)


def start(*args: str) -> subprocess.Popen:
    """A child in its own session: Ctrl-C reaches only dev.py, which stops it in order."""
    return subprocess.Popen(list(args), cwd=ROOT, env=venv_env(), start_new_session=True)


def stop(process: subprocess.Popen | None) -> None:
    """Ask a child and its own children to finish (a Celery worker ends its task
    first), then insist."""
    if process is None or process.poll() is not None:
        return
    signal_group(process, signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        signal_group(process, getattr(signal, "SIGKILL", signal.SIGTERM))
        process.wait()


def signal_group(process: subprocess.Popen, signum: int) -> None:
    if os.name == "nt":
        process.kill()
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signum)


def stop_on_sigterm() -> None:
    """Turn SIGTERM into SystemExit, so that `finally` stops the children too."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))


def make_var_dirs() -> None:
    """The SQLite database and the file-system broker live here; neither makes its folder."""
    var = var_dir()
    for folder in ("broker", "mail"):
        (var / folder).mkdir(parents=True, exist_ok=True)


def var_dir() -> Path:
    return Path(os.environ.get("LOWENHERZ_VAR", ROOT / "var"))


def cmd_run(extra: list[str]) -> None:
    make_var_dirs()
    manage("migrate", "--no-input", "-v", "0")
    manage("seed_demo")
    address = extra[0] if extra else "127.0.0.1:8000"
    stop_on_sigterm()
    worker = server = None
    try:
        # --beat: the sweeper (deadlines, reminders, email retries) runs every minute.
        worker = start(str(PYTHON), "-m", "celery", "-A", "lowenherz_site", "--quiet", "worker",
                       "--pool=solo", "--loglevel=warning", "--beat",
                       "--schedule", str(var_dir() / "celerybeat-schedule"))
        print(BANNER.format(address=address), flush=True)
        print(mail_banner(), flush=True)
        server = start(str(PYTHON), "manage.py", "runserver", address)
        if first_to_end(server, worker) is worker:
            print("The Celery worker stopped (see above); stopping the site.", file=sys.stderr)
        sys.exit(server.poll() or worker.poll() or 0)
    except KeyboardInterrupt:
        print("\nStopping ...", flush=True)
    finally:
        stop(server)
        stop(worker)


def first_to_end(*processes: subprocess.Popen) -> subprocess.Popen:
    while True:
        for process in processes:
            if process.poll() is not None:
                return process
        time.sleep(0.5)


def mail_banner() -> str:
    if any(os.environ.get(v) for v in ("EMAIL_URL", "EMAIL_HOST", "EMAIL_BACKEND")):
        return "  Emails are sent with the EMAIL_URL / EMAIL_* settings of the environment.\n"
    return MAIL_BANNER.format(mail=var_dir() / "mail")


MAIL_BANNER = """  Emails are not sent: each is written as a file to  {mail}/
  (newest last: ls -tr var/mail | tail -3). To play a move by email, save the reply
  (To: the play+TOKEN address of a "waits for you" email) and feed it in:
      .venv/bin/python manage.py receive_email < reply.eml
  Set EMAIL_URL=smtp://user:password@host:587 (or smtp+tls://, smtp+ssl://) to send them.
"""


BANNER = """
  Löwenherz is served at  http://{address}/
  Demo login:             demo / lionheart-demo
  A Celery worker plays the computers and resolves phases.  Ctrl-C stops both.
"""


def ensure_services() -> None:
    """PostgreSQL, Redis and Chromium, installed and answering (scripts/services.sh)."""
    if shutil.which("bash") is None:
        sys.exit("The tests need bash to run scripts/services.sh (PostgreSQL, Redis, Chromium).")
    result = subprocess.run(["bash", str(ROOT / "scripts" / "services.sh")], cwd=ROOT)
    if result.returncode != 0:
        sys.exit("The services the tests need are not ready: see the message above.")


def cmd_test(extra: list[str]) -> None:
    ensure_services()
    os.environ.setdefault("DATABASE_URL", TEST_DATABASE_URL)
    os.environ.setdefault("REDIS_URL", TEST_REDIS_URL)
    run(str(BIN / "ruff"), "check", ".")
    run(str(BIN / "lint-imports"))  # the import contract in pyproject.toml
    run(str(BIN / "mypy"))  # the types, as [tool.mypy] in pyproject.toml says
    run(str(PYTHON), "-m", "pytest", *extra)


TEST_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/lowenherz"
TEST_REDIS_URL = "redis://127.0.0.1:6379/15"


COMMANDS = {"run": cmd_run, "test": cmd_test}


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(f"usage: python3 dev.py {{{','.join(COMMANDS)}}} [arguments]")
    ensure_venv()
    COMMANDS[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    main()
