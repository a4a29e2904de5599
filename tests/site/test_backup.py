"""Backup and restore (README: "Backups"): the README's own commands, read from its text
so that the two cannot drift, dump a database with a game running (secret submissions
stored mid-phase), games finished and emails in every state of the outbox, and restore
the dump into a new database. A deployment on the restored database (a real worker,
beat and SMTP listener: tests/site/cluster.py) carries on: the running game resumes
and resolves, every finished game replays to its score, and no email the dump records
as sent (or given up) is sent again, while those it records as still to send go once.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import smtplib
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import psycopg
import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection, connections
from django.db.models import F
from django.db.utils import load_backend
from django.utils import timezone
from psycopg import sql

from engine.notation import parse_move
from games import services
from games.mail import notify, outbox
from games.models import Game, OutgoingEmail, ReplyToken
from games.views.archive import game_record
from tests.site.cluster import FAST, HANG_SECONDS, Cluster, RedisServer, publishing_to, wait_until
from tests.site.conftest import ROOT, database_url, make_user, unavailable
from tests.site.test_faults import (
    MESSAGE_ID,
    computer_game,
    legal_move,
    people_game,
    play_in_process,
)
from tests.site.test_outbox import SMTPServer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(300)]

Status = OutgoingEmail.Status
RESTORED = "restored"  # the Django alias of the restored database, in this process


# --- the README's commands --------------------------------------------------------------


def readme_section(heading: str) -> str:
    """The README's text from `heading` to the next heading of its level or above (a
    line in a code block is no heading)."""
    lines = (ROOT / "README.md").read_text().splitlines(keepends=True)
    start, level = lines.index(f"{heading}\n"), heading.index(" ")
    fenced = False
    for end in range(start + 1, len(lines)):
        fenced ^= lines[end].startswith("```")
        if not fenced and re.match(rf"#{{1,{level}}} ", lines[end]):
            break
    else:
        end = len(lines)
    return "".join(lines[start:end])


def shell_blocks(text: str) -> list[str]:
    return re.findall(r"```sh\n(.*?)```", text, re.DOTALL)


def backup_commands() -> tuple[str, str, str]:
    """The README's backup, restore and Docker Compose blocks."""
    blocks = shell_blocks(readme_section("### Backups"))
    plain = [b for b in blocks if "docker compose" not in b]
    compose = [b for b in blocks if "docker compose" in b]
    assert len(plain) == 2 and len(compose) == 1, blocks
    return plain[0], plain[1], compose[0]


# Options that say which database, which differ between a host and compose's container.
CONNECTION = frozenset({"--dbname", "--username", "--maintenance-db"})


def options(command: str) -> tuple[str, frozenset[str]]:
    """A command line's tool and its options (with their values) but the connection's."""
    words = shlex.split(command)
    if words[:4] == ["docker", "compose", "exec", "-T"]:
        words = words[5:]  # after the service's name
    return words[0], frozenset(
        w for w in words[1:] if w.startswith("--") and w.partition("=")[0] not in CONNECTION
    )


def test_the_compose_commands_are_the_tested_ones_in_its_container():
    """The compose lines cannot be run here (no Docker): they must be the tested
    commands, with the same options, run in compose's postgres container."""
    backup, restore, compose = backup_commands()
    tested = dict(options(line) for line in (backup + restore).splitlines() if line.strip())
    in_compose = [
        options(line)
        for line in compose.splitlines()
        if line.startswith("docker compose exec -T postgres ")
    ]
    assert {tool for tool, _ in in_compose} == set(tested) == {"pg_dump", "createdb", "pg_restore"}
    for tool, flags in in_compose:
        assert flags == tested[tool], tool
    assert "--format=custom" in tested["pg_dump"]
    assert {"--no-owner", "--exit-on-error", "--single-transaction"} <= tested["pg_restore"]


# --- PostgreSQL's tools, of the server's version --------------------------------------------


TOOLS = ("pg_dump", "pg_restore", "createdb")


