"""Every user has a profile from the start (display name defaults to the username); a
login with the password ends the limits of a magic link's session; the account
changes the mail wing announces (`email_changed`, `signup_with_taken_email`); the live
marks that open pages poll, moved on by the writes their readers see."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.auth.signals import user_logged_in
from django.db.models import Model
from django.db.models.signals import post_delete, post_save
from django.dispatch import Signal, receiver
from django.http import HttpRequest

from games.middleware import unscope_session
from games.models import (
    Event,
    Game,
    Message,
    Notifications,
    PendingSubmission,
    Profile,
    Seat,
    events_told,
    message_told_to_readers,
)

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


# --- live marks: what an open page polls (games.views.live) ----------------------------------


@receiver(post_save, sender=PendingSubmission)
@receiver(post_delete, sender=PendingSubmission)
@receiver(post_delete, sender=Seat)
def game_changed(sender: type[Model], instance: PendingSubmission | Seat, **kwargs: Any) -> None:
    """Who has submitted is on every reader's page ("waiting for"), and so are the seats
    (a seat's own save moves the mark itself, `Seat.save`)."""
    Game.objects.filter(pk=instance.game_id).update()


@receiver(post_save, sender=Notifications)
def absence_told(sender: type[Notifications], instance: Notifications, **kwargs: Any) -> None:
    """A person's absence, set or changed, is on the pages of their games ("Bob (away)"):
    their live marks move on. (One that begins or ends later is the sweep's to tell,
    `deadlines.mark_absences_turning`.)"""
    going = [Game.Status.OPEN, Game.Status.RUNNING]
    Game.objects.filter(status__in=going, seats__user_id=instance.user_id).update()


@receiver(post_save, sender=Event)
def event_told(sender: type[Event], instance: Event, created: bool, **kwargs: Any) -> None:
    """An event read by everyone moves the game's mark; one for some eyes only, the marks
    of the seats that read it, by the one rule (`Event.objects.visible_to`)."""
    if created:
        events_told(instance.game_id, [instance.pk])


@receiver(post_save, sender=Message)
def message_told(sender: type[Message], instance: Message, created: bool, **kwargs: Any) -> None:
    """Table talk moves the marks of the seats that read it, by the one rule
    (`Message.objects.visible_to`: not a player who muted its sender); a spectator of a
    running game reads none of it."""
    if created:
        message_told_to_readers(instance)
