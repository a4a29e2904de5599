"""The beat's sweep as the operator of a busy server feels it: `sweep-scale` and
`sweep-idle`, and what a deadline falling due costs: `deadline-queries` (at the end).

`sweep-scale`: one `games.tasks.sweep_once` (recovery, absences, deadlines, reminders,
held results, the outbox) with 10,000 running games of which 100 have work due, against
the same with 1,000 running games (the quick version: 1,000 against 100, with 10 due).
`sweep-idle`: the same sweep with nothing due, at the same two sizes. Both sizes are
built at once, each in a database of its own on the same server (the suite's, and a
copy made empty beside it, `bench.db.second_database`), and measured in alternating
rounds (small then large, then large then small, ...), each size on its own open
connection: drift and the load of a shared machine fall on both alike, where one size
measured after the other let them decide the ratio. In each round and for each size: a
few sweeps with nothing due (timed, for `sweep-idle`), then one with work due (timed,
for `sweep-scale`); round 0 warms each up and counts its SQL queries instead.

The games: one 4-player game (two people, two computers) started through
`games.services` and played to a sealed decision that waits for all four seats, then
copied in bulk: the game's row with its full state, its seats (people from a pool of
1,000, so that each person sits in several games), its snapshot, its log (events), one
computer's submission stored, a reply token for each person, the reminders the site
arms for each person's seat (24 and 2 hours before a deadline 26 to 42 hours ahead),
and two sent emails of history per game: the tables a sweep touches are the size they
would be. A few people have an absence booked, none now. `ANALYZE` afterwards, as
autovacuum would have.

The due work is made fresh before each sweep with work due, on games not used before (a
sweep does it, so it cannot be measured twice): of 100 due, 20 games whose deadline
passed a minute ago, 20 seats whose reminder is due, 20 games owed a task for longer
than the recovery grace, 20 held confirmations due, 20 queued emails whose dispatch was
lost. After the sweep, what it left for a worker (the resolves, the emails) is marked
done, outside the timing, so that nothing due piles up from one round to the next. No
task is queued (`games.tasks.queue` is switched off): the figure is the sweep's own
work. Each figure is the median of its timed sweeps; `detail` adds the SQL queries.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from unittest import mock

from django.contrib.auth.models import User
from django.db import connection
from django.db.backends.base.base import BaseDatabaseWrapper
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from bench.core import COMPUTER_LEVEL, Figure, Options, figures, median, samples, spread
from bench.db import empty_tables, second_database, using
from bench.web import copy_snapshot
from engine.game import default_move, is_simultaneous
from engine.notation import format_move
from engine.serialize import move_to_json
from games import services
from games.models import (
    Event,
    Game,
    Notifications,
    OutgoingEmail,
    PendingSubmission,
    Reminder,
    ReplyToken,
    Seat,
)

SEED = 7
POOL = 1_000  # people; each sits in 2 * games / POOL games
KINDS = ("deadline", "reminder", "recovery", "flush", "outbox")
HOURS = (24, 2)  # the reminders armed for each person's seat (the default choice)


@contextmanager
def no_task_queue() -> Iterator[None]:
    """What the sweep hands to workers is not queued: the figure is the sweep's work."""
    with mock.patch("games.tasks.queue"):
        yield


def person(name: str) -> User:
    user = User.objects.create_user(name, f"{name}@example.org")
    user.profile.display_name = name.title()
    user.profile.save()
    return user


def template_game(people: list[User]) -> Game:
    """Started through the services, played (default moves) to a phase that waits for
    all four seats at once, so that a deadline passing defaults every seat."""
    game = services.create_game(
        people[0],
        name="Template",
        player_count=4,
        setup="variable",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=["lilac", "grey"],
        computer_level=COMPUTER_LEVEL,
    )
    Game.objects.filter(pk=game.pk).update(seed=SEED)
    services.join_game(game.pk, people[1], "ochre")
    seats = dict(Seat.objects.filter(game=game).values_list("colour", "pk"))
    for _ in range(200):
        game = Game.objects.get(pk=game.pk)
        state = game.engine_state
        if is_simultaneous(state) and len(state.waiting) == 4:
            return game
        for colour in state.waiting if is_simultaneous(state) else state.waiting[:1]:
            services.submit_move(game.pk, seats[colour], default_move(state, colour))
        services.resolve(game.pk, game.phase_number)
    raise RuntimeError("the template game never waited for all four seats")


