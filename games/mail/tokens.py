"""The secrets in emails: reply addresses and magic links (play by email).

A reply address `play+TOKEN@REPLY_DOMAIN` and a magic link both name one player,
game and phase, and both can be used once: the rows record their use.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.core import signing
from django.urls import reverse
from django.utils import timezone

from games.models import Game, MagicLink, ReplyToken, Seat

SALT = "lowenherz.magic-link"


def reply_address(seat: Seat, phase_number: int) -> str:
    # Not get_or_create: no constraint keys a token on its seat and phase, so its
    # savepoint could only catch a clash of random tokens, which it would raise again.
    token = ReplyToken.objects.filter(seat=seat, phase_number=phase_number,
                                      used_at=None).first() \
        or ReplyToken.objects.create(seat=seat, phase_number=phase_number)
    return f"{settings.REPLY_LOCAL_PART}+{token.token}@{settings.REPLY_DOMAIN}"


def token_of(address: str) -> str | None:
    """`play+TOKEN@host` → TOKEN (None if the address has no token)."""
    local = address.strip().strip("<>").rsplit("@", 1)[0]
    prefix = f"{settings.REPLY_LOCAL_PART}+"
    return local[len(prefix):] if local.lower().startswith(prefix) and len(local) > len(
        prefix) else None


def magic_link_path(seat: Seat, game: Game, phase_number: int) -> str:
    """A signed path (append to SITE_URL) that signs the player in on the game's form."""
    assert seat.user is not None, "a magic link is for a person's seat"
    link = MagicLink.objects.create(
        user=seat.user, game=game, phase_number=phase_number,
        expires_at=timezone.now() + timedelta(hours=settings.MAGIC_LINK_HOURS))
    return reverse("magic_link", args=[signing.dumps(link.nonce, salt=SALT)])


def magic_nonce(signed: str) -> str | None:
    """The nonce inside a signed link, or None if it was tampered with."""
    try:
        return signing.loads(signed, salt=SALT)
    except signing.BadSignature:
        return None