def server_tools() -> Path:
    """The folder of the tools of the server's major version: an older pg_dump refuses a
    newer server, and a newer one writes dumps that an older pg_restore cannot read."""
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version_num")
        major = int(cursor.fetchone()[0]) // 10000
    on_path = shutil.which("pg_dump")
    for folder in (
        Path(f"/usr/lib/postgresql/{major}/bin"),
        Path(f"/usr/pgsql-{major}/bin"),
        Path(on_path).parent if on_path else None,
    ):
        if (
            folder
            and all((folder / tool).exists() for tool in TOOLS)
            and tool_major(folder / "pg_dump") == major
        ):
            return folder
    unavailable(
        f"the backup test needs {', '.join(TOOLS)} of PostgreSQL {major}, the "
        f"server's version (Debian: apt-get install postgresql-client-{major})"
    )


def tool_major(tool: Path) -> int:
    version = subprocess.run([tool, "--version"], capture_output=True, text=True).stdout
    found = re.search(r"(\d+)\.\d+", version)
    return int(found.group(1)) if found else 0


def run(block: str, env: dict[str, str], cwd: Path) -> None:
    done = subprocess.run(
        ["sh", "-e", "-c", block], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, f"{block}\n{done.stderr}"


def drop(url: str, name: str) -> None:
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )


@contextlib.contextmanager
def restored_database(tmp_path: Path) -> Iterator[str]:
    """The test database dumped and restored by the README's commands into a new one
    (dropped afterwards); yields its URL."""
    backup, restore, _ = backup_commands()
    source = database_url(settings.DATABASES["default"])
    name = f"{settings.DATABASES['default']['NAME']}_restored"
    target = f"{source.rsplit('/', 1)[0]}/{name}"
    env = {
        **os.environ,
        "PATH": f"{server_tools()}{os.pathsep}{os.environ['PATH']}",
        "DATABASE_URL": source,
        "RESTORE_URL": target,
    }
    drop(source, name)  # left by a run that was killed
    try:
        run(backup, env, tmp_path)
        run(restore, env, tmp_path)
        yield target
    finally:
        drop(source, name)


@contextlib.contextmanager
def django_alias(alias: str, name: str) -> Iterator[None]:
    """`.using(alias)` reads the database `name` on the test database's server. The
    connection is made here, not declared in the settings: the test case allows only
    its own databases, and such a connection is not one of them."""
    settings_dict = {**connections["default"].settings_dict, "NAME": name}
    connections[alias] = load_backend(settings_dict["ENGINE"]).DatabaseWrapper(settings_dict, alias)
    try:
        yield
    finally:
        connections[alias].close()
        del connections[alias]


# --- what the dump holds ------------------------------------------------------------------


@contextlib.contextmanager
def no_tasks() -> Iterator[None]:
    """Before the dump no worker runs: what would be queued is left to the rows (the
    recovery pass and the outbox's sweep find it there after the restore)."""
    with pytest.MonkeyPatch.context() as patch:
        for kind in ("notify", "resolve", "computer"):
            patch.setattr(f"games.services._dispatch_{kind}", lambda *args: None)
        patch.setattr(outbox, "_dispatch", lambda *args: None)
        yield


# The states of the outbox at the dump, and what the restored site must do with each.
STILL_TO_SEND = (Status.QUEUED, Status.RETRYING, Status.SENDING)


def outbox_at_the_dump(asked: list[OutgoingEmail], waiting: list[OutgoingEmail]) -> dict[int, str]:
    """As if the site had sent or given up on the asks of one game (`asked`), and the
    others (`waiting`, of a game that stays where it is) were queued, waiting for a
    retry and being sent when the dump was taken. Their states by id."""
    now = timezone.now()
    # When the restored site takes the one being sent for a dead worker's (outbox.stuck_after).
    stuck = now + timedelta(
        seconds=int(FAST["TASK_TIME_LIMIT_SECONDS"]) + int(FAST["RECOVERY_GRACE_SECONDS"])
    )
    states = dict(
        zip(
            (e.pk for e in asked + waiting),
            (Status.SENT, Status.FAILED, Status.SENT, *STILL_TO_SEND),
            strict=True,
        )
    )
    for email in asked + waiting:
        state = email.status = states[email.pk]
        email.attempts = 0 if state == Status.QUEUED else 1
        email.next_attempt_at = {
            Status.QUEUED: now,
            Status.RETRYING: now,
            Status.SENDING: stuck,
        }.get(state)
        email.sent_at = now if state == Status.SENT else None
        email.save()
    return states


