"""The navigation's count of "your move" is hand-written SQL (games.context_processors,
YOUR_MOVE_SQL); the rule is `my_games`'s. On many generated tables, the two agree."""

from __future__ import annotations

import random

import pytest
from django.contrib.auth.models import User

from engine.position import COLOURS
from games.context_processors import my_games, your_move_count
from games.models import Game, PendingSubmission, Seat
from tests.site.conftest import make_user

ROUNDS = 12
GAMES_PER_ROUND = 24


def by_the_rule(user: User) -> int:
    """The person's seats whose game waits for them, as the lobby reads `my_games`."""
    return sum(bool(game.my_turn) for game in my_games(user))


def generated_games(rng: random.Random, people: list[User]) -> None:
    """Games of every status, their seats taken by some of the people (or computers),
    each waiting for some colours, some seats with a submission stored for the current
    phase, the one before or the one after."""
    for number in range(GAMES_PER_ROUND):
        phase = rng.randint(2, 5)
        colours = rng.sample(COLOURS, rng.randint(1, len(COLOURS)))
        game = Game.objects.create(
            name=f"Generated {number}",
            player_count=len(colours),
            status=rng.choice(list(Game.Status)),
            phase_number=phase,
            waiting=rng.sample(COLOURS, rng.randint(0, len(COLOURS))),
        )
        seated = rng.sample(people, rng.randint(0, min(len(people), len(colours))))
        for position, colour in enumerate(colours):
            user = seated[position] if position < len(seated) else None
            seat = Seat.objects.create(
                game=game, colour=colour, position=position, user=user, is_computer=user is None
            )
            for stored in {phase - 1, phase, phase + 1}:
                if rng.random() < 0.3:
                    PendingSubmission.objects.create(
                        game=game, seat=seat, phase_number=stored, move={}, text="moved"
                    )


@pytest.mark.django_db
def test_the_count_agrees_with_my_games_on_generated_tables():
    rng = random.Random(22)
    people = [make_user(f"person{n}") for n in range(4)]
    counted = []
    for _ in range(ROUNDS):
        Game.objects.all().delete()
        generated_games(rng, people)
        for person in people:
            assert your_move_count(person) == by_the_rule(person)
            counted.append(by_the_rule(person))
    # The tables had games waiting for the person and games that did not.
    assert 0 in counted and max(counted) >= 3