def build(count: int) -> list[int]:
    """`count` running games (the template and copies); their ids, the template's last."""
    empty_tables()
    people = [person(f"p{i}") for i in range(POOL)]
    now = timezone.now()
    Notifications.objects.bulk_create(  # absences booked, none of them now
        Notifications(
            user=u, away_from=now + timedelta(days=10 + i), away_until=now + timedelta(days=12 + i)
        )
        for i, u in enumerate(people[::10])
    )
    template = template_game(people)
    seats = list(template.seats.order_by("position"))
    snapshot = template.snapshots.order_by("-phase_number").first()
    assert snapshot is not None
    events = list(template.events.order_by("index"))
    computer = next(s for s in seats if s.is_computer)
    move = default_move(template.engine_state, computer.colour)
    skip = {
        "id",
        "invite_token",
        "mail_thread",
        "name",
        "deadline",
        "created_at",
        "work_due_since",
        "creator_id",
    }
    fields = {
        f.attname: getattr(template, f.attname)
        for f in Game._meta.concrete_fields
        if f.attname not in skip
    }
    ids: list[int] = []
    deadline: dict[int, datetime]
    for first in range(1, count, 2000):
        games = Game.objects.bulk_create(
            Game(
                **fields,
                name=f"Game {i}",
                creator_id=people[(2 * i) % POOL].pk,
                deadline=now + timedelta(hours=26, minutes=10 * (i % 97)),
            )
            for i in range(first, min(first + 2000, count))
        )
        made = Seat.objects.bulk_create(
            Seat(
                game_id=g.pk,
                colour=s.colour,
                position=s.position,
                is_computer=s.is_computer,
                user_id=None if s.is_computer else people[(2 * i + s.position) % POOL].pk,
            )
            for i, g in enumerate(games, start=first)
            for s in seats
        )
        deadline = {g.pk: g.deadline for g in games if g.deadline is not None}
        copy_snapshot(snapshot, games)
        Event.objects.bulk_create(
            Event(
                game_id=g.pk,
                index=e.index,
                phase_number=e.phase_number,
                turn=e.turn,
                kind=e.kind,
                data=e.data,
                to_colour=e.to_colour,
            )
            for g in games
            for e in events
        )
        PendingSubmission.objects.bulk_create(
            PendingSubmission(
                game_id=s.game_id,
                seat_id=s.pk,
                phase_number=template.phase_number,
                move=move_to_json(move),
                text=format_move(move),
            )
            for s in made
            if s.colour == computer.colour
        )
        ReplyToken.objects.bulk_create(
            ReplyToken(seat_id=s.pk, phase_number=template.phase_number)
            for s in made
            if s.user_id is not None
        )
        Reminder.objects.bulk_create(
            Reminder(
                seat_id=s.pk,
                phase_number=template.phase_number,
                deadline=deadline[s.game_id],
                hours_before=h,
                due_at=deadline[s.game_id] - timedelta(hours=h),
            )
            for s in made
            if s.user_id is not None
            for h in HOURS
        )
        OutgoingEmail.objects.bulk_create(
            OutgoingEmail(
                kind=kind,
                user_id=s.user_id,
                game_id=s.game_id,
                to="someone@example.org",
                subject="history",
                text="history",
                phase_number=template.phase_number - back,
                status=OutgoingEmail.Status.SENT,
                sent_at=now,
            )
            for s in made
            if s.colour == "red"
            for kind, back in (("results", 1), ("your_turn", 0))
        )
        ids.extend(g.pk for g in games)
    # Played with no task queued, the template is owed its phase's tasks: settled as its
    # copies are, or every sweep's recovery step would queue them again (no sweep idle).
    settle([template.pk])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return [*ids, template.pk]


