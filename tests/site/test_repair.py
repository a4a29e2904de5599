"""Issue 21, item 14: a phase whose stored moves the engine fails to apply does not loop
for ever. Each failed attempt is counted in the game's row; after RESOLVE_MAX_ATTEMPTS
the game is paused for repair: nothing more is resolved, played or queued for it, the
operators are told (an error in the log with the game's id, an email to ADMINS through
the outbox), its players see it on the page, in the JSON and through the live poll, every
other game goes on, and `manage.py repair_games` lists and retries it.

A move breaks resolution here as a corrupted row would: a bid (RULES 4.2, a duel's move)
stored as a player's submission in a decision phase (RULES 3.2), where the engine's apply
asserts that it is a decision.
"""

from __future__ import annotations

import io
import logging
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.db import OperationalError, transaction
from django.urls import reverse
from django.utils import timezone
from playwright.sync_api import expect

from engine.ai import RandomPlayer
from engine.moves import Bid
from engine.notation import format_move
from engine.serialize import move_to_json
from games import deadlines, recovery, services
from games.mail.inbound import Verdict, handle_message
from games.models import Game, OutgoingEmail, PendingSubmission, Seat
from lowenherz_site.celery import app as celery_app
from lowenherz_site.settings import env_admins
from tests.site import test_browser_live, test_recovery
from tests.site.conftest import (
    forget_queue,
    launch_worker,
    require_postgresql,
    require_redis,
    three_player_game,
    worker_env,
)
from tests.site.test_browser_live import WAIT, not_reloaded
from tests.site.test_inbound import address_of, email
from tests.site.test_live import as_user, game_live
from tests.site.test_outbox import SMTPServer
from tests.site.test_recovery import later, told

queued, recover = test_recovery.queued, test_recovery.recover  # the recovery tests' fixtures
open_as = test_browser_live.open_as  # a logged-in Chromium page (the live pages' tests)

ATTEMPTS = 3
OPS = "ops@example.org"
TIMEOUT = 60  # seconds for one task of the worker's; it takes a fraction of one


@pytest.fixture(autouse=True)
def operators(settings) -> None:
    settings.RESOLVE_MAX_ATTEMPTS = ATTEMPTS
    settings.ADMINS = [("Ops", OPS)]


def fresh(game: Game) -> Game:
    return Game.objects.get(pk=game.pk)


def wait_until(condition: Callable[[], object], what: str, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.05)


def store_moves(game: Game, broken: bool = True) -> int:
    """Every awaited seat's move for the decision phase stored as rows, as `submit_move`
    stores them, and the game owed its resolve (no task queued: the recovery pass, or the
    test, asks for it); with `broken`, ochre's is a bid, which the engine cannot apply
    in a decision phase. The phase number."""
    game = fresh(game)
    state = game.engine_state
    assert state.phase.kind == "decision"
    for seat in game.seats.filter(colour__in=state.waiting):
        move = (
            Bid(3)
            if broken and seat.colour == "ochre"
            else RandomPlayer(f"{game.seed}/{seat.colour}").choose(state, seat.colour)
        )
        PendingSubmission.objects.update_or_create(
            seat=seat,
            phase_number=game.phase_number,
            defaults={"game": game, "move": move_to_json(move), "text": format_move(move)},
        )
    with transaction.atomic():
        services.keep_due(Game.objects.select_for_update().get(pk=game.pk))
    return game.phase_number


def mend(game: Game) -> None:
    """The operator's fix: ochre's stored move replaced by a legal decision."""
    store_moves(game, broken=False)


def pause_for_repair(game: Game) -> int:
    """The game's phase broken and tried until it is paused; the phase number."""
    number = store_moves(told(game))
    for _ in range(ATTEMPTS):
        assert services.resolve(game.pk, number) is False
    assert fresh(game).needs_repair
    return number


def pending_rows(game: Game) -> list[tuple[str, str]]:
    return sorted(PendingSubmission.objects.filter(game=game).values_list("seat__colour", "text"))


# --- counted, then paused ---------------------------------------------------------------


