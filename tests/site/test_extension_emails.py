"""An extension of the deadline is told to every other player (issue 10), in their next
email of the game (issue 24): who extended it and until when, in each reader's own time
zone, once, through the outbox, in the game's thread; never to whoever caused it (the
one who pressed for it, the one away).

The rows are of the transaction that moved the deadline (`games.deadlines` sends
`deadline_extended` under the game's row lock; `games.mail.compose` owes them), so the
rows are asserted here, as in test_email_cadence; nothing is sent.
"""

from __future__ import annotations

import html
import zoneinfo
from datetime import datetime, timedelta

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import timezone

from games import deadlines, services, votes
from games.mail import compose, notify
from games.models import EmailPreference, Event, Game, Notifications, OutgoingEmail, Seat
from tests.site.test_deadlines import (
    HOUR,
    at_once,
    away,
    decide,
    fresh,
    log_in,
    no_dispatch,  # noqa: F401  (a fixture)
    slowly,
)
from tests.site.test_emails import decide_all, seat

pytestmark = pytest.mark.django_db
Status = OutgoingEmail.Status
KIND = "deadline_extended"
SENTENCE = "The table voted to extend the deadline by 5 hours."


def told(user: User, game: Game | None = None) -> list[OutgoingEmail]:
    """The person's extension rows (of the game), oldest first."""
    rows = OutgoingEmail.objects.filter(user=user, kind=KIND).order_by("created_at", "pk")
    return list(rows.filter(game=game) if game else rows)


def local(moment: datetime, zone: str) -> str:
    """The deadline as the reader's zone shows it: 'Tue 4 Mar 2025, 14:00 CET'."""
    at = moment.astimezone(zoneinfo.ZoneInfo(zone))
    return f"{at:%a} {at.day} {at:%b %Y, %H:%M} {at.tzname()}"


def extend(game: Game, user: User, hours: int) -> datetime:
    """The table extends the deadline (games.votes): the next person seated proposes, and
    the yes of `user` makes the majority of three: `user` caused it, and saw it pass."""
    other = Seat.objects.filter(game=game, user__isnull=False).exclude(user=user).first()
    assert other is not None and other.user is not None
    votes.propose(game.pk, other.user, "extend", hours)
    votes.cast(game.pk, user, True)
    deadline = fresh(game).deadline
    assert deadline is not None
    return deadline


def due() -> datetime:
    """When the extensions owed may not wait longer for another email."""
    return timezone.now() + timedelta(seconds=settings.EMAIL_RESULTS_HOLD_SECONDS + 1)


def alone(user: User) -> list[OutgoingEmail]:
    """The person's extension emails that go as emails of their own."""
    return [e for e in told(user) if e.status == Status.QUEUED]


# --- who is owed it, and how it is told ---------------------------------------------------------


def test_the_one_who_extended_is_not_told_and_the_others_are_owed_it(game, alice, bob, charlie):
    extend(game, alice, 5)
    assert told(alice) == []
    for person in (bob, charlie):
        (owed,) = told(person)
        assert owed.status == Status.COALESCING  # no email of its own now
        assert SENTENCE in compose.summary_line(owed.summary)
    assert not OutgoingEmail.objects.filter(kind=KIND, status=Status.QUEUED).exists()


def test_it_rides_at_the_top_of_the_next_email_of_the_game(game, alice, bob, charlie):
    extend(game, alice, 5)
    game = decide_all(game)
    notify.phase_changed(game.pk, game.phase_number)
    notify.flush_due(due())  # the results of those the new phase does not ask
    for person in (bob, charlie):
        (owed,) = told(person)
        asks = ("your_turn", "results")
        email = OutgoingEmail.objects.filter(user=person, kind__in=asks, status=Status.QUEUED).get()
        assert email.kind in ("your_turn", "results")
        assert SENTENCE in email.text and SENTENCE in html.unescape(email.html)
        assert fresh_row(owed).status == Status.FOLDED
        assert fresh_row(owed).last_error == f"told in email {email.pk}"
    assert not OutgoingEmail.objects.filter(user=alice, text__contains="extended").exists()


def fresh_row(email: OutgoingEmail) -> OutgoingEmail:
    return OutgoingEmail.objects.get(pk=email.pk)


