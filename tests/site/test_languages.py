"""Each person in their own language (issue 23): a visitor's pages follow the switcher's
cookie, else Accept-Language; a signed-in person's follow their preference, which the
signup takes from the browser and the switcher and the profile change."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation
from django.utils.translation import gettext

from engine.errors import NotationError
from engine.notation import parse_move
from games.models import Profile, language_of
from games.show.words import refusal_text
from tests.site.test_accounts import confirm_link, signup_data

pytestmark = pytest.mark.django_db


def page_language(client: Client, path: str = "/", **headers: str) -> str:
    response = client.get(path, headers=headers)
    assert response.status_code == 200
    return response.headers["Content-Language"]


def html_lang(client: Client, **headers: str) -> str:
    html = client.get("/", headers=headers).content.decode()
    return html.split('<html lang="', 1)[1].split('"', 1)[0]


@pytest.mark.parametrize(
    ("accept", "expected"),
    [("de-DE,de;q=0.9,en;q=0.5", "de"), ("it", "it"), ("en-US,en", "en-gb"), ("fr", "en-gb")],
)
def test_a_visitor_is_served_in_the_language_their_browser_asks_for(client, accept, expected):
    assert page_language(client, accept_language=accept) == expected
    assert html_lang(client, accept_language=accept) == expected


@pytest.mark.parametrize("accept", ["en", "de", "it"])
def test_the_switcher_is_on_every_page_with_each_language_named_in_itself(client, accept):
    html = client.get(reverse("login"), headers={"accept_language": accept}).content.decode()
    assert 'id="language-switcher"' in html
    for code, name in (("en-gb", "English"), ("de", "Deutsch"), ("it", "Italiano")):
        assert f'value="{code}" lang="{code}"' in html and f">{name}</button>" in html


def test_a_visitor_s_choice_outlasts_their_browser_s(client):
    answer = client.post(reverse("set_language"), {"language": "it", "next": "/archive/"})
    assert answer.status_code == 302 and answer.headers["Location"] == "/archive/"
    assert page_language(client, accept_language="de") == "it"


def test_a_language_the_site_does_not_speak_changes_nothing(client, alice):
    client.force_login(alice)
    client.post(reverse("set_language"), {"language": "fr", "next": "/"})
    assert Profile.objects.get(user=alice).language == "en-gb"
    assert page_language(client, accept_language="de") == "en-gb"


def test_a_person_reads_their_own_language_whatever_their_browser_says(client, alice):
    Profile.objects.filter(user=alice).update(language="de")
    client.force_login(alice)
    assert page_language(client, accept_language="it") == "de"
    assert page_language(client, "/archive/", accept_language="en") == "de"


def test_the_switcher_changes_a_person_s_preference_for_every_device(client, alice):
    client.force_login(alice)
    client.post(reverse("set_language"), {"language": "it", "next": "/"})
    alice.refresh_from_db()
    assert language_of(alice) == "it"
    other_device = Client()
    other_device.force_login(alice)
    assert page_language(other_device, accept_language="de") == "it"


def test_the_profile_sets_the_language_and_a_form_without_it_keeps_it(client, alice):
    client.force_login(alice)
    data = {"display_name": "Alice", "email": alice.email, "time_zone": "UTC"}
    client.post(reverse("profile"), {**data, "language": "de"})
    assert Profile.objects.get(user=alice).language == "de"
    client.post(reverse("profile"), data)
    assert Profile.objects.get(user=alice).language == "de"


@pytest.mark.parametrize(("accept", "expected"), [("it-IT,it", "it"), ("de", "de")])
def test_a_new_person_starts_in_their_browser_s_language(client, accept, expected):
    page = client.get(reverse("signup"), headers={"accept_language": accept}).content.decode()
    assert f'<option value="{expected}" selected>' in page
    client.post(reverse("signup"), signup_data(), headers={"accept_language": accept})
    client.post(confirm_link())
    assert Profile.objects.get(user__username="erin").language == expected


def test_a_new_person_may_choose_another_language(client):
    client.post(reverse("signup"), signup_data(language="it"), headers={"accept_language": "de"})
    client.post(confirm_link())
    assert Profile.objects.get(user__username="erin").language == "it"


@pytest.mark.parametrize("language", ["de", "it"])
def test_a_player_reads_the_game_page_in_their_language(client, alice, game, language):
    """The page's own words (templates) and the game's (games.show) come from the
    player's catalogue, not English."""
    Profile.objects.filter(user=alice).update(language=language)
    client.force_login(alice)
    html = client.get(reverse("game", args=[game.pk])).content.decode()
    with translation.override(language):
        words = [gettext("Table talk"), gettext("Your hand"), gettext("Archive")]
        phase = gettext("The players choose their decision cards.")
    assert words != ["Table talk", "Your hand", "Archive"] and phase.startswith(("Die", "I "))
    for word in (*words, phase):
        assert word in html
    assert "Table talk" not in html and "choose their decision cards" not in html


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        ("de", "'entscheiden 9': die Entscheidungskarten sind 1, 2 und 3"),
        ("it", "'decidi 9': le carte decisione sono 1, 2 e 3"),
        ("en-gb", "'decide 9': the decision cards are 1, 2 and 3, like 'decide 2'"),
    ],
)
def test_a_move_that_cannot_be_read_is_told_in_the_reader_s_language(language, expected):
    """The engine's notation says what is wrong as a code and its values (its English for
    the scenario interface); the site words it, the detail inside the quoted move too."""
    with pytest.raises(NotationError) as refused:
        parse_move("decide 9")
    assert str(refused.value).startswith("'decide 9': the decision cards are 1, 2 and 3")
    with translation.override(language):
        assert refusal_text(refused.value).startswith(expected)


def test_a_german_player_s_unreadable_move_on_the_page_is_refused_in_german(client, alice, game):
    Profile.objects.filter(user=alice).update(language="de")
    client.force_login(alice)
    url = reverse("submit", args=[game.pk])
    page = client.post(url, {"move": "walls F7/F9"}, follow=True)
    html = page.content.decode()
    assert "eine Grenze liegt zwischen zwei benachbarten Feldern" in html, html[:3000]
