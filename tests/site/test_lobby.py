"""The lobby, creating a game, joining one and invite links."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from games import services
from games.models import Game, Seat
from games.show.presenter import present
from games.views import lists
from games.views import lobby as lobby_views
from tests.site.conftest import make_user, three_player_game
from tests.site.test_game_page import play_phases
from tests.site.test_live import submit_default


def open_game(creator: User, name: str = "Open game", **options) -> Game:
    """A game gathering players: the creator plays red."""
    settings = {
        "name": name,
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
    return services.create_game(creator, **settings)


def finish(game: Game, winners: list[str]) -> Game:
    # Playing a whole game through the site is the engine's tests' job; here only the
    # lobby's listing of finished games matters.
    Game.objects.filter(pk=game.pk).update(
        status=Game.Status.FINISHED,
        winners=winners,
        waiting=[],
        deadline=None,
        finished_at=timezone.now(),
    )
    return Game.objects.get(pk=game.pk)


def form_data(**changes) -> dict:
    return {
        "name": "Friday game",
        "player_count": "3",
        "setup": "basic",
        "decisions": "sealed",
        "money": "hidden",
        "deadline_hours": "48",
        "colour": "red",
        **changes,
    }


def listed(response, section: str) -> list[Game]:
    return [row.game for row in response.context[section]]


# --- the lobby ------------------------------------------------------------------------------


def test_anonymous_users_see_open_and_finished_games_and_links_to_log_in(client, alice, game):
    gathering = open_game(alice)
    done = finish(game, ["red"])
    response = client.get(reverse("lobby"))
    page = response.content.decode()
    assert listed(response, "open_games") == [gathering]
    assert listed(response, "finished_games") == [done]
    assert 'id="lobby-login"' in page and 'id="lobby-signup"' in page
    assert 'id="my-games"' not in page and 'id="new-game"' not in page
    assert f'id="join-{gathering.pk}-ochre"' not in page


def test_open_games_are_those_with_free_seats_and_not_invite_only(client, alice, bob, dave, game):
    listed_game = open_game(alice, "Listed")
    open_game(bob, "Private", invite_only=True)
    client.force_login(dave)
    response = client.get(reverse("lobby"))
    assert listed(response, "open_games") == [listed_game]
    page = response.content.decode()
    assert f'id="join-{listed_game.pk}-ochre"' in page
    assert f'id="join-{listed_game.pk}-red"' not in page  # alice's colour


def test_my_own_open_games_are_in_my_games_not_in_open_games(client, alice):
    mine = open_game(alice)
    client.force_login(alice)
    response = client.get(reverse("lobby"))
    assert listed(response, "open_games") == []
    assert listed(response, "my_games") == [mine]


def test_my_games_list_the_ones_waiting_for_me_first(client, alice, bob, charlie, dave):
    others_turn = three_player_game(alice, bob, charlie, name="Bob to move")
    my_turn = three_player_game(alice, bob, charlie, name="Alice to move")
    gathering = open_game(alice, "Gathering")
    not_mine = open_game(dave, "Dave's")
    soon = datetime(2030, 1, 1, tzinfo=UTC)
    # The game waiting for bob is due sooner, so only "waiting for me first" puts
    # alice's turn ahead of it.
    Game.objects.filter(pk=others_turn.pk).update(waiting=["ochre"], deadline=soon)
    Game.objects.filter(pk=my_turn.pk).update(waiting=["red"], deadline=soon.replace(day=9))
    client.force_login(alice)
    response = client.get(reverse("lobby"))
    assert listed(response, "my_games") == [my_turn, others_turn, gathering]
    assert not_mine in listed(response, "open_games")
    assert 'data-my-turn="true"' in response.content.decode()


def test_my_games_leave_out_finished_ones(client, alice, game):
    finish(game, ["ochre"])
    client.force_login(alice)
    response = client.get(reverse("lobby"))
    assert listed(response, "my_games") == []
    assert listed(response, "finished_games") == [game]


def test_finished_games_link_to_the_archive_and_name_the_winners(client, alice, game):
    finish(game, ["ochre"])
    page = client.get(reverse("lobby")).content.decode()
    assert f'href="{reverse("archive_game", args=[game.pk])}"' in page
    assert "won by Bob" in page


def test_the_lobby_says_whom_a_game_waits_for(client, alice, bob, game):
    Game.objects.filter(pk=game.pk).update(waiting=["ochre", "lilac"])
    client.force_login(alice)
    assert "Waiting for Bob, Charlie" in client.get(reverse("lobby")).content.decode()


def test_when_a_game_waits_for_me_too_the_lobby_names_the_others(client, alice, bob, game):
    Game.objects.filter(pk=game.pk).update(waiting=["red", "lilac"])
    client.force_login(alice)
    assert (
        "Your move</strong> (also waiting for Charlie)"
        in client.get(reverse("lobby")).content.decode()
    )


@pytest.mark.parametrize(
    ("who", "shown"),
    [
        ("alice", "Tue 15 Jan 2030, 13:00 CET"),  # Europe/Berlin
        ("bob", "Tue 15 Jan 2030, 07:00 EST"),  # America/New_York
    ],
)
def test_deadlines_are_shown_in_the_viewers_time_zone(client, game, who, shown):
    Game.objects.filter(pk=game.pk).update(deadline=datetime(2030, 1, 15, 12, tzinfo=UTC))
    client.force_login(User.objects.get(username=who))
    assert shown in client.get(reverse("lobby")).content.decode()


def test_seated_players_of_a_game_gathering_players_see_its_join_link(client, alice, dave):
    private = open_game(alice, invite_only=True)
    link = f"http://testserver{reverse('invite', args=[private.invite_token])}"
    client.force_login(alice)
    assert f'value="{link}"' in client.get(reverse("lobby")).content.decode()
    client.force_login(dave)
    assert private.invite_token not in client.get(reverse("lobby")).content.decode()


def test_players_not_seated_see_no_join_link_to_share(client, alice, dave):
    public = open_game(alice)
    client.force_login(dave)
    page = client.get(reverse("lobby")).content.decode()
    assert f'id="open-game-{public.pk}"' in page
    assert public.invite_token not in page


def add_games(alice: User, bob: User, charlie: User, dave: User, count: int) -> None:
    """Open games by dave, running ones with alice, finished ones: each kind `count` times."""
    for i in range(count):
        open_game(dave, f"Open {i}", computer_colours=["grey"])
        three_player_game(alice, bob, charlie, name=f"Running {i}")
        finish(three_player_game(alice, bob, charlie, name=f"Finished {i}"), ["red"])


def test_lobby_queries_do_not_grow_with_the_number_of_games(
    client, alice, bob, charlie, dave, django_assert_max_num_queries
):
    client.force_login(alice)
    add_games(alice, bob, charlie, dave, 1)
    with CaptureQueriesContext(connection) as few:
        client.get(reverse("lobby"))

    add_games(alice, bob, charlie, dave, 4)
    with django_assert_max_num_queries(len(few.captured_queries)):
        response = client.get(reverse("lobby"))
    assert len(response.context["open_games"]) == 5
    assert len(response.context["my_games"]) == 5
    assert len(response.context["finished_games"]) == 5


# --- creating a game ------------------------------------------------------------------------


def test_creating_a_game_needs_a_login(client, db):
    for response in (
        client.get(reverse("create_game")),
        client.post(reverse("create_game"), form_data()),
    ):
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))
    assert Game.objects.count() == 0


def test_the_create_game_form_has_stable_ids(client, alice):
    client.force_login(alice)
    page = client.get(reverse("create_game")).content.decode()
    assert 'id="create-game"' in page and 'id="create-game-form"' in page
    assert 'name="colour"' in page and 'name="computer_colours"' in page


def test_creating_a_game_seats_the_creator_and_waits_for_players(client, alice):
    client.force_login(alice)
    response = client.post(
        reverse("create_game"),
        form_data(
            setup="variable",
            decisions="open",
            money="open",
            deadline_hours="12",
            invite_only="on",
            colour="lilac",
        ),
    )
    game = Game.objects.get()
    assert response["Location"] == reverse("game", args=[game.pk])
    assert (
        game.name,
        game.player_count,
        game.setup,
        game.decisions,
        game.money,
        game.deadline_hours,
        game.invite_only,
        game.creator,
    ) == ("Friday game", 3, "variable", "open", "open", 12, True, alice)
    assert game.status == Game.Status.OPEN
    assert [(s.colour, s.user) for s in game.seats.all()] == [("lilac", alice)]


def test_computers_in_all_other_seats_start_the_game_at_once(client, alice):
    client.force_login(alice)
    client.post(reverse("create_game"), form_data(computer_colours=["ochre", "grey"]))
    game = Game.objects.get()
    assert game.status == Game.Status.RUNNING
    assert game.deadline is not None
    assert [(s.colour, s.is_computer) for s in game.seats.all()] == [
        ("red", False),
        ("ochre", True),
        ("grey", True),
    ]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"player_count": "2"}, "The basic setup is for 3 or 4 players"),
        ({"computer_colours": ["ochre", "lilac", "grey"]}, "At most 2 of the 3 seats"),
        ({"computer_colours": ["red"]}, "Red is your own colour"),
        ({"colour": "purple"}, "purple is not a colour"),
        ({"computer_colours": ["purple"]}, "purple is not a colour"),
        ({"player_count": "5"}, "A game has 2, 3 or 4 players"),
        ({"deadline_hours": "0"}, "A phase deadline is 1 to 720 hours"),
        ({"deadline_hours": "721"}, "A phase deadline is 1 to 720 hours"),
        ({"name": ""}, "This field is required"),
    ],
)
def test_invalid_settings_are_refused_and_create_nothing(client, alice, changes, message):
    client.force_login(alice)
    response = client.post(reverse("create_game"), form_data(**changes))
    assert response.status_code == 200
    assert message in response.content.decode()
    assert Game.objects.count() == 0


def test_a_refusal_by_the_services_is_shown_on_the_form(client, alice, monkeypatch):
    def refuse(*args, **kwargs):
        raise services.GameError("no more games today")

    monkeypatch.setattr(services, "create_game", refuse)
    client.force_login(alice)
    response = client.post(reverse("create_game"), form_data())
    assert response.status_code == 200
    assert "No more games today." in response.content.decode()


# --- joining --------------------------------------------------------------------------------


def join(client, game: Game, colour: str, **extra):
    return client.post(reverse("join_game", args=[game.pk]), {"colour": colour, **extra})


def test_joining_needs_a_login(client, alice):
    gathering = open_game(alice)
    response = join(client, gathering, "ochre")
    assert response["Location"].startswith(reverse("login"))
    assert gathering.seats.count() == 1


def test_joining_needs_a_post(client, alice, dave):
    gathering = open_game(alice)
    client.force_login(dave)
    assert client.get(reverse("join_game", args=[gathering.pk])).status_code == 405


def test_joining_with_a_free_colour_seats_the_player(client, alice, dave):
    gathering = open_game(alice)
    client.force_login(dave)
    response = join(client, gathering, "grey")
    assert response["Location"] == reverse("game", args=[gathering.pk])
    assert [(s.colour, s.user) for s in gathering.seats.all()] == [("red", alice), ("grey", dave)]


def test_taking_the_last_seat_starts_the_game(client, alice, bob, dave):
    gathering = open_game(alice)
    services.join_game(gathering.pk, bob, "ochre")
    client.force_login(dave)
    join(client, gathering, "grey")
    gathering.refresh_from_db()
    assert gathering.status == Game.Status.RUNNING


def test_joining_with_a_taken_colour_is_refused(client, alice, dave):
    gathering = open_game(alice)
    client.force_login(dave)
    response = join(client, gathering, "red")
    assert response["Location"] == reverse("invite", args=[gathering.invite_token])
    assert list(gathering.seats.values_list("user", flat=True)) == [alice.pk]
    page = client.get(response["Location"]).content.decode()
    assert "Red is not free in this game; choose another colour." in page


def test_joining_without_a_colour_is_refused(client, alice, dave):
    gathering = open_game(alice)
    client.force_login(dave)
    response = client.post(reverse("join_game", args=[gathering.pk]), follow=True)
    assert "Choose a colour." in response.content.decode()
    assert gathering.seats.count() == 1


def test_joining_a_started_game_is_refused(client, game, dave):
    client.force_login(dave)
    response = join(client, game, "grey")  # free, but the three seats are full
    assert game.seats.count() == 3
    page = client.get(response["Location"]).content.decode()
    assert "This game has already started." in page


def test_joining_a_game_twice_is_refused(client, alice):
    gathering = open_game(alice)
    client.force_login(alice)
    response = join(client, gathering, "ochre")
    assert gathering.seats.count() == 1
    assert "You already have a seat" in client.get(response["Location"]).content.decode()


def test_an_invite_only_game_cannot_be_joined_by_its_number_alone(client, alice, dave):
    private = open_game(alice, invite_only=True)
    client.force_login(dave)
    assert join(client, private, "ochre").status_code == 404
    assert join(client, private, "ochre", token="guess").status_code == 404
    assert private.seats.count() == 1


# --- invite links ---------------------------------------------------------------------------


def test_the_invite_link_lets_an_outsider_join_an_invite_only_game(client, alice, dave):
    private = open_game(alice, invite_only=True)
    client.force_login(dave)
    page = client.get(reverse("invite", args=[private.invite_token])).content.decode()
    assert "Red: Alice" in page
    assert 'id="join-ochre"' in page and 'id="join-red"' not in page

    response = join(client, private, "ochre", token=private.invite_token)
    assert response["Location"] == reverse("game", args=[private.pk])
    assert private.seats.filter(user=dave, colour="ochre").exists()


def test_a_bad_invite_token_is_404(client, alice):
    open_game(alice, invite_only=True)
    assert client.get(reverse("invite", args=["not-a-token"])).status_code == 404


def test_the_invite_page_asks_anonymous_users_to_log_in(client, alice):
    private = open_game(alice, invite_only=True)
    url = reverse("invite", args=[private.invite_token])
    page = client.get(url).content.decode()
    assert 'id="invite-login"' in page and 'id="join-ochre"' not in page
    assert f"next={url}" in page or "next=" + url.replace("/", "%2F") in page


def test_the_invite_page_of_a_started_game_offers_no_seat(client, game, dave):
    client.force_login(dave)
    page = client.get(reverse("invite", args=[game.invite_token])).content.decode()
    assert 'id="started"' in page and 'id="join-grey"' not in page


def test_a_seated_player_sees_the_link_to_share_on_the_invite_page(client, alice):
    private = open_game(alice, invite_only=True)
    client.force_login(alice)
    page = client.get(reverse("invite", args=[private.invite_token])).content.decode()
    assert 'id="invite-link"' in page and 'id="join-ochre"' not in page


def test_a_new_user_gets_a_profile_to_show_in_seats(client, alice):
    private = open_game(alice, invite_only=True)
    erin = make_user("erin")
    client.force_login(erin)
    join(client, private, "grey", token=private.invite_token)
    page = client.get(reverse("invite", args=[private.invite_token])).content.decode()
    assert "Grey: Erin" in page


# --- many games: read in SQL, a page at a time ------------------------------------------------


def seated_games(
    alice: User, bob: User, charlie: User, count: int, mine_every: int = 2
) -> list[Game]:
    """`count` running games of alice's; every `mine_every`-th waits for her, the others
    for bob (as the columns say: the lobby reads no state)."""
    games = [three_player_game(alice, bob, charlie, name=f"Game {i}") for i in range(count)]
    for i, game in enumerate(games):
        waiting = ["red"] if i % mine_every == 0 else ["ochre"]
        Game.objects.filter(pk=game.pk).update(waiting=waiting)
    return [Game.objects.get(pk=g.pk) for g in games]


def lobby_queries(client, url: str) -> tuple[int, list[str]]:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured), [q["sql"] for q in captured.captured_queries]


def test_the_lobby_s_queries_stay_the_same_from_10_to_60_games_and_read_no_state(
    client, alice, bob, charlie, dave, django_assert_max_num_queries
):
    client.force_login(alice)
    seated_games(alice, bob, charlie, 10)
    open_game(dave, "Open 1")
    finish(three_player_game(alice, bob, charlie, name="Done"), ["red"])
    few, statements = lobby_queries(client, reverse("lobby"))
    assert few <= 11  # 9, and the two of the version it is drawn from (games.views.lists)
    assert not [sql for sql in statements if '"games_game"."state"' in sql]

    seated_games(alice, bob, charlie, 50)
    open_game(dave, "Open 2")
    with django_assert_max_num_queries(few):
        response = client.get(reverse("lobby"))
    assert len(response.context["my_games"]) == lists.MY_GAMES_PAGE
    assert response.context["my_page"].paginator.count == 60


def test_the_live_lobby_version_s_queries_stay_the_same_from_10_to_60_games(
    client, alice, bob, charlie
):
    client.force_login(alice)
    url = reverse("live") + "?lobby=1"
    seated_games(alice, bob, charlie, 10)
    few, statements = lobby_queries(client, url)
    assert not [sql for sql in statements if '"games_game"."state"' in sql]
    seated_games(alice, bob, charlie, 50)
    assert lobby_queries(client, url)[0] == few


@pytest.fixture
def pages_of_3(monkeypatch) -> None:
    for module in (lobby_views, lists):
        monkeypatch.setattr(module, "MY_GAMES_PAGE", 3)
        monkeypatch.setattr(module, "OPEN_GAMES_PAGE", 3)


def test_my_games_come_a_page_at_a_time_those_waiting_for_me_first(
    client, alice, bob, charlie, pages_of_3
):
    games = seated_games(alice, bob, charlie, 7, mine_every=3)  # games 0, 3 and 6: mine
    soon = timezone.now() + timedelta(hours=1)
    for i, game in enumerate(games):  # the deadlines in the reverse order of the games
        Game.objects.filter(pk=game.pk).update(deadline=soon + timedelta(minutes=-i))
    client.force_login(alice)

    first = client.get(reverse("lobby"))
    assert listed(first, "my_games") == [games[6], games[3], games[0]]
    assert all(row.is_my_turn for row in first.context["my_games"])
    page = first.content.decode()
    assert "Page 1 of 3" in page and 'id="my-games-count">(7)<' in page
    assert 'id="my-games-next" href="?page=2"' in page and 'id="my-games-prev"' not in page
    assert 'data-live-url="/live/?lobby=1"' in page

    second = client.get(reverse("lobby") + "?page=2")
    assert listed(second, "my_games") == [games[5], games[4], games[2]]
    assert not any(row.is_my_turn for row in second.context["my_games"])
    page = second.content.decode()
    assert 'id="my-games-prev" href="?page=1"' in page
    assert 'data-live-url="/live/?lobby=1&amp;page=2"' in page
    assert listed(client.get(reverse("lobby") + "?page=3"), "my_games") == [games[1]]
    assert listed(client.get(reverse("lobby") + "?page=99"), "my_games") == [games[1]]
    assert listed(client.get(reverse("lobby") + "?page=x"), "my_games") == listed(first, "my_games")


def test_a_game_i_have_moved_in_waits_with_the_others(client, alice, bob, charlie, game):
    later = three_player_game(alice, bob, charlie, name="Later")
    Game.objects.filter(pk=game.pk).update(deadline=timezone.now())
    submit_default(game, "red")  # alice is in: the game waits for bob and charlie
    client.force_login(alice)
    response = client.get(reverse("lobby"))
    assert listed(response, "my_games") == [later, game]
    row = response.context["my_games"][1]
    assert sorted(row.waiting_for) == ["Bob", "Charlie"] and not row.is_my_turn
    assert "Waiting for " + ", ".join(row.waiting_for) in response.content.decode()


def test_the_live_lobby_version_follows_the_page_it_is_for(client, alice, bob, charlie, pages_of_3):
    games = seated_games(alice, bob, charlie, 7, mine_every=7)  # only game 0 is mine
    client.force_login(alice)
    url = reverse("live") + "?lobby=1"
    first, third = client.get(url).json()["lobby"], client.get(url + "&page=3").json()["lobby"]
    assert client.get(url + "&page=99").json()["lobby"] == third  # the last page, as shown
    Game.objects.filter(pk=games[6].pk).update(waiting=["red"])  # from page 3 to page 1
    assert client.get(url).json()["lobby"] != first
    assert client.get(url + "&page=3").json()["lobby"] != third


def test_the_lobby_says_what_the_game_page_says_phase_after_phase(
    client, alice, bob, charlie, game
):
    client.force_login(alice)
    for _ in range(6):
        row = client.get(reverse("lobby")).context["my_games"][0]
        shown = present(Game.objects.get(pk=game.pk), Seat.objects.get(game=game, user=alice))
        waiting = shown.still_waiting()
        assert row.is_my_turn == ("red" in waiting)
        assert row.waiting_for == [shown.name(c) for c in waiting if c != "red"]
        colour = next((c for c in waiting if c != "red"), None)
        if colour is not None:  # one of the others moves: the lobby ticks them off too
            submit_default(game, colour)
            continue
        play_phases(game, 1)


def test_the_listed_seats_name_each_player_as_their_seat_does(alice, bob, charlie):
    game = three_player_game(alice, bob, charlie, computer_colours=["grey"], player_count=4)
    Seat.objects.filter(game=game, colour="lilac").update(user=None)  # charlie left
    bob.profile.delete()  # a person without a profile goes by their user name
    listed_seats = lobby_views.seats_by_game([game.pk])[game.pk]
    assert [(s.colour, s.display_name) for s in listed_seats] == [
        (s.colour, s.display_name) for s in Seat.objects.filter(game=game).order_by("position")
    ]
    assert [s.display_name for s in listed_seats] == [
        "Alice",
        "Computer (grey, normal)",
        "bob",
        "(left the game, lilac)",
    ]


# --- open games: a page at a time too ---------------------------------------------------------


def open_games(creators: list[User], count: int) -> list[Game]:
    """`count` open games, the newest last, by the creators in turn."""
    return [open_game(creators[i % len(creators)], f"Open {i}") for i in range(count)]


def test_open_games_come_a_page_at_a_time_the_newest_first(
    client, alice, bob, charlie, dave, pages_of_3
):
    games = open_games([bob, charlie, dave], 7)
    mine = open_game(alice, "Mine")  # in my games, not among those to join
    seated_games(alice, bob, charlie, 4)
    client.force_login(alice)

    first = client.get(reverse("lobby"))
    assert listed(first, "open_games") == [games[6], games[5], games[4]]
    page = first.content.decode()
    assert "Page 1 of 3" in page and 'id="open-games-count">(7)<' in page
    assert 'id="open-games-next" href="?open=2"' in page and 'id="open-games-prev"' not in page
    assert mine not in listed(first, "open_games")

    # Each list's links keep the other's page; the live version follows both.
    both = client.get(reverse("lobby") + "?page=2&open=3")
    assert listed(both, "open_games") == [games[0]]
    assert listed(both, "my_games")[-1] == mine  # gathering players: last of my games
    page = both.content.decode()
    assert 'id="open-games-prev" href="?open=2&amp;page=2"' in page
    assert 'id="my-games-prev" href="?page=1&amp;open=3"' in page
    assert 'data-live-url="/live/?lobby=1&amp;page=2&amp;open=3"' in page

    assert listed(client.get(reverse("lobby") + "?open=99"), "open_games") == [games[0]]
    assert listed(client.get(reverse("lobby") + "?open=x"), "open_games") == listed(
        first, "open_games"
    )


def test_visitors_page_through_the_open_games_too(client, bob, pages_of_3):
    games = open_games([bob], 4)
    response = client.get(reverse("lobby") + "?open=2")
    assert listed(response, "open_games") == [games[0]]
    assert 'id="open-games-first" href="?open=1"' in response.content.decode()


def test_the_lobby_s_queries_do_not_grow_with_the_open_games(
    client, alice, bob, charlie, dave, django_assert_max_num_queries
):
    client.force_login(alice)
    open_games([bob, charlie, dave], 3)
    few, _ = lobby_queries(client, reverse("lobby"))
    live_few, _ = lobby_queries(client, reverse("live") + "?lobby=1")
    open_games([bob, charlie, dave], 40)
    with django_assert_max_num_queries(few):
        response = client.get(reverse("lobby"))
    assert len(response.context["open_games"]) == lists.OPEN_GAMES_PAGE
    assert response.context["open_page"].paginator.count == 43
    assert lobby_queries(client, reverse("live") + "?lobby=1")[0] == live_few


def test_the_live_lobby_version_moves_with_an_open_game_on_any_page(
    client, alice, bob, charlie, dave, pages_of_3
):
    """The version is of all open games (one indexed sum of their live marks, whatever
    the page): a change on another page fetches this one too, and none is missed."""
    games = open_games([bob, charlie], 7)
    url = reverse("live") + "?lobby=1"
    first, third = client.get(url).json()["lobby"], client.get(url + "&open=3").json()["lobby"]
    services.join_game(games[0].pk, dave, "ochre")  # on page 3 only
    assert client.get(url + "&open=3").json()["lobby"] != third
    assert client.get(url).json()["lobby"] != first
    first = client.get(url).json()["lobby"]
    newest = open_game(alice, "Newest")  # the first page moves
    assert client.get(url).json()["lobby"] != first
    client.force_login(alice)  # ... but not for its creator: it is in her games
    assert newest not in [row.game for row in client.get(reverse("lobby")).context["open_games"]]
