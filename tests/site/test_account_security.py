"""Issue 9: what a magic link grants (one game, one phase's move, not the account), what
changing the email asks and tells, and what the account pages must not reveal.

alice (red), bob (ochre) and charlie (lilac) play the `game` fixture.
"""

from __future__ import annotations

import re
import threading
from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from engine.notation import parse_move
from games import services
from games.forms import CreateGameForm
from games.mail import compose
from games.models import Game, MagicLink, OutgoingEmail, Seat
from games.show.words import clean_text
from tests.site.conftest import PASSWORD, three_player_game
from tests.site.test_accounts import as_read

RLO, LRI, PDI = "\u202e", "\u2066", "\u2069"


@pytest.fixture(autouse=True)
def fast_password_hashing(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def magic_path(game: Game, user: User) -> str:
    """The magic link of the player's "waits for you" email, as a path on this site."""
    compose.your_turn(game, Seat.objects.select_related("user__profile").get(game=game, user=user))
    text = OutgoingEmail.objects.filter(user=user, kind="your_turn").latest("id").text
    url = re.search(rf"{re.escape(settings.SITE_URL)}(/m/\S+/)", text)
    assert url is not None, text
    return url.group(1)


def opened_by_link(client: Client, game: Game, user: User) -> Client:
    assert client.post(magic_path(game, user))["Location"] == reverse("game", args=[game.pk])
    return client


def refused(response, client: Client) -> bool:
    """Sent to the login page, with the message that says why."""
    if response.status_code != 302 or not response["Location"].startswith(reverse("login")):
        return False
    page = client.get(response["Location"]).content.decode()
    return "signed you in for Test game only" in page


# --- D2: a magic link grants its game, not the account ---------------------------------------


@pytest.mark.parametrize(
    "page", ["profile", "password_change", "email_preferences", "lobby", "archive", "create_game"]
)
def test_a_magic_link_session_cannot_reach_the_account(client, game, alice, page):
    opened_by_link(client, game, alice)
    assert refused(client.get(reverse(page)), client)


def test_a_magic_link_session_cannot_change_the_email_or_password(client, game, alice):
    opened_by_link(client, game, alice)
    client.post(
        reverse("profile"),
        {
            "display_name": "Mallory",
            "email": "mallory@evil.example",
            "time_zone": "UTC",
            "current_password": PASSWORD,
        },
    )
    client.post(
        reverse("password_change"),
        {
            "old_password": PASSWORD,
            "new_password1": "mallory's new passphrase",
            "new_password2": "mallory's new passphrase",
        },
    )
    alice.refresh_from_db()
    assert alice.email == "alice@example.org" and alice.check_password(PASSWORD)


def test_a_magic_link_session_cannot_open_another_game(client, game, alice, bob, charlie):
    other = three_player_game(alice, bob, charlie, name="Other game")
    opened_by_link(client, game, alice)
    for name in ("game", "game_json"):
        assert refused(client.get(reverse(name, args=[other.pk])), client)
    assert refused(client.post(reverse("submit", args=[other.pk]), {"move": "decide 3"}), client)
    assert not other.pending.exists()


def cards_for(game: Game, colour: str) -> str:
    return "1, 2" if game.engine_state.cards_to_choose(colour) == 2 else "3"


def test_a_magic_link_session_plays_its_phase_and_no_later_one(client, game, alice):
    opened_by_link(client, game, alice)
    assert client.get(reverse("game_json", args=[game.pk])).status_code == 200
    client.post(
        reverse("submit", args=[game.pk]),
        {"move": f"decide {cards_for(game, 'red')}", "phase": str(game.phase_number)},
    )
    assert game.pending.filter(seat__user=alice).exists()  # the move the email asked for
    for seat in Seat.objects.filter(game=game).exclude(user=alice):
        services.submit(game.pk, seat.pk, parse_move(f"decide {cards_for(game, seat.colour)}"))
    services.resolve(game.pk, game.phase_number)
    assert client.get(reverse("game", args=[game.pk])).status_code == 200  # results in view
    assert refused(client.post(reverse("submit", args=[game.pk]), {"move": "pass"}), client)


def test_a_magic_link_session_is_short(client, game, alice):
    opened_by_link(client, game, alice)
    left = client.session.get_expiry_date() - timezone.now()
    assert left <= timedelta(hours=6, minutes=1)
    assert left < timedelta(seconds=settings.SESSION_COOKIE_AGE)


def test_logging_in_with_the_password_ends_the_magic_link_limits(client, game, alice):
    opened_by_link(client, game, alice)
    assert refused(client.get(reverse("profile")), client)
    response = client.post(reverse("login"), {"username": "alice", "password": PASSWORD})
    assert response.status_code == 302
    assert client.get(reverse("profile")).status_code == 200
    left = client.session.get_expiry_date() - timezone.now()
    assert left > timedelta(hours=7)


def test_two_clicks_at_once_sign_in_once(on_postgresql, transactional_db, alice, bob, charlie):
    game = three_player_game(alice, bob, charlie)
    path = magic_path(game, alice)
    start = threading.Barrier(2)
    answers: list[int] = []

    def click() -> None:
        try:
            start.wait()
            answers.append(Client().post(path).status_code)
        finally:
            connection.close()  # each thread has a connection of its own

    threads = [threading.Thread(target=click) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answers) == [302, 410]
    assert MagicLink.objects.get().used_at is not None


# --- changing the email ------------------------------------------------------------------------


def profile_data(**changes: str) -> dict[str, str]:
    return {"display_name": "Alice", "email": "queen@example.org", "time_zone": "UTC", **changes}


def ask_for(client: Client, email: str):
    return client.post(reverse("profile"), profile_data(email=email, current_password=PASSWORD))


def email_link(to: str = "queen@example.org") -> str:
    """The link of the newest "confirm your new email address" email to `to`, as a path."""
    text = OutgoingEmail.objects.filter(kind="email_confirm", to=to).latest("id").text
    url = re.search(rf"{re.escape(settings.SITE_URL)}(/accounts/email/\S+/)", text)
    assert url is not None, text
    return url.group(1)


def email_of(user: User) -> str:
    user.refresh_from_db()
    return user.email


@pytest.mark.parametrize("password", ["", "not the password"])
def test_changing_the_email_needs_the_current_password(client, alice, password):
    client.force_login(alice)
    response = client.post(reverse("profile"), profile_data(current_password=password))
    assert "Write your current password to change the email" in response.content.decode()
    alice.refresh_from_db()
    assert alice.email == "alice@example.org"
    assert not OutgoingEmail.objects.filter(kind__startswith="email_").exists()


def test_other_profile_changes_need_no_password(client, alice):
    client.force_login(alice)
    response = client.post(
        reverse("profile"), profile_data(email="Alice@example.org", display_name="Queen")
    )
    assert response.status_code == 302
    alice.profile.refresh_from_db()
    assert alice.profile.display_name == "Queen"
    assert not OutgoingEmail.objects.filter(kind="email_changed").exists()


def test_a_changed_email_is_told_to_the_old_address(client, alice):
    from games.models import EmailPreference, Notifications

    Notifications.objects.create(user=alice, mode=EmailPreference.OFF)  # told all the same
    client.force_login(alice)
    client.post(reverse("profile"), profile_data(current_password=PASSWORD))
    asked = OutgoingEmail.objects.get(kind="email_change_asked")
    assert asked.to == "alice@example.org" and "queen@example.org" in asked.text
    assert "Nothing has changed yet" in asked.text
    client.post(email_link())
    told = OutgoingEmail.objects.get(kind="email_changed")
    assert told.to == "alice@example.org" and told.user == alice
    assert "queen@example.org" in told.text and "someone knows your password" in told.text


# --- issue 21: a new email takes effect once confirmed from it ---------------------------------


def test_a_new_email_waits_for_the_link_sent_to_it(client, alice):
    client.force_login(alice)
    assert ask_for(client, "queen@example.org")["Location"] == reverse("profile")
    assert email_of(alice) == "alice@example.org"  # not yet
    page = client.get(reverse("profile")).content.decode()
    assert 'id="pending-email"' in page and "queen@example.org" in page
    sent = OutgoingEmail.objects.get(kind="email_confirm")
    assert sent.to == "queen@example.org" and sent.user == alice
    assert not OutgoingEmail.objects.filter(kind="email_changed").exists()
    assert 'id="email-confirm"' in client.get(email_link()).content.decode()  # GET asks
    assert email_of(alice) == "alice@example.org"
    assert client.post(email_link())["Location"] == reverse("profile")
    assert email_of(alice) == "queen@example.org"
    assert 'id="pending-email"' not in client.get(reverse("profile")).content.decode()
    again = client.post(email_link())  # once
    assert again.status_code == 410 and 'id="email-link-invalid"' in again.content.decode()


def test_the_link_alone_does_not_change_the_email(client, alice, bob):
    # An address mistyped into a stranger's mailbox must not take the account.
    client.force_login(alice)
    ask_for(client, "queen@example.org")
    stranger = Client()
    assert stranger.post(email_link())["Location"].startswith(reverse("login"))
    stranger.force_login(bob)
    answer = stranger.post(email_link())
    assert (
        answer.status_code == 410 and "This link is for another account" in answer.content.decode()
    )
    assert email_of(alice) == "alice@example.org" and email_of(bob) == "bob@example.org"


def test_asking_for_another_address_ends_the_older_link(client, alice):
    client.force_login(alice)
    ask_for(client, "queen@example.org")
    older = email_link()
    ask_for(client, "king@example.org")
    assert client.post(older).status_code == 410
    client.post(email_link("king@example.org"))
    assert email_of(alice) == "king@example.org"


def test_an_expired_link_changes_nothing(client, alice, settings):
    client.force_login(alice)
    ask_for(client, "queen@example.org")
    settings.PASSWORD_RESET_TIMEOUT = -1  # every link is older than links live
    answer = client.post(email_link())
    assert answer.status_code == 410 and "This link has expired" in answer.content.decode()
    assert email_of(alice) == "alice@example.org"


def test_a_tampered_link_changes_nothing(client, alice):
    client.force_login(alice)
    ask_for(client, "queen@example.org")
    link = email_link()
    assert client.post(link.replace("/accounts/email/", "/accounts/email/x")).status_code == 410
    assert email_of(alice) == "alice@example.org"


def without_csrf(page: bytes, *addresses: str) -> str:
    text = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", page.decode())
    for address in addresses:
        text = text.replace(address, "X")
    return text


def test_an_address_with_an_account_is_not_told_on_the_page(client, alice, bob):
    # Issue 21: the profile said "Another account uses this email".
    client.force_login(alice)
    taken = client.post(
        reverse("profile"),
        profile_data(email="BOB@example.org", current_password=PASSWORD),
        follow=True,
    )
    free = client.post(
        reverse("profile"),
        profile_data(email="queen@example.org", current_password=PASSWORD),
        follow=True,
    )
    assert taken.redirect_chain == free.redirect_chain
    assert without_csrf(taken.content, "BOB@example.org") == without_csrf(
        free.content, "queen@example.org"
    )
    told = OutgoingEmail.objects.get(kind="email_change_taken")
    assert told.to == "BOB@example.org" and told.user == bob and "nothing was changed" in told.text
    assert not OutgoingEmail.objects.filter(kind="email_confirm", to__iexact="bob@example.org")


def test_an_address_taken_before_the_link_is_opened_changes_nothing(client, alice):
    client.force_login(alice)
    ask_for(client, "queen@example.org")
    User.objects.create_user("queen", "queen@example.org", PASSWORD)
    answer = client.post(email_link())
    assert (
        answer.status_code == 410
        and "Another account has this email address now" in answer.content.decode()
    )
    assert email_of(alice) == "alice@example.org"


def test_a_signup_never_confirmed_does_not_hold_the_new_address(client, alice):
    squatter = User.objects.create_user("squatter", "queen@example.org", PASSWORD, is_active=False)
    client.force_login(alice)
    ask_for(client, "queen@example.org")
    client.post(email_link())
    assert email_of(alice) == "queen@example.org"
    assert not User.objects.filter(pk=squatter.pk).exists()


def test_changes_of_email_are_limited(client, alice, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "email_change": "1/d"}
    client.force_login(alice)
    ask_for(client, "queen@example.org")
    answer = ask_for(client, "king@example.org")
    assert (
        "You have asked to change your email as often as one may (1 per day)"
        in answer.content.decode()
    )
    assert not OutgoingEmail.objects.filter(to="king@example.org").exists()
    alice.profile.refresh_from_db()
    assert alice.profile.pending_email == "queen@example.org"


def test_an_address_waiting_for_its_link_gets_no_password_reset(client, alice, mailoutbox):
    client.force_login(alice)
    ask_for(client, "queen@example.org")
    client.post(reverse("password_reset"), {"email": "queen@example.org"})
    assert mailoutbox == []


def test_the_password_change_page_asks_for_the_old_password(client, alice):
    client.force_login(alice)
    client.post(
        reverse("password_change"),
        {
            "old_password": "wrong",
            "new_password1": "a new long passphrase",
            "new_password2": "a new long passphrase",
        },
    )
    alice.refresh_from_db()
    assert alice.check_password(PASSWORD)


# --- what the account pages reveal -----------------------------------------------------------


def test_password_reset_looks_the_same_for_known_and_unknown_addresses(client, alice, mailoutbox):
    known = client.post(reverse("password_reset"), {"email": "alice@example.org"}, follow=True)
    unknown = client.post(reverse("password_reset"), {"email": "nobody@example.org"}, follow=True)
    assert known.redirect_chain == unknown.redirect_chain
    assert as_read(known) == as_read(unknown)
    assert [m.to for m in mailoutbox] == [["alice@example.org"]]


def test_the_signup_page_does_not_say_an_email_has_an_account(client, alice):
    response = client.post(
        reverse("signup"),
        {
            "username": "erin",
            "email": "alice@example.org",
            "display_name": "Erin",
            "time_zone": "UTC",
            "password1": PASSWORD,
            "password2": PASSWORD,
        },
    )
    text = response.content.decode()
    assert 'id="signup-sent"' in text and "exists" not in text
    assert not User.objects.filter(username="erin").exists()


# --- names in email subjects -----------------------------------------------------------------


def test_clean_text_drops_control_and_bidi_characters():
    assert clean_text(f"Bob{RLO}gpj.exe\r\nBcc: x@evil{LRI}a{PDI}\x00") == "Bobgpj.exe Bcc: x@evila"
    assert clean_text("Zoë 👨\u200d👩\u200d👧") == "Zoë 👨\u200d👩\u200d👧"  # joiners stay


def test_a_name_with_bidi_and_newlines_does_not_reach_a_subject(alice, bob, charlie):
    game = three_player_game(alice, bob, charlie)
    Game.objects.filter(pk=game.pk).update(name=f"Evil{RLO}\nBcc: x@evil")
    alice.profile.display_name = f"A{RLO}lice"
    alice.profile.save()
    game.refresh_from_db()
    compose.invitation(game, "friend@example.org", alice)
    subject = OutgoingEmail.objects.get(kind="invitation").subject
    assert subject == "Alice invites you to play Löwenherz: Evil Bcc: x@evil"


def test_forms_clean_names_on_the_way_in(client, alice):
    form = CreateGameForm(
        {
            "name": f"Fun{RLO}\tgame",
            "player_count": 3,
            "setup": "variable",
            "decisions": "sealed",
            "money": "hidden",
            "deadline_hours": 48,
            "colour": "red",
        }
    )
    assert form.is_valid(), form.errors
    assert form.cleaned_data["name"] == "Fun game"
    client.force_login(alice)
    client.post(
        reverse("profile"),
        {"display_name": f"Al{RLO}ice\x07", "time_zone": "UTC", "email": "alice@example.org"},
    )
    alice.profile.refresh_from_db()
    assert alice.profile.display_name == "Alice"
    response = client.post(
        reverse("profile"), {"display_name": RLO, "time_zone": "UTC", "email": "alice@example.org"}
    )
    assert "Write a name with letters or digits" in response.content.decode()


# --- a magic link's session uses its game fully (issue 21, item 9) ---------------------------


def mute_link(game: Game, user: User) -> str:
    """The mute link in the footer of the player's last email of the game, as a path."""
    text = OutgoingEmail.objects.filter(user=user, game=game).latest("id").text
    url = re.search(rf"{re.escape(settings.SITE_URL)}(/games/{game.pk}/mute/\S+)", text)
    assert url is not None, text
    return url.group(1)


def test_a_magic_link_session_follows_its_games_live_updates(client, game, alice, bob, charlie):
    other = three_player_game(alice, bob, charlie, name="Other game")
    opened_by_link(client, game, alice)
    answer = client.get(reverse("game_live", args=[game.pk]))
    assert answer.status_code == 200 and answer.json()["game"]["phase"] == game.phase_number
    assert refused(client.get(reverse("game_live", args=[other.pk])), client)
    assert refused(client.get(reverse("live")), client)  # the account's count: not its own


def test_a_magic_link_session_mutes_its_game_from_the_page(client, game, alice):
    opened_by_link(client, game, alice)
    page = client.get(reverse("game", args=[game.pk])).content.decode()
    assert 'id="mute-form"' in page
    response = client.post(reverse("mute_game", args=[game.pk]), {"muted": "on"})
    assert response.status_code == 302 and response["Location"] == reverse("game", args=[game.pk])
    assert Seat.objects.get(game=game, user=alice).mail_muted


def test_a_magic_link_session_follows_the_mute_link_of_its_email(client, game, alice):
    opened_by_link(client, game, alice)
    link = mute_link(game, alice)  # in the very email whose magic link was opened
    assert 'id="mute-confirm"' in client.get(link).content.decode()
    signed = link.partition("?s=")[2]
    done = client.post(reverse("mute_game", args=[game.pk]), {"s": signed, "muted": "on"})
    assert done.status_code == 200 and 'id="muted"' in done.content.decode()
    assert Seat.objects.get(game=game, user=alice).mail_muted


def test_the_mute_link_of_another_games_email_works_in_a_magic_link_session(
    client, game, alice, bob, charlie
):
    """The link is signed for its person and game and needs no session: the scope of a
    link to another game does not stand in its way (and lends it nothing)."""
    other = three_player_game(alice, bob, charlie, name="Other game")
    compose.your_turn(
        other, Seat.objects.select_related("user__profile").get(game=other, user=alice)
    )
    opened_by_link(client, game, alice)
    link = mute_link(other, alice)
    assert client.get(link).status_code == 200
    signed = link.partition("?s=")[2]
    assert refused(client.post(reverse("mute_game", args=[other.pk]), {"muted": "on"}), client)
    assert not Seat.objects.get(game=other, user=alice).mail_muted  # the session: no
    client.post(reverse("mute_game", args=[other.pk]), {"s": signed, "muted": "on"})
    assert Seat.objects.get(game=other, user=alice).mail_muted  # the signed link: yes


def test_a_magic_link_session_opens_its_games_archive_once_it_is_over(client, game, alice):
    opened_by_link(client, game, alice)
    Game.objects.filter(pk=game.pk).update(status=Game.Status.FINISHED, finished_at=timezone.now())
    assert client.get(reverse("archive_game", args=[game.pk])).status_code == 200
    assert client.get(reverse("record_json", args=[game.pk])).status_code == 200
