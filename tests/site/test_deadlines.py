"""Deadlines, reminders, absences and stand-ins (RULES 9), swept by `games.deadlines`.

Every sweep is given its `now`, relative to the game's deadline (which services set
from the real clock when the phase began): no test sleeps for a deadline. Phases are
resolved with an explicit `services.resolve` (the on_commit dispatch does not run in a
test's transaction), except in the end-to-end test with a real worker.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.db import connection
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone

from engine import game as engine
from engine.ai import RandomPlayer
from engine.moves import Bid, BreakOff, Decide, EndAlliance, Pass
from engine.notation import format_move, parse_move
from engine.serialize import move_from_json
from games import services, votes
from games.mail import compose
from games.mail.notify import reminder_hours
from games.models import Event, Game, Notifications, PendingSubmission, Reminder, Seat
from games.show.presenter import present
from games.tasks import sweep_once as sweep
from games.views.deadlines import deadline_context

HOUR = timedelta(hours=1)
MINUTE = timedelta(minutes=1)
SEED = 1  # a fixed game, so that the phases it reaches are the same every run


@pytest.fixture(autouse=True)
def reminded(monkeypatch) -> list[str]:
    """The colours `compose.reminder` was called for, in order (no email is built)."""
    calls: list[str] = []
    monkeypatch.setattr(compose, "reminder", lambda game, seat: calls.append(seat.colour))
    return calls


@pytest.fixture(autouse=True)
def no_sweep_errors(caplog) -> Iterator[None]:
    """The sweep logs a game's trouble and goes on: here that is a failure."""
    yield
    errors = [
        r.getMessage()
        for r in caplog.records
        if r.name == "games.deadlines" and r.levelno >= logging.ERROR
    ]
    assert not errors


# --- helpers ---------------------------------------------------------------------------------


@pytest.fixture
def no_dispatch(monkeypatch) -> None:
    """Nothing goes to a worker (the session's may be running): its notify_phase would
    hold the game's row lock, and a sweep rightly skips a locked game."""
    for name in ("_dispatch_notify", "_dispatch_resolve", "_dispatch_computer"):
        monkeypatch.setattr(services, name, lambda *args: None)


def fresh(game: Game) -> Game:
    return Game.objects.get(pk=game.pk)


def seat(game: Game, colour: str) -> Seat:
    return Seat.objects.get(game=game, colour=colour)


def decide(game: Game, colour: str) -> None:
    """A legal sealed decision (RULES 3.2), submitted as a person does."""
    state = fresh(game).engine_state
    move = RandomPlayer(f"{game.pk}/{colour}").choose(state, colour)
    services.submit_move(game.pk, seat(game, colour).pk, move)


def pending(game: Game, colour: str) -> object:
    row = PendingSubmission.objects.get(seat=seat(game, colour), phase_number=game.phase_number)
    return move_from_json(row.move)


def missed(game: Game) -> dict[str, int]:
    return dict(Seat.objects.filter(game=game).values_list("colour", "missed_deadlines"))


def events(game: Game, kind: str) -> list[dict]:
    return list(Event.objects.filter(game=game, kind=kind).values_list("data", flat=True))