def make_due(games: list[int], now: datetime) -> dict[str, list[int]]:
    """Work due on these games (distinct, never used before), `len(games) // 5` each kind."""
    share = len(games) // len(KINDS)
    part = {kind: games[i * share : (i + 1) * share] for i, kind in enumerate(KINDS)}
    past = now - timedelta(minutes=1)
    Game.objects.filter(pk__in=part["deadline"]).update(deadline=past)
    Reminder.objects.filter(
        seat__game__in=part["reminder"], seat__colour="red", hours_before=HOURS[0]
    ).update(due_at=past)
    Game.objects.filter(pk__in=part["recovery"]).update(work_due_since=now - timedelta(hours=1))
    people = Seat.objects.filter(game__in=part["flush"] + part["outbox"], colour="red")
    flush = set(part["flush"])
    OutgoingEmail.objects.bulk_create(
        OutgoingEmail(
            kind="move_accepted" if s.game_id in flush else "reminder",
            user_id=s.user_id,
            game_id=s.game_id,
            to="someone@example.org",
            subject="due",
            text="due",
            summary="Your move is accepted.",
            status=(
                OutgoingEmail.Status.COALESCING
                if s.game_id in flush
                else OutgoingEmail.Status.QUEUED
            ),
            next_attempt_at=past,
        )
        for s in people
    )
    return part


def settle(games: list[int]) -> None:
    """What the sweep handed to workers counts as done (outside the timing)."""
    later = timezone.now() + timedelta(hours=30)
    Game.objects.filter(pk__in=games).update(deadline=later, work_due_since=None)
    OutgoingEmail.objects.filter(game__in=games).exclude(status=OutgoingEmail.Status.SENT).update(
        status=OutgoingEmail.Status.SENT
    )


def still_due(part: dict[str, list[int]], now: datetime) -> dict[str, int]:
    """What a sweep at `now` left undone (all zero after a sweep that did its work)."""
    return {
        "deadlines": Game.objects.filter(pk__in=part["deadline"])
        .exclude(events__kind="deadline_missed")
        .count(),
        "reminders": Reminder.objects.filter(due_at__lte=now, sent_at__isnull=True).count(),
        "recovery": Game.objects.filter(pk__in=part["recovery"], work_due_since__lt=now).count(),
        "held": OutgoingEmail.objects.filter(
            status=OutgoingEmail.Status.COALESCING, next_attempt_at__lte=now
        ).count(),
        "outbox": OutgoingEmail.objects.filter(
            game__in=part["outbox"], status=OutgoingEmail.Status.QUEUED, next_attempt_at__lte=now
        ).count(),
    }


@dataclass
class Size:
    """One size of the sweep's world, in a database of its own (None: the suite's), and
    what its sweeps took."""

    count: int
    database: BaseDatabaseWrapper | None = None
    games: list[int] = field(default_factory=list)
    due_ms: list[float] = field(default_factory=list)
    idle_ms: list[float] = field(default_factory=list)
    left: list[dict[str, int]] = field(default_factory=list)
    due_queries: int = 0
    idle_queries: int = 0

    def used(self) -> AbstractContextManager[None]:
        return nullcontext() if self.database is None else using(self.database)

    def sweep_idle(self, number: int, repeat: int) -> None:
        """Sweeps with nothing due: round 0 warms up, then counts the queries of one (not
        timed)."""
        from games.tasks import sweep_once

        if number == 0:
            sweep_once(timezone.now())
            with CaptureQueriesContext(connection) as captured:
                sweep_once(timezone.now())
            self.idle_queries = len(captured)
            return
        self.idle_ms += [s * 1000 for s in samples(lambda: sweep_once(timezone.now()), repeat, 0)]

    def sweep_due(self, number: int, due: int) -> None:
        """A sweep with `due` items due on games not used before: round 0 counts its
        queries (not timed). What it left for a worker is then marked done."""
        from games.tasks import sweep_once

        batch = self.games[number * due : (number + 1) * due]
        assert len(batch) == due, "too few games for fresh due work in every repeat"
        now = timezone.now()
        part = make_due(batch, now)
        if number == 0:
            with CaptureQueriesContext(connection) as captured:
                sweep_once(now)
            self.due_queries = len(captured)
        else:
            start = time.perf_counter()
            sweep_once(now)
            self.due_ms.append((time.perf_counter() - start) * 1000)
        self.left.append(still_due(part, now))
        settle(batch)

    def report(self, due: int) -> dict[str, Any]:
        return {
            "games": self.count,
            "due": due,
            "ms": median(self.due_ms),
            "spread": spread(self.due_ms),
            "samples": [round(t, 1) for t in self.due_ms],
            "idle_ms": round(median(self.idle_ms), 2),
            "idle_spread": spread(self.idle_ms),
            "idle_samples": len(self.idle_ms),
            "idle_queries": self.idle_queries,
            "due_queries": self.due_queries,
            "left_undone": {k: max(d[k] for d in self.left) for k in self.left[0]},
        }


