#!/usr/bin/env python3
"""One entry point that sets up everything on a fresh machine, then runs.

    python3 dev.py run     # set up, then serve the site on localhost
    python3 dev.py test    # set up, then run the linter and the whole test suite

Set-up means: create `.venv` (only Python 3.11+ is needed), install the pinned
dependencies from pyproject.toml when they changed, and migrate the database.
It uses only the standard library, because it runs before anything is installed.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
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
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run(list(args), cwd=ROOT, env=env)
    if result.returncode != 0:
        sys.exit(result.returncode)


def manage(*args: str) -> None:
    run(str(PYTHON), "manage.py", *args)


def cmd_run(extra: list[str]) -> None:
    manage("migrate", "--no-input", "-v", "0")
    address = extra[0] if extra else "127.0.0.1:8000"
    print(f"Serving the site at http://{address}/ (Ctrl-C stops it)", flush=True)
    manage("runserver", address)


def cmd_test(extra: list[str]) -> None:
    run(str(BIN / "ruff"), "check", ".")
    run(str(PYTHON), "-m", "pytest", *extra)


COMMANDS = {"run": cmd_run, "test": cmd_test}


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(f"usage: python3 dev.py {{{','.join(COMMANDS)}}} [arguments]")
    ensure_venv()
    COMMANDS[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    main()