def reply(port: int, sender: str, to: str, text: str) -> bytes:
    """An email to the SMTP listener; its answer to the DATA."""
    message = EmailMessage()
    message["From"], message["To"], message["Subject"] = sender, to, "Re: your move"
    message.set_content(text)
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
        smtp.ehlo()
        smtp.mail(sender)
        smtp.rcpt(to)
        return smtp.data(message.as_bytes())[1]


def replayed(record: dict, tmp_path: Path) -> dict:
    """`python -m engine.replay --json` on a game's record: exit 0 when the replay ends
    with the result the record says."""
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record))
    done = subprocess.run(
        [sys.executable, "-m", "engine.replay", "--json", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@contextlib.contextmanager
def deployment(tmp_path: Path, url: str) -> Iterator[tuple[Cluster, SMTPServer, int]]:
    """A worker, a beat and the SMTP listener on the database at `url`, sending to an
    SMTP server of the test's; yields them, the server and the listener's port."""
    mailbox, redis_server = SMTPServer(), RedisServer(tmp_path)
    mailbox.start()
    redis_server.start()
    cluster = Cluster(
        redis_server,
        tmp_path,
        database=url,
        extra_env={"EMAIL_URL": f"smtp://127.0.0.1:{mailbox.port}"},
    )
    try:
        with publishing_to(redis_server.url):
            cluster.worker("worker")
            cluster.beat("beat")
            yield cluster, mailbox, cluster.smtpd("smtpd")[1]
    finally:
        cluster.stop()
        redis_server.stop()
        mailbox.stop()


# --- the test -----------------------------------------------------------------------------


@dataclass
class Dumped:
    """What the database held when the dump was taken."""

    running: Game  # alice's and bob's moves stored (secret), charlie's awaited
    complete: Game  # every move stored; its resolve had not run
    finished: list[Game]
    records: dict[int, dict]  # each finished game's record, as the archive gives it
    states: dict[int, str]  # the "your move" emails' states, by id


def finished_game(person: User, seed: int) -> Game:
    """A computer game played to its end, its news told long before the dump."""
    game = computer_game(
        person, f"Finished {seed}", patches={"games.models.secrets.randbits": lambda _: seed}
    )
    play_in_process(game)
    Game.objects.filter(pk=game.pk).update(notified_phase=F("phase_number"))
    return Game.objects.get(pk=game.pk)


def a_site_to_dump(alice: User, bob: User, charlie: User) -> Dumped:
    with no_tasks():
        running = people_game(alice, bob, charlie, "Running")
        waiting = people_game(alice, bob, charlie, "Waiting")
        for game in (running, waiting):  # their "your move" emails
            notify.phase_changed(game.pk, game.phase_number)
        complete = people_game(alice, bob, charlie, "Complete")
        finished = [finished_game(make_user(f"watcher{seed}"), seed) for seed in (1, 2)]
        for game, seats in (
            (running, running.seats.exclude(user=charlie)),
            (complete, complete.seats.all()),
        ):  # resolves: not queued
            for seat in seats:
                services.submit(game.pk, seat.pk, parse_move(legal_move(game, seat)))
    assert all(g.is_finished for g in finished)
    asks = OutgoingEmail.objects.filter(kind="your_turn").order_by("user__username")
    states = outbox_at_the_dump(list(asks.filter(game=running)), list(asks.filter(game=waiting)))
    return Dumped(
        Game.objects.get(pk=running.pk),
        Game.objects.get(pk=complete.pk),
        finished,
        {g.pk: game_record(g) for g in finished},
        states,
    )


def assert_the_running_games_resume(
    dumped: Dumped, smtpd_port: int, charlie: User, later: ReplyToken
) -> None:
    on = Game.objects.using(RESTORED)
    complete, number = dumped.complete, dumped.complete.phase_number
    wait_until(
        lambda: on.get(pk=complete.pk).phase_number > number,
        "the recovery pass has the complete phase resolved",
        timeout=HANG_SECONDS,
    )
    assert on.get(pk=complete.pk).record.filter(phase_number=number).count() == 3
    game, number = dumped.running, dumped.running.phase_number
    assert on.get(pk=game.pk).pending.filter(phase_number=number).count() == 2
    # A reply address the restored site never issued: refused, and nobody answered.
    unknown = f"play+{later.token}@{settings.REPLY_DOMAIN}"
    assert b"refused" in reply(smtpd_port, charlie.email, unknown, "pass")
    # Charlie's reply to the email of the dump's phase completes it.
    ask = OutgoingEmail.objects.get(game=game, user=charlie, kind="your_turn")
    move = legal_move(game, game.seats.get(user=charlie))
    assert b"accepted" in reply(smtpd_port, charlie.email, ask.reply_to, move)
    wait_until(
        lambda: on.get(pk=game.pk).phase_number > number,
        "a worker resolves the phase on the restored database",
        timeout=HANG_SECONDS,
    )
    assert on.get(pk=game.pk).record.filter(phase_number=number).count() == 3


def assert_the_finished_games_replay(dumped: Dumped, tmp_path: Path) -> None:
    for game in dumped.finished:
        record = game_record(Game.objects.using(RESTORED).get(pk=game.pk))
        assert record == dumped.records[game.pk]
        assert replayed(record, tmp_path) == record["result"]  # the same scores and winners


def assert_no_email_sent_twice(dumped: Dumped, cluster: Cluster, mailbox: SMTPServer) -> None:
    """Sent (or given up on) at the dump: never again. Queued, retrying or being sent at
    the dump: sent once."""
    emails, states = OutgoingEmail.objects.using(RESTORED), dumped.states
    wait_until(
        lambda: not emails.filter(pk__in=states, status__in=STILL_TO_SEND).exists(),
        "the emails the dump holds unsent are sent",
        timeout=HANG_SECONDS,
    )
    cluster.stop()  # nothing is sent while the mailbox is counted
    received = Counter(
        int(MESSAGE_ID.match(str(m["Message-ID"])).group(1))  # type: ignore
        for m in mailbox.messages
    )
    assert {pk: received[pk] for pk in states} == {
        pk: 1 if state in STILL_TO_SEND else 0 for pk, state in states.items()
    }
    assert max(received.values()) == 1
    assert dict(emails.filter(pk__in=states).values_list("pk", "status")) == {
        pk: Status.SENT if state in STILL_TO_SEND else state for pk, state in states.items()
    }
    assert not emails.filter(kind__in=["refusal", "move_refused"]).exists()  # nobody answered


def test_a_restored_dump_resumes_its_games_and_sends_no_email_twice(
    on_postgresql, transactional_db, alice, bob, charlie, tmp_path
):
    dumped = a_site_to_dump(alice, bob, charlie)
    with restored_database(tmp_path) as url:
        # After the dump the old site went on, and gave charlie a new reply address.
        later = ReplyToken.objects.create(
            seat=dumped.running.seats.get(user=charlie), phase_number=dumped.running.phase_number
        )
        with (
            django_alias(RESTORED, url.rsplit("/", 1)[1]),
            deployment(tmp_path, url) as (cluster, mailbox, smtpd_port),
        ):
            assert_the_running_games_resume(dumped, smtpd_port, charlie, later)
            assert_the_finished_games_replay(dumped, tmp_path)
            assert_no_email_sent_twice(dumped, cluster, mailbox)
