"""Every user has a profile from the start (display name defaults to the username)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.db.models.signals import post_save
from django.dispatch import receiver

from games.models import Profile


@receiver(post_save, sender=settings.AUTH_USER_MODEL)
def create_profile(sender: type[User], instance: User, created: bool, **kwargs: Any) -> None:
    if created:
        Profile.objects.get_or_create(user=instance,
                                      defaults={"display_name": instance.get_username()[:40]})
