"""The game page words a view through the same functions as the emails
(`games.show.view_text`): for every kind of phase, the move examples it shows are
exactly those `view_text.examples` gives the "waits for you" email, and each is a
legal move through the site's own parser; what is asked, the hand and the deadline are
the emails' sentences too.
"""

from __future__ import annotations

import html
import re
from functools import cache

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from engine.ai import RandomPlayer
from engine.game import GameState, check, new_game, submit
from engine.notation import parse_move
from engine.serialize import state_to_json
from engine.setup import Settings
from engine.view import view
from games.models import Game, Seat
from games.play_forms import MoveTextForm
from games.show import view_text

COLOURS = ("red", "ochre", "lilac")  # the conftest game's seats: alice, bob, charlie
PHASE_KINDS = {
    "placement",
    "decision",
    "negotiation",
    "duel",
    "perform/walls",
    "perform/swords",
    "perform/piles",
    "crown",
}
EXAMPLE = re.compile(r'<code class="move-example">(.*?)</code>')


@pytest.fixture(autouse=True)
def fast_password_hashing(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@cache
def states_of_every_kind() -> dict[str, GameState]:
    """A position for each kind of phase (and of perform), from a game of computers."""
    state = new_game(Settings(players=COLOURS, setup="variable", seed=11))
    brains = {colour: RandomPlayer(f"page/{colour}") for colour in COLOURS}
    found: dict[str, GameState] = {}
    for _ in range(3000):
        if state.is_over or set(found) >= PHASE_KINDS:
            break
        colour = state.waiting[0]
        ask = view(state, colour).get("ask") or {}
        extra = next((f"/{key}" for key in ("walls", "swords", "piles") if key in ask), "")
        found.setdefault(state.phase.kind + extra, state)
        state, _ = submit(state, colour, brains[colour].choose(state, colour))
    return found


def page_for(client, game: Game, state: GameState) -> tuple[str, User]:
    """The page of the first player `state` waits for, with `state` stored as the game's."""
    Game.objects.filter(pk=game.pk).update(state=state_to_json(state))
    user = Seat.objects.get(game=game, colour=state.waiting[0]).user
    assert user is not None
    client.force_login(user)
    response = client.get(reverse("game", args=[game.pk]))
    assert response.status_code == 200
    return response.content.decode(), user


def test_a_position_of_every_kind_of_phase_is_found():
    assert set(states_of_every_kind()) == PHASE_KINDS


@pytest.mark.parametrize("kind", sorted(PHASE_KINDS))
def test_the_page_shows_the_emails_examples_and_each_is_a_legal_move(client, game, kind):
    state = states_of_every_kind()[kind]
    colour = state.waiting[0]
    v = view(state, colour)
    text, _ = page_for(client, game, state)
    expected = view_text.examples(v)
    assert expected, kind  # every kind of phase suggests a reply
    assert [html.unescape(e) for e in EXAMPLE.findall(text)] == expected
    assert f'placeholder="{html.escape(expected[0])}"' in text  # the text field's hint
    for example in expected:
        form = MoveTextForm({"move": example}, view=v)
        assert form.is_valid(), (kind, example, form.errors)
        check(state, colour, parse_move(form.move_text()))  # raises if it is not legal


@pytest.mark.parametrize("kind", ["decision", "duel", "perform/walls"])
def test_the_page_says_what_is_asked_as_the_email_does(client, game, kind):
    state = states_of_every_kind()[kind]
    v = view(state, state.waiting[0])
    text, user = page_for(client, game, state)
    asked = view_text.asked(v, _names(game))
    assert asked and 'id="asked"' in text
    assert all(f"<li>{html.escape(line)}</li>" in text for line in asked)
    assert html.escape(view_text.deadline_text(game, user)) in text
    hand = view_text.hand(v)
    assert f'id="my-ducats">{hand["ducats"]}<' in text
    assert all(f">{html.escape(card)}</span>" in text for card in hand["cards"])


def _names(game: Game) -> dict[str, str]:
    return {s.colour: s.display_name for s in Seat.objects.filter(game=game)}