def test_a_broken_phase_is_tried_again_then_paused_for_repair(game, recover, caplog):
    number = store_moves(told(game))
    stored = pending_rows(game)
    with caplog.at_level(logging.WARNING, logger="games.services"):
        for attempt in range(1, ATTEMPTS + 1):
            assert fresh(game).needs_repair is False
            # The recovery pass asks for the resolve again after each grace...
            assert recover(later(game)) == [("resolve", game.pk, number)]
            assert services.resolve(game.pk, number) is False
            assert fresh(game).resolve_failures == attempt
    game = fresh(game)
    assert game.needs_repair and game.needs_repair_since is not None
    assert "AssertionError" in game.resolve_error and "_on_decision" in game.resolve_error
    # ... and, once it is paused, never again; nor does a resolve asked anyway count.
    assert game.work_due_since is None
    assert recover(timezone.now() + timedelta(days=1)) == []
    assert services.resolve(game.pk, number) is False
    assert services.owed(game) == services.Owed(game.pk, number)
    game = fresh(game)
    assert game.resolve_failures == ATTEMPTS and game.phase_number == number
    assert pending_rows(game) == stored and not game.record.exists()  # nothing lost
    errors = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and f"game {game.pk} (Test game) needs repair" in errors[0].message
    assert errors[0].exc_info and errors[0].exc_info[0] is AssertionError
    warnings = [
        r for r in caplog.records if r.levelno == logging.WARNING and r.name == "games.services"
    ]
    assert len(warnings) == ATTEMPTS - 1 and all(f"game {game.pk}:" in r.message for r in warnings)


def test_the_operators_are_emailed_once_through_the_outbox(game):
    pause_for_repair(game)
    email = OutgoingEmail.objects.get(kind="repair_needed")
    assert email.to == OPS and email.game_id == game.pk and email.status == "queued"
    assert f"game {game.pk}" in email.subject
    assert "AssertionError" in email.text and f"repair_games --retry {game.pk}" in email.text
    assert services.resolve(game.pk, game.phase_number) is False
    assert OutgoingEmail.objects.filter(kind="repair_needed").count() == 1


def test_without_admins_the_error_log_still_tells(game, settings, caplog):
    settings.ADMINS = []
    with caplog.at_level(logging.ERROR, logger="games.services"):
        pause_for_repair(game)
    assert not OutgoingEmail.objects.filter(kind="repair_needed").exists()
    assert any(f"game {game.pk} (Test game) needs repair" in r.message for r in caplog.records)


def test_a_resolved_phase_forgets_the_failures_before_it(game):
    number = store_moves(told(game))
    assert services.resolve(game.pk, number) is False
    assert fresh(game).resolve_failures == 1
    mend(game)
    assert services.resolve(game.pk, number) is True
    game = fresh(game)
    assert (game.resolve_failures, game.resolve_error, game.needs_repair) == (0, "", False)


@pytest.mark.parametrize("where", ["_pending", "_store"])
def test_a_database_error_is_not_counted_as_a_broken_move(game, monkeypatch, where):
    """The database dropping the connection while the rows are read, or while the new
    state is saved: the task's autoretry takes it (games.tasks.SURVIVES), not the count."""
    number = store_moves(told(game), broken=where == "_pending")

    def down(*args, **kwargs):
        raise OperationalError("server closed the connection unexpectedly")

    monkeypatch.setattr(services, where, down)
    with pytest.raises(OperationalError):
        services.resolve(game.pk, number)
    game = fresh(game)
    assert (game.resolve_failures, game.needs_repair, game.phase_number) == (0, False, number)


def with_computers_and_a_broken_bid(alice: User, name: str) -> Game:
    """alice (ochre) against two computers, her stored move a bid in the decision phase
    (RULES 4.2 against 3.2): the engine raises when the computers complete the phase."""
    game = services.create_game(
        alice,
        name=name,
        player_count=3,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="ochre",
        computer_colours=["red", "lilac"],
    )
    game = told(game)
    ochre = Seat.objects.get(game=game, colour="ochre")
    PendingSubmission.objects.create(
        game=game,
        seat=ochre,
        phase_number=game.phase_number,
        move=move_to_json(Bid(3)),
        text="bid 3",
    )
    return game


