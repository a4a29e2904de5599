"""The secrets in emails: reply addresses and magic links (play by email).

A reply address `play+TOKEN@REPLY_DOMAIN` and a magic link both name one player,
game and phase, and both can be used once: the rows record their use.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.core import signing
from django.urls import reverse
from django.utils import timezone

from games.mail.rows import insert as insert_rows
from games.models import Game, MagicLink, ReplyToken, Seat

SALT = "lowenherz.magic-link"


@dataclass(frozen=True)
class Links:
    """What an email that asks a player to move carries: its reply address, and the path
    of its magic link."""

    reply_to: str
    magic_path: str


def links(game: Game, seats: Sequence[Seat], *, new_phase: bool = False) -> dict[int, Links]:
    """The links of the game's current phase for each seat (seat id → Links), in three
    queries for all of them. `new_phase`: the asks that tell a phase has begun (games.
    mail.notify) take new reply tokens without looking for unused ones (one query fewer):
    no email of the phase gave one out yet, but in a rare race (a deadline extended
    before the asks were queued), and then the older one is still good, once, as is
    every token of the current phase."""
    if not seats:
        return {}
    addresses = reply_addresses(seats, game.phase_number, reuse=not new_phase)
    paths = magic_link_paths(seats, game, game.phase_number)
    return {seat.pk: Links(addresses[seat.pk], paths[seat.pk]) for seat in seats}


def reply_address(seat: Seat, phase_number: int) -> str:
    return reply_addresses([seat], phase_number)[seat.pk]


def reply_addresses(
    seats: Sequence[Seat], phase_number: int, *, reuse: bool = True
) -> dict[int, str]:
    """Each seat's reply address for the phase (seat id → address): the token not used
    yet if it has one (`reuse`), else a new one; for all of them in two queries (games.
    mail.notify asks every player of a phase at once)."""
    # Not get_or_create: no constraint keys a token on its seat and phase, so its
    # savepoint could only catch a clash of random tokens, which it would raise again.
    tokens: dict[int, str] = {}
    if reuse:  # not even built otherwise: the ORM's building of a query costs (issue 25)
        unused = ReplyToken.objects.filter(seat__in=seats, phase_number=phase_number, used_at=None)
        for seat_id, token in unused.order_by("pk").values_list("seat_id", "token"):
            tokens.setdefault(seat_id, token)
    new = [
        ReplyToken(seat=seat, phase_number=phase_number) for seat in seats if seat.pk not in tokens
    ]
    insert_rows(new)
    tokens.update((row.seat_id, row.token) for row in new)
    return {seat.pk: address_of(tokens[seat.pk]) for seat in seats}


def address_of(token: str) -> str:
    """The reply address of a token, as the emails give it out."""
    return f"{settings.REPLY_LOCAL_PART}+{token}@{settings.REPLY_DOMAIN}"


def token_of(address: str) -> str | None:
    """`play+TOKEN@host` → TOKEN (None if the address has no token)."""
    local = address.strip().strip("<>").rsplit("@", 1)[0]
    prefix = f"{settings.REPLY_LOCAL_PART}+"
    return (
        local[len(prefix) :]
        if local.lower().startswith(prefix) and len(local) > len(prefix)
        else None
    )


def magic_link_path(seat: Seat, game: Game, phase_number: int) -> str:
    """A signed path (`links.absolute_url` makes it an address) that signs the player in
    on the game's form."""
    return magic_link_paths([seat], game, phase_number)[seat.pk]


def magic_link_paths(seats: Sequence[Seat], game: Game, phase_number: int) -> dict[int, str]:
    """`magic_link_path` for each seat (seat id → path), a new link each, in one INSERT."""
    expires_at = timezone.now() + timedelta(hours=settings.MAGIC_LINK_HOURS)
    links = []
    for seat in seats:
        assert seat.user_id is not None, "a magic link is for a person's seat"
        links.append(
            MagicLink(
                user_id=seat.user_id, game=game, phase_number=phase_number, expires_at=expires_at
            )
        )
    insert_rows(links)
    return {
        seat.pk: reverse("magic_link", args=[signing.dumps(link.nonce, salt=SALT)])
        for seat, link in zip(seats, links, strict=True)
    }


def magic_nonce(signed: str) -> str | None:
    """The nonce inside a signed link, or None if it was tampered with."""
    try:
        return signing.loads(signed, salt=SALT)
    except signing.BadSignature:
        return None


def is_past_expiry(signed: str) -> bool:
    """Whether a link signed by us was made longer ago than a link lives: its row may be
    gone (games.housekeeping), and it expired all the same."""
    try:
        signing.loads(signed, salt=SALT, max_age=timedelta(hours=settings.MAGIC_LINK_HOURS))
    except signing.SignatureExpired:
        return True
    except signing.BadSignature:
        return False
    return False
