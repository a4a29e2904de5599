"""A page for each person (`people/<id>/`: an id, never a username or an address) and
the leaderboard (issue 27).

A page the person made private shows others their display name only (the person
themselves sees all of it); the leaderboard leaves such people out, since their rating
is part of what they hide. Lists of games are paged in SQL and show only the games the
viewer may see (games.visibility: an invite-only game to its people).

The person's page is read far more often than it changes (bench figure `profile-page`):
its queries are written by hand (the person and their counts in one, a page of each list
in one each), each row is worked out once in Python rather than by the template's tags
and filters, and the rating chart is drawn once per history and language.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypedDict

from django.conf import settings
from django.contrib.auth.models import User
from django.core.paginator import Page, Paginator
from django.db import connection
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import get_language

from games.context_processors import COUNTED, YOUR_MOVE_SQL
from games.models import Game, Profile, Rating, Seat
from games.people import CHART_POINTS, person_stats
from games.ratings import MODEL
from games.reversing import reverse_cached
from games.show.charts import rating_chart
from games.templatetags.game_words import colour_name
from games.visibility import visible_sql

RUNNING_PAGE = 10
FINISHED_PAGE = 25
BOARD_PAGE = 25
CHARTS_KEPT = 256  # drawn charts (some 10 KB each) kept per process: the people seen lately


@dataclass(frozen=True)
class RatingNow:
    ordinal: float
    games: int


@dataclass(frozen=True)
class Person:
    """The person the page is of, with how many of their games the viewer may see."""

    pk: int
    name: str
    public_page: bool
    rating: RatingNow | None
    running: int
    finished: int


class Row(TypedDict):
    """A game of the lists as the template prints it (a dict: the template finds a key
    at its first try), worked out in Python rather than by filters on every row."""

    pk: int
    url: str
    name: str
    colour: str
    colour_name: str
    deadline: str  # "" without a deadline
    deadline_iso: str
    won: bool
    finished: str


def person(request: HttpRequest, user_id: int) -> HttpResponse:
    found = _person(request, user_id)
    if found is None:
        raise Http404
    own = request.user.pk == found.pk
    context: dict[str, Any] = {"person": found, "name": found.name}
    if not found.public_page and not own:
        return render(request, "people/private.html", context)
    stats = person_stats(found.pk, timezone.now())
    running, finished = (_page(request, found, status) for status in LISTS)
    _fill(request, found.pk, {Game.Status.RUNNING: running, Game.Status.FINISHED: finished})
    context.update(
        {
            "own": own,
            "running": running,
            "finished": finished,
            "rating": found.rating,
            "chart": _chart(stats.ratings) if found.rating is not None else "",
            "stats": stats,
            "keep_running": f"&running={running.number}",
            "keep_finished": f"&finished={finished.number}",
        }
    )
    return render(request, "people/person.html", context)


# The person, their profile and rating, their games the viewer may see counted (a game
# a row for each human seat of theirs in it, as the lists show them) and the viewer's
# "your move" for the navigation, in one query written by hand: the ORM's building of
# these queries cost the page more than running them (bench figure `profile-page`).
_PERSON_SQL = f"""
SELECT u.username, p.display_name, p.public_page, r.ordinal, r.games, c.running, c.finished,
       {{your_move}}
