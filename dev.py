#!/usr/bin/env python3
"""One entry point that sets up everything on a fresh machine, then runs.

    python3 dev.py run [ADDRESS]  # migrate, seed a demo, serve with Celery workers
    python3 dev.py test [ARGS]    # lint, import contract, the suite on PostgreSQL and Redis

Set-up means: create `.venv` (only Python 3.11+ is needed) and install the pinned
dependencies from pyproject.toml when they changed. `run` needs no server (SQLite
and a broker on the file system, unless DATABASE_URL / REDIS_URL say otherwise);
`test` first makes sure PostgreSQL, Redis and Chromium are installed and running
(scripts/services.sh) and points DATABASE_URL / REDIS_URL at them unless set.
`run` keeps the settings it serves with in var/dev-run.json, and `manage.py` run by hand
in the checkout takes them from there (`adopt_run_settings`): it acts on the same site.
It uses only the standard library, because it runs before anything is installed.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import ipaddress
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import venv
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from urllib.parse import urlsplit

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
    if venv_current():
        return
    print("Installing the pinned dependencies ...", flush=True)
    pip = [str(PYTHON), "-m", "pip", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "install", "--upgrade", "pip"], check=True)
    subprocess.run([*pip, "install", "-e", f"{ROOT}[dev]"], check=True)
    for old in VENV.glob(".installed-*"):
        old.unlink()
    venv_stamp().touch()


def venv_stamp() -> Path:
    """The mark of .venv installed from this pyproject.toml."""
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()[:16]
    return VENV / f".installed-{digest}"


def venv_current() -> bool:
    return PYTHON.exists() and venv_stamp().exists()


def run(*args: str) -> None:
    """Run a command inside the virtual environment; stop with its status on failure."""
    result = subprocess.run(list(args), cwd=ROOT, env=venv_env())
    if result.returncode != 0:
        sys.exit(result.returncode)


def venv_env() -> dict[str, str]:
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def manage(*args: str) -> None:
    run(str(PYTHON), "manage.py", *args)


def declare_queues() -> None:
    """Both workers of `run` start at once: their queues are declared first, one at a time
    (lowenherz_site.celery.declare_queues says why)."""
    run(str(PYTHON), "-c", "from lowenherz_site.celery import declare_queues; declare_queues()")


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


def var_dir(environ: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if environ is None else environ
    return Path(environ.get("LOWENHERZ_VAR", ROOT / "var"))


DEFAULT_ADDRESS = "127.0.0.1:8000"
# The settings' own default (lowenherz_site/settings.py), which ALLOWED_HOSTS replaces.
DEFAULT_ALLOWED_HOSTS = "localhost,127.0.0.1,[::1]"
LOCAL_HOSTS = {"localhost", "127.0.0.1", "[::1]", "::1"}
ALL_INTERFACES = {"0.0.0.0", "0", "[::]", "::"}


def run_environment(address: str, environ: Mapping[str, str], hostname: str) -> dict[str, str]:
    """The variables `dev.py run ADDRESS` adds to the environment of the web server and
    the worker, so that every link in every email points where the site is served:
    SITE_URL (unless set), and the host in ALLOWED_HOSTS when it is no local name. An
    address on all interfaces (0.0.0.0:PORT) is reached by the machine's `hostname`.
    ADDRESS is runserver's: PORT, HOST:PORT or [IPv6]:PORT."""
    host, _, port = address.rpartition(":")
    host = host or DEFAULT_ADDRESS.partition(":")[0]
    public = _url_host(hostname if host in ALL_INTERFACES else host)
    added: dict[str, str] = {}
    site_url = environ.get("SITE_URL") or ""
    if not site_url:
        added["SITE_URL"] = f"http://{public}:{port}"
    allowed = [
        h.strip()
        for h in environ.get("ALLOWED_HOSTS", DEFAULT_ALLOWED_HOSTS).split(",")
        if h.strip()
    ]
    named = [public, _url_host(urlsplit(site_url).hostname or "")]  # and where links go
    more = [h for h in dict.fromkeys(named) if h and h not in LOCAL_HOSTS and h not in allowed]
    if more and "*" not in allowed:
        added["ALLOWED_HOSTS"] = ",".join([*allowed, *more])
    return added


