"""Who is told what when a phase changes (play by email).

`phase_changed` runs in a Celery task after every resolved phase: it queues the
emails of that phase in the outbox (games.emails):

- every person seated: the results of the phase (the events of this phase number they
  may see), unless nothing happened but "X has decided";
- every person the new phase waits for (not computers, not seats a computer stands in
  for): "the game waits for you";
- when the game is over, instead of both: the final scores.

A task may run twice (a redelivered message): an email already in the outbox for the
same kind, person, game and phase (its phase header) is not queued again.
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import transaction

from games import emails
from games.models import Event, Game, OutgoingEmail, Seat


def phase_changed(game_id: int, phase_number: int) -> None:
    """Queue the emails for the phase that just began."""
    with transaction.atomic():
        # The game's row lock makes twin runs take turns: the second sees the first's rows.
        game = Game.objects.select_for_update().get(pk=game_id)
        people = list(game.seats.filter(user__isnull=False, is_computer=False)
                      .select_related("user__profile"))
        if game.is_finished and phase_number == game.phase_number:
            _each(people, game, phase_number, "game_over", lambda s: emails.game_over(game, s))
            return
        events = list(game.events.filter(phase_number=phase_number))
        for seat in people:
            _results(game, seat, phase_number, events)
        if game.status == Game.Status.RUNNING and phase_number == game.phase_number:
            awaited = [s for s in people if s.colour in game.waiting and not s.standin]
            _each(awaited, game, phase_number, "your_turn", lambda s: emails.your_turn(game, s))


def _results(game: Game, seat: Seat, phase_number: int, events: list[Event]) -> None:
    mine = [e for e in events if e.to_colour in ("", seat.colour)]
    if all(e.kind in emails.TRIVIAL_EVENTS for e in mine):
        return
    _each([seat], game, phase_number, "results", lambda s: emails.results(game, s, mine))


def _each(seats: list[Seat], game: Game, phase_number: int, kind: str,
          send: Callable[[Seat], None]) -> None:
    for seat in seats:
        if not is_queued(kind, seat, game, phase_number):
            send(seat)


def is_queued(kind: str, seat: Seat, game: Game, phase_number: int) -> bool:
    """Whether this email of this phase is in the outbox already (in any state)."""
    marker = emails.phase_headers(game, phase_number)[emails.PHASE_HEADER]
    return OutgoingEmail.objects.filter(
        kind=kind, user_id=seat.user_id, game=game,
        **{f"headers__{emails.PHASE_HEADER}": marker}).exists()
