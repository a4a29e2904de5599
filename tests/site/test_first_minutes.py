"""What a newcomer met in the first minutes (issue 24, item 6), each fixed at its one home:
every time in the reader's own zone (the log, the whole log, the emails), the talk
examples of an email legal for its reader, "Computer (lilac)" named once, one taker of a
money bag, the seats an open game still waits for, "you" to the player a refusal or the
phase is about, a favicon, and the table talk in the whole log at the phase it was
written.

alice (red) reads in Europe/Berlin, bob (ochre) in America/New_York, charlie (lilac) in
UTC (tests/site/conftest.py); dave is an outsider.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.contrib.staticfiles import finders
from django.test import Client
from django.urls import reverse

from engine.notation import parse_move
from games import chat, services
from games.mail import notify, replies
from games.models import Event, Game, OutgoingEmail, Seat
from games.show import words
from games.show.event_text import describe
from games.show.presenter import present
from games.show.view_text import scores
from games.views import history as history_view
from tests.site.conftest import new_game, three_player_game
from tests.site.test_game_page import play_phases

NAMES = {"red": "Alice", "ochre": "Bob", "lilac": "Charlie"}
DEADLINE = "2030-01-02T10:00:00+00:00"  # a Wednesday
IN_BERLIN = "Wed 2 Jan 2030, 11:00 CET (Europe/Berlin)"
IN_NEW_YORK = "Wed 2 Jan 2030, 05:00 EST (America/New_York)"


@pytest.fixture(autouse=True)
def fast_password_hashing(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def client_of(user: User | None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def page(user: User | None, path: str) -> str:
    response = client_of(user).get(path)
    assert response.status_code == 200, (path, response.status_code)
    return response.content.decode()


def seat_of(game: Game, colour: str) -> Seat:
    return Seat.objects.select_related("user__profile").get(game=game, colour=colour)


def against_computers(alice: User) -> Game:
    """alice (red) against two computers, as the demo plays."""
    game = new_game(alice, name="Against the computers", computer_colours=["ochre", "lilac"])
    return Game.objects.get(pk=game.pk)


def your_turn(game: Game, user: User) -> OutgoingEmail:
    notify.phase_changed(game.pk, game.phase_number)
    return OutgoingEmail.objects.filter(user=user, kind="your_turn").latest("id")


# --- every time in the reader's zone ---------------------------------------------------------


def extended(game: Game) -> None:
    """The creator extended the deadline until DEADLINE: a log line with a time."""
    Event.objects.create(
        game=game,
        index=Event.objects.filter(game=game).count(),
        phase_number=game.phase_number,
        turn=game.turn,
        kind="deadline_extended",
        data={"reason": "creator", "player": "red", "hours": 24, "deadline": DEADLINE},
    )


def test_a_time_in_the_log_is_in_each_readers_zone_as_the_deadline_beside_it(
    game, alice, bob, charlie
):
    extended(game)
    for user, moment in ((alice, IN_BERLIN), (bob, IN_NEW_YORK)):
        for path in (reverse("game", args=[game.pk]), reverse("game_history", args=[game.pk])):
            text = page(user, path)
            assert moment in text and "10:00 UTC" not in text, (user, path)
    assert "Wed 2 Jan 2030, 10:00 UTC" in page(charlie, reverse("game", args=[game.pk]))


def test_a_time_in_an_email_is_in_its_readers_zone(game, alice, bob):
    extended(game)
    to_alice, to_bob = your_turn(game, alice), your_turn(game, bob)
    assert IN_BERLIN in to_alice.text and IN_BERLIN in to_alice.html
    # No time told in UTC (a signed link's letters may spell "UTC" by chance: not a time).
    assert IN_NEW_YORK in to_bob.text and not re.search(r"\d\d:\d\d UTC", to_bob.text)


# --- the examples of an email, legal for its reader ---------------------------------------------


def talk_example(email: OutgoingEmail) -> tuple[str, str]:
    """The colour and text of the "to <colour>:" example of the email's talk section."""
    found = re.search(r"^    to (\w+): (.+)$", email.text, re.M)
    assert found, email.text
    return found.group(1), found.group(2)