def test_computers_completing_a_broken_phase_count_too(alice):
    """The computers' task applies the phase when their moves complete it: the person's
    broken move stops it the same way, and the stretch it began is rolled back."""
    game = with_computers_and_a_broken_bid(alice, "With computers")
    for attempt in range(1, ATTEMPTS + 1):
        assert services.play_computers(game.pk, game.phase_number) == 0
        assert fresh(game).resolve_failures == attempt
    game = fresh(game)
    assert game.needs_repair and services.owed(game).computers == ()
    assert pending_rows(game) == [("ochre", "bid 3")]  # the computers' moves rolled back


def test_a_passed_deadline_leaves_a_paused_game_alone(alice, caplog):
    game = with_computers_and_a_broken_bid(alice, "Deadline")
    for _ in range(ATTEMPTS):
        services.play_computers(game.pk, game.phase_number)
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="games.deadlines"):
        deadlines.pass_deadlines(fresh(game).deadline + timedelta(seconds=1))
    assert not caplog.records  # no default move tried (services would refuse it)
    assert pending_rows(game) == [("ochre", "bid 3")]
    assert not game.events.filter(kind="deadline_missed").exists()


# --- what the players see ------------------------------------------------------------------


def test_a_paused_game_refuses_new_moves_with_a_sentence(game, alice):
    number = pause_for_repair(game)
    stored = pending_rows(game)
    seat = Seat.objects.get(game=game, user=alice)
    move = RandomPlayer("again").choose(fresh(game).engine_state, "red")
    with pytest.raises(services.GameError, match="paused for repair"):
        services.submit(game.pk, seat.pk, move, number)
    response = as_user(alice).post(
        reverse("submit", args=[game.pk]),
        {"move": format_move(move), "phase": str(number)},
        follow=True,
    )
    assert "Not accepted: this game is paused for repair" in response.content.decode()
    assert pending_rows(game) == stored


def test_a_move_by_email_to_a_paused_game_is_answered_with_the_sentence(game, alice):
    pause_for_repair(game)
    stored = pending_rows(game)
    result = handle_message(
        email("decide 1, 3", to=address_of(fresh(game), "red"), sender=alice.email)
    )
    assert result.verdict == Verdict.REFUSED
    answer = OutgoingEmail.objects.get(user=alice, kind="move_refused")
    assert "this game is paused for repair" in answer.text
    assert pending_rows(game) == stored


def test_the_page_json_and_live_poll_show_the_pause(game, alice):
    client = as_user(alice)
    number = store_moves(told(game))
    for _ in range(ATTEMPTS - 1):
        assert services.resolve(game.pk, number) is False
    before = game_live(client, game)
    assert services.resolve(game.pk, number) is False  # the attempt that pauses it
    after = game_live(client, game, before["ETag"])
    assert after.status_code == 200  # not a 304: the open page fetches itself again
    assert after.json()["game"]["version"] != before.json()["game"]["version"]
    page = client.get(reverse("game", args=[game.pk])).content.decode()
    assert 'id="repair"' in page and "Paused for repair." in page
    assert 'id="play"' not in page  # no form for a move it would refuse
    data = client.get(reverse("game_json", args=[game.pk])).json()["game"]
    assert data["paused_for_repair"] is True and data["repair_since"]
    error = fresh(game).resolve_error
    assert "AssertionError" in error
    assert "AssertionError" not in page and "AssertionError" not in str(data)  # operators'


def test_a_running_game_shows_no_pause(game, alice):
    client = as_user(alice)
    page = client.get(reverse("game", args=[game.pk])).content.decode()
    assert 'id="repair"' not in page and 'id="play"' in page
    data = client.get(reverse("game_json", args=[game.pk])).json()["game"]
    assert data["paused_for_repair"] is False and data["repair_since"] is None


# --- manage.py repair_games ----------------------------------------------------------------


def repair_games(*args: str) -> str:
    out = io.StringIO()
    call_command("repair_games", *args, stdout=out)
    return out.getvalue()


