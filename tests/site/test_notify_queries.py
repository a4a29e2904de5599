"""What telling a phase change costs in SQL queries (`notify.phase_changed`): a few for
the game and its phase, whatever the number of emails (but a fold for an ask that tells
held news), never more with the phases played or the messages at the table.
"""

from __future__ import annotations

from unittest import mock

from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from engine.ai import RandomPlayer
from engine.game import is_simultaneous
from games import chat, services
from games.mail import notify
from games.models import Game, OutgoingEmail, Seat

# The game's row, its seats (with who has submitted and the newest message), the
# supersede, the outbox's ledger, the held rows of the people told, every reader's events
# (one query), the reply tokens (made, not looked for: `tokens.links`), the magic links,
# the emails (one INSERT: `outbox.batched`), the game's row saved, the transaction: the
# most a phase change costs, for all its emails.
PER_PHASE = 11
# Held results: nothing of their own (their rows ride in the phase's INSERT).
PER_HELD = 0
# "Waits for you": folding the held news it tells.
PER_ASK = 1
# ... and when the table talks: the last message told, the unread ones (with their
# senders: the seats the game has loaded).
PER_ASK_TALKING = 2
# An ask of an earlier phase still unsent (the sending worker is behind): the UPDATE that
# supersedes it and the ledger read again, once for all the people asked.
PER_SUPERSEDING = 2


def play(
    game: Game, phases: int, talk: bool = False, sent: bool = True
) -> list[tuple[int, int, int]]:
    """`phases` phases played and told: for each, (queries of `phase_changed`, "waits for
    you" emails queued, held results queued). `talk`: a message at the table before each
    phase is told (each email then tells the new ones). `sent`: the queued emails go out
    before the next phase (as the sending worker does while people read and move); if
    not, every ask of a phase supersedes the one before."""
    found = []
    seats = dict(Seat.objects.filter(game=game).values_list("colour", "user_id"))
    with mock.patch("games.tasks.queue"):
        notify.phase_changed(game.pk, game.phase_number)
        if sent:
            send_all()
        for _ in range(phases):
            game = Game.objects.get(pk=game.pk)
            state, number = game.engine_state, game.phase_number
            for colour in state.waiting if is_simultaneous(state) else state.waiting[:1]:
                move = RandomPlayer(f"{number}/{colour}").choose(state, colour)
                services.submit(
                    game.pk, Seat.objects.get(game=game, colour=colour).pk, move, number
                )
            services.resolve(game.pk, number)
            if talk:
                chat.post(game.pk, seats["red"], f"Phase {number} was fun.")
            before = OutgoingEmail.objects.count()
            with CaptureQueriesContext(connection) as queries:
                notify.phase_changed(game.pk, number + 1)
            new = OutgoingEmail.objects.order_by("pk")[before:]
            found.append(
                (
                    len(queries),
                    sum(e.kind == "your_turn" for e in new),
                    sum(e.kind == "results" for e in new),
                )
            )
            if sent:
                send_all()
    return found


def send_all() -> None:
    OutgoingEmail.objects.filter(status=OutgoingEmail.Status.QUEUED).update(
        status=OutgoingEmail.Status.SENT, sent_at=timezone.now()
    )


def bound(asks: int, held: int, talk: bool = False, superseding: bool = False) -> int:
    return (
        PER_PHASE
        + (PER_ASK + PER_ASK_TALKING * talk) * asks
        + PER_HELD * held
        + PER_SUPERSEDING * superseding
    )


def test_a_phase_change_costs_a_few_queries_per_email_however_long_the_game_ran(game):
    told = play(game, 20)
    assert all(count <= bound(asks, held) for count, asks, held in told), told
    # Not more with every phase: the last phases cost what the first ones of their kind did.
    first = {(asks, held): count for count, asks, held in reversed(told[:10])}
    assert all(count <= first.get((asks, held), count) + 2 for count, asks, held in told[10:]), told


def test_the_messages_at_the_table_cost_no_query_each(game):
    told = play(game, 12, talk=True)
    assert all(count <= bound(asks, held, talk=True) for count, asks, held in told), told
    asked = [count for count, asks, held in told if asks == 1 and held == 2]
    assert asked and max(asked) - min(asked) <= 2, told


def test_asks_that_supersede_unsent_ones_cost_two_queries_more_for_all(game):
    told = play(game, 12, sent=False)
    assert all(count <= bound(asks, held, superseding=True) for count, asks, held in told), told
    superseded = OutgoingEmail.objects.filter(status=OutgoingEmail.Status.FOLDED, kind="your_turn")
    assert superseded.count() >= 10  # each phase's asks gave way to the next phase's