def test_the_example_of_a_message_to_one_player_names_one_the_reader_may_write_to(
    game, alice, bob, charlie
):
    for user in (alice, bob, charlie):
        colour, text = talk_example(your_turn(game, user))
        chat.check(game, user.pk, text, colour)  # raises GameError if refused: not one's own
    assert talk_example(your_turn(game, alice))[0] == "ochre"
    assert talk_example(your_turn(game, bob))[0] == "red"
    # An example is never read as a message, whichever colour it names.
    assert replies.commands(f"to lilac: {talk_example(your_turn(game, alice))[1]}").said == ()


def test_a_player_with_nobody_to_write_to_is_shown_no_talk(alice):
    email = your_turn(against_computers(alice), alice)
    assert "TALK TO THE TABLE" not in email.text and "to ochre:" not in email.text
    assert "Talk to the table" not in email.html


# --- names, sentences, counts --------------------------------------------------------------------


def test_a_computer_is_named_with_its_colour_once(alice):
    game = against_computers(alice)
    shown = present(game, seat_of(game, "red"))
    assert shown.view is not None
    lines = scores(shown.view, shown.labels)
    assert any(line.startswith("Computer (ochre, normal): power") for line in lines), lines
    assert any(line.startswith("Alice (red) (you): power") for line in lines), lines
    email = your_turn(game, alice)
    assert "Computer (lilac, normal): power" in email.text
    assert "(lilac) (lilac)" not in email.text + email.html


def test_one_taker_of_a_money_bag_takes_it_whole():
    one = {"kind": "money", "action": "M6", "players": ["red"], "each": 6}
    assert describe(one, NAMES) == "Alice takes 6 ducats."
    two = {**one, "players": ["red", "ochre"], "each": 3}
    assert describe(two, NAMES) == "Alice and Bob share 6 ducats: 3 ducats each."


def test_an_open_game_says_how_many_seats_it_still_waits_for(alice, bob):
    game = new_game(alice, name="Gathering")
    services.join_game(game.pk, bob, "ochre")
    text = page(alice, reverse("game", args=[game.pk]))
    assert "it waits for 1 more player (2 of 3 seats taken)." in text


# --- "you" to the player it is about ----------------------------------------------------------


def test_a_refusal_tells_its_mover_you(game):
    state = game.engine_state
    starter = state.start_player
    other = next(c for c in state.waiting if c != starter)
    with pytest.raises(services.Refusal) as refused:
        services.submit(game.pk, seat_of(game, starter).pk, parse_move("decide 2"))
    assert str(refused.value) == "you choose 2 decision cards this turn"
    with pytest.raises(services.Refusal) as refused:
        services.submit(game.pk, seat_of(game, other).pk, parse_move("decide 1, 2"))
    assert str(refused.value) == "you choose 1 decision card this turn"


def test_a_refusal_names_the_colour_to_anyone_else():
    values = {"colour": "red", "count": 2}
    assert words.reason_text("decision_cards", values) == "red chooses 2 decision cards this turn"
    assert words.reason_text("decision_cards", values, "ochre").startswith("red chooses")
    assert words.reason_text("decision_cards", values, "red").startswith("you choose")
    refused = {
        "kind": "refused",
        "move": "decide 2",
        "reason": {"code": "decision_cards", "values": values},
        "to": "red",
    }
    assert describe(refused, NAMES, "red").endswith(": you choose 2 decision cards this turn.")
    assert describe(refused, NAMES).endswith(": red chooses 2 decision cards this turn.")


def test_every_sentence_for_the_reader_fits_the_engines_values():
    """A "you" sentence words the values its engine sentence has (engine.reasons)."""
    from engine.reasons import SENTENCES

    for code, sentence in words.TO_READER.items():
        assert "{colour}" in SENTENCES[code], code
        wanted = set(re.findall(r"{(\w+)}", sentence))
        assert wanted <= set(re.findall(r"{(\w+)}", SENTENCES[code])) - {"colour"}, code


