"""Running a table (issue 10, item 6): the creator cancels a game that has not started,
a player leaves one before it starts, a player concedes a running game and a computer
plays the seat to the end. Refusals say why and change nothing."""

from __future__ import annotations

import pytest
from django.urls import reverse

from engine.ai import RandomPlayer
from games import deadlines, services
from games.models import Event, Game, PendingSubmission, Seat
from tests.site.test_resolution import fresh, wait_for_phase


@pytest.fixture
def gathering(alice, bob) -> Game:
    """alice's 3-player game, bob joined, one seat still free."""
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
    services.join_game(game.pk, bob, "ochre")
    return Game.objects.get(pk=game.pk)


def post(client, user, name: str, game: Game, confirm: bool = True):
    client.force_login(user)
    return client.post(
        reverse(name, args=[game.pk]), {"confirm": "yes"} if confirm else {}, follow=True
    )


def test_the_creator_cancels_a_game_that_has_not_started(client, gathering, alice, charlie):
    response = post(client, alice, "cancel_game", gathering)
    assert "Gathering is cancelled." in response.content.decode()
    assert fresh(gathering).status == Game.Status.CANCELLED
    lobby = client.get(reverse("lobby")).content.decode()
    assert "Gathering" not in lobby
    with pytest.raises(services.GameError, match="cancelled by its creator"):
        services.join_game(gathering.pk, charlie, "lilac")


@pytest.mark.parametrize(
    ("who", "confirm", "says"),
    [
        ("bob", True, "only the game&#x27;s creator can cancel it"),
        ("alice", False, "tick the box to confirm"),
    ],
)
def test_a_cancel_that_may_not_be_done_changes_nothing(
    client, gathering, alice, bob, who, confirm, says
):
    response = post(client, {"alice": alice, "bob": bob}[who], "cancel_game", gathering, confirm)
    assert says in response.content.decode()
    assert fresh(gathering).status == Game.Status.OPEN


def test_a_running_game_cannot_be_cancelled(client, game, alice):
    response = post(client, alice, "cancel_game", game)
    assert "concede instead" in response.content.decode()
    assert fresh(game).status == Game.Status.RUNNING


def test_a_player_leaves_before_the_start_and_the_colour_is_free_again(
    client, gathering, bob, charlie
):
    response = post(client, bob, "leave_game", gathering)
    assert "You left Gathering." in response.content.decode()
    assert list(fresh(gathering).seats.values_list("colour", flat=True)) == ["red"]
    services.join_game(gathering.pk, charlie, "ochre")  # the colour is free again


def test_the_creator_cannot_leave_and_nobody_leaves_a_running_game(
    client, gathering, game, alice, bob
):
    assert "cancel it instead" in post(client, alice, "leave_game", gathering).content.decode()
    assert "concede instead" in post(client, bob, "leave_game", game).content.decode()
    assert fresh(gathering).seats.count() == 2 and fresh(game).seats.count() == 3


def test_the_game_page_offers_what_fits(client, gathering, game, alice, bob):
    client.force_login(alice)
    assert 'id="cancel-form"' in client.get(reverse("game", args=[gathering.pk])).content.decode()
    assert 'id="concede-form"' in client.get(reverse("game", args=[game.pk])).content.decode()
    client.force_login(bob)
    assert 'id="leave-form"' in client.get(reverse("game", args=[gathering.pk])).content.decode()


def test_conceding_hands_the_seat_to_a_computer_for_good(client, game, alice):
    response = post(client, alice, "concede", game)
    assert "a computer plays your seat to the end" in response.content.decode()
    seat = Seat.objects.get(game=game, user=alice)
    assert seat.conceded and seat.standin
    assert Event.objects.get(game=game, kind="conceded").data["player"] == "red"
    page = client.get(reverse("game", args=[game.pk])).content.decode()
    assert "Alice conceded: a computer plays their seat to the end." in page
    with pytest.raises(services.GameError, match="you conceded this game"):
        deadlines.take_seat_back(game.pk, alice)
    assert (
        "you have conceded this game already"
        in post(client, alice, "concede", game).content.decode()
    )
    assert 'id="concede-form"' not in client.get(reverse("game", args=[game.pk])).content.decode()


def test_the_computer_makes_the_conceded_seat_s_move_of_this_phase(
    celery_worker, game, alice, client
):
    """The phase waits for alice; she concedes; the others move; the worker plays red."""
    for seat in fresh(game).seats.exclude(user=alice):
        move = RandomPlayer(seat.colour).choose(fresh(game).engine_state, seat.colour)
        services.submit(game.pk, seat.pk, move)
    assert not PendingSubmission.objects.filter(seat__user=alice).exists()
    post(client, alice, "concede", game)
    assert wait_for_phase(game, game.phase_number + 1).phase_number > game.phase_number
