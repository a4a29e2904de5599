"""The README's first steps, run as written (issue 24, item 1).

`python3 dev.py run` serves a fresh copy of this checkout on a free port, as a newcomer's
shell would start it (no variable of the site set). Then the steps of "Playing a turn"
(the demo's login, its game waiting in *My games*) and the shell blocks of "Playing a
turn" and "Playing by email, locally", in order and as written: the only word changed is
the reply address's TOKEN, which a reader copies from the demo's email. The reply is fed
in with the README's own `receive_email` command, run by hand beside the served site; the
move is applied, and every link in every email written (by the site's processes and by
that command) goes where the site is served.
"""

from __future__ import annotations

import contextlib
import email
import email.policy
import http.cookiejar
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SECTIONS = ("Playing a turn", "Playing by email, locally")
TOKEN_ADDRESS = "play+TOKEN@localhost"  # the README's reply address, TOKEN to copy
# Bounds, not promises: the run migrates a new SQLite database and plays the demo's two
# games before it serves; a phase resolves as soon as the worker takes its task.
START_SECONDS = 240
RESOLVE_SECONDS = 60
STOP_SECONDS = 60  # dev.py gives its web server and two workers 15 s each to finish
LINK = re.compile(r"https?://[^\s\"'<>]+")

pytestmark = pytest.mark.timeout(START_SECONDS + RESOLVE_SECONDS + STOP_SECONDS + 60)

T = TypeVar("T")


# --- the README ----------------------------------------------------------------------------------


def section(title: str, text: str) -> str:
    """A section's own text: from its heading (which starts with `title`) to the next
    heading of any level."""
    found = re.search(rf"^#+ {re.escape(title)}.*?$(.*?)(?=^#|\Z)", text, re.M | re.S)
    assert found, f"the README has no section {title!r}"
    return found.group(1)


def shell_blocks(text: str) -> list[str]:
    return re.findall(r"^```sh\n(.*?)^```", text, re.M | re.S)


def local_play_blocks() -> list[str]:
    readme = README.read_text()
    return [block for title in SECTIONS for block in shell_blocks(section(title, readme))]


def demo_login() -> tuple[str, str]:
    """The demo's username and password, as "Playing a turn" gives them."""
    found = re.search(
        r"log in as \*\*(\S+)\*\* with the password\s+\*\*(\S+)\*\*",
        section(SECTIONS[0], README.read_text()),
    )
    assert found, "the README no longer says how to log in as the demo"
    return found.group(1), found.group(2)


def test_the_readme_has_the_local_email_steps_to_run():
    blocks = local_play_blocks()
    assert sum(block.count(TOKEN_ADDRESS) for block in blocks) == 1
    assert any(".venv/bin/python manage.py receive_email < reply.eml" in b for b in blocks)
    assert demo_login() == ("demo", "lionheart-demo")


# --- a fresh copy, served --------------------------------------------------------------------


@dataclass
class Served:
    folder: Path  # the copy of the checkout
    url: str  # where it is served, as the person typed it
    env: dict[str, str]  # a newcomer's shell

    @property
    def mail(self) -> Path:
        return self.folder / "var" / "mail"


def fresh_copy(target: Path) -> Path:
    """This checkout as a clone of it holds it (tracked files and new ones not ignored),
    with the virtual environment `dev.py` would install (the same pinned dependencies)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    (target / ".venv").symlink_to(ROOT / ".venv")
    return target


def newcomers_shell() -> dict[str, str]:
    """A shell where nothing of the site is set: no database, secrets, DEBUG or site URL."""
    kept = ("PATH", "HOME", "LANG", "TMPDIR")
    return {name: os.environ[name] for name in kept if name in os.environ}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    if not (ROOT / ".venv" / "bin" / "python").exists() or shutil.which("git") is None:
        pytest.skip("needs git and the checkout's .venv (python3 dev.py test makes it)")
    folder = fresh_copy(tmp_path_factory.mktemp("clone"))
    address = f"127.0.0.1:{free_port()}"
    env = newcomers_shell()
    log = (folder.parent / "dev-run.log").open("wb")
    process = subprocess.Popen(
        ["python3", "dev.py", "run", address],
        cwd=folder,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    site = Served(folder, f"http://{address}", env)
    try:
        wait_until(lambda: answers(site, process), "the site answers", START_SECONDS)
        yield site
    finally:
        stop(process)
        log.close()


def answers(site: Served, process: subprocess.Popen) -> bool:
    if process.poll() is not None:
        log = (site.folder.parent / "dev-run.log").read_text(errors="replace")
        raise AssertionError(f"dev.py run ended ({process.returncode}):\n{log[-3000:]}")
    try:
        with urllib.request.urlopen(f"{site.url}/healthz", timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


def stop(process: subprocess.Popen) -> None:
    """As Ctrl-C's neighbour SIGTERM does: dev.py stops its web server and worker, then
    itself; whatever is left (a run that hung) is killed, with its children's groups."""
    children = _children(process.pid)
    with contextlib.suppress(ProcessLookupError):
        process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        for pid in [process.pid, *children]:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
        process.wait()


