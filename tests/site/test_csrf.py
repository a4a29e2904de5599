"""Every view refuses a POST without a CSRF token (issue 9, item 7a): the test client
skips the check unless asked (`enforce_csrf_checks=True`), so a view made csrf_exempt
went unnoticed. The only exceptions are the one-click unsubscribe (RFC 8058: a mail
provider POSTs it without any token) and anymail's inbound webhooks (basic auth).

Data-driven over the site's URL list: a new view is covered the day it is added. The
POST carries what each view would act on, so that a view without the check would also
change something, which `everything()` would see. Only the 403 and the unchanged
database are asserted: the views' other answers change with their authors.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.apps import apps
from django.contrib.auth.models import User
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from games.mail import outbox
from games.models import Game, Notifications
from tests.site.conftest import PASSWORD, three_player_game

EXEMPT = {"unsubscribe"}  # RFC 8058 one-click
# Exempt at the door, checked inside: the record import sets its upload handler (a file
# too big is dropped as it streams in) before csrf_protect reads the body, Django's
# documented pattern. It stays in PROTECTED: the forged POST below is refused there too.
CHECKED_INSIDE = {"import_record"}
WEBHOOKS = "anymail/"  # inbound mail webhooks (anymail's, the site's own): basic auth
SKIPPED_NAMESPACES = {"admin"}  # Django's own admin, tested by Django

# The POST views the issue names: each must stay in the URL list under its name.
POST_VIEWS = {
    "create_game",
    "join_game",
    "submit",
    "propose",
    "vote",
    "take_seat_back",
    "invite_by_email",
    "magic_link",
    "email_preferences",
    "signup",
    "profile",
    "login",
    "logout",
    "password_reset",
    "password_change",
}

NEW_PASSWORD = "another long enough passphrase"
# What each view would act on, were the check gone (the rest get an empty POST).
DATA: dict[str, dict[str, str]] = {
    "create_game": {
        "name": "Forged",
        "player_count": "2",
        "setup": "variable",
        "decisions": "sealed",
        "money": "hidden",
        "deadline_hours": "48",
        "colour": "red",
    },
    "join_game": {"colour": "grey"},
    "submit": {"move": "decide 1, 3"},
    "propose": {"kind": "extend", "amount": "5"},
    "vote": {"vote": "yes"},
    "invite_by_email": {"addresses": "victim@example.org"},
    "email_preferences": {"mode": "off"},
    "signup": {
        "username": "forged",
        "email": "forged@example.org",
        "password1": NEW_PASSWORD,
        "password2": NEW_PASSWORD,
    },
    "profile": {"display_name": "Forged", "time_zone": "UTC"},
    "login": {"username": "alice", "password": PASSWORD},
    "password_change": {
        "old_password": PASSWORD,
        "new_password1": NEW_PASSWORD,
        "new_password2": NEW_PASSWORD,
    },
    "password_reset": {"email": "alice@example.org"},
}


def walk(
    patterns: list[Any], prefix: str = "", namespace: str = ""
) -> Iterator[tuple[str, str, str, object]]:
    """(route, name, namespace, view) for every URL of the site."""
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from walk(
                pattern.url_patterns, prefix + str(pattern.pattern), pattern.namespace or namespace
            )
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern), str(pattern.name), namespace, pattern.callback


ROUTES = sorted(
    {
        (route, name, namespace, view)
        for route, name, namespace, view in walk(get_resolver().url_patterns)
        if namespace not in SKIPPED_NAMESPACES
    },
    key=lambda r: r[0],
)
PROTECTED = sorted(
    {
        (route, name)
        for route, name, _, _ in ROUTES
        if name not in EXEMPT and not route.startswith(WEBHOOKS)
    }
)


def concrete(route: str, game: Game) -> str:
    """A path of `route`: the game's number, its invite token, a made-up token else."""
    path = re.sub(r"<int:\w+>", str(game.pk), route)
    path = (
        re.sub(r"<(str:)?token>", game.invite_token, path) if route.startswith("invite/") else path
    )
    return "/" + re.sub(r"<[^>]+>", "x", path)


def everything() -> dict[str, Any]:
    """What a forged POST could change: every table's rows, the games' states, people's
    passwords and preferences."""
    counts = {model._meta.label: model.objects.count() for model in apps.get_models()}
    return {
        **counts,
        "games": list(
            Game.objects.order_by("pk").values_list("status", "phase_number", "deadline", "state")
        ),
        "users": list(User.objects.order_by("pk").values_list("password", "email")),
        "notifications": list(Notifications.objects.values_list("mode", flat=True)),
    }


@pytest.fixture
def open_game(bob) -> Game:
    from games import services

    return services.create_game(
        bob,
        name="Open",
        player_count=3,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=[],
    )


def test_the_post_views_named_in_the_issue_are_all_checked():
    assert {name for _, name in PROTECTED} >= POST_VIEWS


def test_only_the_one_click_unsubscribe_and_the_webhooks_are_exempt():
    exempt = {
        name
        for route, name, _, view in ROUTES
        if getattr(view, "csrf_exempt", False) and not route.startswith(WEBHOOKS)
    }
    assert exempt == EXEMPT | CHECKED_INSIDE


# Signed in for every view (a forged POST rides on the victim's session); anonymous too
# for the views that a signed-out visitor uses.
ANONYMOUS = {
    "signup",
    "signup_confirm",
    "login",
    "password_reset",
    "password_reset_confirm",
    "magic_link",
    "join_game",
}
CASES = [(route, name, True) for route, name in PROTECTED] + [
    (route, name, False) for route, name in PROTECTED if name in ANONYMOUS
]


@pytest.mark.parametrize(
    ("route", "name", "signed_in"),
    CASES,
    ids=[f"{n}-{'signed-in' if s else 'anonymous'}" for _, n, s in CASES],
)
def test_a_post_without_a_csrf_token_is_refused_and_changes_nothing(
    alice, bob, charlie, open_game, route, name, signed_in
):
    game = three_player_game(alice, bob, charlie)
    target = open_game if name == "join_game" else game
    client = Client(enforce_csrf_checks=True)
    if signed_in:
        client.force_login(alice)
    before = everything()
    response = client.post(concrete(route, target), DATA.get(name, {}))
    assert response.status_code == 403
    assert everything() == before


def test_the_one_click_unsubscribe_needs_no_token(alice):
    """RFC 8058: the mail provider's POST carries no CSRF token, and must work."""
    path = outbox.unsubscribe_url(alice).split("://", 1)[1].partition("/")[2]
    client = Client(enforce_csrf_checks=True)
    response = client.post("/" + path, {"List-Unsubscribe": "One-Click"})
    assert response.status_code == 200
    assert Notifications.objects.get(user=alice).mode == "off"


def test_the_csrf_check_lets_a_post_with_its_token_through(alice):
    """The refusals above are the check's: the same POST with the token is taken."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    client.get(reverse("email_preferences"))  # sets the CSRF cookie
    token = client.cookies["csrftoken"].value
    response = client.post(
        reverse("email_preferences"), {"mode": "off", "csrfmiddlewaretoken": token}
    )
    assert response.status_code == 302
    assert Notifications.objects.get(user=alice).mode == "off"
