"""The secrets in the links of emails stay on the site (issue 21, item 10): a magic
link, an unsubscribe link, a mute link, an invite link, a sign-up or password-reset link
carries its secret in its address, and the page it opens must not hand that address to
another site. Every page says `Referrer-Policy: same-origin` (lowenherz_site.settings):
a browser sends no Referer at all to another origin, and the whole address only to the
site itself (whose forms need the Origin that a stricter "no-referrer" would blank).

The browser test follows a link from each landing page to a server of another origin
that records what the browser told it."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest
from django.contrib.auth.models import User
from django.contrib.auth.tokens import default_token_generator
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from playwright.sync_api import Page

from games.mail import outbox, tokens
from games.models import Game, Seat
from games.views.accounts import confirm_url
from tests.site.conftest import make_user

POLICY = "same-origin"


def landing_pages(game: Game, alice: User) -> dict[str, str]:
    """Each kind of link an email carries, as a path on this site, secret included."""
    seat = Seat.objects.get(game=game, user=alice)
    newcomer = make_user("newcomer")
    User.objects.filter(pk=newcomer.pk).update(is_active=False)
    newcomer.refresh_from_db()
    uid = urlsafe_base64_encode(force_bytes(alice.pk))
    return {
        "magic link": tokens.magic_link_path(seat, game, game.phase_number),
        "unsubscribe": outbox.unsubscribe_url(alice),
        "mute": outbox.mute_url(alice, game),
        "invite": reverse("invite", args=[game.invite_token]),
        "sign-up": confirm_url(newcomer, ""),
        "password reset": reverse(
            "password_reset_confirm", args=[uid, default_token_generator.make_token(alice)]
        ),
    }


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


def test_every_landing_page_of_an_emailed_link_keeps_its_address_home(client, game, alice):
    for kind, url in landing_pages(game, alice).items():
        response = client.get(path_of(url))
        assert response["Referrer-Policy"] == POLICY, kind
        if response.status_code == 302:  # the password reset hides its token this way
            response = client.get(response["Location"])
            assert response["Referrer-Policy"] == POLICY, kind
        assert response.status_code == 200, kind


# --- in Chromium: a link from a landing page to another site ----------------------------------


class Recorder(BaseHTTPRequestHandler):
    """Another origin: answers every GET and notes the Referer it was sent."""

    seen: list[tuple[str, str | None]]

    def do_GET(self) -> None:
        if self.path == "/favicon.ico":  # the browser's own asking, after each page
            self.send_error(404)
            return
        self.seen.append((self.path, self.headers.get("Referer")))
        body = b"<!doctype html><title>elsewhere</title><p>elsewhere</p>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def elsewhere() -> Iterator[tuple[str, list[tuple[str, str | None]]]]:
    """A server of another origin (another host name and port): its URL, what it saw."""
    seen: list[tuple[str, str | None]] = []
    handler = type("Recording", (Recorder,), {"seen": seen})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()
    thread.join()


def follow_a_link_away(page: Page, target: str, policy: str = "") -> None:
    """Add a link to `target` to the page (as a message or a profile could hold one) and
    click it, as a reader would; `policy`: the link's own referrerpolicy, if any."""
    page.evaluate(
        """([target, policy]) => {
        const a = document.createElement("a");
        a.href = target; a.id = "away"; a.textContent = "away";
        if (policy) { a.referrerPolicy = policy; }
        document.body.append(a);
    }""",
        [target, policy],
    )
    page.click("#away")
    page.wait_for_url(f"{target}*")


def test_no_landing_page_hands_its_address_to_another_site(
    page, live_server, game, alice, elsewhere
):
    there, seen = elsewhere
    pages = landing_pages(game, alice)
    for kind, url in pages.items():
        page.goto(path_of(url))
        follow_a_link_away(page, f"{there}/{kind.replace(' ', '-')}")
    assert [path for path, _ in seen] == [f"/{k.replace(' ', '-')}" for k in pages]
    assert [referer for _, referer in seen] == [None] * len(pages), seen

    # The recorder hears a Referer when a link asks for one: the test can see a leak.
    page.goto(path_of(pages["magic link"]))
    follow_a_link_away(page, f"{there}/asked", policy="unsafe-url")
    assert seen[-1] == ("/asked", live_server.url + path_of(pages["magic link"]))
