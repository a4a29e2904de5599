"""No email while you are watching (issue 24): a person who has the game page open and
visible when a phase needs them is told by the page; the "waits for you" email waits
EMAIL_WATCHING_SECONDS and goes only if they have not looked at the game since (nor
moved). The look is the page's poll (`?visible=1`, games/static/games/live.js), kept in
the cache (games.watching), never in the database; the held ask is a row of the outbox,
so a lost task is made good by the sweep and nothing is sent twice."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from engine.game import default_move
from games import services, tasks, watching
from games.mail import compose, notify
from games.models import Game, OutgoingEmail, Seat
from tests.site.conftest import three_player_game
from tests.site.test_emails import seat, sent_to

pytestmark = pytest.mark.django_db
Status = OutgoingEmail.Status


def poll(user, game: Game, visible: bool = True):
    client = Client()
    if user is not None:
        client.force_login(user)
    query = "?visible=1" if visible else ""
    return client.get(reverse("game_live", args=[game.pk]) + query)


def due() -> timezone.datetime:
    """When a held ask may wait no longer (the sweep's clock)."""
    return timezone.now() + timedelta(seconds=settings.EMAIL_WATCHING_SECONDS + 1)


def held_ask(user) -> OutgoingEmail:
    (row,) = sent_to(user, "your_turn_owed")
    return OutgoingEmail.objects.get(pk=row.pk)


def tell(game: Game) -> None:
    notify.phase_changed(game.pk, game.phase_number)


# --- the look: the page's poll, in the cache ----------------------------------------------------


def test_a_visible_poll_of_a_seated_person_records_a_look(game, alice, dave):
    assert poll(alice, game, visible=False).status_code == 200
    assert watching.seen_at(game.pk, alice.pk) is None  # a hidden page says nothing
    before = timezone.now()
    assert poll(alice, game).status_code == 200
    seen = watching.seen_at(game.pk, alice.pk)
    assert seen is not None and before <= seen <= timezone.now()
    assert poll(dave, game).status_code == 200  # a spectator is asked nothing
    assert watching.seen_at(game.pk, dave.pk) is None
    private = three_player_game(alice, dave, dave.__class__.objects.create_user("erin"), name="P")
    Game.objects.filter(pk=private.pk).update(invite_only=True)
    assert poll(None, private).status_code == 404


def test_a_look_costs_no_query(game, alice):
    url = reverse("game_live", args=[game.pk])
    client = Client()
    client.force_login(alice)
    counts = []
    for query in ("", "?visible=1"):
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url + query).status_code == 200
        counts.append(len(queries))
    assert counts[0] == counts[1]


def test_a_look_is_kept_in_the_cache_for_a_while_only(game, alice):
    watching.saw(game.pk, alice.pk)
    key = f"{watching.PREFIX}:{game.pk}:{alice.pk}"
    assert cache.get(key) is not None
    assert 0 < cache.ttl(key) <= watching.kept_seconds()  # django-redis: the key expires


# --- the ask of a watcher waits, and goes only if they stop looking --------------------------


def test_a_watcher_is_told_by_the_page_and_the_others_by_email(game, alice, bob, charlie):
    watching.saw(game.pk, alice.pk)
    tell(game)
    assert sent_to(alice, "your_turn") == []
    row = held_ask(alice)
    assert row.status == Status.COALESCING and row.phase_number == game.phase_number
    wait = (row.next_attempt_at - row.created_at).total_seconds()
    assert settings.EMAIL_WATCHING_SECONDS - 1 <= wait <= settings.EMAIL_WATCHING_SECONDS + 1
    for person in (bob, charlie):
        assert [e.status for e in sent_to(person, "your_turn")] == [Status.QUEUED]


def test_a_look_long_ago_is_no_watching(game, alice):
    watching.saw(game.pk, alice.pk, now=timezone.now() - timedelta(hours=1))
    tell(game)
    assert [e.status for e in sent_to(alice, "your_turn")] == [Status.QUEUED]
    assert sent_to(alice, "your_turn_owed") == []


def test_the_held_ask_is_dropped_if_they_looked_at_the_game_since(game, alice):
    watching.saw(game.pk, alice.pk)
    tell(game)
    watching.saw(game.pk, alice.pk)  # the page's next poll shows the phase
    assert notify.flush_due(timezone.now()) == 0  # not due yet
    assert notify.flush_due(due()) == 0
    assert sent_to(alice, "your_turn") == []
    row = held_ask(alice)
    assert row.status == Status.FOLDED and row.last_error == "not sent: seen on the game page"


