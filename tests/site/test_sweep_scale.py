"""The beat's sweep costs what is due, not what is running (issue 11), and reminders are
armed where a deadline is set or moved, not by the sweep scanning every game.

Counted, never timed: the SQL queries of an idle sweep, and the rows they bring back to
Python (PostgreSQL reports them), at 10 and at 60 running games. The figure with 10,000
games is `python -m bench --only sweep-scale`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone

from engine.ai import RandomPlayer
from games import deadlines, services, votes
from games.mail import compose, notify
from games.models import Game, Notifications, Reminder, Seat
from games.tasks import sweep_once as sweep
from tests.site.conftest import make_user
from tests.site.test_deadlines import extend

HOUR = timedelta(hours=1)
MINUTE = timedelta(minutes=1)


@pytest.fixture(autouse=True)
def reminded(monkeypatch) -> list[str]:
    """The colours `compose.reminder` was called for, in order (no email is built)."""
    calls: list[str] = []
    monkeypatch.setattr(compose, "reminder", lambda game, seat: calls.append(seat.colour))
    return calls


def fresh(game: Game) -> Game:
    return Game.objects.get(pk=game.pk)


def armed(game: Game) -> set[tuple[str, int]]:
    """(colour, hours before) of the game's unsent reminders for its current deadline."""
    game = fresh(game)
    return set(
        Reminder.objects.filter(
            seat__game=game,
            sent_at__isnull=True,
            deadline=game.deadline,
            phase_number=game.phase_number,
        ).values_list("seat__colour", "hours_before")
    )


EVERYONE = {(c, h) for c in ("red", "ochre", "lilac") for h in (24, 2)}


# --- an idle sweep: the same work at 10 and at 60 running games --------------------------------


def more_games(template: Game, people: list[User], count: int) -> None:
    """`count` copies of a started game, each with two of `people` and a computer, their
    reminders armed as the site arms them (the running games an idle sweep must not read)."""
    for i in range(count):
        game = Game.objects.create(
            name=f"copy {i}",
            player_count=3,
            setup=template.setup,
            status=Game.Status.RUNNING,
            state=template.state,
            phase_number=template.phase_number,
            phase_kind=template.phase_kind,
            waiting=template.waiting,
            turn=template.turn,
            deadline=template.deadline + i * MINUTE,
            creator=people[0],
        )
        for position, colour in enumerate(("red", "ochre", "lilac")):
            user = people[(2 * i + position) % len(people)] if position < 2 else None
            Seat.objects.create(
                game=game, colour=colour, position=position, user=user, is_computer=user is None
            )
        notify.arm_reminders(timezone.now(), game)


@contextmanager
def counting() -> Iterator[dict[str, int]]:
    """The SQL statements run and the rows they returned to Python (PostgreSQL's rowcount
    of a SELECT; SQLite says -1, counted as 0)."""
    seen = {"queries": 0, "rows": 0}

    def count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        result = execute(sql, params, many, context)
        seen["queries"] += 1
        if sql.lstrip().upper().startswith("SELECT"):
            seen["rows"] += max(context["cursor"].rowcount, 0)
        return result

    with connection.execute_wrapper(count):
        yield seen


def idle_sweep(now: datetime) -> dict[str, int]:
    with counting() as seen:
        sweep(now=now)
    return dict(seen)


def test_an_idle_sweep_does_not_grow_with_the_running_games(
    game, alice, bob, charlie, dave, reminded
):
    people = [alice, bob, charlie, dave, *(make_user(f"p{i}") for i in range(6))]
    Game.objects.filter(pk=game.pk).update(work_due_since=None)  # its emails went out
    now = fresh(game).deadline - 30 * HOUR  # nothing due: no deadline, reminder or email
    more_games(game, people, 9)
    assert Game.objects.filter(status=Game.Status.RUNNING).count() == 10
    small = idle_sweep(now)
    more_games(game, people, 50)
    assert Game.objects.filter(status=Game.Status.RUNNING).count() == 60
    assert Reminder.objects.count() > 200  # armed for every person's seat, none due
    large = idle_sweep(now)
    assert large == small, "an idle sweep must read what is due, not every running game"
    assert reminded == []


def test_the_sweep_arms_nothing(game):
    """Reminders are armed where the deadline is set, not by the sweep."""
    Reminder.objects.all().delete()
    sweep(now=fresh(game).deadline - 30 * HOUR)
    assert not Reminder.objects.exists()


# --- armed where a deadline is set or moved ------------------------------------------------


def test_a_new_phase_arms_its_reminders_and_the_sweep_sends_them(game, reminded):
    assert armed(game) == EVERYONE  # when the game started, no sweep needed
    deadline = fresh(game).deadline
    assert set(Reminder.objects.values_list("due_at", flat=True)) == {
        deadline - 24 * HOUR,
        deadline - 2 * HOUR,
    }
    sweep(now=deadline - 24 * HOUR)
    assert sorted(reminded) == ["lilac", "ochre", "red"]
    sweep(now=deadline - 2 * HOUR)
    assert len(reminded) == 6