def interleaved(sizes: list[Size], due: int, repeat: int, idle_repeat: int) -> None:
    """Round by round, each size in turn (its order alternating, ABBA), idle sweeps then
    a sweep with work due; round 0 warms each up and counts its queries."""
    with no_task_queue():
        for number in range(repeat + 1):
            for size in sizes if number % 2 == 0 else sizes[::-1]:
                with size.used():
                    size.sweep_idle(number, idle_repeat)
                    size.sweep_due(number, due)


@figures("sweep-scale", "sweep-idle")
def sweep_figures(options: Options) -> Iterator[Figure]:
    """`sweep-scale`: a sweep with work due among 10,000 running games against the same
    with 1,000; `sweep-idle`: a sweep with nothing due, the same two sizes. The baseline
    is the same sweep, the same work due, on the smaller world, measured in the same
    rounds (alternating, each in its database, so that the machine's drift and load fall
    on both alike): what the ratio shows is what the running games add, which the
    sweep's indexes should keep near nothing (issue 11)."""
    due = options.size(100, 10)
    repeat = options.size(7, 3)
    idle_repeat = options.size(5, 1)
    small, big = Size(options.size(1_000, 50)), Size(options.size(10_000, 300))
    with second_database("small") as other:
        small.database = other
        with small.used():
            small.games = build(small.count)
        big.games = build(big.count)
        interleaved([small, big], due, repeat, idle_repeat)
        with small.used():
            empty_tables()
    empty_tables()
    base, measured = small.report(due), big.report(due)
    yield Figure(
        "sweep-scale",
        f"one sweep, {big.count:,} running games, {due} due",
        round(measured["ms"], 2),
        round(base["ms"], 2),
        "<= 1.5",
        unit="ms",
        spread=measured["spread"],
        detail={"measured": measured, "baseline": base},
    )
    yield Figure(
        "sweep-idle",
        f"one sweep with nothing due, {big.count:,} running games",
        round(median(big.idle_ms), 3),
        round(median(small.idle_ms), 3),
        "<= 1.5",
        unit="ms",
        spread=measured["idle_spread"],
        detail={
            "measured": {k: measured[k] for k in ("games", "idle_ms", "idle_queries")},
            "baseline": {k: base[k] for k in ("games", "idle_ms", "idle_queries")},
            "samples": measured["idle_samples"],
        },
    )


# --- deadline-queries --------------------------------------------------------------------------


def play_to(game: Game, turn: int) -> Game:
    """Every awaited seat plays the engine's default, stored and resolved by the services,
    until the game is at `turn` or later in a sealed phase that awaits every seat."""
    seats = dict(Seat.objects.filter(game=game).values_list("colour", "pk"))
    for _ in range(50 * turn + 50):
        game = Game.objects.get(pk=game.pk)
        state = game.engine_state
        if state.is_over:
            break
        if game.turn >= turn and is_simultaneous(state) and len(state.waiting) == len(seats):
            return game
        for colour in state.waiting if is_simultaneous(state) else state.waiting[:1]:
            services.submit_move(game.pk, seats[colour], default_move(state, colour))
        services.resolve(game.pk, game.phase_number)
    raise RuntimeError(f"no phase awaiting every seat at turn {turn}")


