"""Every email the site sends: one small function per kind, each queuing a row in the
outbox (games.outbox) built from three templates in templates/emails/
(<kind>-subject.txt, <kind>-body.txt, <kind>-body.html).

Interface used by notify, inbound and deadlines; the bodies are filled in by the
email work.
"""

from __future__ import annotations

from django.contrib.auth.models import User

from games.models import Event, Game, Seat


def your_turn(game: Game, seat: Seat) -> None:
    """'The game waits for you': what is asked, the state as text, a magic link."""


def results(game: Game, seat: Seat, events: list[Event]) -> None:
    """What a phase revealed: decisions, duels, scores."""


def reminder(game: Game, seat: Seat) -> None:
    """A reminder before the deadline to a player whose submission is missing."""


def game_over(game: Game, seat: Seat) -> None:
    """Final scores and a link to the archive."""


def invitation(game: Game, to: str, inviter: User) -> None:
    """An invitation to join a game, with its join link."""


def move_reply(seat: Seat, accepted: bool, commands: list[str], message: str) -> None:
    """The answer to an emailed move: accepted (with what it means) or refused."""


def refusal(to: str, reason: str) -> None:
    """The answer to an email that cannot be tied to a player (bad or stale token)."""