def test_the_next_phase_arms_its_own_and_drops_the_last_ones(game):
    for seat in Seat.objects.filter(game=game, colour__in=game.waiting):
        state = fresh(game).engine_state
        move = RandomPlayer(f"{game.pk}/{seat.colour}").choose(state, seat.colour)
        services.submit_move(game.pk, seat.pk, move)
    assert services.resolve(game.pk, game.phase_number)
    game = fresh(game)
    waiting = {(c, h) for c in game.waiting for h in (24, 2)}
    assert armed(game) == waiting
    assert set(
        Reminder.objects.filter(sent_at__isnull=True).values_list("phase_number", flat=True)
    ) == {game.phase_number}


def test_an_extended_deadline_re_arms_its_reminders(game, alice, reminded):
    deadline = fresh(game).deadline
    extended = extend(game, 5)  # by the table's vote
    assert extended == deadline + 5 * HOUR
    assert armed(game) == EVERYONE
    assert not Reminder.objects.filter(deadline=deadline).exists()  # not due yet: dropped
    sweep(now=deadline - 2 * HOUR)  # the old 2 h row is gone; the new 24 h one is due
    assert sorted(reminded) == ["lilac", "ochre", "red"]
    assert armed(game) == {(c, 2) for c in ("red", "ochre", "lilac")}
    sweep(now=extended - 2 * HOUR)
    assert len(reminded) == 6


def test_an_absence_extends_the_deadline_and_re_arms_the_reminders(game, bob, reminded):
    deadline = fresh(game).deadline
    back = deadline + 10 * HOUR
    Notifications.objects.create(user=bob, away_from=deadline - 40 * HOUR, away_until=back)
    sweep(now=deadline - 30 * HOUR)
    extended = fresh(game).deadline
    assert extended == back + 48 * HOUR
    assert armed(game) == EVERYONE
    sweep(now=extended - 2 * HOUR)
    assert sorted(reminded) == ["lilac", "ochre", "red"]


def test_a_game_resumed_after_a_pause_arms_its_reminders(game, bob, reminded):
    Game.objects.filter(pk=game.pk).update(on_absence="pause")
    deadline = fresh(game).deadline
    back = deadline + 10 * HOUR
    Notifications.objects.create(user=bob, away_from=deadline - 40 * HOUR, away_until=back)
    sweep(now=deadline - 30 * HOUR)
    assert fresh(game).paused
    sweep(now=back)
    resumed = fresh(game)
    assert not resumed.paused and resumed.deadline == back + 30 * HOUR
    assert armed(game) == EVERYONE
    sweep(now=resumed.deadline - 2 * HOUR)
    assert sorted(reminded) == ["lilac", "ochre", "red"]


def test_a_seat_taken_back_is_reminded_again(game, bob, reminded):
    ochre = Seat.objects.get(game=game, user=bob)
    Seat.objects.filter(pk=ochre.pk).update(standin=True)
    votes.propose(game.pk, game.creator, "extend", 1)  # armed while a computer plays ochre
    votes.cast(game.pk, User.objects.get(username="charlie"), True)
    assert ("ochre", 2) not in armed(game)
    deadlines.take_seat_back(game.pk, bob)
    assert armed(game) == EVERYONE
    sweep(now=fresh(game).deadline - 2 * HOUR)
    assert sorted(reminded) == ["lilac", "ochre", "red"]


def test_muting_drops_the_reminders_and_unmuting_arms_them(game, bob, reminded):
    ochre = Seat.objects.get(game=game, user=bob)
    notify.set_muted(ochre, True)
    assert armed(game) == EVERYONE - {("ochre", 24), ("ochre", 2)}
    notify.set_muted(ochre, False)
    assert armed(game) == EVERYONE
    sweep(now=fresh(game).deadline - 2 * HOUR)
    assert sorted(reminded) == ["lilac", "ochre", "red"]


def test_reminders_follow_the_hours_a_person_chooses(game, bob, reminded):
    notifications, _ = Notifications.objects.get_or_create(user=bob)
    notifications.reminder_hours = [5]
    notifications.save()  # as the preferences form saves it
    assert {h for c, h in armed(game) if c == "ochre"} == {5}
    deadline = fresh(game).deadline
    sweep(now=deadline - 24 * HOUR)
    assert sorted(reminded) == ["lilac", "red"]
    sweep(now=deadline - 5 * HOUR)
    assert reminded[2:] == ["ochre"]


def test_hours_changed_behind_the_form_s_back_are_moot_when_due(game, bob, reminded):
    """A row armed for hours the person no longer wants is not sent (set by an update that
    sends no signal)."""
    Notifications.objects.create(user=bob)
    Notifications.objects.filter(user=bob).update(reminder_hours=[5])
    sweep(now=fresh(game).deadline - 24 * HOUR)
    assert sorted(reminded) == ["lilac", "red"]


def test_arming_twice_arms_once(game):
    before = Reminder.objects.count()
    notify.arm_reminders(timezone.now(), fresh(game))
    notify.arm_reminders(timezone.now())  # the repair: every running game
    assert Reminder.objects.count() == before == 6
