"""Absences lie ahead and within a year (issue 9, D6/D7): the preferences form refuses
dates in the past, centuries away, or at the edges of the calendar (which overflowed
into a 500, or into a sweeper failing every minute), and the sweeper copes with any
value stored all the same (RULES 9: deadlines extend while a player is away)."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import timezone

from games import deadlines
from games.deadlines import MAX_ABSENCE
from games.models import Game, Notifications
from games.tasks import sweep_once as sweep

FORMAT = "%Y-%m-%dT%H:%M"


def local(moment: datetime, user: User) -> str:
    """`moment` as the form's field shows it to `user` (in their time zone)."""
    return moment.astimezone(ZoneInfo(user.profile.time_zone)).strftime(FORMAT)


def post(client, **data: str):
    return client.post(reverse("email_preferences"), {"mode": "every", **data})


def stored(user: User) -> tuple[datetime | None, datetime | None]:
    n = Notifications.objects.filter(user=user).first()
    return (n.away_from, n.away_until) if n else (None, None)


@pytest.mark.parametrize(
    ("data", "error"),
    [
        # 0001-01-01 in Berlin is still 0000 in UTC: a 500 (OverflowError) before.
        ({"away_from": "0001-01-01T00:00", "away_until": "0001-01-02T00:00"}, "not in the past"),
        ({"away_from": "0001-01-01", "away_until": "2026-12-30"}, "not in the past"),
        ({"away_until": "9999-12-31T23:59"}, "within 366 days"),
        ({"away_until": "9999-12-31"}, "within 366 days"),
        ({"away_from": "2020-01-01T00:00", "away_until": "2020-01-05T00:00"}, "not in the past"),
        ({"away_until": "2020-01-05T00:00"}, "is in the future"),
    ],
)
def test_the_form_refuses_an_absence_out_of_range(client, alice, data, error):
    client.force_login(alice)  # Europe/Berlin
    response = post(client, **data)
    assert response.status_code == 200
    assert error in response.content.decode()
    assert stored(alice) == (None, None)


def test_an_absence_that_ends_after_a_year_is_refused_and_within_a_year_accepted(client, alice):
    client.force_login(alice)
    now = timezone.now()
    too_far = local(now + MAX_ABSENCE + timedelta(days=2), alice)
    assert "within 366 days" in post(client, away_until=too_far).content.decode()
    assert stored(alice) == (None, None)
    start, end = now + timedelta(days=1), now + MAX_ABSENCE - timedelta(days=2)
    response = post(client, away_from=local(start, alice), away_until=local(end, alice))
    assert response.status_code == 302
    away_from, away_until = stored(alice)
    assert away_from is not None and away_until is not None
    assert abs(away_from - start) < timedelta(minutes=1)
    assert abs(away_until - end) < timedelta(minutes=1)


def test_a_start_a_few_minutes_ago_counts_as_now(client, alice):
    client.force_login(alice)
    now = timezone.now()
    response = post(
        client,
        away_from=local(now - timedelta(minutes=3), alice),
        away_until=local(now + timedelta(days=3), alice),
    )
    assert response.status_code == 302


def test_an_absence_under_way_can_be_sent_back_unchanged_with_another_mode(client, alice):
    """The page shows the absence under way (its start is past); saving the page again to
    change the mode keeps it."""
    now = timezone.now()
    start, end = now - timedelta(days=2, seconds=17), now + timedelta(days=2)
    Notifications.objects.create(user=alice, away_from=start, away_until=end)
    client.force_login(alice)
    page = client.get(reverse("email_preferences")).content.decode()
    assert local(start, alice) in page
    response = client.post(
        reverse("email_preferences"),
        {"mode": "digest", "away_from": local(start, alice), "away_until": local(end, alice)},
    )
    assert response.status_code == 302
    assert Notifications.objects.get(user=alice).mode == "digest"


def test_an_absence_that_is_over_is_not_shown_and_saving_clears_it(client, alice):
    now = timezone.now()
    start, end = now - timedelta(days=9), now - timedelta(days=2)
    Notifications.objects.create(user=alice, away_from=start, away_until=end)
    client.force_login(alice)
    page = client.get(reverse("email_preferences")).content.decode()
    assert local(start, alice) not in page and local(end, alice) not in page
    assert post(client, away_from="", away_until="").status_code == 302
    assert stored(alice) == (None, None)


@pytest.mark.parametrize("until", [datetime.max, datetime(9999, 12, 31, 23, 59)])
def test_the_page_shows_an_absence_stored_at_the_calendar_edge(client, alice, until):
    """Stored before the form checked (or by hand): the page still opens, for a user
    whose time zone is ahead of UTC (9999-12-31 23:59 UTC is the year 10000 there)."""
    Notifications.objects.create(user=alice, away_until=until.replace(tzinfo=UTC))
    client.force_login(alice)
    assert client.get(reverse("email_preferences")).status_code == 200


def test_the_sweeper_cuts_an_absence_stored_until_the_year_9999_to_a_year(game, bob, caplog):
    """RULES 9: the deadline moves past the return; a return in 9999 overflowed every
    minute for every game of the person. It is counted as a year from now."""
    now = game.deadline - timedelta(hours=30)
    Notifications.objects.create(user=bob, away_until=datetime(9999, 12, 31, 23, 59, tzinfo=UTC))
    with caplog.at_level(logging.ERROR, logger="games.deadlines"):
        sweep(now=now)
    assert not [r for r in caplog.records if r.name == "games.deadlines"]
    extended = Game.objects.get(pk=game.pk)
    assert extended.deadline == now + MAX_ABSENCE + timedelta(hours=game.deadline_hours)


def test_the_sweeper_copes_with_an_absence_from_the_year_1(game, bob, caplog):
    """A start at the calendar's first day (stored by hand) is simply past: bob is away."""
    now = game.deadline - timedelta(hours=30)
    back = now + timedelta(hours=5)
    Notifications.objects.create(user=bob, away_from=datetime(1, 1, 1, tzinfo=UTC), away_until=back)
    with caplog.at_level(logging.ERROR, logger="games.deadlines"):
        sweep(now=now)
    assert not [r for r in caplog.records if r.name == "games.deadlines"]
    assert deadlines.is_away(User.objects.get(pk=bob.pk), now)
    assert Game.objects.get(pk=game.pk).deadline == back + timedelta(hours=game.deadline_hours)