# The development secrets of lowenherz_site/settings.py (DEV_SECRET_KEY, DEV_INBOUND_SECRET):
# published with the code, so good only for a server nobody else can reach.
DEV_SECRETS = {
    "SECRET_KEY": "dev-only-not-secret-change-me-in-production",
    "INBOUND_SECRET": "lowenherz:dev-only-inbound-secret",
    "VAPID_PRIVATE_KEY": "76UzV6fr8vfIrTF5tADdoasxL1CVGJ-f7B3j5dADhj4",  # Web Push
}
# The order of the P-256 curve: a VAPID private key is a number from 1 to this less one.
P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def vapid_private_key() -> str:
    """A new VAPID private key (RFC 8292): a P-256 private key, 32 bytes in base64url,
    as VAPID_PRIVATE_KEY takes it (the site derives the public key)."""
    number = secrets.randbelow(P256_ORDER - 1) + 1
    return base64.urlsafe_b64encode(number.to_bytes(32, "big")).rstrip(b"=").decode()


def made_secrets() -> dict[str, str]:
    """This machine's own secrets, newly made."""
    return {
        "SECRET_KEY": secrets.token_urlsafe(50),
        "INBOUND_SECRET": f"lowenherz:{secrets.token_urlsafe(24)}",
        "VAPID_PRIVATE_KEY": vapid_private_key(),
    }


SECRETS_FILE = "dev-secrets.json"  # in var/: this machine's own, made once, mode 0600


def is_loopback(address: str) -> bool:
    """Whether runserver's ADDRESS (PORT, HOST:PORT, [IPv6]:PORT) is reached only from
    this machine."""
    host = address.rpartition(":")[0].strip("[]") or DEFAULT_ADDRESS.partition(":")[0]
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name, or all interfaces ("0"): others may reach it
        return False


def run_secrets(
    address: str, environ: Mapping[str, str], folder: Path
) -> tuple[dict[str, str], str]:
    """The secrets `dev.py run ADDRESS` adds to the environment, and what to say about
    them. On loopback: none (the published development ones do). Served to others: the
    environment's own, unless they are the published ones; else this machine's own,
    generated once and kept in `folder`/SECRETS_FILE (mode 0600), so that sessions and
    emailed links outlive a restart."""
    if is_loopback(address):
        return {}, ""
    missing = [
        name for name, published in DEV_SECRETS.items() if environ.get(name, published) == published
    ]
    if not missing:
        return {}, ""
    path = folder / SECRETS_FILE
    own = _own_secrets(path)
    added = {name: own[name] for name in missing}
    line = "!" * 78
    return added, (
        f"{line}\n  Served beyond this machine ({address}): the published development "
        f"{' and '.join(missing)}\n  would let anyone forge sessions and links. "
        f"Using this machine's own instead,\n  kept in {path} (mode 0600).\n{line}"
    )


def _own_secrets(path: Path) -> dict[str, str]:
    """The secrets kept in `path`, made (readable by its owner only) if there are none."""
    if path.exists():
        try:
            kept = json.loads(path.read_text())
        except ValueError:
            kept = None
        if not isinstance(kept, dict) or not all(
            isinstance(kept.get(name), str) and kept[name] for name in OLDEST_SECRETS
        ):
            sys.exit(
                f"{path} is not this machine's secrets as dev.py wrote them: "
                "remove it, and dev.py run makes new ones (signing everyone out)."
            )
        path.chmod(0o600)
        newer = {name: value for name, value in made_secrets().items() if not kept.get(name)}
        if newer:  # a secret added since the file was made (the VAPID key): kept too
            kept.update(newer)
            path.write_text(json.dumps(kept))
        return {name: kept[name] for name in DEV_SECRETS}
    made = made_secrets()
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as file:
        json.dump(made, file)
    return made


# What `manage.py`, run by hand in this checkout, takes from the last `dev.py run`: the
# settings the site was served with (where its links go, which hosts, which secrets sign
# the links, where its data and mail are), so that the README's commands (receive_email)
# act on the site being served. Kept in var/ (readable by its owner only: it may hold
# secrets); what the person's own environment sets wins.
RUN_FILE = "dev-run.json"
RUN_SETTINGS = (
    "DEBUG",
    "SITE_URL",
    "ALLOWED_HOSTS",
    "SECRET_KEY",
    "INBOUND_SECRET",
    "VAPID_PRIVATE_KEY",
    "DATABASE_URL",
    "REDIS_URL",
    "CACHE_URL",
    "EMAIL_URL",
)


