"""Who may see a game, as the person page's written SQL asks it (games.visibility,
`visible_sql`); the rule is `visible_games`'s. On many generated tables and viewers
(anonymous, signed in with or without an address, invite links opened in the session),
the two agree."""

from __future__ import annotations

import random

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.db import connection
from django.http import HttpRequest
from django.test import RequestFactory

from games.models import Game, OutgoingEmail, Seat
from games.visibility import INVITED, visible_games, visible_sql
from tests.site.conftest import make_user

pytestmark = pytest.mark.django_db
ROUNDS = 8
GAMES_PER_ROUND = 16


def generated_games(rng: random.Random, people: list[User]) -> list[int]:
    """Games open to all and invite-only, some of the people seated, some invited by an
    email to their address (in another case), some invitations to strangers or of
    another kind."""
    ids = []
    for number in range(GAMES_PER_ROUND):
        game = Game.objects.create(
            name=f"Generated {number}", player_count=2, invite_only=rng.random() < 0.7
        )
        ids.append(game.pk)
        for position, user in enumerate(rng.sample(people, rng.randint(0, 2))):
            Seat.objects.create(
                game=game, colour=("red", "ochre")[position], position=position, user=user
            )
        for user in rng.sample(people, rng.randint(0, 2)):
            address = rng.choice([user.email, user.email.upper(), "stranger@example.org"])
            kind = rng.choice(["invitation", "invitation", "turn"])
            OutgoingEmail.objects.create(kind=kind, to=address, game=game, subject="Join")
    return ids


def viewer(rng: random.Random, people: list[User], ids: list[int]) -> HttpRequest:
    request = RequestFactory().get("/")
    user = rng.choice([AnonymousUser(), *people])
    request.user = user
    request.session = {INVITED: rng.sample(ids, rng.randint(0, 3))}  # type: ignore[assignment]
    return request


def by_the_rule(request: HttpRequest) -> set[int]:
    return set(visible_games(request, Game.objects.all()).values_list("pk", flat=True))


def by_the_sql(request: HttpRequest) -> set[int]:
    condition, params = visible_sql(request, "g")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT g.id FROM {Game._meta.db_table} g WHERE {condition}", params)
        return {pk for (pk,) in cursor.fetchall()}


def test_the_sql_agrees_with_visible_games_on_generated_tables():
    rng = random.Random(27)
    people = [make_user(f"person{n}") for n in range(4)]
    User.objects.filter(pk=people[-1].pk).update(email="")  # signed in, no address
    people[-1].refresh_from_db()
    seen = []
    for _ in range(ROUNDS):
        Game.objects.all().delete()
        ids = generated_games(rng, people)
        for _ in range(6):
            request = viewer(rng, people, ids)
            assert by_the_sql(request) == by_the_rule(request)
            seen.append(len(by_the_rule(request)))
    # Viewers saw few games and many (not all, not none alike).
    assert min(seen) < GAMES_PER_ROUND / 2 < max(seen)


@pytest.mark.parametrize("written", ["orm", "sql"])
def test_the_invitations_asked_by_address_are_read_by_their_index(on_postgresql, written):
    """Every list of games asks which invitations went to the viewer's address (any case):
    both ways of asking it reach the invitations' index (migration 0021), not every email
    ever queued. Sequential scans are priced out so that a small test table cannot make a
    scan the cheaper plan; without the index the plan names another one."""
    person = make_user("invited")
    request = RequestFactory().get("/")
    request.user = person
    request.session = {}  # type: ignore[assignment]
    if written == "orm":
        sql, params = visible_games(request, Game.objects.all()).query.sql_with_params()
    else:
        condition, params = visible_sql(request, "g")  # type: ignore[assignment]
        sql = f"SELECT g.id FROM {Game._meta.db_table} g WHERE {condition}"
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(line for (line,) in cursor.fetchall())
    assert "email_invitation_to" in plan, plan
