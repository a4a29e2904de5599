"""Feeds a person's programs read: their deadlines as an iCalendar feed, and the finished
public games as an Atom feed.

The calendar's address holds a secret of the person's own (`CalendarFeed`); renewing it
(a button on the profile page) makes the old address a 404. It lists the running games
in which the person makes their own moves, one event per game at the current deadline,
with a UID that stays the game's: a calendar that reads the feed again moves the event
when the deadline moves (its SEQUENCE grows with the deadline). A private game is in its
player's own feed and in no one else's, since a feed lists its person's seats only. What
it says is what the game page says to anyone at the table: the game's name, its phase,
its deadline and whether the phase waits for this person.

The Atom feed is the archive's newest finished games that are not invite-only (those
stay hidden from all but their people, games.visibility, and a feed has no reader).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.syndication.views import Feed
from django.db.models import OuterRef, Prefetch, QuerySet, Subquery
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.feedgenerator import Atom1Feed
from django.utils.translation import gettext
from django.views.decorators.http import require_POST
from icalendar import Calendar, Event

from games.links import absolute_url
from games.models import IN_PERSON, CalendarFeed, Game, Seat, Snapshot, language_of
from games.show.words import colour_word, join_and, phase_label

FEED_GAMES = 30  # the newest finished games the Atom feed lists
PRODUCT = "-//Loewenherz by email//deadlines//EN"


# --- the deadlines as iCalendar --------------------------------------------------------------


def feed_of(user: Any) -> CalendarFeed:
    """The person's calendar feed, made the first time they ask for its address."""
    feed, _ = CalendarFeed.objects.get_or_create(user=user)
    return feed


def deadline_seats(user_id: int) -> QuerySet[Seat]:
    """The seats whose deadlines the person keeps: running games, moves their own (no
    computer standing in, not conceded), with a deadline (a paused phase has none)."""
    return (
        Seat.objects.filter(IN_PERSON, user_id=user_id, game__status=Game.Status.RUNNING)
        .filter(game__deadline__isnull=False)
        .select_related("game")
        .only(
            "colour",
            "game__name",
            "game__deadline",
            "game__started_at",
            "game__turn",
            "game__phase_kind",
            "game__waiting",
        )
        .order_by("game__deadline", "game_id")
    )


def sequence(game: Game) -> int:
    """The event's revision: the minutes from the game's start to its deadline, which grow
    whenever the deadline moves (a new phase, an extension, a pause's end)."""
    assert game.deadline is not None
    start = game.started_at or game.deadline
    return max(int((game.deadline - start).total_seconds() // 60), 0)


def deadline_event(seat: Seat, now: datetime) -> Event:
    game = seat.game
    awaited = seat.colour in (game.waiting or [])
    words = {"game": game.name, "phase": phase_label({"kind": game.phase_kind}, game.turn)}
    event = Event()
    event.add("uid", f"game-{game.pk}-deadline@{urlsplit(settings.SITE_URL).hostname}")
    event.add("dtstamp", now)
    event.add("dtstart", game.deadline)
    event.add("sequence", sequence(game))
    event.add(
        "summary",
        gettext("Löwenherz: your move in %(game)s is due") % words
        if awaited
        else gettext("Löwenherz: the phase of %(game)s ends") % words,
    )
    event.add(
        "description",
        gettext("%(game)s, %(phase)s. You play %(colour)s.")
        % {**words, "colour": colour_word(seat.colour)},
    )
    event.add("url", absolute_url("game", game.pk))
    return event


def calendar(request: HttpRequest, token: str) -> HttpResponse:
    """The person's deadlines; a renewed (or never given) token is a 404."""
    feed = CalendarFeed.objects.select_related("user__profile").filter(token=token).first()
    if feed is None:
        raise Http404("no such calendar")
    now = timezone.now()
    with translation.override(language_of(feed.user)):
        cal = Calendar()
        cal.add("prodid", PRODUCT)
        cal.add("version", "2.0")
        cal.add("x-wr-calname", gettext("Löwenherz: my deadlines"))
        for seat in deadline_seats(feed.user_id):
            cal.add_component(deadline_event(seat, now))
    response = HttpResponse(cal.to_ical(), content_type="text/calendar; charset=utf-8")
    response["Cache-Control"] = "private, no-store"  # the address is the secret
    return response


@login_required
@require_POST
def renew_calendar(request: HttpRequest) -> HttpResponse:
    """A new secret address; the old one stops working at once."""
    feed_of(request.user).renew()
    messages.success(
        request,
        gettext("Your calendar has a new address: the old one no longer shows your deadlines."),
    )
    return redirect(reverse("profile") + "#calendar")


# --- the finished games as Atom --------------------------------------------------------------


class FinishedGamesFeed(Feed):
    feed_type = Atom1Feed

    def title(self) -> str:
        return gettext("Löwenherz: finished games")

    def subtitle(self) -> str:
        return gettext("The newest games finished on the site, with their winners and scores.")

    def link(self) -> str:
        return reverse("archive")

    def items(self) -> list[Game]:
        seats = Seat.objects.select_related("user__profile")
        final = Snapshot.objects.filter(game=OuterRef("pk")).order_by("-phase_number")
        return list(
            Game.objects.filter(status=Game.Status.FINISHED, invite_only=False)
            .defer("state")
            .annotate(final_power=Subquery(final.values("power")[:1]))
            .prefetch_related(Prefetch("seats", queryset=seats))
            .order_by("-finished_at", "-id")[:FEED_GAMES]
        )

    def item_title(self, item: Game) -> str:
        return item.name

    def item_link(self, item: Game) -> str:
        return reverse("archive_game", args=[item.pk])

    def item_description(self, item: Game) -> str:
        return summary(item)

    def item_pubdate(self, item: Game) -> datetime | None:
        return item.finished_at

    def item_updateddate(self, item: Game) -> datetime | None:
        return item.finished_at


def summary(game: Game) -> str:
    """Who won, and every player's final power, in the reader's language."""
    seats = list(game.seats.all())
    power: dict[str, int] = getattr(game, "final_power", None) or {}
    winners = [s.display_name for s in seats if s.colour in (game.winners or [])]
    scores = [
        gettext("%(name)s: %(power)s power") % {"name": s.display_name, "power": power[s.colour]}
        for s in seats
        if s.colour in power
    ]
    won = gettext("Won by %(names)s.") % {"names": join_and(winners)} if winners else ""
    return " ".join(filter(None, [won, "; ".join(scores) + "." if scores else ""]))
