"""Issue 21: a task is queued only after the transaction that makes it owed commits. A
worker that took it earlier would find the phase unchanged, the moves or the email row
not there yet, do nothing, and leave the game waiting for the recovery pass (or, had
the transaction rolled back, act on what never happened).

Each task's `apply_async` is replaced by a recorder that looks, at the moment of
queueing, whether the caller is still inside a transaction and whether what the task
will read is visible from another connection to PostgreSQL (as a worker's would be).
Real transactions: the test commits (transactional_db).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import psycopg
import pytest
from django.conf import settings
from django.db import connection

from games import services, tasks
from games.mail import notify
from games.models import Game, OutgoingEmail, PendingSubmission
from tests.site.conftest import database_url, three_player_game
from tests.site.test_resolve_queue import submit_all

pytestmark = pytest.mark.django_db(transaction=True)


@dataclass(frozen=True)
class Queued:
    task: str
    args: tuple[int, ...]
    in_transaction: bool  # the caller's connection was inside an atomic block
    visible: bool  # what the task reads was committed: another connection saw it


@pytest.fixture
def other(on_postgresql) -> Iterator[psycopg.Connection]:
    """A second connection to the test database, reading only what is committed."""
    with psycopg.connect(database_url(settings.DATABASES["default"]), autocommit=True) as conn:
        yield conn


def one(other: psycopg.Connection, sql: str, *params: int) -> object:
    row = other.execute(sql, params).fetchone()
    return row[0] if row else None


def checks(other: psycopg.Connection) -> dict[str, Callable[..., bool]]:
    """For each task, whether what it will read is visible to another connection."""
    game = Game._meta.db_table
    pending = PendingSubmission._meta.db_table
    email = OutgoingEmail._meta.db_table

    def resolve(game_id: int, phase: int) -> bool:  # every awaited move of the phase is in
        waiting = Game.objects.get(pk=game_id).engine_state.waiting
        stored = one(
            other,
            f"SELECT count(*) FROM {pending} WHERE game_id = %s AND phase_number = %s",
            game_id,
            phase,
        )
        return stored == len(waiting)

    def notify_phase(game_id: int, phase: int) -> bool:  # the new phase is the game's
        return one(other, f"SELECT phase_number FROM {game} WHERE id = %s", game_id) == phase

    def send_email(email_id: int) -> bool:  # the email's row is there to be claimed
        return one(other, f"SELECT count(*) FROM {email} WHERE id = %s", email_id) == 1

    return {"resolve_phase": resolve, "notify_phase": notify_phase, "send_email": send_email}


@pytest.fixture
def queued(other, monkeypatch) -> list[Queued]:
    seen: list[Queued] = []
    for name, visible in checks(other).items():

        def record(args, *_, name=name, visible=visible, **__) -> None:
            seen.append(Queued(name, tuple(args), connection.in_atomic_block, visible(*args)))

        monkeypatch.setattr(getattr(tasks, name), "apply_async", record)
    return seen


def test_the_resolve_and_a_new_phase_s_emails_are_queued_after_their_commit(
    alice, bob, charlie, queued
):
    game = three_player_game(alice, bob, charlie)  # the first phase: its emails
    number = submit_all(game)  # the last move: its resolve
    assert services.resolve(game.pk, number)  # as the worker does: the next phase's emails
    notify.phase_changed(game.pk, number + 1)  # as the worker does: each email's send

    kinds = {q.task for q in queued}
    assert kinds == {"resolve_phase", "notify_phase", "send_email"}, queued
    assert [q.args for q in queued if q.task == "notify_phase"] == [
        (game.pk, number),
        (game.pk, number + 1),
    ]
    for each in queued:
        assert not each.in_transaction, f"{each.task}{each.args} queued inside a transaction"
        assert each.visible, f"{each.task}{each.args} queued before its commit was visible"
