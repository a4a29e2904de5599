"""The pages behind the links in emails (games.mail.views): magic links, unsubscribing,
email preferences, invitations by email.

alice (red), bob (ochre) and charlie (lilac) play the `game` fixture; dave is an outsider.
"""

from __future__ import annotations

import re
import time
import zoneinfo
from datetime import datetime, timedelta
from urllib.parse import quote

import pytest
from django.conf import settings
from django.core import signing
from django.test import Client
from django.urls import resolve, reverse
from django.utils import timezone

from engine.notation import parse_move
from games import services
from games.mail import compose, outbox, tokens
from games.models import EmailPreference, Game, MagicLink, Notifications, OutgoingEmail, Seat


@pytest.fixture(autouse=True)
def fast_password_hashing(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def fresh(game: Game) -> Game:
    return Game.objects.get(pk=game.pk)


def seat(game: Game, user) -> Seat:
    return Seat.objects.select_related("user__profile").get(game=game, user=user)


def emailed_link(game: Game, user) -> str:
    """The magic link of the player's "waits for you" email, as a path on this site."""
    compose.your_turn(game, seat(game, user))
    text = OutgoingEmail.objects.filter(user=user, kind="your_turn").latest("id").text
    url = re.search(rf"{re.escape(settings.SITE_URL)}(/m/\S+/)", text)
    assert url is not None, text
    return url.group(1)


def game_url(game: Game) -> str:
    return reverse("game", args=[game.pk])


def login_url(game: Game) -> str:
    return f"{reverse('login')}?next={quote(game_url(game), safe='')}"


def decide_all(game: Game) -> Game:
    state = fresh(game).engine_state
    for s in Seat.objects.filter(game=game):
        cards = "1, 2" if state.cards_to_choose(s.colour) == 2 else "3"
        services.submit(game.pk, s.pk, parse_move(f"decide {cards}"))
    services.resolve(game.pk, fresh(game).phase_number)
    return fresh(game)


def test_the_links_in_emails_lead_to_the_sites_pages(alice, game):
    seat = game.seats.get(user=alice)
    links = {
        "magic_link": tokens.magic_link_path(seat, game, game.phase_number),
        "unsubscribe": outbox.unsubscribe_url(alice),
        "email_preferences": outbox.preferences_url(),
    }
    for name, link in links.items():
        path = link.removeprefix(settings.SITE_URL)
        assert path.startswith("/") and resolve(path).url_name == name, link


# --- magic links --------------------------------------------------------------------------------


def test_a_magic_link_asks_before_it_signs_in_and_a_get_uses_nothing(client, game, alice):
    path = emailed_link(game, alice)
    response = client.get(path)  # what a mail scanner or a preview does
    text = response.content.decode()
    assert response.status_code == 200 and 'id="magic-link-continue"' in text
    assert "_auth_user_id" not in client.session
    assert MagicLink.objects.get(user=alice).used_at is None


def test_a_magic_link_opens_the_game_signed_in(client, game, alice):
    path = emailed_link(game, alice)
    response = client.post(path)
    assert response.status_code == 302 and response["Location"] == game_url(game)
    page = client.get(game_url(game)).content.decode()
    assert "You play" in page and 'id="decide-form"' in page  # alice's form, signed in
    assert int(client.session["_auth_user_id"]) == alice.pk
    assert MagicLink.objects.get(user=alice).used_at is not None


def test_a_magic_link_needs_the_csrf_token(game, alice):
    path = emailed_link(game, alice)
    response = Client(enforce_csrf_checks=True).post(path)
    assert response.status_code == 403 and MagicLink.objects.get().used_at is None


def test_a_magic_link_works_once(client, game, alice):
    path = emailed_link(game, alice)
    assert client.post(path).status_code == 302
    for again in (Client().get(path), Client().post(path)):
        assert again.status_code == 410
        text = again.content.decode()
        assert "has been used already" in text and login_url(game) in text
        assert "_auth_user_id" not in again.client.session


def test_a_head_request_does_not_use_up_the_link(client, game, alice):
    path = emailed_link(game, alice)
    assert client.head(path).status_code == 405
    assert MagicLink.objects.get().used_at is None and client.post(path).status_code == 302


def test_a_used_link_of_the_player_signed_in_leads_to_the_game(client, game, alice):
    path = emailed_link(game, alice)
    client.post(path)
    text = client.get(path).content.decode()
    assert "has been used already" in text and f'href="{game_url(game)}"' in text


def test_a_magic_link_of_the_player_logged_in_with_the_password_opens_the_game(client, game, alice):
    client.force_login(alice)
    path = emailed_link(game, alice)
    assert client.get(path)["Location"] == game_url(game)
    assert client.get(reverse("profile")).status_code == 200  # the session is not narrowed


def test_an_expired_magic_link_says_so(client, game, alice):
    path = emailed_link(game, alice)
    MagicLink.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    response = client.post(path)
    assert response.status_code == 410 and "has expired" in response.content.decode()
    assert login_url(game) in response.content.decode()
    assert "_auth_user_id" not in client.session
    assert MagicLink.objects.get().used_at is None


def test_a_magic_link_expires_after_the_configured_hours(game, alice):
    emailed_link(game, alice)
    link = MagicLink.objects.get()
    expected = timezone.now() + timedelta(hours=settings.MAGIC_LINK_HOURS)
    assert abs((link.expires_at - expected).total_seconds()) < 60


def test_a_tampered_magic_link_says_so(client, game, alice):
    path = emailed_link(game, alice)
    signed = path.split("/")[2]
    forged = signed[:-3] + ("AAA" if not signed.endswith("AAA") else "BBB")
    response = client.post(f"/m/{forged}/")
    assert response.status_code == 400 and "is not valid" in response.content.decode()
    assert "_auth_user_id" not in client.session
    assert MagicLink.objects.get().used_at is None


def test_a_magic_link_for_a_phase_gone_by_is_stale(client, game, alice):
    path = emailed_link(game, alice)
    decide_all(game)
    response = client.post(path)
    text = response.content.decode()
    assert response.status_code == 410 and "earlier phase of the game" in text
    assert login_url(game) in text and "_auth_user_id" not in client.session


def test_a_magic_link_signs_in_its_own_player_only(client, game, alice, bob):
    client.force_login(bob)
    client.post(emailed_link(game, alice))
    assert int(client.session["_auth_user_id"]) == alice.pk


def test_a_magic_link_cannot_be_made_for_another_nonce(client, game, alice):
    emailed_link(game, alice)
    other = MagicLink.objects.create(
        user=alice,
        game=game,
        phase_number=game.phase_number,
        expires_at=timezone.now() + timedelta(hours=1),
    )
    from django.core import signing

    forged = signing.dumps(other.nonce, salt="another salt")
    assert client.post(f"/m/{forged}/").status_code == 400
    assert (
        client.post(tokens.magic_link_path(seat(game, alice), game, game.phase_number)).status_code
        == 302
    )


# --- unsubscribing ----------------------------------------------------------------------------


def unsubscribe_path(user) -> str:
    return outbox.unsubscribe_url(user).removeprefix(settings.SITE_URL)


def mode(user) -> str | None:
    return Notifications.objects.filter(user=user).values_list("mode", flat=True).first()


def test_the_unsubscribe_link_asks_before_it_unsubscribes(client, alice):
    response = client.get(unsubscribe_path(alice))
    text = response.content.decode()
    assert response.status_code == 200 and 'id="unsubscribe-confirm"' in text
    # Changed with issue 9: the page showed the address; a forwarded email must not.
    assert "alice@example.org" not in text and mode(alice) is None
    response = client.post(unsubscribe_path(alice))
    assert 'id="unsubscribed"' in response.content.decode()
    assert "alice@example.org" not in response.content.decode()
    assert mode(alice) == EmailPreference.OFF


def test_the_unsubscribe_link_in_an_email_body_works(client, game, alice):
    compose.results(game, seat(game, alice), game.phase_number)
    text = OutgoingEmail.objects.get(user=alice).text
    url = re.search(r"Unsubscribe: (\S+)", text).group(1)
    client.post(url.removeprefix(settings.SITE_URL))
    assert mode(alice) == EmailPreference.OFF


def test_a_tampered_unsubscribe_link_changes_nothing(client, alice, bob):
    _, stamp, signature = unsubscribe_path(alice).split("/")[2].split(":")
    bobs = unsubscribe_path(bob).split("/")[2].split(":")[0]
    path = f"/unsubscribe/{bobs}:{stamp}:{signature}/"  # bob's id under alice's signature
    response = client.post(path)
    assert response.status_code == 400 and 'id="unsubscribe-invalid"' in response.content.decode()
    assert mode(alice) is None and mode(bob) is None


def test_an_unsubscribe_link_expires_after_sixty_days(client, alice, monkeypatch):
    sixty_days_and_a_minute_ago = int(time.time()) - outbox.UNSUBSCRIBE_DAYS * 86400 - 60
    with monkeypatch.context() as m:  # the link of an email sent back then
        m.setattr(
            signing.TimestampSigner,
            "timestamp",
            lambda self: signing.b62_encode(sixty_days_and_a_minute_ago),
        )
        path = unsubscribe_path(alice)
    response = client.post(path)
    assert response.status_code == 400 and 'id="unsubscribe-invalid"' in response.content.decode()
    assert mode(alice) is None


def test_unsubscribing_keeps_other_preferences(client, alice):
    Notifications.objects.create(user=alice, mode=EmailPreference.DIGEST, reminder_hours=[5])
    client.post(unsubscribe_path(alice))
    notifications = Notifications.objects.get(user=alice)
    assert notifications.mode == EmailPreference.OFF and notifications.reminder_hours == [5]


# --- preferences --------------------------------------------------------------------------------


def test_preferences_need_a_login(client, db):
    response = client.get(reverse("email_preferences"))
    assert response.status_code == 302 and reverse("login") in response["Location"]


def ahead(days: int, clock: str = "08:00") -> str:
    """A local date and time `days` from now, as the form's field takes it (absences
    must lie ahead, within a year)."""
    return f"{(timezone.now() + timedelta(days=days)).date().isoformat()}T{clock}"


def test_preferences_set_the_mode_the_reminders_and_an_absence(client, alice):
    client.force_login(alice)
    assert 'id="preferences-form"' in client.get(reverse("email_preferences")).content.decode()
    start, end = ahead(60), ahead(74, "20:00")
    response = client.post(
        reverse("email_preferences"),
        {"mode": "digest", "reminder_hours": "2, 24 6", "away_from": start, "away_until": end},
    )
    assert response.status_code == 302
    notifications = Notifications.objects.get(user=alice)
    assert notifications.mode == "digest" and notifications.reminder_hours == [24, 6, 2]
    # alice's profile says Europe/Berlin: the form's times are hers, stored in UTC
    berlin = datetime.fromisoformat(start).replace(tzinfo=zoneinfo.ZoneInfo("Europe/Berlin"))
    assert notifications.away_from == berlin
    page = client.get(reverse("email_preferences")).content.decode()
    assert 'value="24, 6, 2"' in page and end in page


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ({"reminder_hours": "soon"}, "Write whole numbers of hours"),
        ({"reminder_hours": "0"}, "1 to 720 hours"),
        ({"reminder_hours": "1 2 3 4 5 6"}, "At most 5 reminders"),
        ({"away_from": ahead(70), "away_until": ahead(61)}, "comes after"),
        ({"away_from": ahead(70)}, "Say until when you are away"),
        ({"mode": "sometimes"}, "Select a valid choice"),
    ],
)
def test_preferences_refuse_what_makes_no_sense(client, alice, data, error):
    client.force_login(alice)
    response = client.post(reverse("email_preferences"), {"mode": "every", **data})
    assert response.status_code == 200 and error in response.content.decode()
    assert not Notifications.objects.exclude(mode="every").exists()


