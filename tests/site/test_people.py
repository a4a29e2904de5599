"""A page for each person and the leaderboard (issue 27): reliability counted on a
made-up history (games.people's definition), a private page, games the viewer may not
see left out, lists and the leaderboard paged."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from games import people
from games.models import Event, Game, Rating, RatingChange, RecordEntry, Seat
from games.views import people as person_view
from games.views.people import BOARD_PAGE, CHARTS_KEPT, FINISHED_PAGE
from tests.site.conftest import make_user, new_game

pytestmark = pytest.mark.django_db
COLOURS = ["red", "ochre", "lilac"]
ARCHIVED = re.compile(r'href="/archive/\d+/"')  # a finished game's link


def table(name: str, *players: User | None, **columns) -> Game:
    """A game's row and seats as the services would leave them (a computer for None)."""
    game = Game.objects.create(
        **{"name": name, "player_count": len(players), "status": Game.Status.RUNNING, **columns}
    )
    for i, user in enumerate(players):
        Seat.objects.create(
            game=game, colour=COLOURS[i], position=i, user=user, is_computer=user is None
        )
    return game


def moved(game: Game, colour: str, phases, when) -> None:
    """A recorded move of `colour` in each phase, recorded at `when`."""
    start = RecordEntry.objects.filter(game=game).count()
    rows = RecordEntry.objects.bulk_create(
        RecordEntry(game=game, index=start + i, colour=colour, move={}, text="x", phase_number=p)
        for i, p in enumerate(phases)
    )
    RecordEntry.objects.filter(pk__in=[r.pk for r in rows]).update(accepted_at=when)


def event(game: Game, phase: int, kind: str, when, **data) -> None:
    index = Event.objects.filter(game=game).count()
    row = Event.objects.create(
        game=game, index=index, phase_number=phase, turn=1, kind=kind, data={"kind": kind, **data}
    )
    Event.objects.filter(pk=row.pk).update(created_at=when)


def test_reliability_on_a_made_up_history(alice, bob):
    now = timezone.now()
    recent, old = now - timedelta(days=30), now - timedelta(days=400)
    # One game: 10 phases this year (phase 2 twice: one phase), 2 more two years ago.
    one = table("One", alice, bob)
    moved(one, "red", [*range(1, 11), 2], recent)
    moved(one, "red", [11, 12], old)
    moved(one, "ochre", range(1, 11), recent)  # bob's, not alice's
    event(one, 3, "deadline_missed", recent, players=["red", "ochre"])
    event(one, 5, "deadline_missed", recent, players=["ochre"])
    event(one, 7, "deadline_missed", recent, players=["red"])
    event(one, 7, "standin", recent, player="red", missed=3)  # a computer from phase 8
    event(one, 8, "deadline_missed", recent, players=["red"])  # the computer's: not hers
    event(one, 9, "seat_taken_back", recent, player="red")  # hers again from phase 9
    event(one, 11, "deadline_missed", old, players=["red"])  # over a year ago
    # Another: she conceded in phase 4; the computer played 4 to 6.
    two = table("Two", bob, alice)
    moved(two, "ochre", range(1, 7), recent)
    event(two, 4, "conceded", recent, player="ochre")
    # Finished games a computer played her seat to the end of: this year, and long ago.
    for name, finished in (("Left", recent), ("Long ago", old)):
        gone = table(name, alice, bob, status=Game.Status.FINISHED, finished_at=finished)
        Seat.objects.filter(game=gone, user=alice).update(standin=True)

    stats = people.count_stats(alice.pk, now)

    # Phases 1-10 of one but 8 (the computer's), 1-3 of two; missed 3 and 7.
    assert stats.reliability == people.Reliability(awaited=12, missed=2, conceded=1, left=1)
    assert stats.reliability.moved == 10
    assert stats.reliability.share == pytest.approx(10 / 12)
    bobs = people.count_stats(bob.pk, now).reliability
    assert (bobs.awaited, bobs.missed, bobs.conceded, bobs.left) == (10, 2, 0, 0)  # ochre in one


