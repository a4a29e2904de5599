"""The feeds (games.views.feeds): a person's deadlines as iCalendar, read with a real
parser (the icalendar package), followed when a deadline moves, renewed and the old
address refused; the finished public games as Atom, read with feedparser."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from urllib.parse import urlsplit

import feedparser
import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from icalendar import Calendar

from games.models import CalendarFeed, Game, Seat, Snapshot
from tests.site.conftest import make_user

DEADLINE = datetime(2026, 3, 1, 18, tzinfo=UTC)
START = datetime(2026, 2, 20, 9, tzinfo=UTC)


def running(name: str, people: dict[str, User], **fields) -> Game:
    game = Game.objects.create(
        name=name,
        player_count=len(people),
        status=Game.Status.RUNNING,
        started_at=START,
        deadline=DEADLINE,
        phase_kind="decision",
        turn=2,
        waiting=["red"],
        **fields,
    )
    for position, (colour, user) in enumerate(people.items()):
        Seat.objects.create(game=game, colour=colour, position=position, user=user)
    return game


def calendar_of(client: Client, user: User) -> tuple[str, Calendar]:
    token = CalendarFeed.objects.get_or_create(user=user)[0].token
    url = reverse("calendar", args=[token])
    response = client.get(url)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/calendar")
    return url, Calendar.from_ical(response.content)


def events(cal: Calendar) -> dict[str, dict]:
    return {
        str(e["uid"]): {
            "start": e.decoded("dtstart"),
            "summary": str(e["summary"]),
            "sequence": int(e["sequence"]),
            "url": str(e["url"]),
            "text": str(e["summary"]) + str(e["description"]),
        }
        for e in cal.walk("VEVENT")
    }


def uid(game: Game) -> str:
    return f"game-{game.pk}-deadline@{urlsplit(settings.SITE_URL).hostname}"


@pytest.fixture
def people(db) -> dict[str, User]:
    return {name: make_user(name) for name in ("alice", "bob", "carol")}


def test_the_calendar_lists_each_running_game_at_its_deadline(people, client):
    game = running("Crowns", {"red": people["alice"], "ochre": people["bob"]})
    other = running("Walls", {"red": people["bob"], "ochre": people["alice"]})
    Game.objects.filter(pk=other.pk).update(deadline=DEADLINE + timedelta(hours=5))
    _, cal = calendar_of(client, people["alice"])
    found = events(cal)
    assert len(found) == 2
    mine = found[uid(game)]
    assert mine["start"] == DEADLINE
    assert mine["summary"] == "Löwenherz: your move in Crowns is due"
    assert mine["url"].endswith(reverse("game", args=[game.pk]))
    assert found[uid(other)]["summary"] == ("Löwenherz: the phase of Walls ends")


def test_a_moved_deadline_moves_the_same_event_with_a_higher_sequence(people, client):
    game = running("Crowns", {"red": people["alice"], "ochre": people["bob"]})
    _, before = calendar_of(client, people["alice"])
    Game.objects.filter(pk=game.pk).update(deadline=DEADLINE + timedelta(days=1))
    _, after = calendar_of(client, people["alice"])
    (uid, old), (same_uid, new) = *events(before).items(), *events(after).items()
    assert uid == same_uid
    assert new["start"] == DEADLINE + timedelta(days=1)
    assert new["sequence"] > old["sequence"]


def test_games_without_a_deadline_of_the_persons_are_left_out(people, client):
    running("Paused", {"red": people["alice"]}, paused=True)
    Game.objects.filter(name="Paused").update(deadline=None)
    conceded = running("Given up", {"red": people["alice"]})
    Seat.objects.filter(game=conceded).update(conceded=True, standin=True)
    finished = running("Over", {"red": people["alice"]})
    Game.objects.filter(pk=finished.pk).update(status=Game.Status.FINISHED, deadline=None)
    _, cal = calendar_of(client, people["alice"])
    assert events(cal) == {}


def test_a_private_game_is_in_its_players_feeds_and_no_one_elses(people, client):
    secret = running(
        "Secret table", {"red": people["alice"], "ochre": people["bob"]}, invite_only=True
    )
    running("Open table", {"red": people["carol"]})
    _, alices = calendar_of(client, people["alice"])
    assert [e["text"] for e in events(alices).values() if "Secret table" in e["text"]]
    url, carols = calendar_of(client, people["carol"])
    assert len(events(carols)) == 1
    body = client.get(url).content.decode()
    assert "Secret table" not in body and f"game-{secret.pk}-" not in body


def test_the_calendar_speaks_its_persons_language(people, client):
    people["alice"].profile.language = "de"
    people["alice"].profile.save()
    running("Kronen", {"red": people["alice"]})
    _, cal = calendar_of(client, people["alice"])
    (event,) = events(cal).values()
    assert "Kronen" in event["summary"]
    assert event["summary"] != "Löwenherz: your move in Kronen is due"


def test_renewing_the_address_refuses_the_old_one(people, client):
    running("Crowns", {"red": people["alice"]})
    old_url, _ = calendar_of(client, people["alice"])
    client.force_login(people["alice"])
    profile = client.get(reverse("profile"))
    assert old_url in profile.content.decode()
    response = client.post(reverse("renew_calendar"))
    assert response.status_code == 302
    assert client.get(old_url).status_code == 404
    new_url, cal = calendar_of(Client(), people["alice"])
    assert new_url != old_url and len(events(cal)) == 1
    assert new_url in client.get(reverse("profile")).content.decode()


def test_an_unknown_address_is_a_404_and_renewing_needs_a_post(people, client):
    assert client.get(reverse("calendar", args=["made-up"])).status_code == 404
    client.force_login(people["alice"])
    assert client.get(reverse("renew_calendar")).status_code == 405


# --- the Atom feed ---------------------------------------------------------------------------


def finished(name: str, people: dict[str, User], day: int, **fields) -> Game:
    game = Game.objects.create(
        name=name,
        player_count=2,
        status=Game.Status.FINISHED,
        finished_at=datetime(2026, 1, day, 12, tzinfo=UTC),
        winners=["ochre"],
        turn=7,
        **fields,
    )
    Seat.objects.create(game=game, colour="red", position=0, user=people["alice"])
    Seat.objects.create(game=game, colour="ochre", position=1, user=people["bob"])
    Snapshot.objects.create(
        game=game, phase_number=1, turn=1, phase_kind="decision", state={}, power={}
    )
    final = {"red": 12, "ochre": 17}  # the last phase's power is the score
    Snapshot.objects.create(
        game=game, phase_number=9, turn=7, phase_kind="over", state={}, power=final
    )
    return game


def test_the_atom_feed_lists_finished_public_games_newest_first(people, client):
    older = finished("Old crowns", people, 3)
    newer = finished("New crowns", people, 9)
    finished("Hidden crowns", people, 12, invite_only=True)
    Game.objects.create(name="Not over", player_count=2, status=Game.Status.RUNNING)
    response = client.get(reverse("archive_feed"))
    assert response.status_code == 200
    assert response["Content-Type"].startswith("application/atom+xml")
    feed = feedparser.parse(response.content)
    assert not feed.bozo, feed.bozo_exception
    assert feed.version == "atom10"
    assert feed.feed.title and feed.feed.id and feed.feed.updated
    assert [e.title for e in feed.entries] == ["New crowns", "Old crowns"]
    for entry, game in zip(feed.entries, [newer, older], strict=True):
        assert entry.id and entry.updated_parsed[:3] == game.finished_at.timetuple()[:3]
        assert entry.link.endswith(reverse("archive_game", args=[game.pk]))
        assert entry.summary == "Won by Bob. Alice: 12 power; Bob: 17 power."
    assert b"Hidden crowns" not in response.content


def test_the_atom_feed_speaks_the_visitors_language(people, client):
    finished("Kronen", people, 3)
    feed = feedparser.parse(client.get(reverse("archive_feed"), HTTP_ACCEPT_LANGUAGE="de").content)
    assert feed.feed.language == "de"
    assert not feed.entries[0].summary.startswith("Won by")


def test_the_archive_page_names_its_feed(db, client):
    page = client.get(reverse("archive")).content.decode()
    assert (
        f'<link rel="alternate" type="application/atom+xml" href="{reverse("archive_feed")}"'
        in page
    )
