"""Ratings (issue 27): openskill's Plackett-Luce model, updated once when a rated game
ends, and rebuilt from the finished games alone (`rebuild`, manage.py rebuild_ratings).

Decisions:
- The finish order is the engine's (RULES 8, `engine.rules.finish_places`): power, then
  ducats with Treasure; a further tie is a tie (an equal rank for openskill).
- Who is rated: a game with a computer's seat from the start is not rated at all. Of a
  game where only people sat, the seats rated are those their person played to the end:
  not one a computer played when it ended (conceded, or a stand-in after missed
  deadlines), nor one whose person left the site. They keep their places among
  themselves (a computer's seat is not in the match: openskill rates the people it is
  given). A game with fewer than two such seats changes nothing. Why: the issue asks a
  game a computer took over to count "only for the seats that played it to the end",
  and a rating that moved for a seat a computer played would rate the computer. Who
  gives up shows on their page instead (reliability: games conceded or left).
- Exactly once: the rating is updated in the transaction that stores the game's end
  (games.services._store, under the game's row lock); `RatingChange` is unique per
  (game, person), and a game with changes stored is never rated again.
- Concurrent ends: the ratings of a game's people are locked (`select_for_update`, in
  the order of their ids, so two games never wait on each other), and the game's
  `finished_at` is taken after those locks. Two games that share a person are thus
  rated in the order of their `finished_at`, which is the order `rebuild` replays
  (games that share nobody do not change each other's ratings, in any order).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone
from openskill.models import PlackettLuce

from engine.rules import finish_places
from engine.state import GameState
from games.models import Game, Rating, RatingChange, Seat

MODEL = PlackettLuce()  # openskill's defaults: mu 25, sigma 25/3; ordinal = mu - 3 sigma


@dataclass(frozen=True)
class Placed:
    """A person who played a rated game to the end, and their place in it."""

    user_id: int
    place: int


def placed_people(game: Game, seats: Sequence[Seat], state: GameState) -> list[Placed]:
    """Who the finished game rates, with their places (the module's decisions); empty if
    it rates nobody."""
    if game.imported or any(seat.is_computer for seat in seats):
        return []  # an imported record's players are names, not the site's people
    places = finish_places(state.pos, state.players)
    rated = [
        Placed(seat.user_id, places[seat.colour])
        for seat in seats
        if seat.user_id is not None and not seat.standin
    ]
    return rated if len(rated) >= 2 else []


def rate_game(game: Game, state: GameState) -> None:
    """Rate the game that has just ended (the caller holds its row lock and saves it
    next, with `finished_at` as set here). Nothing if it rates nobody or was rated."""
    people = placed_people(game, list(game.seats.all()), state)
    if not people or RatingChange.objects.filter(game=game).exists():
        return
    store_ratings(game, people)


def store_ratings(game: Game, people: list[Placed]) -> None:
    """The people's ratings after the game, with its rows of changes (the caller holds
    the game's row lock and saves `finished_at`, set here, in the same transaction)."""
    ratings = _locked_ratings([p.user_id for p in people])
    game.finished_at = timezone.now()  # after the locks: the order `rebuild` replays
    changes = _apply(game, people, ratings)
    RatingChange.objects.bulk_create(changes)
    Rating.objects.bulk_update(ratings.values(), ["mu", "sigma", "ordinal", "games"])


def _locked_ratings(user_ids: list[int]) -> dict[int, Rating]:
    """The people's ratings, made at the start value if new, locked in id order (the
    new rows too: two games inserting the same two new people wait, never deadlock)."""
    start = MODEL.rating()
    Rating.objects.bulk_create(
        [_rating_row(uid, start.mu, start.sigma) for uid in sorted(user_ids)],
        ignore_conflicts=True,
    )
    rows = Rating.objects.select_for_update().filter(user_id__in=user_ids).order_by("user_id")
    return {row.user_id: row for row in rows}


def _rating_row(user_id: int, mu: float, sigma: float) -> Rating:
    return Rating(user_id=user_id, mu=mu, sigma=sigma, ordinal=mu - 3 * sigma, games=0)


def _apply(game: Game, people: list[Placed], ratings: dict[int, Rating]) -> list[RatingChange]:
    """openskill's update of the people's ratings (in place) by their places; the rows
    that keep what the game did."""
    teams = [
        [MODEL.create_rating([ratings[p.user_id].mu, ratings[p.user_id].sigma])] for p in people
    ]
    after = MODEL.rate(teams, ranks=[float(p.place) for p in people])
    changes = []
    for person, (new,) in zip(people, after, strict=True):
        row = ratings[person.user_id]
        row.mu, row.sigma, row.ordinal = new.mu, new.sigma, new.ordinal()
        row.games += 1
        changes.append(
            RatingChange(
                game=game,
                user_id=person.user_id,
                place=person.place,
                mu=row.mu,
                sigma=row.sigma,
                ordinal=row.ordinal,
            )
        )
    return changes


# --- rebuilding from the games alone -------------------------------------------------------

REBUILD_BATCH = 200  # finished games read at once (each with its final state)


def finished_in_order() -> Iterator[Game]:
    """Every finished game, in the order their ends were rated, with their seats."""
    games = (
        Game.objects.filter(status=Game.Status.FINISHED, state__isnull=False)
        .filter(~Q(seats__is_computer=True))
        .prefetch_related("seats")
        .order_by("finished_at", "pk")
    )
    return games.iterator(chunk_size=REBUILD_BATCH)


def rebuilt() -> tuple[dict[int, Rating], list[RatingChange]]:
    """The ratings and their history as the finished games' results make them, from
    nothing (not saved)."""
    start = MODEL.rating()
    ratings: dict[int, Rating] = {}
    changes: list[RatingChange] = []
    for game in finished_in_order():
        people = placed_people(game, list(game.seats.all()), game.engine_state)
        for p in people:
            ratings.setdefault(p.user_id, _rating_row(p.user_id, start.mu, start.sigma))
        if people:
            changes += _apply(game, people, ratings)
    return ratings, changes


@transaction.atomic
def rebuild() -> int:
    """Replace every rating and its history with `rebuilt`'s; how many games rated.
    Locks the tables: no game's end is rated meanwhile (it waits for the rebuild)."""
    _lock_tables()
    ratings, changes = rebuilt()
    RatingChange.objects.all().delete()
    Rating.objects.all().delete()
    Rating.objects.bulk_create(ratings.values())
    RatingChange.objects.bulk_create(changes)
    return len({c.game_id for c in changes})


def _lock_tables() -> None:
    if connection.vendor == "postgresql":
        tables = ", ".join(m._meta.db_table for m in (Rating, RatingChange))
        with connection.cursor() as cursor:
            cursor.execute(f"LOCK TABLE {tables} IN EXCLUSIVE MODE")