def test_once_due_it_goes_alone_saying_who_and_until_when_in_each_zone(game, alice, bob, charlie):
    deadline = extend(game, alice, 5)
    assert notify.flush_due(timezone.now()) == 0  # it waits for another email
    assert notify.flush_due(due()) == 2
    assert notify.flush_due(due()) == 0  # told once
    zones = {bob: "America/New_York", charlie: "UTC"}
    for person, zone in zones.items():
        (email,) = alone(person)
        assert email.to == person.email
        assert email.subject == "Löwenherz: Test game"  # the game's thread
        root = f"<game-{game.pk}-{fresh(game).mail_thread}@{settings.REPLY_DOMAIN}>"
        assert email.headers["In-Reply-To"] == root == email.headers["References"]
        for body in (email.text, html.unescape(email.html)):
            assert SENTENCE in body
            assert (
                f"The deadline is now {local(deadline, zone)}" in body
                or f"The deadline is now <strong>{local(deadline, zone)}" in body
            )
        assert SENTENCE in compose.summary_line(email.summary)  # the digest's
        if zone != "UTC":
            assert f"({zone})" in email.text  # the zone named, not only its abbreviation
        assert "Mute this game" in email.html and "Unsubscribe:" in email.text
    assert told(alice) == []


def test_who_the_phase_waits_for_is_asked_again_and_may_reply(game, alice, bob, charlie):
    decide(game, "ochre")  # bob's move is in; alice and charlie are awaited
    extend(game, alice, 24)
    notify.flush_due(due())
    (mine,) = alone(bob)
    assert not mine.reply_to and "HOW TO MOVE" not in mine.text
    assert "waits for your move" not in mine.text
    (email,) = alone(charlie)
    assert email.reply_to.startswith(f"{settings.REPLY_LOCAL_PART}+")
    assert email.text.startswith("## Reply above this line ##")
    assert "The game still waits for your move." in email.text
    assert "HOW TO MOVE" in email.text and "decide" in email.text
    assert "Or open the game, already signed in" in email.text
    assert email.phase_number == game.phase_number


def test_the_muted_and_the_unsubscribed_get_none_and_computers_none(alice, bob, charlie, dave):
    game = services.create_game(
        alice,
        name="With a computer",
        player_count=4,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=["grey"],
    )
    services.join_game(game.pk, bob, "ochre")
    services.join_game(game.pk, charlie, "lilac")
    notify.set_muted(seat(game, bob), True)
    Notifications.objects.create(user=charlie, mode=EmailPreference.OFF)
    extend(game, alice, 5)
    assert not OutgoingEmail.objects.filter(kind=KIND).exists()
    notify.set_muted(seat(game, bob), False)
    extend(game, alice, 5)
    assert [e.user for e in OutgoingEmail.objects.filter(kind=KIND)] == [bob]


def test_a_digest_reader_finds_it_in_the_digest(game, alice, bob):
    Notifications.objects.create(user=bob, mode=EmailPreference.DIGEST)
    extend(game, alice, 5)
    (held,) = told(bob)
    assert held.status == Status.HELD
    assert not held.reply_to and "HOW TO MOVE" not in held.text  # a digest is not answered
    assert "The game still waits for your move" in held.text
    assert notify.send_digests(held.created_at + timedelta(days=1)) == 1
    (digest,) = OutgoingEmail.objects.filter(user=bob, kind="digest")
    assert SENTENCE in digest.text


def test_an_absence_extension_is_told_to_the_others_not_to_the_one_away(game, alice, bob, charlie):
    deadline, back = game.deadline, game.deadline + 10 * HOUR
    away(bob, deadline - 40 * HOUR, back)
    deadlines.settle_absences(deadline - 30 * HOUR)
    deadlines.settle_absences(deadline - 29 * HOUR)  # the same extension: owed once
    assert fresh(game).deadline == back + 48 * HOUR
    assert told(bob) == []
    notify.flush_due(due())
    for person in (alice, charlie):
        (email,) = alone(person)
        assert "The deadline was extended while Bob is away." in email.text


# --- told once --------------------------------------------------------------------------------


