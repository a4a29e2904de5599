"""The archive's search (games.views.archive_search) against a brute-force filter of the
same games in Python: a made-up archive of finished games (rows written directly, no
game played), many random combinations of filters and orders, the page's games compared
with the Python filter's first page. Also: private games stay their players' own, bad
input is a sentence on the page, and every combination of filters costs as many queries.
"""

from __future__ import annotations

import html
import itertools
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from games.models import Game, Seat
from games.views.archive_search import PAGE_SIZE
from tests.site.conftest import make_user

COLOURS = ["red", "ochre", "lilac", "grey"]
NAMES = ["anna", "bruno", "carla", "dieter", "elena", "franz"]
DISPLAY = {"anna": "Queen Anne", "bruno": "Lionheart", "carla": "Carla", "dieter": "Dee"}
GAMES = 80
COMBINATIONS = 150


@dataclass(frozen=True)
class Made:
    """A made-up finished game, as the brute-force filter reads it."""

    pk: int
    players: int
    setup: str
    decisions: str
    finished: datetime
    turns: int
    people: dict[str, str]  # colour -> user name (computers are not here)
    winners: tuple[str, ...]
    private: bool


@dataclass(frozen=True)
class Archive:
    games: list[Made]
    users: dict[str, User]


def names_of(username: str) -> tuple[str, str]:
    return username, DISPLAY.get(username, username.title())


def make_game(rng: random.Random, i: int, users: dict[str, User]) -> Made:
    players = rng.choice([2, 3, 4])
    colours = COLOURS[:players]
    people = dict(zip(colours, rng.sample(NAMES, players), strict=True))
    for colour in colours:  # about a quarter of the seats are computers'
        if rng.random() < 0.25:
            del people[colour]
    winners = tuple(rng.sample(colours, rng.choice([1, 1, 1, 2])))
    game = Game.objects.create(
        name=f"Game {i}",
        player_count=players,
        setup=rng.choice(["basic", "variable"]),
        decisions=rng.choice(["sealed", "open"]),
        status=Game.Status.FINISHED,
        finished_at=datetime(2024, 1, 1, 12, tzinfo=UTC) + timedelta(days=rng.randrange(366)),
        turn=rng.randrange(3, 15),
        winners=list(winners),
        invite_only=rng.random() < 0.15,
    )
    for position, colour in enumerate(colours):
        name = people.get(colour)
        Seat.objects.create(
            game=game,
            colour=colour,
            position=position,
            user=users[name] if name else None,
            is_computer=name is None,
        )
    assert game.finished_at is not None
    return Made(
        game.pk,
        players,
        game.setup,
        game.decisions,
        game.finished_at,
        game.turn,
        people,
        winners,
        game.invite_only,
    )


@pytest.fixture(scope="module")
def made(django_db_setup, django_db_blocker) -> Iterator[Archive]:
    with django_db_blocker.unblock(), transaction.atomic():
        users = {name: make_user(name) for name in NAMES}
        for name, shown in DISPLAY.items():
            users[name].profile.display_name = shown
            users[name].profile.save()
        rng = random.Random(27)
        games = [make_game(rng, i, users) for i in range(GAMES)]
        Game.objects.create(name="Running", player_count=2, status=Game.Status.RUNNING, turn=4)
        yield Archive(games, users)
        transaction.set_rollback(True)


# --- the brute force -------------------------------------------------------------------------


def named(game: Made, part: str, colours: tuple[str, ...] | None = None) -> bool:
    part = part.casefold()
    return any(
        any(part in n.casefold() for n in names_of(user))
        for colour, user in game.people.items()
        if colours is None or colour in colours
    )


def passes(game: Made, query: dict[str, str], viewer: str | None) -> bool:
    if game.private and viewer not in game.people.values():
        return False
    day = game.finished.date()
    checks = {
        "player": lambda v: named(game, v),
        "winner": lambda v: named(game, v, game.winners),
        "players": lambda v: game.players == int(v),
        "setup": lambda v: game.setup == v,
        "decisions": lambda v: game.decisions == v,
        "finished_from": lambda v: day >= date.fromisoformat(v),
        "finished_to": lambda v: day <= date.fromisoformat(v),
        "turns_min": lambda v: game.turns >= int(v),
        "turns_max": lambda v: game.turns <= int(v),
    }
    return all(check(query[k]) for k, check in checks.items() if query.get(k))


ORDER_KEYS = {
    "newest": (lambda g: (g.finished, g.pk), True),
    "oldest": (lambda g: (g.finished, g.pk), False),
    "longest": (lambda g: (g.turns, g.pk), True),
    "shortest": (lambda g: (g.turns, g.pk), False),
}


def brute_force(games: list[Made], query: dict[str, str], viewer: str | None) -> list[int]:
    key, reverse_order = ORDER_KEYS[query.get("order") or "newest"]
    found = sorted((g for g in games if passes(g, query, viewer)), key=key, reverse=reverse_order)
    return [g.pk for g in found]


def random_query(rng: random.Random) -> dict[str, str]:
    low_day = date(2024, 1, 1) + timedelta(days=rng.randrange(366))
    low_turns = rng.randrange(3, 15)
    candidates = {
        "player": rng.choice([*NAMES, "an", "LION", "e", "nobody"]),
        "winner": rng.choice([*NAMES, "queen", "D", "nobody"]),
        "players": rng.choice(["2", "3", "4"]),
        "setup": rng.choice(["basic", "variable"]),
        "decisions": rng.choice(["sealed", "open"]),
        "finished_from": low_day.isoformat(),
        "finished_to": (low_day + timedelta(days=rng.randrange(200))).isoformat(),
        "turns_min": str(low_turns),
        "turns_max": str(low_turns + rng.randrange(8)),
        "order": rng.choice(list(ORDER_KEYS)),
    }
    chosen = rng.sample(sorted(candidates), rng.randrange(0, 5))
    return {k: candidates[k] for k in chosen}