def test_an_absence_until_a_date_starts_now(client, alice):
    client.force_login(alice)
    client.post(reverse("email_preferences"), {"mode": "every", "away_until": ahead(30)})
    away_from = Notifications.objects.get(user=alice).away_from
    assert away_from is not None and abs((away_from - timezone.now()).total_seconds()) < 60


def test_empty_reminder_hours_mean_the_default(client, alice):
    client.force_login(alice)
    client.post(reverse("email_preferences"), {"mode": "every", "reminder_hours": ""})
    assert Notifications.objects.get(user=alice).reminder_hours == []


# --- invitations by email -----------------------------------------------------------------------


@pytest.fixture
def open_game(alice) -> Game:
    return services.create_game(
        alice,
        name="Open",
        player_count=3,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=True,
        colour="red",
        computer_colours=[],
    )


def invite_url(game: Game) -> str:
    return reverse("invite_by_email", args=[game.pk])


def test_a_seated_player_invites_people_by_email(client, open_game, alice, bob):
    client.force_login(alice)
    assert 'id="invite-by-email-form"' in client.get(invite_url(open_game)).content.decode()
    response = client.post(
        invite_url(open_game),
        {"addresses": "friend@example.org, bob@example.org\nFriend@example.org"},
        follow=True,
    )
    assert response.redirect_chain[-1][0] == reverse("invite", args=[open_game.invite_token])
    assert (
        "Invitations are on their way to friend@example.org, bob@example.org"
        in response.content.decode()
    )
    sent = OutgoingEmail.objects.filter(kind="invitation", game=open_game).order_by("id")
    assert [(e.to, e.user) for e in sent] == [
        ("friend@example.org", None),
        ("bob@example.org", bob),
    ]
    client.post(invite_url(open_game), {"addresses": "friend@example.org"})
    assert OutgoingEmail.objects.filter(kind="invitation").count() == 2  # not twice


