"""`manage.py seed_demo`: a demo player with a game in progress and one in the archive.

Idempotent: the user and each game are created once (found again by name), so
`python3 dev.py run` calls it on every start. The games are advanced here,
synchronously, through the same services the worker uses; no worker is needed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from celery import current_app
from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from engine.ai import RandomPlayer
from engine.errors import IllegalMove
from games import services
from games.mail.notify import phase_changed
from games.mail.outbox import send
from games.models import Game, OutgoingEmail, Seat

USERNAME = "demo"
PASSWORD = "lionheart-demo"
DISPLAY_NAME = "Demo Player"
IN_PROGRESS = "Demo: against the computers"
FINISHED = "Demo: a finished game"
# The game in progress stops at the demo's decision of this turn or a later one, where the
# demo is the start player and ticks two cards: the README's `decide 1, 3` (RULES 3.2).
INTERESTING_TURN = 4
DEMO_CARDS = 2
MAX_STEPS = 5000  # a whole game takes a few hundred; more means something is stuck


class Command(BaseCommand):
    help = "Create the demo player (demo / lionheart-demo) and two games to look at."

    def handle(self, *args: Any, **options: Any) -> None:
        # Every move is played right here, so the tasks the services send would only be
        # stale no-ops for the worker: send them to a broker that ends with this command.
        broker = current_app.conf.broker_url
        # Items, not attributes: the same setting, which celery-types declares read-only.
        current_app.conf["broker_url"] = "memory://"
        demo = demo_user()
        created = [
            name
            for name, stop in ((IN_PROGRESS, waits_for_demo_decision), (FINISHED, never))
            if seed_game(demo, name, stop)
        ]
        current_app.conf["broker_url"] = broker
        if IN_PROGRESS in created:
            send_demo_emails(Game.objects.get(name=IN_PROGRESS, creator=demo))
        if created and options["verbosity"] >= 1:
            self.stdout.write(f"Demo games created: {', '.join(created)}.")


def send_demo_emails(game: Game) -> None:
    """The demo's "waits for you" email for the game in progress, sent here and now
    (to var/mail by default), so that the demo can answer it by email."""
    phase_changed(game.pk, game.phase_number)
    for email in OutgoingEmail.objects.filter(game=game, status=OutgoingEmail.Status.QUEUED):
        send(email.pk)


def demo_user() -> User:
    user, created = User.objects.get_or_create(
        username=USERNAME, defaults={"email": "demo@example.org"}
    )
    if created or not user.check_password(PASSWORD):
        user.set_password(PASSWORD)
        user.save()
    if user.profile.display_name != DISPLAY_NAME:
        user.profile.display_name = DISPLAY_NAME
        user.profile.save(update_fields=["display_name"])
    return user


def seed_game(demo: User, name: str, stop: Callable[[Game, Seat], bool]) -> bool:
    """Create the game `name` (demo red, two computers) unless it exists, and play it."""
    if Game.objects.filter(creator=demo, name=name).exists():
        return False
    with transaction.atomic():  # all or nothing, so that a game found by name is whole
        game = services.create_game(
            demo,
            name=name,
            player_count=3,
            setup="basic",
            decisions="sealed",
            money="hidden",
            deadline_hours=48,
            invite_only=False,
            colour="red",
            computer_colours=["ochre", "lilac"],
        )
        advance(game.pk, RandomPlayer(f"demo/{game.seed}"), stop)
    return True


def advance(game_id: int, player: RandomPlayer, stop: Callable[[Game, Seat], bool]) -> None:
    """Play every awaited seat, then resolve, until the game ends or `stop` says so."""
    for _ in range(MAX_STEPS):
        game = Game.objects.get(pk=game_id)
        demo_seat = game.seats.get(user__isnull=False)
        play_computers(game)
        if game.is_finished or stop(game, demo_seat):
            return
        play_demo(game, demo_seat, player)
        services.resolve(game.pk, game.phase_number)
    raise CommandError(f"demo game {game_id} did not reach its goal in {MAX_STEPS} steps")


def play_computers(game: Game) -> None:
    for seat in game.seats.filter(is_computer=True):
        if seat.colour in game.waiting:
            services.play_computer(game.pk, game.phase_number, seat.pk)


def play_demo(game: Game, seat: Seat, player: RandomPlayer) -> None:
    game = Game.objects.get(pk=game.pk)  # the computers' moves may have changed it
    if game.is_finished or seat.colour not in game.waiting:
        return
    with contextlib.suppress(IllegalMove, services.GameError):  # the next step looks again
        services.submit_move(game.pk, seat.pk, player.choose(game.engine_state, seat.colour))


def waits_for_demo_decision(game: Game, seat: Seat) -> bool:
    return (
        game.turn >= INTERESTING_TURN
        and game.phase_kind == "decision"
        and seat.colour in game.waiting
        and game.engine_state.cards_to_choose(seat.colour) == DEMO_CARDS
    )


def never(game: Game, seat: Seat) -> bool:
    return False