def seeded_game(alice: User, bob: User, charlie: User, **options) -> Game:
    """alice red (the creator), bob ochre, charlie lilac; basic setup, seed SEED."""
    settings = {
        "name": "Deadlines",
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
    game = services.create_game(alice, **settings)
    services.join_game(game.pk, bob, "ochre")
    Game.objects.filter(pk=game.pk).update(seed=SEED)
    services.join_game(game.pk, charlie, "lilac")
    return fresh(game)


def play_one_phase(game: Game, step: int) -> None:
    """Everyone awaited submits a random legal move (computers and stand-ins by
    services.play_computer), then the phase is resolved."""
    state = game.engine_state
    movers = state.waiting if engine.is_simultaneous(state) else state.waiting[:1]
    for colour in movers:
        mover = seat(game, colour)
        if mover.is_computer or mover.standin:
            services.play_computer(game.pk, game.phase_number, mover.pk)
            continue
        state = fresh(game).engine_state
        move = RandomPlayer(f"{step}/{colour}").choose(state, colour)
        if isinstance(move, EndAlliance):  # applied at once: keep to the phase
            move = engine.default_move(state, colour)
        services.submit_move(game.pk, mover.pk, move)
    services.resolve(game.pk, game.phase_number)


def play_until(game: Game, reached: Callable[[Game], bool], what: str, limit: int = 60) -> Game:
    for step in range(limit):
        game = fresh(game)
        if reached(game):
            return game
        assert game.status == Game.Status.RUNNING, f"the game ended before {what}"
        play_one_phase(game, step)
    raise AssertionError(f"no {what} in {limit} phases")


def at_once(count: int, act: Callable[[], object]) -> None:
    """`act` in `count` threads started together; each thread has its own connection."""
    start, errors = threading.Barrier(count), []

    def run() -> None:
        try:
            start.wait(timeout=10)
            act()
        except Exception as exc:  # shown by the assertion below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors


@contextmanager
def at(moment: datetime) -> Iterator[None]:
    """What a person or a worker does now happens at `moment` on the sweeps' clock: the
    reminders a deadline arms count from when it was set (games.mail.notify)."""
    real = timezone.now
    timezone.now = lambda: moment
    try:
        yield
    finally:
        timezone.now = real


def slowly(function: Callable, seconds: float = 0.3) -> Callable:
    """`function`, taking long enough that a concurrent sweep runs meanwhile."""

    def slow(*args, **kwargs):
        time.sleep(seconds)
        return function(*args, **kwargs)

    return slow


# --- deadlines: the defaults of RULES 9 --------------------------------------------------------


def test_a_missed_decision_gets_legal_random_cards_and_the_phase_resolves(game):
    decide(game, "red")
    chosen = pending(game, "red")
    state, number = game.engine_state, game.phase_number
    sweep(now=game.deadline + MINUTE)
    for colour in ("ochre", "lilac"):
        move = pending(game, colour)
        assert isinstance(move, Decide)
        assert move == engine.default_move(state, colour)  # the engine's default, no other
        assert engine.decision_problem(state, colour, move) is None
    assert pending(game, "red") == chosen
    assert services.resolve(game.pk, number)
    resolved = fresh(game)
    assert resolved.phase_number == number + 1
    assert sorted(resolved.record.filter(phase_number=number).values_list("colour", flat=True)) == [
        "lilac",
        "ochre",
        "red",
    ]
    assert missed(game) == {"red": 0, "ochre": 1, "lilac": 1}
    assert [sorted(e["players"]) for e in events(game, "deadline_missed")] == [["lilac", "ochre"]]


def test_a_deadline_not_yet_passed_does_nothing(game):
    sweep(now=game.deadline - MINUTE)
    assert not PendingSubmission.objects.filter(game=game).exists()
    assert missed(game) == {"red": 0, "ochre": 0, "lilac": 0}


@pytest.mark.parametrize(("kind", "default"), [("duel", Bid(0)), ("perform", Pass())])
def test_a_missed_bid_is_zero_and_a_missed_action_is_declined(alice, bob, charlie, kind, default):
    game = play_until(seeded_game(alice, bob, charlie), lambda g: g.phase_kind == kind, kind)
    number, awaited = game.phase_number, game.waiting
    sweep(now=game.deadline + MINUTE)
    assert {colour: pending(game, colour) for colour in awaited} == dict.fromkeys(awaited, default)
    assert services.resolve(game.pk, number)
    assert fresh(game).phase_number == number + 1
    recorded = game.record.filter(phase_number=number)
    assert sorted(recorded.values_list("colour", flat=True)) == sorted(awaited)
    assert {move_from_json(m) for m in recorded.values_list("move", flat=True)} == {default}
    if kind == "perform":
        declined = Event.objects.filter(game=game, phase_number=number + 1, kind="declined")
        assert list(declined.values_list("data__player", flat=True)) == awaited


def test_a_missed_negotiation_is_broken_off_once_and_both_missed_it(alice, bob, charlie):
    game = play_until(
        seeded_game(alice, bob, charlie), lambda g: g.phase_kind == "negotiation", "negotiation"
    )
    first, second = game.waiting
    sweep(now=game.deadline + MINUTE)
    assert pending(game, first) == BreakOff()
    assert not PendingSubmission.objects.filter(seat=seat(game, second)).exists()
    assert {c: n for c, n in missed(game).items() if n} == {first: 1, second: 1}
    assert services.resolve(game.pk, game.phase_number)
    assert fresh(game).phase_kind == "duel"


def test_the_end_to_end_deadline_is_resolved_by_the_worker(
    celery_worker, transactional_db, alice, bob, charlie
):
    game = seeded_game(alice, bob, charlie)
    number = game.phase_number
    decide(game, "red")
    limit = time.monotonic() + 60
    # Beat's sweeps, faster: one skips the game while the worker holds its row (telling
    # the players about the phase); a later one passes the deadline, and commits: services
    # sends the phase to the worker.
    while fresh(game).phase_number == number and time.monotonic() < limit:
        # Only just past it: the next phase's deadline, counted from its real start a
        # moment later, must not pass too when a sweep runs as the worker resolves.
        sweep(now=game.deadline + timedelta(microseconds=1))
        time.sleep(0.1)
    resolved = fresh(game)
    assert resolved.phase_number == number + 1, celery_worker.log()[-2000:]
    assert resolved.record.filter(phase_number=number).count() == 3
    assert missed(game) == {"red": 0, "ochre": 1, "lilac": 1}  # however many sweeps
    assert resolved.deadline > game.deadline  # the new phase has a deadline of its own


# --- missed deadlines in a row: a computer stands in --------------------------------------------


def test_missed_deadlines_in_a_row_bring_a_stand_in_that_plays(
    game, monkeypatch, django_capture_on_commit_callbacks
):
    Game.objects.filter(pk=game.pk).update(max_missed_deadlines=2)
    Seat.objects.filter(game=game, colour__in=["ochre", "lilac"]).update(missed_deadlines=1)
    decide(game, "red")
    decide(game, "lilac")  # in time: no longer in a row
    sweep(now=game.deadline + MINUTE)
    assert missed(game) == {"red": 0, "ochre": 2, "lilac": 0}
    assert seat(game, "ochre").standin and not seat(game, "lilac").standin
    assert events(game, "standin") == [{"kind": "standin", "player": "ochre", "missed": 2}]
    dispatched: list[tuple[int, int]] = []
    monkeypatch.setattr(
        services,
        "_dispatch_computer",
        lambda game_id, number, seat_id: dispatched.append((number, seat_id)),
    )
    ochre = seat(game, "ochre")

    def awaits_ochre(g: Game) -> bool:
        return "ochre" in g.waiting

    with django_capture_on_commit_callbacks(execute=True):
        services.resolve(game.pk, game.phase_number)
        game = play_until(game, awaits_ochre, "phase waiting for ochre")
    assert (game.phase_number, ochre.pk) in dispatched  # services schedules the stand-in
    sweep(now=game.deadline - 30 * HOUR)
    assert not Reminder.objects.filter(seat=ochre).exists()  # nobody to remind
    assert services.play_computer(game.pk, game.phase_number, ochre.pk)
    assert (
        PendingSubmission.objects.filter(seat=ochre).exists()
        or game.record.filter(phase_number=game.phase_number, colour="ochre").exists()
    )


def test_no_stand_in_when_the_game_allows_any_number_of_missed_deadlines(game):
    Game.objects.filter(pk=game.pk).update(max_missed_deadlines=0)
    Seat.objects.filter(game=game, colour="ochre").update(missed_deadlines=7)
    sweep(now=game.deadline + MINUTE)
    assert missed(game)["ochre"] == 8
    assert not seat(game, "ochre").standin


def test_a_person_who_submits_is_no_longer_missing_deadlines_in_a_row(game):
    Seat.objects.filter(game=game, colour="ochre").update(missed_deadlines=2)
    text = format_move(engine.default_move(game.engine_state, "ochre"))
    services.submit(game.pk, seat(game, "ochre").pk, parse_move(text))
    assert PendingSubmission.objects.filter(seat=seat(game, "ochre")).exists()
    assert missed(game)["ochre"] == 0


# --- taking the seat back ------------------------------------------------------------------------


def log_in(client, user: User) -> None:
    client.force_login(user)


def test_a_person_takes_their_seat_back_from_the_stand_in(client, game, bob):
    Seat.objects.filter(game=game, user=bob).update(standin=True, missed_deadlines=3)
    log_in(client, bob)
    response = client.post(reverse("take_seat_back", args=[game.pk]), follow=True)
    assert response.redirect_chain == [(reverse("game", args=[game.pk]), 302)]
    assert "Your seat is yours again" in response.content.decode()
    ochre = seat(game, "ochre")
    assert (ochre.standin, ochre.missed_deadlines) == (False, 0)
    assert not services.play_computer(game.pk, game.phase_number, ochre.pk)  # no computer now
    assert events(game, "seat_taken_back") == [{"kind": "seat_taken_back", "player": "ochre"}]
    sweep(now=game.deadline - 30 * HOUR)
    assert Reminder.objects.filter(seat=ochre).exists()  # reminded like anybody again


@pytest.mark.parametrize("who", ["bob", "dave"])
def test_only_a_seat_a_computer_stands_in_for_can_be_taken_back(client, game, who, request):
    Seat.objects.filter(game=game, colour="lilac").update(standin=True)
    log_in(client, request.getfixturevalue(who))
    response = client.post(reverse("take_seat_back", args=[game.pk]), follow=True)
    assert "Not done:" in response.content.decode()
    assert seat(game, "lilac").standin


def test_taking_a_seat_back_rejects_get_and_strangers(client, game, bob):
    url = reverse("take_seat_back", args=[game.pk])
    Seat.objects.filter(game=game, user=bob).update(standin=True)
    response = client.post(url)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    log_in(client, bob)
    assert client.get(url).status_code == 405
    assert seat(game, "ochre").standin


@pytest.mark.parametrize(
    ("who", "shown"),
    [
        ("alice", {"propose-extend", "propose-pause"}),
        ("bob", {"take-seat-back", "propose-extend", "propose-pause"}),
        ("charlie", {"propose-extend", "propose-pause"}),
        (None, set()),
    ],
)
def test_the_deadline_controls_show_what_the_viewer_may_do(game, who, shown, request):
    """Every person seated may ask the table for more time (games.votes); a spectator
    may not; the one a computer stands in for may take their seat back."""
    Seat.objects.filter(game=game, colour="ochre").update(standin=True, missed_deadlines=3)
    user = request.getfixturevalue(who) if who else AnonymousUser()
    viewer = Seat.objects.filter(game=game, user=user).first() if who else None
    game = fresh(game)
    context = deadline_context(game, viewer, present(game, viewer).names)
    html = render_to_string(
        "deadlines/_controls.html", {"game": game, "seat": viewer, "user": user, **context}
    )
    controls = {"propose-extend", "propose-pause", "take-seat-back"}
    assert {c for c in controls if f'id="{c}"' in html} == shown
    if "take-seat-back" in shown:
        assert "missed 3 deadlines in a row" in html


def extend(game: Game, hours: int) -> datetime:
    """The table extends the deadline by `hours`: alice proposes, bob's yes makes the
    majority of three (games.votes)."""
    alice, bob = (seat(game, c).user for c in ("red", "ochre"))
    assert alice is not None and bob is not None
    votes.propose(game.pk, alice, "extend", hours)
    votes.cast(game.pk, bob, True)
    deadline = fresh(game).deadline
    assert deadline is not None
    return deadline


# --- reminders -----------------------------------------------------------------------------------


def test_reminders_are_sent_once_each_and_not_to_players_who_submitted(game, reminded):
    decide(game, "red")
    deadline = game.deadline
    sweep(now=deadline - 30 * HOUR)  # armed, none due
    assert reminded == []
    for now in (deadline - 24 * HOUR, deadline - 24 * HOUR, deadline - 23 * HOUR):
        sweep(now=now)
    assert sorted(reminded) == ["lilac", "ochre"]
    decide(game, "ochre")
    for now in (deadline - 2 * HOUR, deadline - HOUR, deadline - MINUTE):
        sweep(now=now)
    assert Counter(reminded) == {"ochre": 1, "lilac": 2}


def test_each_person_chooses_when_to_be_reminded(game, bob, reminded):
    Notifications.objects.create(user=bob, reminder_hours=[5])
    deadline = game.deadline
    by_sweep = []
    for hours in (30, 24, 5, 2):
        before = len(reminded)
        sweep(now=deadline - hours * HOUR)
        by_sweep.append(sorted(reminded[before:]))  # one sweep's reminders, in no order
    assert by_sweep == [[], ["lilac", "red"], ["ochre"], ["lilac", "red"]]


def test_a_reminder_already_past_when_the_deadline_is_set_is_not_sent(
    alice, bob, charlie, reminded
):
    game = seeded_game(alice, bob, charlie, deadline_hours=12)
    sweep(now=game.deadline - 12 * HOUR)
    assert set(Reminder.objects.values_list("hours_before", flat=True)) == {2}
    sweep(now=game.deadline - 2 * HOUR)
    assert sorted(reminded) == ["lilac", "ochre", "red"]


def test_several_reminders_due_at_once_make_one_email(game, reminded):
    sweep(now=game.deadline - 30 * HOUR)
    sweep(now=game.deadline - HOUR)  # the sweeper was down: both are due
    assert sorted(reminded) == ["lilac", "ochre", "red"]
    assert not Reminder.objects.filter(sent_at__isnull=True).exists()


def test_a_deadline_moved_after_a_reminder_re_arms_it(game, alice, reminded):
    deadline = game.deadline
    sweep(now=deadline - 30 * HOUR)
    sweep(now=deadline - 2 * HOUR)
    assert sorted(reminded) == ["lilac", "ochre", "red"]
    with at(deadline - 90 * MINUTE):  # between the sweeps: the new 24 h reminder is past
        assert extend(game, 3) == deadline + 3 * HOUR
    sweep(now=deadline - HOUR)
    assert len(reminded) == 3
    sweep(now=deadline + HOUR)  # 2 h before the new deadline, past the old one
    assert Counter(reminded) == {"red": 2, "ochre": 2, "lilac": 2}
    assert not PendingSubmission.objects.filter(game=game).exists()  # it did not pass


def test_no_reminder_for_a_phase_that_is_over(game, reminded):
    sweep(now=game.deadline - 30 * HOUR)
    for colour in ("red", "ochre", "lilac"):
        decide(game, colour)
    with at(game.deadline - 90 * MINUTE):  # the next phase's deadline counts from here
        services.resolve(game.pk, game.phase_number)
    sweep(now=game.deadline - HOUR)  # the old phase's reminders are due, and moot
    assert reminded == []
    assert not Reminder.objects.filter(phase_number=game.phase_number).exists()


@pytest.mark.parametrize(
    ("chosen", "hours"),
    [([], [24, 2]), ([6, 1, 6], [6, 1]), ([0, -3, "x", 800], [24, 2]), (None, [24, 2])],
)
def test_reminder_hours_are_the_persons_choice_or_24_and_2(chosen, hours):
    assert reminder_hours(chosen) == hours


# --- two sweeps at once act once ------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_two_sweeps_at_once_pass_a_deadline_once(on_postgresql, no_dispatch, game, monkeypatch):
    decide(game, "red")
    monkeypatch.setattr(services, "store_defaults", slowly(services.store_defaults))
    at_once(2, lambda: sweep(now=game.deadline + MINUTE))
    assert missed(game) == {"red": 0, "ochre": 1, "lilac": 1}
    assert len(events(game, "deadline_missed")) == 1


@pytest.mark.django_db(transaction=True)
def test_two_sweeps_at_once_send_each_reminder_once(
    on_postgresql, no_dispatch, game, monkeypatch, reminded
):
    sweep(now=game.deadline - 30 * HOUR)
    monkeypatch.setattr(compose, "reminder", slowly(compose.reminder))
    at_once(2, lambda: sweep(now=game.deadline - 2 * HOUR))
    assert sorted(reminded) == ["lilac", "ochre", "red"]


# --- absences ------------------------------------------------------------------------------------


def away(user: User, start: datetime, end: datetime) -> None:
    Notifications.objects.update_or_create(
        user=user, defaults={"away_from": start, "away_until": end}
    )


def test_an_absence_pauses_the_game_and_its_deadline_does_not_pass(game, bob, reminded):
    Game.objects.filter(pk=game.pk).update(on_absence="pause")
    deadline, back = game.deadline, game.deadline + 10 * HOUR
    away(bob, deadline - 40 * HOUR, back)
    decide(game, "red")
    sweep(now=deadline - 30 * HOUR)
    paused = fresh(game)
    assert paused.paused and paused.deadline is None
    assert events(game, "paused") == [
        {"kind": "paused", "players": ["ochre"], "remaining_seconds": 30 * 3600}
    ]
    for now in (deadline - 2 * HOUR, deadline + MINUTE, back - MINUTE):
        sweep(now=now)
    assert missed(game) == {"red": 0, "ochre": 0, "lilac": 0}
    assert PendingSubmission.objects.filter(game=game).count() == 1
    assert reminded == []
    with pytest.raises(services.GameError, match="paused"):
        votes.propose(game.pk, game.creator, "extend", 5)
    sweep(now=back)  # bob is back: the 30 hours left come back
    resumed = fresh(game)
    assert not resumed.paused and resumed.deadline == back + 30 * HOUR
    sweep(now=resumed.deadline - 2 * HOUR)
    assert sorted(reminded) == ["lilac", "ochre"]
    sweep(now=resumed.deadline + MINUTE)
    assert missed(game) == {"red": 0, "ochre": 1, "lilac": 1}


def test_an_absence_extends_the_deadline_past_the_return(game, bob):
    deadline, back = game.deadline, game.deadline + 10 * HOUR
    away(bob, deadline - 40 * HOUR, back)
    for now in (deadline - 30 * HOUR, deadline - 29 * HOUR, deadline + MINUTE):
        sweep(now=now)
    assert fresh(game).deadline == back + 48 * HOUR
    assert not PendingSubmission.objects.filter(game=game).exists()
    assert [e["players"] for e in events(game, "deadline_extended")] == [["ochre"]]
    sweep(now=back + 48 * HOUR + MINUTE)
    assert missed(game)["ochre"] == 1


def test_a_reminder_due_while_the_person_is_away_waits_for_their_return(
    alice, bob, charlie, reminded
):
    game = seeded_game(alice, bob, charlie, deadline_hours=12)
    Notifications.objects.create(user=bob, reminder_hours=[20])
    deadline, back = game.deadline, game.deadline + 2 * HOUR
    away(bob, deadline - 12 * HOUR, back)
    sweep(now=deadline - 12 * HOUR)
    assert fresh(game).deadline == back + 12 * HOUR  # so 20 h before it is in the absence
    sweep(now=deadline - 6 * HOUR)
    assert "ochre" not in reminded
    sweep(now=back)
    assert reminded.count("ochre") == 1


@pytest.mark.parametrize("on_absence", ["pause", "extend"])
def test_an_absence_after_submitting_or_in_the_future_changes_nothing(game, alice, bob, on_absence):
    Game.objects.filter(pk=game.pk).update(on_absence=on_absence)
    decide(game, "red")
    away(alice, game.deadline - 40 * HOUR, game.deadline + 10 * HOUR)  # has submitted
    away(bob, game.deadline - 20 * HOUR, game.deadline + 10 * HOUR)  # not away yet
    sweep(now=game.deadline - 30 * HOUR)
    after = fresh(game)
    assert (after.paused, after.deadline) == (False, game.deadline)


def test_a_game_paused_otherwise_is_neither_passed_nor_resumed_by_the_sweep(game):
    Game.objects.filter(pk=game.pk).update(paused=True)
    sweep(now=game.deadline + MINUTE)
    assert fresh(game).paused
    assert not PendingSubmission.objects.filter(game=game).exists()
    assert missed(game) == {"red": 0, "ochre": 0, "lilac": 0}
