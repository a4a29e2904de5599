"""The polls of open pages take a quick way through the site (games.views.live
`QuickPollMiddleware`, bench `open-tabs`): they must answer exactly what the whole stack
answers, for every reader the rule of reading knows, and leave to the whole stack every
session the quick way is not sure of (a magic link's, a changed password's, an
inactive account's).

Each case is asked twice: with the site's middleware, and without the quick one (the
reference). The sessions' store reads its row with one statement (lowenherz_site.sessions)
and must read what Django's own store reads."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.sessions.backends.db import SessionStore as DjangoStore
from django.contrib.sessions.models import Session
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from games.models import Game
from games.visibility import INVITED
from lowenherz_site.sessions import SessionStore
from tests.site.conftest import three_player_game

QUICK = "games.views.live.QuickPollMiddleware"
WITHOUT_QUICK = [m for m in settings.MIDDLEWARE if m != QUICK]
# What a poll's answer says beside its body: the same on both ways (the moments aside:
# Date, Expires; the Content-Language of a body without words follows the browser, not
# the profile).
HEADERS = (
    "Content-Type",
    "ETag",
    "Cache-Control",
    "Vary",
    "Content-Security-Policy",
    "X-Frame-Options",
    "X-Content-Type-Options",
    "Referrer-Policy",
    "Cross-Origin-Opener-Policy",
    "Location",
)


def signed_in(user: User | None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def asked(client: Client, url: str, quick: bool) -> tuple[int, bytes, dict[str, str]]:
    """The answer to `client`'s cookies, by a client whose middleware is loaded now."""
    fresh = Client()
    fresh.cookies = client.cookies
    with override_settings(MIDDLEWARE=settings.MIDDLEWARE if quick else WITHOUT_QUICK):
        response = fresh.get(url)
    return response.status_code, response.content, {h: response.get(h, "") for h in HEADERS}


def same_both_ways(client: Client, url: str) -> tuple[int, bytes]:
    """The answer of `url`, asked the quick way and the whole way: they must agree."""
    quick, whole = asked(client, url, quick=True), asked(client, url, quick=False)
    if quick[0] == 404:  # the site's 404 page: its form's CSRF token is new each time
        quick, whole = (quick[0], b"", quick[2]), (whole[0], b"", whole[2])
    assert quick == whole, url
    return quick[0], quick[1]


def polls(game: Game) -> list[str]:
    live = reverse("live")
    game_live = reverse("game_live", args=[game.pk])
    return [live, f"{live}?lobby=1", f"{live}?visible=1", game_live, f"{game_live}?visible=1"]


def test_a_player_an_outsider_and_a_visitor_read_the_same_both_ways(game, alice, dave):
    for client in (signed_in(alice), signed_in(dave), signed_in(None)):
        for url in polls(game):
            status, body = same_both_ways(client, url)
            assert status == 200 and body.startswith(b"{"), (url, body)
    assert b'"your_move": 1' in same_both_ways(signed_in(alice), reverse("live"))[1]


def test_an_invite_only_game_is_seen_by_its_players_and_the_invited_only(alice, bob, charlie, dave):
    private = three_player_game(alice, bob, charlie, invite_only=True)
    url = reverse("game_live", args=[private.pk])
    assert same_both_ways(signed_in(alice), url)[0] == 200
    assert same_both_ways(signed_in(dave), url)[0] == 404
    assert same_both_ways(signed_in(None), url)[0] == 404
    assert same_both_ways(signed_in(None), reverse("game_live", args=[999_999]))[0] == 404
    for person in (dave, None):  # the invite link was opened in this browser
        client = signed_in(person)
        session = client.session
        session[INVITED] = [private.pk]
        session.save()
        client.cookies[settings.SESSION_COOKIE_NAME] = session.session_key
        assert same_both_ways(client, url)[0] == 200


def test_a_magic_link_session_reads_its_game_only_without_a_count(client, game, alice):
    from tests.site.test_magic_links import emailed_link

    client.post(emailed_link(game, alice))
    status, body = same_both_ways(client, reverse("game_live", args=[game.pk]))
    assert status == 200 and b"your_move" not in body
    assert same_both_ways(client, reverse("live"))[0] == 302  # to the password


Change = Callable[[User], None]


def new_password(user: User) -> None:
    user.set_password("another long enough passphrase")
    user.save()


def deactivated(user: User) -> None:
    user.is_active = False
    user.save()


def deleted(user: User) -> None:
    user.delete()


@pytest.mark.parametrize("change", [new_password, deactivated, deleted])
def test_a_session_that_no_longer_signs_in_reads_as_a_visitor_s(game, alice, change: Change):
    """Django ends a session whose password changed: the quick way leaves it to Django."""
    client = signed_in(alice)
    key = client.session.session_key
    change(alice)
    for url in polls(game):
        status, body, _ = asked(client, url, quick=True)
        assert status == 200 and b'"your_move": 1' not in body, (url, body)
        assert (status, body) == asked(signed_in(None), url, quick=True)[:2]
    if change is new_password:
        assert not Session.objects.filter(session_key=key).exists()  # flushed by Django


def test_a_poll_reads_the_session_the_person_and_its_answer_only(game, alice):
    """Three statements: no profile (time zone, language), nothing the ORM builds."""
    client = signed_in(alice)
    for url in (reverse("live"), reverse("game_live", args=[game.pk])):
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url).status_code == 200
        tables = [q["sql"].split(" FROM ")[1].split()[0] for q in queries.captured_queries]
        assert tables == ["django_session", "auth_user", *tables[2:]] and len(tables) == 3


# --- the sessions' store -------------------------------------------------------------------


def test_the_store_reads_a_session_as_django_s_own_does(alice):
    client = signed_in(alice)
    key = client.session.session_key
    assert SessionStore(key).load() == DjangoStore(key).load() != {}
    for missing in ("x" * 32, None):
        store = SessionStore(missing)
        assert store.load() == {} and store.session_key is None
    Session.objects.filter(session_key=key).update(expire_date=timezone.now() - timedelta(1))
    expired = SessionStore(key)
    assert expired.load() == {} and expired.session_key is None
    assert DjangoStore(key).load() == {}