def test_an_outsider_cannot_invite(client, open_game, dave):
    client.force_login(dave)
    # An invite-only game does not exist for him (issue 21, item 7) ...
    response = client.post(invite_url(open_game), {"addresses": "x@example.org"})
    assert response.status_code == 404 and not OutgoingEmail.objects.exists()
    # ... and once he may see it (its link opened), only its players invite.
    client.get(reverse("invite", args=[open_game.invite_token]))
    response = client.post(invite_url(open_game), {"addresses": "x@example.org"})
    assert response.status_code == 403 and not OutgoingEmail.objects.exists()


def test_inviting_needs_a_login(client, open_game):
    response = client.post(invite_url(open_game), {"addresses": "x@example.org"})
    assert response.status_code == 302 and reverse("login") in response["Location"]
    assert not OutgoingEmail.objects.exists()


def test_a_started_game_invites_nobody(client, game, alice):
    client.force_login(alice)
    response = client.post(invite_url(game), {"addresses": "x@example.org"}, follow=True)
    assert "This game has started" in response.content.decode()
    assert not OutgoingEmail.objects.filter(kind="invitation").exists()


@pytest.mark.parametrize(
    ("addresses", "error"),
    [
        ("not-an-address", "not-an-address is not an email address."),
        (" ", "This field is required."),
        (", ".join(f"p{i}@example.org" for i in range(11)), "At most 10 addresses"),
    ],
)
def test_invitations_need_real_addresses(client, open_game, alice, addresses, error):
    client.force_login(alice)
    response = client.post(invite_url(open_game), {"addresses": addresses})
    assert response.status_code == 200 and error in response.content.decode()
    assert not OutgoingEmail.objects.exists()