def deadline_game(people: list[User], seats: int, turn: int) -> Game:
    """A game of `seats` (people, and a computer from 4 seats on), at `turn`; the people
    at their limit of missed deadlines, so that the deadline brings stand-ins too."""
    game = services.create_game(
        people[0],
        name=f"Deadline {seats}",
        player_count=seats,
        setup="variable",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=["grey"] if seats == 4 else [],
        computer_level=COMPUTER_LEVEL,
        max_missed_deadlines=1,
    )
    Game.objects.filter(pk=game.pk).update(seed=SEED)
    colours = ("ochre",) if seats == 2 else ("ochre", "lilac")
    for colour, user in zip(colours, people[1:], strict=False):
        services.join_game(game.pk, user, colour)
    return play_to(game, turn)


def deadline_cost(game: Game) -> dict[str, Any]:
    """The SQL statements of the sweep's deadline step with this game's deadline just
    passed, less those of the same step with nothing due."""
    from games.deadlines import pass_deadlines

    queued: list[tuple[str, tuple[int, ...]]] = []
    with mock.patch("games.tasks.queue", lambda task, *a, **_: queued.append((task.name, a))):
        now = timezone.now()
        with CaptureQueriesContext(connection) as idle:
            pass_deadlines(now)
        Game.objects.filter(pk=game.pk).update(deadline=now - timedelta(minutes=1))
        with CaptureQueriesContext(connection) as due:
            pass_deadlines(now)
    # The resolve was queued, not run: the game's deadline is moved on as if it had run.
    Game.objects.filter(pk=game.pk).update(deadline=now + timedelta(hours=48))
    assert queued == [("games.tasks.resolve_phase", (game.pk, game.phase_number))], queued
    return {
        "seats": game.player_count,
        "turn": game.turn,
        "events_before": game.events_stored,
        "queries": len(due) - len(idle),
        "step_queries": len(due),
        "idle_step_queries": len(idle),
        "sql": [q["sql"][:70] for q in due.captured_queries],
    }


@figures("deadline-queries")
def deadline_figures(options: Options) -> Iterator[Figure]:
    """The SQL statements a deadline falling due costs (issue 25, item 5): those of the
    sweep's deadline step (`games.deadlines.pass_deadlines`) with one game due, less
    those of the same step with nothing due (its one indexed lookup of the due games,
    which every sweep makes, due or not; `detail.*.step_queries` counts it in). Counted
    in: the transaction (BEGIN, COMMIT), the game's row lock, its seats and who
    submitted, the defaults stored, the log, the seats' counts of missed deadlines and
    stand-ins, the game's row, up to the resolve queued after the commit (its queueing
    is the broker's, not SQL). Not counted: the resolve itself, the phase's own work as
    for a phase everyone played (its cost is resolve-latency's and throughput's).

    Measured for a small game (2 seats, turn 1) and a large one (4 seats, three people
    and a computer, many turns on: more events, snapshots and record rows), every seat
    missing and the people reaching the game's limit (stand-ins). No baseline: the
    target is on the count itself (the issue's "at most 8"), the large game's; `what`
    says whether the small one costs the same (a count growing with the game would
    show there, as in `page-queries`)."""
    empty_tables()
    people = [person(f"d{i}") for i in range(3)]
    with no_task_queue():
        small = deadline_game(people, 2, 1)
        large = deadline_game(people, 4, options.size(20, 4))
    costs = {"small": deadline_cost(small), "large": deadline_cost(large)}
    empty_tables()
    same = costs["small"]["queries"] == costs["large"]["queries"]
    yield Figure(
        "deadline-queries",
        f"SQL statements of a deadline falling due, 4 seats at turn {large.turn} "
        f"({'the same' if same else 'not the same'} for 2 seats at turn {small.turn}: "
        f"{costs['small']['queries']})",
        measured=costs["large"]["queries"],
        baseline=None,
        target="<= 8",
        unit="queries",
        detail={**costs, "same_for_both": same},
    )
