"""Every user has a profile from the start (display name defaults to the username); a
login with the password ends the limits of a magic link's session; the account
changes the mail wing announces (`email_changed`, `signup_with_taken_email`)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.auth.signals import user_logged_in
from django.db.models.signals import post_save
from django.dispatch import Signal, receiver
from django.http import HttpRequest

from games.middleware import unscope_session
from games.models import Profile

# Sent by the account pages (games.views), received by the mail wing (games.mail.compose),
# which the pages may not import: the old address hears of a change to its account...
email_changed = Signal()  # user, old_email
# A new address waits for its link (confirm_url); the old one hears it was asked for. An
# address another account has (holder) gets no link, only word that nothing changed.
email_change_asked = Signal()  # user, new_email, confirm_url, holder (User or None)
# ...and an address that has an account hears that someone tried to sign up with it.
signup_with_taken_email = Signal()  # user (the account that has the address)
# ...and an address that asked for a username an account has hears to choose another.
signup_with_taken_name = Signal()  # email, username, signup_url
# A new account waits for the link that proves its address.
signup_started = Signal()  # user, confirm_url


@receiver(post_save, sender=settings.AUTH_USER_MODEL)
def create_profile(sender: type[User], instance: User, created: bool, **kwargs: Any) -> None:
    if created:
        Profile.objects.get_or_create(
            user=instance, defaults={"display_name": instance.get_username()[:40]}
        )


@receiver(user_logged_in)
def end_magic_scope(
    sender: type[User], request: HttpRequest | None, user: User, **kwargs: Any
) -> None:
    # games.mail.views scopes the session again right after its own login.
    if request is not None and hasattr(request, "session"):
        unscope_session(request.session)