def page_ids(client: Client, query: dict[str, str]) -> tuple[list[int], bool]:
    response = client.get(reverse("archive"), query)
    assert response.status_code == 200
    page = response.context["page"]
    return [g.pk for g in page], page.has_next


# --- the tests -------------------------------------------------------------------------------


@pytest.mark.parametrize("viewer", [None, "anna"])
def test_every_random_search_finds_what_the_brute_force_finds(made, viewer):
    client = Client()
    if viewer:
        client.force_login(made.users[viewer])
    rng = random.Random(f"search/{viewer}")
    for _ in range(COMBINATIONS):
        query = random_query(rng)
        expected = brute_force(made.games, query, viewer)
        got, has_next = page_ids(client, query)
        assert got == expected[:PAGE_SIZE], query
        assert has_next == (len(expected) > PAGE_SIZE), query


def test_the_second_page_continues_the_first_with_the_filters_kept(made, client):
    query = {"order": "longest", "turns_min": "4"}
    expected = brute_force(made.games, query, None)
    assert len(expected) > PAGE_SIZE
    first = client.get(reverse("archive"), query)
    link = re.search(r'id="archive-page-next" href="\?([^"]*)"', first.content.decode())
    assert link is not None
    assert sorted(html.unescape(link[1]).split("&")) == ["order=longest", "page=2", "turns_min=4"]
    got, _ = page_ids(client, {**query, "page": "2"})
    assert got == expected[PAGE_SIZE : 2 * PAGE_SIZE]


def test_a_private_game_is_listed_to_its_players_only(made):
    private = next(g for g in made.games if g.private and g.people)
    player = next(iter(private.people.values()))
    outsider = next(n for n in NAMES if n not in private.people.values())
    query = {"finished_from": private.finished.date().isoformat()}
    query["finished_to"] = query["finished_from"]
    for name, seen in [(player, True), (outsider, False), (None, False)]:
        client = Client()
        if name:
            client.force_login(made.users[name])
        response = client.get(reverse("archive"), query)
        assert (private.pk in [g.pk for g in response.context["page"]]) is seen, name
        assert (f'data-game="{private.pk}"' in response.content.decode()) is seen, name


@pytest.mark.parametrize(
    ("query", "field", "words"),
    [
        ({"finished_from": "2024-05-01", "finished_to": "2024-04-01"}, "finished_to", "before"),
        ({"turns_min": "9", "turns_max": "4"}, "turns_max", "fewer turns"),
        ({"setup": "huge"}, "setup", "Select a valid choice"),
        ({"decisions": "whispered"}, "decisions", "Select a valid choice"),
        ({"players": "7"}, "players", "Select a valid choice"),
        ({"turns_min": "many"}, "turns_min", "Enter a whole number"),
        ({"finished_from": "2024-13-45"}, "finished_from", "Enter a valid date"),
        ({"order": "random"}, "order", "Select a valid choice"),
    ],
)
def test_bad_input_is_a_sentence_on_the_page_and_left_out(made, client, query, field, words):
    response = client.get(reverse("archive"), query)
    assert response.status_code == 200
    assert words in " ".join(response.context["form"].errors[field])
    assert words in response.content.decode()
    kept = {k: v for k, v in query.items() if k != field}
    assert [g.pk for g in response.context["page"]] == brute_force(made.games, kept, None)[
        :PAGE_SIZE
    ]


def test_a_page_number_out_of_reach_is_an_empty_page_not_an_error(made, client):
    for page in ["999999999999", "-3", "x"]:
        response = client.get(reverse("archive"), {"page": page})
        assert response.status_code == 200


FILTERS = [
    "player",
    "winner",
    "players",
    "setup",
    "decisions",
    "finished_from",
    "finished_to",
    "turns_min",
    "turns_max",
]


def matching(game: Made) -> dict[str, str]:
    """A value of each filter that `game` passes."""
    winner = next(game.people[c] for c in game.winners if c in game.people)
    return {
        "player": names_of(next(iter(game.people.values())))[1],
        "winner": winner,
        "players": str(game.players),
        "setup": game.setup,
        "decisions": game.decisions,
        "finished_from": game.finished.date().isoformat(),
        "finished_to": game.finished.date().isoformat(),
        "turns_min": str(game.turns),
        "turns_max": str(game.turns),
    }


def queries_for(client: Client, query: dict[str, Any]) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.get(reverse("archive"), query)
    assert response.status_code == 200
    assert response.context["page"].games, query  # results on the page
    return len(queries)


def test_every_combination_of_filters_costs_as_many_queries(made):
    """Each of the 2**9 combinations, in one order or another (all four in turn)."""
    target = next(g for g in made.games if not g.private and any(c in g.people for c in g.winners))
    values = matching(target)
    client = Client()
    client.force_login(made.users["elena"])
    combinations = [
        names for size in range(len(FILTERS) + 1) for names in itertools.combinations(FILTERS, size)
    ]
    counts = {
        names: queries_for(client, {**{k: values[k] for k in names}, "order": order})
        for (names, order) in zip(combinations, itertools.cycle(ORDER_KEYS), strict=False)
    }
    assert len(counts) == 2 ** len(FILTERS)
    assert len(set(counts.values())) == 1, counts
