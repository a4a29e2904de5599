"""The archive's search: finished games by player, number of players, setup, mode (sealed
or open decisions), date range, winner and length (the turns played), newest, oldest,
longest or shortest first.

One SQL query reads a page, whatever the filters: every filter is a condition (a name
is a subquery of the seats it names), and the page is read with LIMIT/OFFSET, one row
more than it shows to know whether there is a next page, never a count of every match
(so a page of 10,000 games costs as much as one of 100). Every filter and order has an
index among the finished games' (migration 0019): by date, by length, by the game's kind
(players, setup, mode, then date), the seats by person, and the names by trigram.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from typing import Any

from django import forms
from django.contrib.auth.models import User
from django.db.models import BooleanField, F, Func, Q, QuerySet
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from games.models import PERSON, Game, Seat

PAGE_SIZE = 25
MAX_PAGE = 10_000  # a `?page=` beyond it is the last one asked for (OFFSET stays bounded)
DATE = forms.DateInput(attrs={"type": "date", "class": "form-control"})
SELECT = forms.Select(attrs={"class": "form-select"})
TURNS = forms.NumberInput(attrs={"class": "form-control", "min": 1, "max": 99})

# The orders a visitor may ask for: each ends on the id, so that a page is stable.
ORDERS: dict[str, tuple[str, ...]] = {
    "newest": ("-finished_at", "-id"),
    "oldest": ("finished_at", "id"),
    "longest": ("-turn", "-id"),
    "shortest": ("turn", "id"),
}


SETUPS = Game._meta.get_field("setup").choices or []
MODES = Game._meta.get_field("decisions").choices or []


class ArchiveFilter(forms.Form):
    player = forms.CharField(
        label=_("Player"),
        required=False,
        max_length=40,
        widget=forms.TextInput(
            attrs={"class": "form-control", "placeholder": _("user or display name")}
        ),
    )
    players = forms.TypedChoiceField(
        required=False,
        coerce=int,
        empty_value=None,
        label=_("Number of players"),
        choices=[("", pgettext_lazy("number of players", "Any")), (2, "2"), (3, "3"), (4, "4")],
        widget=SELECT,
    )
    setup = forms.ChoiceField(
        required=False,
        label=pgettext_lazy("archive filter", "Setup"),
        choices=[("", pgettext_lazy("setup", "Any")), *SETUPS],
        widget=SELECT,
    )
    decisions = forms.ChoiceField(
        required=False,
        label=pgettext_lazy("archive filter", "Decisions"),
        choices=[("", pgettext_lazy("decisions", "Any")), *MODES],
        widget=SELECT,
    )
    winner = forms.CharField(
        label=_("Won by"),
        required=False,
        max_length=40,
        widget=forms.TextInput(
            attrs={"class": "form-control", "placeholder": _("user or display name")}
        ),
    )
    finished_from = forms.DateField(required=False, label=_("Finished from"), widget=DATE)
    finished_to = forms.DateField(required=False, label=_("Finished until"), widget=DATE)
    turns_min = forms.IntegerField(
        required=False, min_value=1, max_value=99, label=_("At least this many turns"), widget=TURNS
    )
    turns_max = forms.IntegerField(
        required=False, min_value=1, max_value=99, label=_("At most this many turns"), widget=TURNS
    )
    order = forms.ChoiceField(
        required=False,
        label=_("Order"),
        choices=[
            ("newest", _("Newest first")),
            ("oldest", _("Oldest first")),
            ("longest", _("Longest first")),
            ("shortest", _("Shortest first")),
        ],
        widget=SELECT,
    )

    def clean(self) -> dict[str, Any]:
        """A range given backwards is refused (and left out) with a sentence saying so."""
        data = super().clean() or {}
        low, high = data.get("finished_from"), data.get("finished_to")
        if low and high and low > high:
            self.add_error(
                "finished_to", _("This date is before the first one: no game can be in between.")
            )
        low, high = data.get("turns_min"), data.get("turns_max")
        if low and high and low > high:
            self.add_error(
                "turns_max", _("This is fewer turns than the least asked: no game can be both.")
            )
        return data

    def criteria(self) -> dict[str, Any]:
        """The filters given with a good value; a field with a bad one is left out (its
        error is shown beside it)."""
        self.is_valid()
        return {k: v for k, v in self.cleaned_data.items() if v not in (None, "")}


class WonBy(Func):
    """`winners ? colour`: the seat's colour is among its game's winners (PostgreSQL's
    jsonb_exists is the `?` operator, written as a function to need no escaping)."""

    function = "jsonb_exists"
    output_field = BooleanField()

    def as_sqlite(self, compiler: Any, connection: Any, **extra: Any) -> tuple[str, Any]:
        """The embedded default database (SQLite) has no jsonb: the same test by json_each."""
        winners, colour = (compiler.compile(e) for e in self.get_source_expressions())
        sql = f"EXISTS (SELECT 1 FROM json_each({winners[0]}) AS w WHERE w.value = {colour[0]})"
        return sql, (*winners[1], *colour[1])


def people_named(name: str) -> QuerySet[User]:
    """The people whose user name or display name holds `name`, whatever its case."""
    return User.objects.filter(
        Q(username__icontains=name) | Q(profile__display_name__icontains=name)
    )


def day_start(day: date) -> datetime:
    """Midnight of `day` where the reader is: a date range compares the indexed column,
    never a date computed from every row."""
    return datetime.combine(day, time.min, tzinfo=timezone.get_current_timezone())


def search(games: QuerySet[Game], criteria: dict[str, Any]) -> QuerySet[Game]:
    """`games` narrowed by every criterion (ArchiveFilter.criteria) and in its order."""
    if "player" in criteria:
        seats = Seat.objects.filter(PERSON, user__in=people_named(criteria["player"]))
        games = games.filter(pk__in=seats.values("game_id"))
    if "winner" in criteria:
        won = Seat.objects.filter(PERSON, user__in=people_named(criteria["winner"])).filter(
            WonBy(F("game__winners"), F("colour"))
        )
        games = games.filter(pk__in=won.values("game_id"))
    if "players" in criteria:
        games = games.filter(player_count=criteria["players"])
    if "setup" in criteria:
        games = games.filter(setup=criteria["setup"])
    if "decisions" in criteria:
        games = games.filter(decisions=criteria["decisions"])
    if "finished_from" in criteria:
        games = games.filter(finished_at__gte=day_start(criteria["finished_from"]))
    if "finished_to" in criteria:
        games = games.filter(finished_at__lt=day_start(criteria["finished_to"] + timedelta(1)))
    if "turns_min" in criteria:
        games = games.filter(turn__gte=criteria["turns_min"])
    if "turns_max" in criteria:
        games = games.filter(turn__lte=criteria["turns_max"])
    return games.order_by(*ORDERS[criteria.get("order", "newest")])


@dataclass(frozen=True)
class Page:
    """One page of a search: its games, its number, and whether pages are before and
    after it (the next one known by reading one game more than is shown)."""

    games: list[Game]
    number: int
    has_next: bool

    @property
    def has_previous(self) -> bool:
        return self.number > 1

    @property
    def previous_page_number(self) -> int:
        return self.number - 1

    @property
    def next_page_number(self) -> int:
        return self.number + 1

    def __iter__(self) -> Iterator[Game]:
        return iter(self.games)

    def __len__(self) -> int:
        return len(self.games)


def page_number(raw: str | None) -> int:
    try:
        number = int(raw) if raw else 1
    except ValueError:
        number = 1
    return min(max(number, 1), MAX_PAGE)


def read_page(games: QuerySet[Game], number: int, size: int = PAGE_SIZE) -> Page:
    start = (number - 1) * size
    rows = list(games[start : start + size + 1])
    return Page(rows[:size], number, len(rows) > size)
