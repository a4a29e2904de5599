"""The archive's search as its visitors feel it when the archive is large:
`archive-search-scale` and `archive-list-scale` (issue 27).

`archive-search-scale`: a filtered search (a player's name, four players, longest
first) among 10,000 finished games against the same search among 100 (the quick
version: 1,000 against 100); `archive-list-scale`: the archive's first page, no filter,
at the same two sizes. Both answer with a full page (25 games): the searched person sits
in 30 four-player games in either archive, so the two pages draw as many rows and what
the ratio shows is what the size of the archive costs the query, which the finished
games' indexes (migration 0019) and a page read without a count should keep near
nothing. The baseline is fair: the same page, request, code and viewer, the same people,
measured in the same rounds.

Both sizes are built at once, each in a database of its own on the same server (the
suite's, and a copy made empty beside it, `bench.db.second_database`, as `sweep-scale`
does), and their requests alternate (small then large, then large then small, ...), so
that drift and the load of a shared machine fall on both alike. The viewer is signed in
(the visibility rule then asks for their own seats too, the costlier case).

The games: rows written in bulk as a finished game leaves them (status, finish time
spread over a year, turns played, winners, 2 to 4 seats of people from a pool of 100 or
computers, one in twenty invite-only), without their states, snapshots or logs, which
the list never reads (it defers the state and shows the row and its seats). `ANALYZE`
afterwards, as autovacuum would have.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from django.contrib.auth.models import User
from django.db import connection
from django.db.backends.base.base import BaseDatabaseWrapper
from django.test import Client
from django.urls import reverse

from bench.core import Figure, Options, figures, median, spread
from bench.db import empty_tables, second_database, using
from bench.web import analyze, bench_site, client_of, person, queries, timed
from games.models import Game, Seat
from games.views.archive_search import PAGE_SIZE

POOL = 100  # the people who play the archive's games
SEARCHED = 30  # four-player games of the searched person: more than a page
SETUPS, MODES = ("basic", "variable"), ("sealed", "open")
COLOURS = ("red", "ochre", "lilac", "grey")
FIRST_FINISH = datetime(2025, 1, 1, tzinfo=UTC)


@dataclass
class Size:
    count: int
    database: BaseDatabaseWrapper | None = None
    client: Client | None = None
    times: dict[str, list[float]] = field(default_factory=dict)
    queries: dict[str, int] = field(default_factory=dict)
    shown: dict[str, int] = field(default_factory=dict)

    def used(self) -> AbstractContextManager[None]:
        return nullcontext() if self.database is None else using(self.database)


def build(count: int) -> Client:
    """`count` finished games among POOL people, the searched person ("Vera") in
    SEARCHED of the four-player ones; a signed-in client of a player of the pool."""
    rng = random.Random(27)
    people = [person(f"player{i}") for i in range(POOL)]
    vera = person("vera")
    games = Game.objects.bulk_create(
        Game(
            name=f"Archived {i}",
            player_count=rng.choice((2, 3, 4)) if i >= SEARCHED else 4,
            setup=rng.choice(SETUPS),
            decisions=rng.choice(MODES),
            status=Game.Status.FINISHED,
            started_at=FIRST_FINISH,
            finished_at=FIRST_FINISH + timedelta(minutes=rng.randrange(525_600)),
            turn=rng.randrange(4, 16),
            phase_number=40,
            phase_kind="over",
            invite_only=i >= SEARCHED and rng.random() < 0.05,
        )
        for i in range(count)
    )
    seats = []
    for i, game in enumerate(games):
        colours = COLOURS[: game.player_count]
        players: list[User | None] = list(rng.sample(people, len(colours)))
        players = [p if rng.random() > 0.2 else None for p in players]  # computers
        if i < SEARCHED:
            players[rng.randrange(len(players))] = vera
        game.winners = [rng.choice(colours)]
        seats += [
            Seat(game=game, colour=c, position=n, user=p, is_computer=p is None)
            for n, (c, p) in enumerate(zip(colours, players, strict=True))
        ]
    Game.objects.bulk_update(games, ["winners"], batch_size=2000)
    Seat.objects.bulk_create(seats, batch_size=5000)
    analyze()
    return client_of(people[0])


def urls() -> dict[str, str]:
    archive = reverse("archive")
    return {"search": f"{archive}?player=vera&players=4&order=longest", "list": archive}


def measure(sizes: list[Size], repeat: int) -> None:
    """Round 0 warms each size up and counts its queries and games shown; then each
    round requests each page of each size, the order of the sizes turned every round."""
    pages = urls()
    for size in sizes:
        with size.used():
            assert size.client is not None
            for name, url in pages.items():
                size.queries[name] = queries(size.client, url)
                shown = size.client.get(url).content.count(b"<tr data-game=")
                size.shown[name] = shown
                size.times[name] = []
    for number in range(repeat):
        for size in sizes if number % 2 == 0 else sizes[::-1]:
            with size.used():
                assert size.client is not None
                for name, url in pages.items():
                    size.times[name] += timed(size.client, url, 1)


@figures("archive-search-scale", "archive-list-scale")
def archive_scale(options: Options) -> Iterator[Figure]:
    """A filtered search and the first page, among 10,000 finished games against 100."""
    small, big = Size(100), Size(options.size(10_000, 1_000))
    repeat = options.size(40, 6)
    with bench_site(), second_database("archive") as other:
        small.database = other
        with small.used():
            small.client = build(small.count)
        big.client = build(big.count)
        try:
            measure([small, big], repeat)
        finally:
            with small.used():
                empty_tables()
            empty_tables()
            connection.close()
    for name, (figure_id, what) in {
        "search": (
            "archive-search-scale",
            f"archive search (a player, 4 players, longest first), {big.count:,} finished games",
        ),
        "list": ("archive-list-scale", f"archive's first page, {big.count:,} finished games"),
    }.items():
        assert small.shown[name] == big.shown[name] == PAGE_SIZE, (small.shown, big.shown)
        yield Figure(
            figure_id,
            what,
            round(median(big.times[name]), 3),
            round(median(small.times[name]), 3),
            "<= 1.5",
            unit="ms",
            spread=spread(big.times[name]),
            detail={
                "url": urls()[name],
                "baseline": f"the same page among {small.count} finished games, in a "
                "database beside it, requests alternated",
                "games_shown": big.shown[name],
                "queries": {"measured": big.queries[name], "baseline": small.queries[name]},
                "baseline_spread": spread(small.times[name]),
            },
        )
