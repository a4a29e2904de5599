"""What a person's page says of them beyond their lists of games (issue 27): their
reliability over the last year, their wins, and how they do against computers.

Reliability, precisely (over `RELIABILITY_DAYS`, by when a phase's moves were
recorded and when an event happened):
- A phase *awaited* of a person is a phase of a game where they hold a seat in which a
  move of their colour was recorded (their own, the default stored at the deadline, or
  a computer's), but for the phases a computer played for them: after a "standin" event
  (from the next phase) until a "seat_taken_back" (from its phase on), and from a
  "conceded" event's phase on. They were not asked then; giving up is counted apart.
- A phase is *missed* if a "deadline_missed" event of it names their colour (RULES 9:
  the default moved for them).
- They *moved themselves before the deadline* in the awaited phases not missed; the
  share is that over the awaited phases (None: none awaited).
- *Conceded*: "conceded" events of their colour; *left*: games that ended in the window
  with a computer standing in for them, not conceded (they never came back).

With the rating's history (the chart's points), everything is counted in a few queries
and kept in the cache for `STATS_SECONDS` (the figures of a year change slowly): a
game's end drops its people's (games.services, on commit), and so does rebuilding the
ratings (manage.py rebuild_ratings).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.core.cache import cache
from django.db.models import Count, Exists, OuterRef, QuerySet

from games.models import COMPUTER_LEVEL_LABELS, Event, Game, RatingChange, RecordEntry, Seat

RELIABILITY_DAYS = 365
STATS_SECONDS = 600
SPAN_KINDS = ("standin", "seat_taken_back", "conceded")
NEVER = 10**9  # a span still open at the end of the game
CHART_POINTS = 500  # the most recent rated games the page draws (it stays light)


@dataclass(frozen=True)
class Reliability:
    awaited: int
    missed: int
    conceded: int
    left: int

    @property
    def moved(self) -> int:
        return self.awaited - self.missed

    @property
    def share(self) -> float | None:
        return self.moved / self.awaited if self.awaited else None


@dataclass
class LevelRecord:
    """Finished games against computers of one level: played, and won."""

    level: str
    played: int = 0
    won: int = 0

    @property
    def label(self) -> str:
        return str(COMPUTER_LEVEL_LABELS[self.level])


@dataclass
class PersonStats:
    finished: int
    wins: int
    reliability: Reliability
    against_computers: list[LevelRecord] = field(default_factory=list)
    ratings: list[float] = field(default_factory=list)  # after each rated game, the latest


def stats_key(user_id: int) -> str:
    return f"person-stats:{user_id}"


def forget(user_ids: Iterable[int | None]) -> None:
    """Drop the kept figures of these people (their game has just ended)."""
    cache.delete_many([stats_key(uid) for uid in user_ids if uid is not None])


def person_stats(user_id: int, now: datetime) -> PersonStats:
    """The person's figures, from the cache if they were counted lately."""
    key = stats_key(user_id)
    stats = cache.get(key)
    if not isinstance(stats, PersonStats):
        stats = count_stats(user_id, now)
        cache.set(key, stats, STATS_SECONDS)
    return stats


def count_stats(user_id: int, now: datetime) -> PersonStats:
    since = now - timedelta(days=RELIABILITY_DAYS)
    computers = Seat.objects.filter(game=OuterRef("game_id"), is_computer=True)
    seats = list(
        Seat.objects.filter(user_id=user_id, is_computer=False, game__status=Game.Status.FINISHED)
        .annotate(has_computer=Exists(computers))
        .values_list(
            "colour",
            "standin",
            "conceded",
            "game__winners",
            "game__computer_level",
            "game__finished_at",
            "has_computer",
        )
    )
    levels = {level: LevelRecord(level) for level in COMPUTER_LEVEL_LABELS}
    wins = 0
    left = 0
    for colour, standin, conceded, winners, level, finished_at, has_computer in seats:
        won = colour in (winners or [])
        wins += won
        if has_computer and level in levels:
            levels[level].played += 1
            levels[level].won += won
        if standin and not conceded and finished_at is not None and finished_at >= since:
            left += 1
    return PersonStats(
        finished=len(seats),
        wins=wins,
        reliability=reliability(user_id, since, left),
        against_computers=[record for record in levels.values() if record.played],
        ratings=rating_history(user_id),
    )


def rating_history(user_id: int) -> list[float]:
    """The person's rating (its ordinal) after each of their last `CHART_POINTS` rated
    games, oldest first."""
    recent = RatingChange.objects.filter(user_id=user_id).order_by("-id")[:CHART_POINTS]
    return list(recent.values_list("ordinal", flat=True))[::-1]


def reliability(user_id: int, since: datetime, left: int = 0) -> Reliability:
    """The module's definition, counted from the record and the log."""
    colour_of = dict(
        Seat.objects.filter(user_id=user_id, is_computer=False).values_list("game_id", "colour")
    )
    mine = Seat.objects.filter(
        user_id=user_id, is_computer=False, game_id=OuterRef("game_id"), colour=OuterRef("colour")
    )
    records = RecordEntry.objects.filter(Exists(mine), accepted_at__gte=since)
    phases = dict(
        records.values("game_id")
        .annotate(n=Count("phase_number", distinct=True))
        .values_list("game_id", "n")
    )
    events = Event.objects.filter(
        game_id__in=list(colour_of),
        created_at__gte=since,
        kind__in=("deadline_missed", *SPAN_KINDS),
    ).values_list("game_id", "phase_number", "kind", "data")
    missed: dict[int, set[int]] = defaultdict(set)
    marks: dict[int, list[tuple[int, str]]] = defaultdict(list)
    conceded = 0
    for game_id, phase, kind, data in events.order_by("game_id", "index"):
        colour = colour_of[game_id]
        if kind == "deadline_missed" and colour in (data.get("players") or []):
            missed[game_id].add(phase)
        elif kind in SPAN_KINDS and data.get("player") == colour:
            marks[game_id].append((phase, kind))
            conceded += kind == "conceded"
    away = computer_phases(marks, records)
    awaited = sum(phases.values()) - sum(len(p) for p in away.values())
    missed_count = sum(len(p - away.get(g, set())) for g, p in missed.items())
    return Reliability(awaited=awaited, missed=missed_count, conceded=conceded, left=left)


def computer_phases(
    marks: dict[int, list[tuple[int, str]]], records: QuerySet[RecordEntry]
) -> dict[int, set[int]]:
    """The recorded phases of each game with span events that a computer played for the
    person (the module's definition); read only for those games."""
    if not marks:
        return {}
    rows = records.filter(game_id__in=list(marks)).values_list("game_id", "phase_number")
    recorded: dict[int, set[int]] = defaultdict(set)
    for game_id, phase in rows.distinct():
        recorded[game_id].add(phase)
    away: dict[int, set[int]] = {}
    for game_id, game_marks in marks.items():
        spans = list(_spans(game_marks))
        away[game_id] = {p for p in recorded[game_id] if any(a <= p < b for a, b in spans)}
    return away


def _spans(marks: list[tuple[int, str]]) -> Iterable[tuple[int, int]]:
    """The half-open ranges of phases a computer played, from a seat's span events in
    order."""
    start: int | None = None
    for phase, kind in marks:
        if kind == "conceded":
            yield (phase if start is None else start), NEVER
            return
        if kind == "standin" and start is None:
            start = phase + 1
        elif kind == "seat_taken_back" and start is not None:
            yield start, phase
            start = None
    if start is not None:
        yield start, NEVER