def test_the_command_lists_the_games_paused_and_being_tried(game, alice, bob, charlie):
    assert repair_games() == "No game needs repair.\n"
    number = pause_for_repair(game)
    other = three_player_game(alice, bob, charlie, name="Still trying")
    assert services.resolve(other.pk, store_moves(told(other))) is False
    lines = repair_games().splitlines()
    assert len(lines) == 2
    since = fresh(game).needs_repair_since
    assert lines[0].split("\t") == [
        str(game.pk),
        "Test game",
        f"paused for repair since {since:%Y-%m-%d %H:%M:%S %Z}",
        f"attempts {ATTEMPTS} of {ATTEMPTS}",
        f"phase {number}",
        "AssertionError",
    ]
    assert lines[1].startswith(f"{other.pk}\tStill trying\tbeing tried again\tattempts 1 of")
    assert "Traceback" in repair_games("-v", "2")


def test_a_retry_of_a_game_not_paused_changes_nothing(game, alice, bob, charlie, queued):
    pause_for_repair(game)
    other = three_player_game(alice, bob, charlie, name="Fine")
    for wrong in (str(other.pk), "999999"):
        with pytest.raises(CommandError, match=f"not paused for repair.*{wrong}; nothing"):
            repair_games("--retry", str(game.pk), wrong)
    assert fresh(game).needs_repair and queued == []


def test_retry_all_queues_every_paused_game(
    game, alice, bob, charlie, queued, django_capture_on_commit_callbacks
):
    other = three_player_game(alice, bob, charlie, name="Second")
    numbers = {g.pk: pause_for_repair(g) for g in (game, other)}
    queued.clear()
    with django_capture_on_commit_callbacks(execute=True):
        out = repair_games("--retry-all")
    assert sorted(queued) == sorted(("resolve", pk, n) for pk, n in numbers.items())
    assert out.count("retried; its resolve is queued") == 2
    assert not Game.objects.filter(needs_repair_since__isnull=False).exists()
    assert fresh(game).resolve_failures == 0


@pytest.mark.django_db(transaction=True)
def test_a_retry_after_the_cause_is_mended_resolves_the_game(celery_worker, game):
    number = pause_for_repair(game)
    mend(game)  # the operator's fix, in the database
    assert services.resolve(game.pk, number) is False  # not before it is retried
    assert "retried; its resolve is queued" in repair_games("--retry", str(game.pk))
    wait_until(lambda: fresh(game).phase_number == number + 1, "the worker resolves it")
    game = fresh(game)
    assert (game.needs_repair, game.resolve_failures) == (False, 0)
    assert game.record.filter(phase_number=number).count() == 3
    assert repair_games() == "No game needs repair.\n"


# --- one broken game and one good game, a real worker and a real SMTP server -------------


@pytest.fixture
def worker_with_operators(transactional_db, tmp_path: Path) -> Iterator:
    """A Celery worker of its own (on a queue of its own, which this test sends to), whose
    emails go to a real SMTP server (aiosmtpd), with ADMINS and RESOLVE_MAX_ATTEMPTS set
    in its environment as a deployment sets them."""
    require_postgresql()
    require_redis()
    mailbox = SMTPServer()
    mailbox.start()
    queue = f"lowenherz-test-repair-{uuid.uuid4().hex[:8]}"
    before, celery_app.conf.task_default_queue = celery_app.conf.task_default_queue, queue
    env = {
        **worker_env(tmp_path / "var"),
        "ADMINS": f"Ops <{OPS}>",
        "EMAIL_URL": f"smtp://127.0.0.1:{mailbox.port}",
        "RESOLVE_MAX_ATTEMPTS": str(ATTEMPTS),
    }
    worker = launch_worker(queue, env, tmp_path / "worker.log")
    try:
        yield worker, mailbox
        worker.wait_until_idle()
    finally:
        worker.stop()
        celery_app.conf.task_default_queue = before
        forget_queue(queue)
        mailbox.stop()