def test_the_held_ask_goes_if_they_did_not_look_again(game, alice):
    watching.saw(game.pk, alice.pk)
    tell(game)
    assert notify.flush_due(due()) == 1
    (ask,) = sent_to(alice, "your_turn")
    assert ask.status == Status.QUEUED and ask.phase_number == game.phase_number
    assert "HOW TO MOVE" in ask.text and ask.reply_to
    assert held_ask(alice).last_error == f"told in email {ask.pk}"
    assert notify.flush_due(due()) == 0  # once


def test_the_held_ask_is_dropped_if_they_moved_meanwhile(game, alice):
    watching.saw(game.pk, alice.pk)
    tell(game)
    red = Seat.objects.get(game=game, colour="red")
    services.submit(game.pk, red.pk, default_move(game.engine_state, "red"))
    assert notify.flush_due(due()) == 0
    assert sent_to(alice, "your_turn") == []
    assert held_ask(alice).status == Status.FOLDED


def test_what_else_is_owed_rides_in_the_held_ask_when_it_goes(game, alice):
    compose.move_reply(seat(game, alice), True, ["decide 3"], "Accepted: decide 3.", coalesce=True)
    (confirmation,) = sent_to(alice, "move_accepted")
    OutgoingEmail.objects.filter(pk=confirmation.pk).update(
        next_attempt_at=timezone.now() + timedelta(hours=1)
    )
    watching.saw(game.pk, alice.pk)
    tell(game)
    notify.flush_due(due())
    (ask,) = sent_to(alice, "your_turn")
    assert "Your move by email was accepted: decide 3." in ask.text
    assert OutgoingEmail.objects.get(pk=confirmation.pk).status == Status.FOLDED


# --- nothing lost, nothing twice --------------------------------------------------------------


def test_a_lost_task_is_made_good_by_the_sweep_and_nothing_goes_twice(
    game, alice, monkeypatch, django_capture_on_commit_callbacks
):
    queued: list[tuple] = []
    monkeypatch.setattr(
        tasks.flush_held, "apply_async", lambda args, **options: queued.append((args, options))
    )
    monkeypatch.setattr(tasks.send_email, "apply_async", lambda *args, **options: None)
    watching.saw(game.pk, alice.pk)
    with django_capture_on_commit_callbacks(execute=True):
        tell(game)
    # A task for its due time, if the broker may hold one that long (issue 21: else the
    # sweep's); either way it is lost here, and the sweep finds the row due.
    mine = [options for args, options in queued if args == (alice.pk, game.pk)]
    assert all(o["countdown"] >= settings.EMAIL_WATCHING_SECONDS for o in mine)
    tasks.sweep_once(due())
    assert [e.status for e in sent_to(alice, "your_turn")] == [Status.QUEUED]
    assert not tasks.flush_held(alice.pk, game.pk)  # the task after all: nothing more
    tasks.sweep_once(due())
    assert len(sent_to(alice, "your_turn")) == 1


def test_a_cache_that_cannot_be_reached_watches_nobody(game, alice, monkeypatch):
    def down(*args, **kwargs):
        raise ConnectionError("the cache is down")

    monkeypatch.setattr(cache, "set", down)
    monkeypatch.setattr(cache, "get_many", down)
    assert poll(alice, game).status_code == 200  # the poll still answers
    tell(game)
    assert [e.status for e in sent_to(alice, "your_turn")] == [Status.QUEUED]


# --- held news the page showed ----------------------------------------------------------------


def test_held_results_seen_on_the_page_are_not_sent_and_unseen_ones_are(game, alice, bob):
    later = timezone.now() + timedelta(hours=6)
    for person in (alice, bob):
        compose.results(game, seat(game, person), game.phase_number, hold_until=later)
    watching.saw(game.pk, alice.pk)
    notify.flush_due(later + timedelta(seconds=1))
    (alices,) = sent_to(alice, "results")
    assert alices.status == Status.FOLDED and alices.last_error == "not sent: seen on the game page"
    assert [e.status for e in sent_to(bob, "results")] == [Status.FOLDED, Status.QUEUED]
