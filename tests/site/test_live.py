"""What open pages poll (games.views.live): a version of the game page or the lobby and
the navigation's "your move" count, small and cheap: a fixed handful of queries however
long the game, a 304 when nothing changed, a 404 where the game's page is a 404."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from engine.game import default_move
from games import services
from games.context_processors import your_move_count
from games.models import Game, Seat
from tests.site.conftest import three_player_game
from tests.site.test_game_page import play_phases


def as_user(user: User | None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def game_live(client: Client, game: Game, etag: str | None = None):
    headers = {"If-None-Match": etag} if etag else {}
    return client.get(reverse("game_live", args=[game.pk]), headers=headers)


def submit_default(game: Game, colour: str) -> None:
    game = Game.objects.get(pk=game.pk)
    seat = Seat.objects.get(game=game, colour=colour)
    services.submit(game.pk, seat.pk, default_move(game.engine_state, colour))


def test_the_answer_is_a_304_until_the_game_changes(game, alice):
    client = as_user(alice)
    first = game_live(client, game)
    assert first.status_code == 200 and first["ETag"]
    assert first.json()["game"]["phase"] == game.phase_number
    assert first.json()["your_move"] == 1
    again = game_live(client, game, first["ETag"])
    assert again.status_code == 304 and again.content == b""

    submit_default(game, "ochre")  # bob has submitted: alice's page shows it
    changed = game_live(client, game, first["ETag"])
    assert changed.status_code == 200
    assert changed.json()["game"]["version"] != first.json()["game"]["version"]
    assert changed.json()["game"]["phase"] == game.phase_number  # the same phase


def test_a_new_phase_changes_the_version_and_the_phase(game, alice):
    client = as_user(alice)
    before = game_live(client, game).json()["game"]
    after = game_live(client, play_phases(game, 1)).json()["game"]
    assert after["phase"] == before["phase"] + 1 and after["version"] != before["version"]


def test_another_player_s_private_event_leaves_my_version_alone(game, alice):
    client = as_user(alice)
    before = game_live(client, game).json()["game"]["version"]
    last = game.events.order_by("-index").values_list("index", flat=True).first() or 0
    game.events.create(
        index=last + 1,
        phase_number=game.phase_number,
        turn=game.turn,
        kind="decided",
        data={"player": "ochre"},
        to_colour="ochre",
    )
    assert game_live(client, game).json()["game"]["version"] == before
    game.events.create(
        index=last + 2,
        phase_number=game.phase_number,
        turn=game.turn,
        kind="decided",
        data={"player": "red"},
        to_colour="red",
    )
    assert game_live(client, game).json()["game"]["version"] != before


def count(client: Client, url: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def test_the_queries_are_few_and_do_not_grow_with_the_game(game, alice, bob, charlie):
    client = as_user(alice)
    game_url, lobby_url = reverse("game_live", args=[game.pk]), reverse("live") + "?lobby=1"
    at_start = count(client, game_url), count(client, lobby_url)
    for n in range(3):  # more games of mine, each with seats and submissions
        other = three_player_game(alice, bob, charlie, name=f"Another {n}")
        submit_default(other, "ochre")
    later = play_phases(game, 6)
    assert later.events.count() > 5 and later.phase_number >= game.phase_number + 6
    assert (count(client, game_url), count(client, lobby_url)) == at_start
    # The session and the user (no profile: games.views.live QuickPollMiddleware), then
    # one query for the version and the count (tests/site/test_quick_poll.py).
    assert at_start[0] <= 3 and at_start[1] <= 3


def test_a_hidden_invite_only_game_is_404_as_its_page(alice, bob, charlie, dave):
    private = three_player_game(alice, bob, charlie, invite_only=True)
    assert game_live(as_user(dave), private).status_code == 404
    assert game_live(as_user(None), private).status_code == 404
    assert game_live(as_user(alice), private).status_code == 200
    assert game_live(as_user(None), Game(pk=999_999)).status_code == 404


def test_a_visitor_polls_a_public_game_with_no_count(game):
    answer = game_live(as_user(None), game)
    assert answer.status_code == 200 and answer.json()["your_move"] == 0


def test_the_count_is_the_games_waiting_for_me_where_I_have_not_submitted(
    alice, bob, charlie, dave
):
    first = three_player_game(alice, bob, charlie)
    three_player_game(alice, bob, charlie, name="Second")
    services.create_game(
        alice,
        name="Open",
        player_count=3,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=[],
    )
    assert your_move_count(alice) == 2  # the open game waits for players, not for her
    submit_default(first, "red")
    assert your_move_count(alice) == 1
    assert your_move_count(dave) == 0
    with CaptureQueriesContext(connection) as queries:
        your_move_count(bob)
    assert len(queries) == 1


def test_the_nav_shows_the_count_and_the_poll_answers_it(alice, bob, charlie):
    game = three_player_game(alice, bob, charlie)
    client = as_user(bob)
    page = client.get(reverse("lobby")).content.decode()
    assert 'id="your-move-count">1<' in page and "data-live-seconds=" in page
    first = client.get(reverse("live"))
    assert first.json() == {"your_move": 1}
    submit_default(game, "ochre")
    assert client.get(reverse("live"), headers={"If-None-Match": first["ETag"]}).json() == {
        "your_move": 0
    }
    page = client.get(reverse("lobby")).content.decode()
    assert 'id="nav-your-move" hidden' in page


def test_the_lobby_version_follows_my_games_and_the_open_games(alice, bob, charlie, dave):
    client = as_user(alice)
    url = reverse("live") + "?lobby=1"
    game = services.create_game(
        alice,
        name="Gathering",
        player_count=3,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=[],
    )
    versions = [client.get(url).json()["lobby"]]
    services.join_game(game.pk, bob, "ochre")  # a seat taken in my game
    versions.append(client.get(url).json()["lobby"])
    services.create_game(
        dave,
        name="Dave's",
        player_count=3,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=[],
    )
    versions.append(client.get(url).json()["lobby"])  # a new open game
    assert client.get(url).json()["lobby"] == versions[-1]  # nothing changed since
    assert len(set(versions)) == 3


@pytest.mark.parametrize("path", ["/live/", "/live/?lobby=1"])
def test_the_poll_is_read_only(alice, path):
    assert as_user(alice).post(path).status_code == 405


def test_a_magic_link_session_polls_its_game_without_the_accounts_count(client, game, alice):
    """A session a magic link opened is kept to one game (games.middleware): its game page
    polls that game (issue 21, item 9; it did not poll at all), but neither the page nor
    the answer counts the account's other games, and nothing polls `/live/`."""
    from tests.site.test_magic_links import emailed_link

    client.post(emailed_link(game, alice))  # the link from a real "waits for you" email
    page = client.get(reverse("game", args=[game.pk])).content.decode()
    assert "You play" in page  # signed in by the link
    assert "data-live-seconds" in page
    assert f'data-live-url="{reverse("game_live", args=[game.pk])}"' in page
    assert f'data-live-url="{reverse("live")}"' not in page
    assert 'id="your-move-count"' not in page
    first = game_live(client, game)
    assert first.status_code == 200 and "your_move" not in first.json()
    submit_default(game, "ochre")
    assert game_live(client, game).json()["game"]["version"] != first.json()["game"]["version"]
    signed_in = as_user(alice).get(reverse("game", args=[game.pk])).content.decode()
    assert f'data-live-url="{reverse("live")}"' in signed_in
    assert 'id="your-move-count">1<' in signed_in
    assert "your_move" in game_live(as_user(alice), game).json()
