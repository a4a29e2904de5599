"""Signing up, logging in and out, resetting a password, editing the profile."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.urls import reverse

from games.models import OutgoingEmail
from tests.site.conftest import PASSWORD

NEW_PASSWORD = "another long passphrase"


def signup_data(**changes: str) -> dict[str, str]:
    return {
        "username": "erin",
        "email": "erin@example.org",
        "display_name": "Erin E.",
        "time_zone": "Asia/Tokyo",
        "password1": PASSWORD,
        "password2": PASSWORD,
        **changes,
    }


def confirm_link(username: str = "erin") -> str:
    """The link of the "finish signing up" email, as a path on this site."""
    text = (
        OutgoingEmail.objects.filter(kind="signup_confirm", user__username=username)
        .latest("id")
        .text
    )
    url = re.search(rf"{re.escape(settings.SITE_URL)}(/accounts/signup/\S+)", text)
    assert url is not None, text
    return url.group(1)


def sign_up(client, **changes: str):
    """Sign up, open the emailed link and press Continue: the answer to that."""
    page = client.post(reverse("signup"), signup_data(**changes))
    assert 'id="signup-sent"' in page.content.decode()
    return client.post(confirm_link())


def as_read(response) -> str:
    """The page without its CSRF tokens (the language switcher's form has one on every
    page), which differ on each page drawn and say nothing of the account."""
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", response.content.decode())


def logged_in_user(client) -> User | None:
    user = client.get(reverse("lobby")).context["user"]
    return user if user.is_authenticated else None


# --- signing up ----------------------------------------------------------------------------


def test_the_signup_page_offers_time_zones_with_utc_chosen(client, db):
    response = client.get(reverse("signup"))
    assert response.status_code == 200
    assert '<option value="Europe/Berlin">' in response.content.decode()
    assert '<option value="UTC" selected>' in response.content.decode()


def test_signing_up_waits_for_the_emailed_link_then_logs_in(client, db):
    # Changed with issue 9: the account opens with the link emailed to its address.
    response = client.post(reverse("signup"), signup_data())
    assert response.status_code == 200 and 'id="signup-sent"' in response.content.decode()
    user = User.objects.get(username="erin")
    assert not user.is_active and logged_in_user(client) is None
    email = OutgoingEmail.objects.get(kind="signup_confirm")
    assert email.to == "erin@example.org" and email.user == user
    assert 'id="signup-confirm"' in client.get(confirm_link()).content.decode()  # GET: asks
    assert logged_in_user(client) is None
    response = client.post(confirm_link())
    assert response.status_code == 302
    assert response["Location"] == reverse("lobby")
    user.refresh_from_db()
    assert user.is_active and user.email == "erin@example.org"
    assert (user.profile.display_name, user.profile.time_zone) == ("Erin E.", "Asia/Tokyo")
    assert logged_in_user(client) == user


def test_a_signup_link_works_once(client, db):
    client.post(reverse("signup"), signup_data())
    link = confirm_link()
    client.post(link)
    client.post(reverse("logout"))
    response = client.post(link)
    assert response.status_code == 410 and 'id="signup-link-invalid"' in response.content.decode()
    assert logged_in_user(client) is None


def test_new_passwords_are_hashed_with_argon2(client, db):
    sign_up(client)
    user = User.objects.get(username="erin")
    assert user.password.startswith("argon2")
    assert user.check_password(PASSWORD)


def test_a_bad_time_zone_is_refused_with_a_clear_message(client, db):
    response = client.post(reverse("signup"), signup_data(time_zone="Mars/Olympus"))
    assert response.status_code == 200
    assert "Mars/Olympus is not a time zone" in response.content.decode()
    assert not User.objects.filter(username="erin").exists()
    assert logged_in_user(client) is None


def test_signing_up_with_a_taken_email_says_nothing_and_tells_the_owner(client, alice):
    # Changed with issue 9: the page was "An account with this email exists".
    taken = client.post(reverse("signup"), signup_data(email="ALICE@example.org"))
    fresh = client.post(reverse("signup"), signup_data(username="frank", email="frank@example.org"))
    assert taken.status_code == fresh.status_code == 200
    assert as_read(taken).replace("ALICE@example.org", "X") == as_read(fresh).replace(
        "frank@example.org", "X"
    )
    assert not User.objects.filter(username="erin").exists()
    told = OutgoingEmail.objects.get(kind="signup_taken")
    assert told.to == "alice@example.org" and told.user == alice
    assert "alice" in told.text and "No new account was made" in told.text


@pytest.mark.parametrize("username", ["alice", "ALICE"])
def test_signing_up_with_a_taken_username_says_nothing_and_mails_the_address(
    client, alice, username
):
    # Issue 21: the page said "A user with that username already exists" (Django's).
    taken = client.post(reverse("signup"), signup_data(username=username, next="/invite/x/"))
    fresh = client.post(reverse("signup"), signup_data(username="frank", email="frank@example.org"))
    assert taken.status_code == fresh.status_code == 200
    assert as_read(taken).replace("erin@example.org", "X") == as_read(fresh).replace(
        "frank@example.org", "X"
    )
    assert not User.objects.filter(email="erin@example.org").exists()
    told = OutgoingEmail.objects.get(kind="signup_name_taken")
    assert told.to == "erin@example.org" and told.user is None
    assert f'as "{username}", but another account has that username' in told.text
    assert f"{settings.SITE_URL}/accounts/signup/?next=%2Finvite%2Fx%2F" in told.text
    assert not OutgoingEmail.objects.filter(to="alice@example.org").exists()


def test_a_username_taken_a_moment_before_is_told_the_same_way(client, alice, monkeypatch):
    # Two signups for one name at once: both found it free, the second save fails.
    monkeypatch.setattr("games.views.accounts.is_username_taken", lambda name: False)
    page = client.post(reverse("signup"), signup_data(username="alice"))
    assert page.status_code == 200 and 'id="signup-sent"' in page.content.decode()
    assert OutgoingEmail.objects.get(kind="signup_name_taken").to == "erin@example.org"
    assert not User.objects.filter(email="erin@example.org").exists()


def test_a_signup_never_confirmed_does_not_hold_the_address(client, db):
    client.post(reverse("signup"), signup_data(username="squatter"))
    client.post(reverse("signup"), signup_data())
    assert not User.objects.filter(username="squatter").exists()
    assert client.post(confirm_link()).status_code == 302
    assert logged_in_user(client).username == "erin"


def test_mismatched_passwords_are_refused(client, db):
    response = client.post(reverse("signup"), signup_data(password2="something else entirely"))
    assert response.status_code == 200
    assert not User.objects.filter(username="erin").exists()


def test_signing_up_from_an_invite_returns_to_it(client, db):
    response = sign_up(client, next="/invite/abc/")
    assert response["Location"] == "/invite/abc/"


def test_signing_up_ignores_a_next_page_on_another_site(client, db):
    response = sign_up(client, next="https://evil.example/")
    assert response["Location"] == reverse("lobby")


# --- logging in and out ---------------------------------------------------------------------


def test_logging_in_with_the_right_password_works(client, alice):
    response = client.post(reverse("login"), {"username": "alice", "password": PASSWORD})
    assert response.status_code == 302
    assert response["Location"] == reverse("lobby")
    assert logged_in_user(client) == alice


def test_logging_in_with_a_wrong_password_is_refused(client, alice):
    response = client.post(reverse("login"), {"username": "alice", "password": "wrong"})
    assert response.status_code == 200
    assert 'id="login-form"' in response.content.decode()
    assert logged_in_user(client) is None


def test_logging_out_ends_the_session(client, alice):
    client.force_login(alice)
    response = client.post(reverse("logout"))
    assert response["Location"] == reverse("lobby")
    assert logged_in_user(client) is None


# --- resetting a password -------------------------------------------------------------------


def test_password_reset_sends_an_email_whose_link_sets_a_new_password(client, alice, mailoutbox):
    response = client.post(reverse("password_reset"), {"email": "alice@example.org"})
    assert response["Location"] == reverse("password_reset_done")
    assert len(mailoutbox) == 1
    assert mailoutbox[0].to == ["alice@example.org"]
    link = re.search(r"https?://[^/\s]+(/accounts/reset/\S+)", mailoutbox[0].body).group(1)

    form_url = client.get(link)["Location"]  # Django hides the token behind a redirect
    response = client.post(form_url, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert response["Location"] == reverse("password_reset_complete")
    alice.refresh_from_db()
    assert alice.check_password(NEW_PASSWORD)
    assert alice.password.startswith("argon2")


def test_a_password_reset_link_works_only_once(client, alice, mailoutbox):
    client.post(reverse("password_reset"), {"email": "alice@example.org"})
    link = re.search(r"https?://[^/\s]+(/accounts/reset/\S+)", mailoutbox[0].body).group(1)
    form_url = client.get(link)["Location"]
    client.post(form_url, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})

    response = client.get(link, follow=True)
    assert 'id="invalid-link"' in response.content.decode()


def test_password_reset_for_an_unknown_email_sends_nothing(client, alice, mailoutbox):
    response = client.post(reverse("password_reset"), {"email": "nobody@example.org"})
    assert response["Location"] == reverse("password_reset_done")
    assert mailoutbox == []


# --- the profile ----------------------------------------------------------------------------


def test_the_profile_needs_a_login(client, db):
    response = client.get(reverse("profile"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_the_profile_shows_the_current_values(client, alice):
    client.force_login(alice)
    page = client.get(reverse("profile")).content.decode()
    assert 'value="Alice"' in page and 'value="alice@example.org"' in page
    assert '<option value="Europe/Berlin" selected>' in page


def test_editing_the_profile_saves_name_email_and_time_zone(client, alice):
    client.force_login(alice)
    response = client.post(
        reverse("profile"),
        {
            "display_name": "Queen Alice",
            "email": "queen@example.org",
            "time_zone": "Australia/Sydney",
            "current_password": PASSWORD,
        },
    )
    assert response["Location"] == reverse("profile")
    alice.refresh_from_db()
    alice.profile.refresh_from_db()
    # Changed with issue 21: the email changes once the link sent to it is opened.
    assert (alice.email, alice.profile.pending_email) == ("alice@example.org", "queen@example.org")
    assert (alice.profile.display_name, alice.profile.time_zone) == (
        "Queen Alice",
        "Australia/Sydney",
    )
    text = OutgoingEmail.objects.get(kind="email_confirm", to="queen@example.org").text
    client.post(re.search(rf"{re.escape(settings.SITE_URL)}(/accounts/email/\S+/)", text).group(1))
    alice.refresh_from_db()
    assert alice.email == "queen@example.org"


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("time_zone", "Berlin", "Berlin is not a time zone"),
        ("email", "bob@", "Enter a valid email address"),
        ("display_name", "", "This field is required"),
    ],
)
def test_a_bad_profile_edit_changes_nothing(client, alice, bob, field, value, message):
    client.force_login(alice)
    data = {
        "display_name": "Queen Alice",
        "email": "queen@example.org",
        "time_zone": "UTC",
        "current_password": PASSWORD,
        field: value,
    }
    response = client.post(reverse("profile"), data)
    assert message in response.content.decode()
    alice.refresh_from_db()
    alice.profile.refresh_from_db()
    assert (alice.email, alice.profile.display_name, alice.profile.time_zone) == (
        "alice@example.org",
        "Alice",
        "Europe/Berlin",
    )