def test_the_same_extension_told_twice_makes_one_row_each(game, alice, bob, charlie):
    extend(game, alice, 5)
    event = Event.objects.get(game=game, kind=KIND)
    # the announcement again (a rerun): nothing more is owed
    assert compose.deadline_extended(fresh(game), event.data, by=alice) == []
    deadlines.deadline_extended.send(sender=Game, game=fresh(game), event=event, by=alice)
    assert [len(told(p)) for p in (alice, bob, charlie)] == [0, 1, 1]


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("on_postgresql", "no_dispatch")
def test_two_sweeps_at_once_tell_an_absence_extension_once(game, bob, monkeypatch):
    away(bob, game.deadline - 40 * HOUR, game.deadline + 10 * HOUR)
    monkeypatch.setattr(compose, "deadline_extended", slowly(compose.deadline_extended))
    at_once(2, lambda: deadlines.settle_absences(game.deadline - 30 * HOUR))
    assert OutgoingEmail.objects.filter(kind=KIND).count() == 2  # alice and charlie
    assert Event.objects.filter(game=game, kind=KIND).count() == 1


def test_extensions_close_together_make_one_email_with_the_final_deadline(
    game, alice, bob, charlie, settings
):
    settings.VOTE_CHANGES_PER_PHASE = settings.VOTE_PROPOSALS_PER_PHASE = 3
    extend(game, alice, 24)
    final = extend(game, alice, 24)  # a second click before anything was told
    notify.flush_due(due())
    for person in (bob, charlie):
        first, second, email = told(person)
        assert first.status == second.status == Status.FOLDED and email.status == Status.QUEUED
        zone = person.profile.time_zone
        assert email.text.count("voted to extend the deadline by 24 hours.") == 2
        assert f"The deadline is now {local(final, zone)}" in email.text
    # a third, after the email had left: owed again, and told in the next email
    OutgoingEmail.objects.filter(kind=KIND, status=Status.QUEUED).update(status=Status.SENT)
    extend(game, alice, 1)
    notify.flush_due(due())
    assert [e.status for e in told(bob)] == [Status.FOLDED] * 2 + [Status.SENT] + [
        Status.FOLDED,
        Status.QUEUED,
    ]
    assert told(bob)[-1].text.count("voted to extend the deadline by") == 1


def test_the_vote_buttons_tell_whoever_did_not_see_it_pass(client, game, alice, bob, charlie):
    log_in(client, alice)
    client.post(reverse("propose", args=[game.pk]), {"kind": "extend", "amount": "5"})
    assert [len(told(p)) for p in (alice, bob, charlie)] == [0, 0, 0]  # asked, not done
    log_in(client, bob)
    response = client.post(reverse("vote", args=[game.pk]), {"vote": "yes"}, follow=True)
    assert "The table said yes" in response.content.decode()
    assert [len(told(p)) for p in (alice, bob, charlie)] == [1, 0, 1]  # bob saw it pass


def test_the_sentence_names_who_extended_it_to_each_reader(game, alice, bob):
    names = {"red": "Alice", "ochre": "Bob", "lilac": "Charlie"}
    by_creator = {"reason": "creator", "hours": 1, "player": None, "deadline": "x"}
    sentence = compose.extension_sentence
    assert (
        sentence(by_creator, seat(game, bob), names, alice)
        == "Alice, the game's creator, extended the deadline by 1 hour."
    )  # not seated
    assert (
        sentence(by_creator, seat(game, bob), names, None)
        == "The game's creator extended the deadline by 1 hour."
    )
    by_vote = {"kind": "deadline_extended", "reason": "vote", "hours": 2, "deadline": "x"}
    assert (
        sentence(by_vote, seat(game, bob), names, alice)
        == "The table voted to extend the deadline by 2 hours."
    )
    paused = {"kind": "paused", "reason": "vote", "days": 1, "deadline": "x", "until": "x"}
    assert (
        sentence(paused, seat(game, bob), names, None)
        == "The table voted to pause the phase for 1 day."
    )
    for_absence = {"reason": "away", "players": ["ochre", "lilac"], "deadline": "x"}
    assert (
        sentence(for_absence, seat(game, alice), names, None)
        == "The deadline was extended while Bob and Charlie are away."
    )
    assert (
        sentence(for_absence, seat(game, bob), names, None)
        == "The deadline was extended while you and Charlie are away."
    )