FROM {User._meta.db_table} u
JOIN {Profile._meta.db_table} p ON p.user_id = u.id
LEFT JOIN {Rating._meta.db_table} r ON r.user_id = u.id
CROSS JOIN (
    SELECT SUM(CASE WHEN g.status = %s THEN 1 ELSE 0 END) AS running,
           SUM(CASE WHEN g.status = %s THEN 1 ELSE 0 END) AS finished
    FROM {Game._meta.db_table} g JOIN {Seat._meta.db_table} s ON s.game_id = g.id
    WHERE s.user_id = %s AND NOT s.is_computer AND {{visible}}
) c
WHERE u.id = %s AND u.is_active"""


def _person(request: HttpRequest, user_id: int) -> Person | None:
    """The person (None: no such active person); the viewer's "your move" is left on the
    request for the navigation (games.context_processors: `COUNTED`)."""
    visible, params = visible_sql(request, "g")
    viewer = request.user
    your_move, counted = "0", list[int | str]()
    if viewer.is_authenticated:  # the navigation's rule, counted in the same query
        your_move, counted = f"({YOUR_MOVE_SQL})", [viewer.pk, Game.Status.RUNNING.value]
    statuses = [Game.Status.RUNNING.value, Game.Status.FINISHED.value]
    with connection.cursor() as cursor:
        cursor.execute(
            _PERSON_SQL.format(your_move=your_move, visible=visible),
            [*counted, *statuses, user_id, *params, user_id],
        )
        row = cursor.fetchone()
    if row is None:
        return None
    username, display_name, public_page, ordinal, games, running, finished, moves = row
    if viewer.is_authenticated:
        setattr(request, COUNTED, int(moves))
    return Person(
        pk=user_id,
        name=display_name or username,
        public_page=bool(public_page),
        rating=None if ordinal is None else RatingNow(ordinal, games),
        running=running or 0,
        finished=finished or 0,
    )


@dataclass(frozen=True)
class Listed:
    """One of the page's lists of games: its games' status, which moment orders them
    (newest first), the view a row links to, and how many a page shows."""

    newest: str
    view: str
    size: int


LISTS = {
    Game.Status.RUNNING: Listed("started_at", "game", RUNNING_PAGE),
    Game.Status.FINISHED: Listed("finished_at", "archive_game", FINISHED_PAGE),
}


def _page(request: HttpRequest, found: Person, status: Game.Status) -> Page:
    """The page of the list `status` the query string asks for (`?running=2`), as
    Paginator's `get_page` finds it (not a number: the first; past the end: the last),
    its games not read yet (`_fill`)."""
    paginator: Paginator[Row] = Paginator([], LISTS[status].size)
    paginator.count = found.running if status == Game.Status.RUNNING else found.finished
    return paginator.get_page(request.GET.get(status))


# A page of one list: the person's games of a status that the viewer may see, newest
# first, each with the person's colour and whether it won. The lists' pages are read in
# one query (a UNION of a part a list), ordered again as each part was.
_PART_SQL = f"""
SELECT * FROM (
    SELECT {{part}} AS part, g.id, g.name, s.colour, g.deadline, g.finished_at,
           CAST(g.winners AS TEXT) LIKE ('%%"' || s.colour || '"%%') AS won,
           g.{{newest}} AS newest
    FROM {Game._meta.db_table} g JOIN {Seat._meta.db_table} s ON s.game_id = g.id
    WHERE s.user_id = %s AND NOT s.is_computer AND g.status = %s AND {{visible}}
    ORDER BY g.{{newest}} DESC, g.id DESC LIMIT %s OFFSET %s
) part{{part}}"""


def _fill(request: HttpRequest, user_id: int, pages: dict[Game.Status, Page]) -> None:
    """Each page's games, in one query (none for a list without any)."""
    visible, params = visible_sql(request, "g")
    parts, values, statuses = [], list[int | str](), list(pages)
    for part, status in enumerate(statuses):
        page, listed = pages[status], LISTS[status]
        if page.paginator.count:
            parts.append(_PART_SQL.format(part=part, newest=listed.newest, visible=visible))
            offset = (page.number - 1) * listed.size
            values += [user_id, status.value, *params, listed.size, offset]
    found = []
    if parts:
        with connection.cursor() as cursor:
            cursor.execute(f"{' UNION ALL '.join(parts)} {_IN_ORDER}", values)
            found = cursor.fetchall()
    names = {colour: colour_name(colour) for colour in {row[3] for row in found}}
    for part, status in enumerate(statuses):
        view = LISTS[status].view
        pages[status].object_list = [_row(view, names, *r[1:7]) for r in found if r[0] == part]


_IN_ORDER = "ORDER BY part, newest DESC, id DESC"  # as each part's own ORDER BY


def _row(
    view: str, names: dict[str, str], pk: int, name: str, colour: str, *moments_won: Any
) -> Row:
    """A game's row from its columns (deadline, finished_at, won), its moments read as
    the ORM reads them."""
    read = _datetime_reader()
    deadline, finished_at, won = read(moments_won[0]), read(moments_won[1]), moments_won[2]
    return Row(
        pk=pk,
        url=reverse_cached(view, pk),
        name=name,
        colour=colour,
        colour_name=names[colour],
        deadline=_minute(deadline),
        deadline_iso=timezone.localtime(deadline).isoformat() if deadline else "",
        won=bool(won),
        finished=_day(finished_at),
    )


def _minute(moment: datetime | None) -> str:
    """As the template's `date:"Y-m-d H:i"`: in the viewer's time zone."""
    if not moment:
        return ""
    t = timezone.localtime(moment)
    return f"{t.year:04}-{t.month:02}-{t.day:02} {t.hour:02}:{t.minute:02}"


def _day(moment: datetime | None) -> str:
    """As the template's `date:"Y-m-d"`: in the viewer's time zone."""
    if not moment:
        return ""
    t = timezone.localtime(moment)
    return f"{t.year:04}-{t.month:02}-{t.day:02}"


@functools.cache
def _datetime_reader() -> Callable[[Any], datetime | None]:
    """A moment as the ORM reads it from the database's value (SQLite's is text): the
    backend's converters of a datetime column, then the field's own."""
    field = Game._meta.get_field("deadline")
    column = field.get_col(Game._meta.db_table)
    converters = [*connection.ops.get_db_converters(column), *field.get_db_converters(connection)]

    def read(value: Any) -> datetime | None:
        for convert in converters:
            value = convert(value, column, connection)
        return value

    return read


def _chart(ratings: list[float]) -> str:
    """The rating's history: where everyone starts, then after each rated game."""
    if len(ratings) < CHART_POINTS:
        ratings = [MODEL.rating().ordinal(), *ratings]
    return _drawn(tuple(ratings), get_language())


@functools.lru_cache(maxsize=CHARTS_KEPT)
def _drawn(ratings: tuple[float, ...], language: str | None) -> str:
    """A chart is drawn once for a history and a language (its title and axes' words):
    the key is the history itself, so a new rated game draws a new chart."""
    return rating_chart(list(ratings))


def leaderboard(request: HttpRequest) -> HttpResponse:
    ratings = (
        Rating.objects.filter(
            games__gte=settings.LEADERBOARD_MIN_GAMES,
            user__is_active=True,
            user__profile__public_page=True,
        )
        .select_related("user__profile")
        .order_by("-ordinal", "user_id")
    )
    page = Paginator(ratings, BOARD_PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "people/leaderboard.html",
        {"page": page, "min_games": settings.LEADERBOARD_MIN_GAMES},
    )