@pytest.mark.parametrize(
    ("phase", "to_red", "to_lilac"),
    [
        (
            {"kind": "perform", "action": "W2", "waiting": ["red"]},
            "You perform 2 walls.",
            "Alice performs 2 walls.",
        ),
        (
            {"kind": "crown", "action": "P", "waiting": ["red"], "pile": 2},
            "You take a card from politics pile 2.",
            "Alice takes a card from politics pile 2.",
        ),
        (
            {"kind": "placement", "colour": "ochre", "waiting": ["red"]},
            "You place an ochre castle and knight.",
            "Alice places an ochre castle and knight.",
        ),
        (
            {"kind": "duel", "action": "S1", "contenders": ["red", "ochre"], "round": 1},
            "You and Bob bid for 1 sword.",
            "Alice and Bob bid for 1 sword.",
        ),
        (
            {"kind": "negotiation", "action": "M5", "contenders": ["red", "ochre"]},
            "You and Bob negotiate over 5 ducats.",
            "Alice and Bob negotiate over 5 ducats.",
        ),
        (
            {
                "kind": "negotiation",
                "action": "M5",
                "contenders": ["red", "ochre"],
                "offer": ["ochre", 2],
            },
            "You and Bob negotiate over 5 ducats. Bob offers you 2 ducats.",
            "Alice and Bob negotiate over 5 ducats. Bob offers 2 ducats.",
        ),
        (
            {
                "kind": "negotiation",
                "action": "M5",
                "contenders": ["red", "ochre"],
                "offer": ["red", 1],
            },
            "You and Bob negotiate over 5 ducats. You offer 1 ducat.",
            "Alice and Bob negotiate over 5 ducats. Alice offers 1 ducat.",
        ),
    ],
)
def test_the_phase_is_told_to_the_player_it_waits_for_as_you(phase, to_red, to_lilac):
    assert words.phase_text(phase, NAMES, "red") == to_red
    assert words.phase_text(phase, NAMES, "lilac") == to_lilac
    assert words.phase_text(phase, NAMES) == to_lilac


# --- a favicon ----------------------------------------------------------------------------------


def test_every_page_names_the_sites_icon_and_favicon_ico_finds_it(db, client):
    found = finders.find("games/favicon.svg")
    assert found, "games/static/games/favicon.svg"
    assert ElementTree.parse(Path(found)).getroot().tag == "{http://www.w3.org/2000/svg}svg"
    assert '<link rel="icon" href="/static/games/favicon.svg" type="image/svg+xml">' in page(
        None, reverse("lobby")
    )
    response = client.get("/favicon.ico")
    assert (response.status_code, response["Location"]) == (302, "/static/games/favicon.svg")


# --- the table talk in the whole log -----------------------------------------------------------


@pytest.fixture
def talked(alice, bob, charlie) -> tuple[Game, dict[str, int]]:
    """A game a few phases in, with a message to everyone in one phase and one from bob to
    alice alone two phases later; the phase each was written in."""
    game = play_phases(three_player_game(alice, bob, charlie), 2)
    chat.post(game.pk, alice.pk, "Shall we share the hills?")
    written = {"public": game.phase_number}
    game = play_phases(game, 2)
    chat.post(game.pk, bob.pk, "Only between us: I go east.", "red")
    written["private"] = game.phase_number
    return play_phases(game, 2), written


def events_around(html: str, text: str) -> tuple[list[int], list[int]]:
    """The phases of the events listed before and after `text` on a whole-log page."""
    at = html.index(text)
    phase_of = {}
    for heading in re.finditer(r'data-phase="(\d+)"', html):
        phase_of[heading.start()] = int(heading.group(1))
    before = [phase for where, phase in phase_of.items() if where < at]
    after = [phase for where, phase in phase_of.items() if where > at]
    return before, after


def test_the_whole_log_shows_the_talk_at_the_phase_it_was_written(talked, alice, charlie, dave):
    game, written = talked
    html = page(alice, reverse("game_history", args=[game.pk]))
    for key, text in (("public", "Shall we share the hills?"), ("private", "I go east.")):
        assert html.count(text) == 1, key
        before, after = events_around(html, text)
        assert before and max(before) <= written[key], key
        assert all(phase > written[key] for phase in after), key
    for_charlie = page(charlie, reverse("game_history", args=[game.pk]))
    assert "Shall we share the hills?" in for_charlie and "I go east." not in for_charlie
    assert "Shall we share the hills?" not in page(dave, reverse("game_history", args=[game.pk]))


def test_each_message_is_on_one_page_of_the_whole_log(talked, alice, monkeypatch):
    game, _ = talked
    monkeypatch.setattr(history_view, "EVENTS_PER_PAGE", 4)
    url = reverse("game_history", args=[game.pk])
    last = int(re.search(r'id="log-page">\d+</span> of (\d+)', page(alice, url)).group(1))
    assert last > 2
    pages = [page(alice, f"{url}?page={number}") for number in range(1, last + 1)]
    for text in ("Shall we share the hills?", "I go east."):
        assert sum(html.count(text) for html in pages) == 1, text