def submit_decisions(game: Game) -> int:
    """Every awaited seat's move in the current phase, whose number it returns; a phase
    that one move ends (a negotiation's turn: the worker resolves it at once) takes no
    more."""
    game = fresh(game)
    for seat in game.seats.filter(colour__in=game.waiting):
        move = RandomPlayer(f"{game.seed}/{game.phase_number}/{seat.colour}").choose(
            game.engine_state, seat.colour
        )
        try:
            services.submit(game.pk, seat.pk, move, game.phase_number)
        except services.PhaseGone:
            break  # the phase moved on: what the caller waits for
    return game.phase_number


def test_a_broken_game_is_paused_and_the_others_go_on(worker_with_operators, alice, bob, charlie):
    worker, mailbox = worker_with_operators
    good = three_player_game(alice, bob, charlie, name="Good")
    broken = three_player_game(alice, bob, charlie, name="Broken")
    worker.wait_until_idle()  # both games told
    number = store_moves(broken)
    first = submit_decisions(good)  # the last one queues the good game's resolve
    for attempt in range(1, ATTEMPTS + 1):
        recovery.recover(later(broken))  # each grace, the pass queues the resolve again
        wait_until(
            lambda a=attempt: fresh(broken).resolve_failures >= a, f"the worker's attempt {attempt}"
        )
    wait_until(lambda: fresh(good).phase_number > first, "the good game resolves")
    assert fresh(broken).needs_repair
    for days in (1, 2, 3):  # passes long after: nothing more is queued for it
        recovery.recover(timezone.now() + timedelta(days=days))
    worker.wait_until_idle()
    broken = fresh(broken)
    assert (broken.resolve_failures, broken.phase_number) == (ATTEMPTS, number)
    assert broken.work_due_since is None  # no pass looks at it again
    log = worker.log()
    assert (
        log.count(f"game {broken.pk}: the moves of phase {number} failed to apply (attempt")
        == ATTEMPTS - 1
    )
    assert log.count(f"game {broken.pk} (Broken) needs repair") == 1
    # The operators' email, through the outbox and a real SMTP conversation.
    wait_until(lambda: any(OPS in str(m["To"]) for m in mailbox.messages), "the email")
    [email] = [m for m in mailbox.messages if OPS in str(m["To"])]
    assert f"game {broken.pk}" in str(email["Subject"])
    assert "AssertionError" in email.get_body(("plain",)).get_content()
    # The good game plays on after the broken one is paused.
    second = submit_decisions(good)
    wait_until(lambda: fresh(good).phase_number > second, "the good game's next phase")


def test_a_recovery_pass_queues_nothing_for_a_paused_game(game, recover):
    """Even one that finds it marked as owed work (a mark left from before the pause)."""
    pause_for_repair(game)
    Game.objects.filter(pk=game.pk).update(work_due_since=fresh(game).started_at)
    assert recover(timezone.now() + recovery.grace() + timedelta(seconds=1)) == []
    assert fresh(game).work_due_since is None


def test_admins_come_from_the_environment_and_a_bad_one_is_refused(monkeypatch):
    monkeypatch.setenv("ADMINS", "Ops Person <ops@example.org>, night@example.org")
    assert env_admins("ADMINS") == [("Ops Person", "ops@example.org"), ("", "night@example.org")]
    monkeypatch.setenv("ADMINS", "ops at example.org")
    with pytest.raises(ValueError, match="ADMINS must be email addresses"):
        env_admins("ADMINS")
    monkeypatch.delenv("ADMINS")
    assert env_admins("ADMINS") == []


def test_an_open_page_shows_the_pause_without_a_reload(open_as, game, settings):
    """Chromium, polling every second (games/static/games/live.js)."""
    settings.LIVE_POLL_SECONDS = 1
    page = open_as("alice", f"/games/{game.pk}/")
    expect(page.locator("#play")).to_be_visible()
    expect(page.locator("#repair")).to_have_count(0)
    number = store_moves(told(game))
    for _ in range(ATTEMPTS - 1):
        assert services.resolve(game.pk, number) is False
    expect(page.locator('#waiting [title="has submitted"]')).to_have_count(3, timeout=WAIT)
    assert services.resolve(game.pk, number) is False  # the attempt that pauses it
    expect(page.locator("#repair")).to_contain_text("Paused for repair", timeout=WAIT)
    expect(page.locator("#play")).to_have_count(0)
    assert not_reloaded(page)