def test_wins_and_results_against_computers(alice, bob):
    finished = {"status": Game.Status.FINISHED, "finished_at": timezone.now()}
    table("Won vs hard", alice, None, computer_level="hard", winners=["red"], **finished)
    table("Lost vs hard", alice, None, computer_level="hard", winners=["ochre"], **finished)
    table("Won vs easy", None, alice, computer_level="easy", winners=["ochre"], **finished)
    table("Won vs bob", alice, bob, winners=["red", "ochre"], **finished)  # shared
    table("Running", alice, None)

    stats = people.count_stats(alice.pk, timezone.now())

    assert (stats.finished, stats.wins) == (4, 3)
    assert [(r.level, r.played, r.won) for r in stats.against_computers] == [
        ("easy", 1, 1),
        ("hard", 2, 1),
    ]


def page_of(client: Client, user: User, **query) -> str:
    response = client.get(reverse("person", args=[user.pk]), query)
    assert response.status_code == 200
    return response.content.decode()


def test_a_private_page_shows_others_the_display_name_only(client, alice, bob):
    table("Secret plans", alice, bob)
    Rating.objects.create(user=alice, mu=30, sigma=5, ordinal=15, games=7)
    alice.profile.public_page = False
    alice.profile.save()

    client.force_login(bob)
    shown = page_of(client, alice)
    assert "Alice" in shown and 'id="person-private"' in shown
    assert "Secret plans" not in shown and "15.0" not in shown
    assert "alice@example.org" not in shown and "alice" not in shown.replace("Alice", "")

    client.force_login(alice)  # her own page: all of it
    own = page_of(client, alice)
    assert "Secret plans" in own and "15.0" in own and 'id="person-own"' in own


def test_the_page_lists_games_paged_without_those_the_viewer_may_not_see(client, alice, bob, dave):
    for i in range(FINISHED_PAGE + 2):
        table(f"Done {i:02}", alice, bob, status=Game.Status.FINISHED, finished_at=timezone.now())
    table("Invited only", alice, bob, invite_only=True)
    table("Open to all", alice, bob)

    client.force_login(dave)
    first = page_of(client, alice)
    assert "Open to all" in first and "Invited only" not in first
    assert len(ARCHIVED.findall(first)) == FINISHED_PAGE
    second = page_of(client, alice, finished=2)
    assert len(ARCHIVED.findall(second)) == 2
    client.force_login(bob)
    assert "Invited only" in page_of(client, alice)


def test_the_rating_chart_draws_each_rated_game(client, alice, bob):
    game = table("Rated", alice, bob, status=Game.Status.FINISHED, finished_at=timezone.now())
    Rating.objects.create(user=alice, mu=27, sigma=7, ordinal=6, games=1)
    RatingChange.objects.create(game=game, user=alice, place=1, mu=27, sigma=7, ordinal=6)

    shown = page_of(client, alice)

    assert 'class="rating-chart"' in shown
    line = shown.split('class="rating-line"')[1].split('points="')[1].split('"')[0]
    assert len(line.split()) == 2  # where she started, and after the game


def test_the_leaderboard_lists_public_people_with_enough_games_best_first(client, settings):
    settings.LEADERBOARD_MIN_GAMES = 5
    users = [make_user(f"player{i:02}") for i in range(BOARD_PAGE + 3)]
    for i, user in enumerate(users):
        Rating.objects.create(user=user, mu=20 + i, sigma=2, ordinal=14 + i, games=5)
    few = make_user("newcomer")
    Rating.objects.create(user=few, mu=50, sigma=1, ordinal=47, games=4)
    hidden = users[-1].profile
    hidden.public_page = False
    hidden.save()

    first = client.get(reverse("leaderboard")).content.decode()
    second = client.get(reverse("leaderboard"), {"page": 2}).content.decode()

    best, second_best, private = (
        f"Player{i:02}" for i in (BOARD_PAGE + 1, BOARD_PAGE, BOARD_PAGE + 2)
    )
    assert "Newcomer" not in first + second and private not in first + second
    assert first.index(best) < first.index(second_best)
    assert second.count('data-user="') == 2  # 28 shown in all, 25 a page
    assert client.get(reverse("leaderboard"), {"page": "x"}).status_code == 200


def test_an_unknown_person_is_404(client):
    assert client.get(reverse("person", args=[999_999])).status_code == 404


@pytest.fixture(autouse=True)
def no_kept_figures() -> None:
    cache.clear()


def test_seat_names_link_to_their_people_s_pages(client, alice, bob):
    finished = table("Done", alice, bob, status=Game.Status.FINISHED, finished_at=timezone.now())
    person_link = f'href="{reverse("person", args=[alice.pk])}"'

    client.force_login(bob)
    archive = client.get(reverse("archive")).content.decode()
    assert person_link in archive and f'data-game="{finished.pk}"' in archive
    gathering = new_game(alice)  # its page lists the seats taken
    game_page = client.get(reverse("game", args=[gathering.pk]))
    assert game_page.status_code == 200
    assert person_link in game_page.content.decode()