def _children(pid: int) -> list[int]:
    """The processes `pid` started (dev.py starts each in a session of its own)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError, ValueError):
            if int(stat.read_text().rpartition(")")[2].split()[1]) == pid:
                found.append(int(stat.parent.name))
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until(condition: Callable[[], T], what: str, timeout: float) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting until {what}")


# --- a person at the site --------------------------------------------------------------------


class Browser:
    """Pages fetched with a session cookie, as a browser would."""

    def __init__(self, site: Served) -> None:
        self.site = site
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )

    def get(self, path: str) -> str:
        with self.opener.open(f"{self.site.url}{path}", timeout=20) as response:
            return response.read().decode()

    def json(self, game: str) -> dict:
        return json.loads(self.get(f"/games/{game}/view.json"))

    def log_in(self, username: str, password: str) -> None:
        page = self.get("/accounts/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert token, "the login page has no form"
        data = urllib.parse.urlencode(
            {"username": username, "password": password, "csrfmiddlewaretoken": token.group(1)}
        ).encode()
        with self.opener.open(f"{self.site.url}/accounts/login/", data, timeout=20) as answer:
            assert urllib.parse.urlsplit(answer.url).path == "/", "the login was refused"


def emails_in(folder: Path) -> list[email.message.EmailMessage]:
    """The emails written as files (Django's file backend: several to a file, each
    ending in a line of dashes), oldest first, as `ls -tr` lists them."""
    found = []
    for path in sorted(folder.iterdir(), key=lambda p: p.stat().st_mtime):
        for raw in re.split(rb"\n-{79}\n", path.read_bytes()):
            if raw.strip():
                found.append(email.message_from_bytes(raw, policy=email.policy.default))
    return found


def written_texts(site: Served) -> list[str]:
    """Every email the site wrote: the files in var/mail, and every row of its outbox
    (held and folded ones too, as the process that composed them wrote them)."""
    texts = [
        "\n".join([*map(str, message.values()), *map(content, message.walk())])
        for message in emails_in(site.mail)
    ]
    database = site.folder / "var" / "db.sqlite3"
    with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as db:
        rows = db.execute("SELECT kind, text, html, headers FROM games_outgoingemail").fetchall()
    assert {"your_turn", "move_accepted"} <= {row[0] for row in rows}
    return texts + ["\n".join(row[1:]) for row in rows]


def content(part: email.message.EmailMessage) -> str:
    """A text part's words as its reader sees them (its transfer encoding undone)."""
    return part.get_content() if part.get_content_maintype() == "text" else ""


# --- the first steps ---------------------------------------------------------------------------


def test_the_readme_first_steps_run_as_written(served: Served):
    # Playing a turn: the demo's login, and its game waiting for it under "My games".
    demo = Browser(served)
    demo.log_in(*demo_login())
    assert "Your move" in demo.get("/")
    asking = [m for m in emails_in(served.mail) if m["X-Lowenherz-Kind"] == "your_turn"]
    assert asking, "the demo's waits-for-you email is not in var/mail"
    reply_to, game = str(asking[-1]["Reply-To"]), str(asking[-1]["X-Lowenherz-Game"])
    before = max(e["index"] for e in demo.json(game)["events"])

    # The shell blocks, in order, with the TOKEN of that email's reply address.
    for block in local_play_blocks():
        done = subprocess.run(
            ["bash", "-e", "-c", block.replace(TOKEN_ADDRESS, reply_to)],
            cwd=served.folder,
            env=served.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"{block}\n{done.stdout}\n{done.stderr}"

    # The move `decide 1, 3` is applied: the worker resolves the decisions.
    def revealed() -> dict | None:
        events = demo.json(game)["events"]
        return next(
            (e["data"] for e in events if e["kind"] == "revealed" and e["index"] > before), None
        )

    decisions = wait_until(revealed, "the decisions are revealed", RESOLVE_SECONDS)
    assert decisions["decisions"]["red"]["cards"] == [1, 3]

    # Every link of every email written goes where the site is served.
    links = [link for text in written_texts(served) for link in LINK.findall(text)]
    assert links
    assert {link for link in links if not link.startswith(f"{served.url}/")} == set()
