"""Show every time in the viewer's own time zone (their profile's), and keep a session
opened by a magic link from an email to the one game that email was about."""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import messages
from django.contrib.sessions.backends.base import SessionBase
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import Resolver404, resolve, reverse
from django.utils import timezone, translation
from django.utils.translation import gettext

from games.models import Game, language_of

# The session of a magic link: {"game": id, "phase": number}. A login with the password
# removes it (games.signals).
SCOPE_KEY = "lowenherz_magic_scope"
# What a scoped session may open whatever game it is for: leaving, logging in properly,
# another magic link, and the pages that need no account.
OPEN_TO_SCOPED = frozenset(
    {
        "logout",
        "login",
        "magic_link",
        "set_language",
        "unsubscribe",
        "healthz",
        "rules",
        "how_to_win",
        "favicon",
        "service_worker",
        "password_reset",
        "password_reset_done",
        "password_reset_confirm",
        "password_reset_complete",
    }
)
# The game's own pages: its page, JSON, live updates and history (what this player saw of
# it), its table talk and muting its emails, a vote on the table's proposal (a reply to
# the email could cast it too), its archive once it is over, always; its form only in the
# link's phase. What would change the game for others or for good (conceding, leaving,
# cancelling, asking the table to change a deadline) asks for the password.
GAME_PAGES = frozenset(
    {
        "game",
        "game_json",
        "game_live",
        "game_history",
        "game_say",
        "mute_player",
        "mute_game",
        "vote",
        "archive_game",
        "record_json",
    }
)
# A link signed for one person and game (`?s=`, games.mail.outbox.mute_url) works without
# a session, and so within any session's scope: the view reads the person from it alone.
SIGNED_LINKS = frozenset({"mute_game"})


def scope_session(session: SessionBase, game_id: int, phase_number: int, until: datetime) -> None:
    """Keep this session to one game and phase, and end it at `until`."""
    session[SCOPE_KEY] = {"game": game_id, "phase": phase_number}
    session.set_expiry(until)


def unscope_session(session: SessionBase) -> None:
    """A login with the password: the session is the account's again, of usual length."""
    if session.pop(SCOPE_KEY, None) is not None:
        session.set_expiry(None)


def scope_of(request: HttpRequest) -> dict[str, int] | None:
    if not request.user.is_authenticated:
        return None
    scope: Any = request.session.get(SCOPE_KEY)
    return scope if isinstance(scope, dict) else None


class TimezoneMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        profile = getattr(request.user, "profile", None) if request.user.is_authenticated else None
        if profile is not None:
            timezone.activate(zoneinfo.ZoneInfo(profile.time_zone))
        else:
            timezone.deactivate()
        return self.get_response(request)


class LanguageMiddleware:
    """A signed-in person reads every page in their own language (their profile's), on
    every device; a visitor's comes from LocaleMiddleware (the switcher's cookie, else
    Accept-Language). After AuthenticationMiddleware."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.user.is_authenticated:
            language = language_of(request.user)
            translation.activate(language)
            request.LANGUAGE_CODE = language
        return self.get_response(request)


class MagicScopeMiddleware:
    """A magic link grants what its email asked: that game, that phase's move. Anything
    else (other games, the profile, the password, the lobby) asks for the password."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        scope = scope_of(request)
        if (
            scope is None
            or request.path_info.startswith("/" + settings.STATIC_URL.lstrip("/"))
            or _allowed(request, scope)
        ):
            return self.get_response(request)
        return _ask_for_password(request, scope)


def _signed(request: HttpRequest) -> bool:
    return bool(request.GET.get("s") or (request.method == "POST" and request.POST.get("s")))


def _allowed(request: HttpRequest, scope: dict[str, int]) -> bool:
    try:
        match = resolve(request.path_info)
    except Resolver404:
        return True  # a 404 shows nothing of the account
    if match.url_name in OPEN_TO_SCOPED or (match.url_name in SIGNED_LINKS and _signed(request)):
        return True
    if match.kwargs.get("game_id") != scope["game"]:
        return False
    if match.url_name in GAME_PAGES:
        return True
    # The move the email asked for, while the game is still in that phase.
    return (
        match.url_name == "submit"
        and Game.objects.filter(
            pk=scope["game"], phase_number=scope["phase"], status=Game.Status.RUNNING
        ).exists()
    )


def _ask_for_password(request: HttpRequest, scope: dict[str, int]) -> HttpResponse:
    name = Game.objects.filter(pk=scope["game"]).values_list("name", flat=True).first()
    if name:
        said = gettext(
            "This link from an email signed you in for %(game)s only; "
            "log in with your password for the rest."
        ) % {"game": name}
    else:
        said = gettext(
            "This link from an email signed you in for one game only; "
            "log in with your password for the rest."
        )
    messages.info(request, said)
    target = (
        request.get_full_path()
        if request.method in {"GET", "HEAD"}
        else reverse("game", args=[scope["game"]])
    )
    return HttpResponseRedirect(f"{reverse('login')}?{urlencode({'next': target})}")