def rows_of(shown: str) -> dict[str, str]:
    """Each listed game's row, by the game's name."""
    rows = re.findall(r'<tr data-game="\d+">(.*?)</tr>', shown)
    return {re.search(r'class="tap-link">([^<]*)<', row)[1]: row for row in rows}  # type: ignore[index]


def test_the_lists_show_colour_result_and_dates_in_the_viewer_s_time_zone(client, alice, bob):
    table("Timed", alice, bob, deadline=datetime(2026, 6, 1, 12, 30, tzinfo=UTC))
    untimed = table("Untimed", bob, alice)
    done = {"status": Game.Status.FINISHED, "finished_at": datetime(2026, 1, 1, 3, 0, tzinfo=UTC)}
    table("Won", alice, bob, winners=["red"], **done)
    table("Lost", bob, alice, winners=["red"], **done)
    table("Nobody won", alice, bob, winners=[], **done)

    client.force_login(bob)  # in New York
    rows = rows_of(page_of(client, alice))

    assert '<time datetime="2026-06-01T08:30:00-04:00">2026-06-01 08:30</time>' in rows["Timed"]
    assert f'href="/games/{untimed.pk}/"' in rows["Untimed"]
    assert 'class="colour-ochre">ochre<' in rows["Untimed"] and "<td>—</td>" in rows["Untimed"]
    assert "<strong>Won</strong>" in rows["Won"] and "<td>2025-12-31</td>" in rows["Won"]
    assert "<td>Lost</td>" in rows["Lost"] and "<td>Lost</td>" in rows["Nobody won"]
    bob.profile.language = "de"
    bob.profile.save()
    german = rows_of(page_of(client, alice))
    assert "<strong>Gewonnen</strong>" in german["Won"] and ">Ocker<" in german["Untimed"]


def rated(user: User, ordinal: float) -> None:
    """One more rated game of `user`'s, their rating after it `ordinal`."""
    game = table("Rated", user, status=Game.Status.FINISHED, finished_at=timezone.now())
    RatingChange.objects.create(game=game, user=user, place=1, mu=27, sigma=7, ordinal=ordinal)
    Rating.objects.update_or_create(
        user=user, defaults={"mu": 27, "sigma": 7, "ordinal": ordinal, "games": 1}
    )
    people.forget([user.pk])  # as the game's end does


def chart_points(shown: str) -> int:
    return len(shown.split('class="rating-line"')[1].split('points="')[1].split('"')[0].split())


def test_a_chart_is_drawn_once_for_a_history_and_a_language(client, alice, bob):
    person_view._drawn.cache_clear()
    rated(alice, 6)
    client.force_login(bob)

    assert chart_points(page_of(client, alice)) == 2
    page_of(client, alice)
    assert (person_view._drawn.cache_info().misses, person_view._drawn.cache_info().hits) == (1, 1)

    bob.profile.language = "de"  # the chart's words are the reader's
    bob.profile.save()
    german = page_of(client, alice)
    assert "Wertungszahl nach jedem gewerteten Spiel" in german
    rated(alice, 8)  # a new point: a new chart
    assert chart_points(page_of(client, alice)) == 3
    assert person_view._drawn.cache_info().misses == 3
    assert person_view._drawn.cache_info().maxsize == CHARTS_KEPT  # bounded


def test_the_page_reads_the_database_a_fixed_number_of_times(client, alice, bob):
    """The person with their counts and the viewer's "your move", then both lists' pages
    in one query, however many games there are (and the session, the viewer, their
    profile: every page's)."""
    table("Waits for bob", alice, bob, waiting=["ochre"])  # bob's move
    for i in range(FINISHED_PAGE + 2):
        table(f"Done {i:02}", alice, bob, status=Game.Status.FINISHED, finished_at=timezone.now())
    client.force_login(bob)
    page_of(client, alice)  # the figures counted and kept

    with CaptureQueriesContext(connection) as queries:
        shown = page_of(client, alice, finished=2)

    assert len(queries) == 5
    assert 'id="your-move-count">1<' in shown  # the navigation's count, from the same query
    assert len(ARCHIVED.findall(shown)) == 2
