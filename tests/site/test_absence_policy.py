"""A game's absence policy and the one who is away (issue 24, item 4): chosen at creation
on the new-game form (what an announced absence does, and after how many missed deadlines
a computer stands in), shown on the game page; a person away named as away where the game
waits for them (the game page, the lobby, the emails); and an email never states a
deadline that the sweep changes a minute later for an absence.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from games import services
from games.mail import notify
from games.models import Game, OutgoingEmail
from games.show.view_text import moment_text, time_zone_of
from tests.site.test_deadlines import HOUR, MINUTE, away, fresh, log_in
from tests.site.test_deadlines import sweep as sweep_at
from tests.site.test_lobby import form_data

pytestmark = pytest.mark.django_db
DAY = timedelta(days=1)


# --- chosen at creation, shown on the game page ------------------------------------------------


def test_the_new_game_form_explains_the_absence_policy(client, alice):
    log_in(client, alice)
    text = client.get(reverse("create_game")).content.decode()
    assert "When a player the game waits for is away" in text
    assert "Pause: the deadline stops, and runs on with the time it had left" in text
    assert "after this many in a row a computer plays their seat" in text


def test_the_creator_chooses_it_and_the_game_page_shows_it(client, alice, bob, dave):
    log_in(client, alice)
    data = form_data(player_count="2", setup="variable", on_absence="pause")
    client.post(reverse("create_game"), {**data, "max_missed_deadlines": "0"})
    game = Game.objects.get()
    assert (game.on_absence, game.max_missed_deadlines) == ("pause", 0)
    services.join_game(game.pk, bob, "ochre")
    for viewer in (alice, dave):  # a player, and anyone watching
        log_in(client, viewer)
        text = client.get(reverse("game", args=[game.pk])).content.decode()
        assert "A player who is away pauses the game" in text
        assert "no computer stands in" in text


def test_by_default_an_absence_extends_and_a_computer_stands_in_after_three(client, alice):
    log_in(client, alice)
    client.post(reverse("create_game"), form_data())  # a form from before the fields
    game = Game.objects.get()
    assert (game.on_absence, game.max_missed_deadlines) == ("extend", 3)
    text = client.get(reverse("game", args=[game.pk])).content.decode()
    assert "gets a whole phase&#x27;s time after they are back" in text
    assert "after 3 in a row a computer plays their seat" in text


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("on_absence", "later", "Choose extend or pause."),
        ("max_missed_deadlines", "11", "Choose 0 (never) to 10."),
        ("max_missed_deadlines", "-1", "Choose 0 (never) to 10."),
        ("max_missed_deadlines", "some", "Say how many, as a whole number."),
    ],
)
def test_a_bad_absence_policy_is_refused_on_the_form(client, alice, field, value, said):
    log_in(client, alice)
    response = client.post(reverse("create_game"), form_data(**{field: value}))
    assert said in response.content.decode()
    assert not Game.objects.exists()


@pytest.mark.parametrize(
    ("options", "refusal"),
    [
        ({"on_absence": "skip"}, "extends the deadline or pauses the game"),
        ({"max_missed_deadlines": 11}, "0 \\(never\\) to 10 missed deadlines"),
    ],
)
def test_the_services_refuse_a_bad_absence_policy(alice, options, refusal):
    with pytest.raises(services.GameError, match=refusal):
        services.create_game(
            alice,
            name="Bad",
            player_count=2,
            setup="variable",
            decisions="sealed",
            money="hidden",
            deadline_hours=48,
            invite_only=False,
            colour="red",
            computer_colours=[],
            **options,
        )


# --- the one who is away, named as away -------------------------------------------------------


def test_waiting_for_names_the_one_who_is_away(client, game, alice, bob, charlie):
    now = timezone.now()
    away(bob, now - HOUR, now + 3 * DAY)
    away(charlie, now + DAY, now + 3 * DAY)  # booked, not away yet
    log_in(client, alice)
    page = client.get(reverse("game", args=[game.pk])).content.decode()
    assert 'data-colour="ochre">Bob (away)</span>' in page
    assert 'data-colour="lilac">Charlie</span>' in page
    lobby = client.get(reverse("lobby")).content.decode()
    (row,) = re.findall(r"\(also waiting for ([^)]*\)?[^)]*)\)\n", lobby)
    assert sorted(row.split(", ")) == ["Bob (away)", "Charlie"]  # in the phase's order
    notify.phase_changed(game.pk, game.phase_number)
    (email,) = OutgoingEmail.objects.filter(kind="your_turn", user=alice)
    (line,) = re.findall(r"^Waiting for: (.*)$", email.text, re.MULTILINE)
    assert sorted(line.split(", ")) == ["Alice", "Bob (away)", "Charlie"]
    assert "Bob (away)" in email.html


# --- an away player's email states the deadline that holds ------------------------------------


def test_an_away_players_email_states_the_extended_deadline(game, bob):
    """Extend: the deadline moves past the return before the phase's emails are written,
    not by the sweep a minute later (which finds nothing left to change)."""
    now = timezone.now()
    back = now + 3 * DAY
    away(bob, now - HOUR, back)
    notify.phase_changed(game.pk, game.phase_number)
    extended = fresh(game).deadline
    assert extended == back + 48 * HOUR
    (email,) = OutgoingEmail.objects.filter(kind="your_turn", user=bob)
    assert f"Deadline: {moment_text(extended, time_zone_of(bob))}" in email.text
    assert "The deadline is extended until" in email.text  # the news, in the same email
    sweep_at(now=now + MINUTE)
    assert fresh(game).deadline == extended
    assert not OutgoingEmail.objects.filter(kind="deadline_extended").exists()


def test_an_away_players_email_says_the_game_is_paused(game, bob):
    Game.objects.filter(pk=game.pk).update(on_absence="pause")
    now = timezone.now()
    away(bob, now - HOUR, now + 3 * DAY)
    notify.phase_changed(game.pk, game.phase_number)
    assert fresh(game).paused
    for email in OutgoingEmail.objects.filter(kind="your_turn"):
        assert "Deadline: none while the game is paused" in email.text
        assert "The game is paused while Bob is away" in email.text
    sweep_at(now=now + MINUTE)
    assert fresh(game).paused and fresh(game).deadline is None


def test_an_open_page_follows_a_player_going_away_and_coming_back(client, game, alice, bob):
    """The game page's and the lobby's versions change with who is away now (the "Waiting
    for" they show), though no row of the game changed: setting an absence moves the live
    marks of the person's games (games.signals), and so does the sweep as one begins or
    ends (`deadlines.mark_absences_turning`)."""
    log_in(client, alice)
    lobby = reverse("live") + "?lobby=1"

    def versions() -> tuple[str, str]:
        page = client.get(reverse("game_live", args=[game.pk])).json()["game"]["version"]
        return page, client.get(lobby).json()["lobby"]

    before = versions()
    now = timezone.now()
    away(bob, now - HOUR, now + DAY)
    gone = versions()
    away(bob, now - DAY, now - HOUR)  # back
    back = versions()
    assert gone[0] != before[0] and gone[1] != before[1]
    assert back[0] != gone[0] and back[1] != gone[1]