def record_run(environ: Mapping[str, str], folder: Path) -> Path:
    """Keep the RUN_SETTINGS `dev.py run` serves with (those set) in `folder`/RUN_FILE,
    made anew on every run and readable by its owner only."""
    path = folder / RUN_FILE
    folder.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)  # made anew: never a copy of old settings, or looser rights
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as file:
        json.dump({name: environ[name] for name in RUN_SETTINGS if name in environ}, file)
    return path


def recorded_run(folder: Path) -> dict[str, str]:
    """The settings the last `dev.py run` served with in `folder` ({} if it never ran
    there, or the record is not one it wrote)."""
    try:
        kept = json.loads((folder / RUN_FILE).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(kept, dict):
        return {}
    return {k: v for k, v in kept.items() if k in RUN_SETTINGS and isinstance(v, str)}


def adopt_run_settings(environ: MutableMapping[str, str]) -> None:
    """For `manage.py` run by hand: the settings the last `dev.py run` served with, where
    `environ` sets none of its own. Not when DJANGO_SETTINGS_MODULE is set: a test run, a
    server or `dev.py test` chose their settings themselves."""
    if "DJANGO_SETTINGS_MODULE" in environ:
        return
    for name, value in recorded_run(var_dir(environ)).items():
        environ.setdefault(name, value)


OLDEST_SECRETS = ("SECRET_KEY", "INBOUND_SECRET")  # what every secrets file has


def _url_host(host: str) -> str:
    """A bare IPv6 address in brackets, as a URL and ALLOWED_HOSTS write it."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def cmd_run(extra: list[str]) -> None:
    # The development server: debug pages, and the development secrets are allowed.
    os.environ.setdefault("DEBUG", "true")
    address = extra[0] if extra else DEFAULT_ADDRESS
    # Before the demo is seeded: its first email links to the site too.
    os.environ.update(run_environment(address, os.environ, socket.gethostname()))
    make_var_dirs()
    own, notice = run_secrets(address, os.environ, var_dir())
    os.environ.update(own)
    if notice:
        print(notice, flush=True)
    record_run(os.environ, var_dir())  # before the demo's first email, as manage.py reads it
    manage("migrate", "--no-input", "-v", "0")
    manage("seed_demo")
    declare_queues()
    stop_on_sigterm()
    worker = computers = server = None
    try:
        # --beat: the sweeper (deadlines, reminders, email retries) runs every minute. The
        # resolve queue is taken in turn with the others, and the computers have a worker
        # of their own (lowenherz_site.celery: WORKERS).
        worker = start(
            *CELERY_WORKER,
            "-Q",
            "resolve,celery,sweep",
            "--beat",
            "--schedule",
            str(var_dir() / "celerybeat-schedule"),
        )
        computers = start(*CELERY_WORKER, "-Q", "computers")
        print(BANNER.format(address=address, site_url=os.environ["SITE_URL"]), flush=True)
        print(mail_banner(), flush=True)
        server = start(str(PYTHON), "manage.py", "runserver", address)
        if first_to_end(server, worker, computers) is not server:
            print("A Celery worker stopped (see above); stopping the site.", file=sys.stderr)
        sys.exit(server.poll() or worker.poll() or computers.poll() or 0)
    except KeyboardInterrupt:
        print("\nStopping ...", flush=True)
    finally:
        stop(server)
        stop(worker)
        stop(computers)


# A Celery worker of the development site: one process, quiet; `-Q` says its queues.
CELERY_WORKER = (
    str(PYTHON),
    "-m",
    "celery",
    "-A",
    "lowenherz_site",
    "--quiet",
    "worker",
    "--pool=solo",
    "--loglevel=warning",
)


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
  Links in emails go to   {site_url}/   (set SITE_URL to change it)
  Demo login:             demo / lionheart-demo
  Celery workers resolve phases, send emails and play the computers.  Ctrl-C stops all.
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
    run(str(BIN / "ruff"), "format", "--check", ".")  # one layout: `ruff format .` makes it
    run(str(BIN / "lint-imports"))  # the import contract in pyproject.toml
    run(str(BIN / "mypy"))  # the types, as [tool.mypy] in pyproject.toml says
    check_deploy()
    run(str(PYTHON), "-m", "pytest", *parallel(extra), *extra)


def parallel(extra: list[str]) -> list[str]:
    """Two test processes (pytest-xdist) unless the arguments choose: the suite waits on
    workers, browsers and sockets much of its time, and this machine has two cores. A
    file's tests stay in one process (--dist loadfile): a module's fixtures are built
    once, and the fault tests' cluster stays whole."""
    if any(arg.startswith(("-n", "--numprocesses", "--dist")) for arg in extra):
        return []
    return ["-n", "2", "--dist", "loadfile"]


def check_deploy() -> None:
    """Django's deployment checks, with the production environment the README documents
    (made-up secrets): a warning fails the run."""
    production = {
        **PRODUCTION_ENV,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "INBOUND_SECRET": f"lowenherz:{secrets.token_urlsafe(24)}",
        "REDIS_URL": os.environ["REDIS_URL"],
        "DATABASE_URL": os.environ["DATABASE_URL"],
    }
    env = {k: v for k, v in venv_env().items() if k not in {"DEBUG", "CACHE_URL"}}
    result = subprocess.run(
        [str(PYTHON), "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env={**env, **production, "DJANGO_SETTINGS_MODULE": "lowenherz_site.settings"},
    )
    if result.returncode != 0:
        sys.exit("manage.py check --deploy warns with the README's production environment.")


# The README's production environment (section "Production settings"), but the secrets.
PRODUCTION_ENV = {
    "DEBUG": "false",
    "ALLOWED_HOSTS": "games.example.org",
    "SITE_URL": "https://games.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://games.example.org",
    "SECURE_PROXY_SSL_HEADER": "true",
    "SECURE_SSL_REDIRECT": "true",
    "SECURE_COOKIES": "true",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "true",
    "SECURE_HSTS_PRELOAD": "true",
    "TRUSTED_PROXY_COUNT": "1",
}


TEST_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/lowenherz"
TEST_REDIS_URL = "redis://127.0.0.1:6379/15"


def cmd_bench(extra: list[str]) -> None:
    """The benchmark suite (bench/): a table, bench/latest.json. It runs on the
    DATABASE_URL and REDIS_URL it is given and on nothing else: no default, nothing
    installed, started or created here (`python -m bench` refuses clearly if either is
    missing or does not answer), and the virtual environment as it is."""
    if not venv_current():
        sys.exit(
            "dev.py bench installs nothing: .venv is missing or older than pyproject.toml. "
            "Make it first (python3 dev.py test, or python3 -c 'import dev; dev.ensure_venv()')."
        )
    run(str(PYTHON), "-m", "bench", *extra)


def cmd_messages(extra: list[str]) -> None:
    """The German and Italian catalogues after a change to the words: extract the messages
    again into locale/*/django.po (new ones untranslated, to be translated there), then
    compile what the site reads (django.mo, committed). Needs GNU gettext (installed by
    scripts/services.sh)."""
    if shutil.which("xgettext") is None or shutil.which("msgfmt") is None:
        sys.exit("GNU gettext is missing: install it (apt-get install gettext), then again.")
    languages = [arg for code in MESSAGE_LANGUAGES for arg in ("-l", code)]
    ignored = ["-i", ".venv", "-i", "var", "-i", "bench", "-i", "tests"]
    os.environ["DJANGO_SETTINGS_MODULE"] = "lowenherz_site.test_settings"  # no secrets needed
    manage("makemessages", *languages, *ignored, "--no-obsolete", *extra)
    manage("compilemessages", *languages, *ignored)


MESSAGE_LANGUAGES = ("de", "it")  # settings.LANGUAGES but English, the messages' own


def cmd_vapid(extra: list[str]) -> None:
    """Print a new VAPID_PRIVATE_KEY, for a server's environment (Web Push)."""
    print(f"VAPID_PRIVATE_KEY={vapid_private_key()}")


COMMANDS = {
    "run": cmd_run,
    "test": cmd_test,
    "bench": cmd_bench,
    "messages": cmd_messages,
    "vapid": cmd_vapid,
}


INSTALLS_NOTHING = {"bench"}  # it measures the machine as it is (issue 25)


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(f"usage: python3 dev.py {{{','.join(COMMANDS)}}} [arguments]")
    if sys.argv[1] not in INSTALLS_NOTHING:
        ensure_venv()
    COMMANDS[sys.argv[1]](sys.argv[2:])


if __name__ == "__main__":
    main()
