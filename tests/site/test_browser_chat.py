"""Table talk in Chromium (games.chat, templates/games/_chat.html, games/static/games/live.js):
a message to everyone or to one player shows on the others' open pages without a reload,
a private one never on a third player's; a draft being written survives the page's live
swaps (text, focus and cursor) and does not hold the page still as a move form does; a
refused message says why and keeps the text; muting a player hides their messages.

Every test runs on a desktop window and on a phone 360 px wide (one more on the phone
alone), where nothing may be wider than the screen. The poll is every second here
(LIVE_POLL_SECONDS); the tests wait for what the page shows, with a timeout, never for a
time. Each page's window is marked,
and the mark must survive (the page changed in place), and no page breaks the CSP.

The game: alice red, bob ochre, charlie lilac, all three asked to decide."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.signals import request_finished, request_started
from django.test import Client
from playwright.sync_api import Page, expect

from games import chat
from games.models import MESSAGE_CHARS, Game, Message
from tests.site.test_browser_live import WAIT, not_reloaded, resolve, submit_default
from tests.site.test_browser_phone import PHONE, page_width

SCREEN = 360

# Collects the policy violations of every document a page loads (init scripts run outside
# the page's CSP, before its own scripts).
WATCH_CSP = """document.addEventListener("securitypolicyviolation", function (e) {
  window.cspViolation(e.violatedDirective + " " + e.blockedURI);
});"""


@pytest.fixture(autouse=True)
def fast_polls_and_users(settings) -> None:
    settings.LIVE_POLL_SECONDS = 1
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(params=[pytest.param({}, id="desktop"), pytest.param(PHONE, id="phone")])
def device(request) -> dict:
    return request.param


def sign_in(page: Page, username: str, server_url: str) -> None:
    """Log the page's context in as `username` by its session cookie (quicker than the
    login form, which test_browser_phone.log_in drives)."""
    client = Client()
    client.force_login(User.objects.get(username=username))
    session = client.cookies[settings.SESSION_COOKIE_NAME].value
    page.context.add_cookies(
        [{"name": settings.SESSION_COOKIE_NAME, "value": session, "url": server_url}]
    )


class Requests:
    """Counts the requests the live server is answering (it runs in this process), so
    that the test's end waits for them: a poll still running while the test database is
    flushed can deadlock with the flush."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = 0

    def started(self, **kwargs) -> None:
        with self.lock:
            self.running += 1

    def finished(self, **kwargs) -> None:
        with self.lock:
            self.running -= 1

    def wait_until_idle(self, quiet: float = 0.2, timeout: float = 10) -> None:
        deadline, idle_since = time.monotonic() + timeout, None
        while time.monotonic() < deadline:
            if self.running > 0:
                idle_since = None
            elif idle_since is None:
                idle_since = time.monotonic()
            elif time.monotonic() - idle_since >= quiet:
                return
            time.sleep(0.02)
        raise AssertionError(f"the live server still answers {self.running} request(s)")


@pytest.fixture
def server(live_server) -> Iterator[Requests]:
    requests = Requests()
    request_started.connect(requests.started, dispatch_uid="browser-chat-started")
    request_finished.connect(requests.finished, dispatch_uid="browser-chat-finished")
    yield requests
    request_started.disconnect(dispatch_uid="browser-chat-started")
    request_finished.disconnect(dispatch_uid="browser-chat-finished")


@pytest.fixture
def open_as(new_page, device, live_server, server) -> Iterator:
    """`open_as("alice", game)`: alice's page of the game, logged in, on the device, marked
    (not_reloaded), watched for CSP violations and script errors (checked at the end), and,
    on a phone, for being wider than the screen (checked at the end too)."""
    problems: list[str] = []
    pages: list[Page] = []

    def open_page(username: str, game: Game) -> Page:
        page = new_page(**device)
        page.expose_function("cspViolation", lambda what: problems.append(f"CSP: {what}"))
        page.add_init_script(WATCH_CSP)
        page.on(
            "console",
            lambda m: (
                problems.append(m.text)
                if m.type == "error" and "Content Security Policy" in m.text
                else None
            ),
        )
        page.on("pageerror", lambda error: problems.append(str(error)))
        sign_in(page, username, live_server.url)
        page.goto(f"/games/{game.pk}/")
        expect(page.locator("#chat")).to_be_visible()
        page.evaluate("window.notReloaded = true")
        pages.append(page)
        return page

    try:
        yield open_page
        assert problems == []
        if device:
            for page in pages:
                assert page_width(page) <= SCREEN, page.url
    finally:
        for page in pages:  # no more polls...
            page.goto("about:blank")
        server.wait_until_idle()  # ...nor a request still running beside the database flush


def talk(page: Page):
    return page.locator("#chat-messages")


def write(page: Page, text: str, to: str = "") -> None:
    """Write in the chat form and send it, as a person does (the page loads again)."""
    if to:
        page.select_option("#id_to", to)
    page.fill("#id_text", text)
    page.click("#chat-send")
    page.wait_for_url("**/games/*/#chat")


def focused(page: Page) -> str:
    return page.evaluate("document.activeElement ? document.activeElement.id : ''")


def fits(page: Page, device: dict) -> None:
    if device:
        assert page_width(page) <= SCREEN


# --- to everyone, to one player -------------------------------------------------------------


def test_a_message_to_everyone_shows_on_the_other_players_page_without_a_reload(
    open_as, game, device
):
    alice, bob = open_as("alice", game), open_as("bob", game)
    expect(talk(bob)).to_contain_text("No messages yet")

    write(alice, "Shall we share the hills?")
    line = talk(alice).locator(".chat-line")
    expect(line).to_have_count(1)
    expect(line).to_contain_text("You to everyone")
    expect(line).to_contain_text("Shall we share the hills?")
    expect(alice.locator("#id_text")).to_have_value("")  # sent: the form is empty again

    line = talk(bob).locator(".chat-line")
    expect(line).to_contain_text("Shall we share the hills?", timeout=WAIT)
    expect(line).to_contain_text("Alice (red) to everyone")
    expect(talk(bob)).not_to_contain_text("No messages yet")
    assert not_reloaded(bob)
    fits(bob, device)


def test_a_private_message_shows_to_its_two_players_and_never_to_a_third(
    open_as, game, bob, device
):
    alice, bob_page, charlie = (open_as(name, game) for name in ("alice", "bob", "charlie"))

    write(alice, "Bob, take the west; I take the east.", to="ochre")
    expect(talk(alice)).to_contain_text("You to Bob (ochre) only")
    expect(talk(alice).locator(".chat-line.private")).to_contain_text("take the west")
    expect(talk(bob_page)).to_contain_text("take the west", timeout=WAIT)
    expect(talk(bob_page)).to_contain_text("Alice (red) to you only")
    assert not_reloaded(bob_page)

    # A message to everyone, posted after the private one, reaches charlie's page: the
    # page was fetched again after both were stored, and still shows no private one.
    chat.post(game.pk, bob.pk, "Agreed, and good luck to all.")
    expect(talk(charlie)).to_contain_text("good luck to all", timeout=WAIT)
    expect(talk(charlie)).not_to_contain_text("take the west")
    expect(talk(charlie).locator(".chat-line")).to_have_count(1)
    expect(talk(bob_page)).to_contain_text("good luck to all", timeout=WAIT)
    assert not_reloaded(charlie) and not_reloaded(bob_page)
    charlie.reload()  # nor does a first load
    expect(talk(charlie)).not_to_contain_text("take the west")


# --- a draft and the page's live swaps ----------------------------------------------------------


def test_a_draft_keeps_its_text_focus_and_cursor_through_live_swaps(
    open_as, game, bob, charlie, device
):
    alice = open_as("alice", game)
    phase = game.phase_number
    alice.select_option("#id_to", "lilac")
    field = alice.locator("#id_text")
    field.click()
    field.press_sequentially("I offer you the forest")
    for _ in range(len(" forest")):
        field.press("ArrowLeft")  # the cursor after "the"

    chat.post(game.pk, bob.pk, "What are you two whispering about?")  # the page swaps
    expect(talk(alice)).to_contain_text("whispering", timeout=WAIT)
    expect(field).to_have_value("I offer you the forest")
    expect(alice.locator("#id_to")).to_have_value("lilac")
    assert focused(alice) == "id_text"
    field.press_sequentially(" whole")  # typed where the cursor was
    expect(field).to_have_value("I offer you the whole forest")

    for colour in ("red", "ochre", "lilac"):  # the phase moves on: a new page, swapped whole
        submit_default(game, colour)
    resolve(game)
    expect(alice.locator("#live-game")).to_have_attribute(
        "data-live-phase", str(phase + 1), timeout=WAIT
    )
    expect(alice.locator("#live-notice")).to_have_count(0)  # a draft holds nothing still
    expect(field).to_have_value("I offer you the whole forest")
    expect(alice.locator("#id_to")).to_have_value("lilac")
    assert focused(alice) == "id_text"
    field.press("End")
    field.press_sequentially(", Charlie.")
    assert not_reloaded(alice)
    fits(alice, device)

    alice.click("#chat-send")  # the swapped form still sends
    alice.wait_for_url("**/games/*/#chat")
    expect(talk(alice)).to_contain_text("You to Charlie (lilac) only")
    expect(talk(alice)).to_contain_text("I offer you the whole forest, Charlie.")


def test_writing_in_the_chat_leaves_a_move_form_left_open_alone(open_as, game, bob, device):
    submit_default(game, "red")  # alice has decided, and may still change her mind
    alice = open_as("alice", game)
    move = alice.locator("#move-text")
    move.fill("decide 3, 1")
    field = alice.locator("#id_text")
    field.click()
    field.press_sequentially("Nobody look at my cards")

    chat.post(game.pk, bob.pk, "Too late, I saw them.")  # the same phase: the talk follows
    expect(talk(alice)).to_contain_text("Too late", timeout=WAIT)
    expect(alice.locator("#live-notice")).to_have_count(0)
    expect(move).to_have_value("decide 3, 1")
    expect(field).to_have_value("Nobody look at my cards")
    assert focused(alice) == "id_text"

    submit_default(game, "ochre")
    submit_default(game, "lilac")
    resolve(game)  # the move form's phase is gone: the notice says so, the drafts stay
    expect(alice.locator("#live-notice")).to_contain_text("The game has moved on", timeout=WAIT)
    expect(move).to_have_value("decide 3, 1")
    expect(field).to_have_value("Nobody look at my cards")
    assert focused(alice) == "id_text"
    assert not_reloaded(alice)
    fits(alice, device)


# --- refused -------------------------------------------------------------------------------------


def test_a_refused_message_says_why_and_keeps_its_text(open_as, game, device):
    alice = open_as("alice", game)
    error = alice.locator("main > [role=alert]")
    text = "blah " * (MESSAGE_CHARS // 5) + "and one more"  # past maxlength: as a script would
    alice.select_option("#id_to", "ochre")
    alice.evaluate(
        "text => { const t = document.getElementById('id_text');"
        " t.removeAttribute('maxlength'); t.value = text; }",
        text,
    )
    alice.click("#chat-send")
    alice.wait_for_url("**/games/*/#chat")
    expect(error).to_contain_text("Not sent")
    expect(error).to_contain_text(f"at most {MESSAGE_CHARS} characters")
    expect(alice.locator("#id_text")).to_have_value(text)
    expect(alice.locator("#id_to")).to_have_value("ochre")
    expect(talk(alice)).to_contain_text("No messages yet")
    fits(alice, device)

    alice.reload()  # kept once: the next load has an empty form
    expect(alice.locator("#id_text")).to_have_value("")
    expect(error).to_have_count(0)

    # A colour the list does not offer, as a crafted form would send.
    alice.evaluate("() => document.getElementById('id_to').add(new Option('Grey', 'grey'))")
    write(alice, "Psst, grey.", to="grey")
    expect(error).to_contain_text("Not sent: Grey is not a player you can write to")
    expect(alice.locator("#id_text")).to_have_value("Psst, grey.")
    expect(alice.locator("#id_to")).to_have_value("")  # back to the list's choices
    expect(talk(alice)).to_contain_text("No messages yet")
    assert not Message.objects.exists()


# --- muting -------------------------------------------------------------------------------------


def test_muting_a_player_hides_their_messages_on_the_muter_s_page(
    open_as, game, bob, charlie, device
):
    chat.post(game.pk, charlie.pk, "Lilac speaks first.")
    alice = open_as("alice", game)
    expect(talk(alice)).to_contain_text("Lilac speaks first.")

    alice.click("#chat-mute summary")
    alice.click("#mute-lilac")
    alice.wait_for_url("**/games/*/#chat")
    expect(alice.locator("main > [role=alert]")).to_contain_text(
        "You no longer read the messages of lilac"
    )
    expect(talk(alice)).not_to_contain_text("Lilac speaks")
    expect(alice.locator("#mute-lilac")).to_contain_text("Read Charlie (lilac) again")
    alice.evaluate("window.notReloaded = true")

    chat.post(game.pk, charlie.pk, "Lilac speaks again.")
    chat.post(game.pk, bob.pk, "Ochre speaks after lilac.")
    expect(talk(alice)).to_contain_text("Ochre speaks after lilac.", timeout=WAIT)
    expect(talk(alice)).not_to_contain_text("Lilac speaks")
    assert not_reloaded(alice)
    fits(alice, device)

    alice.click("#chat-mute summary")
    alice.click("#mute-lilac")  # and read them again: all of them
    alice.wait_for_url("**/games/*/#chat")
    expect(talk(alice)).to_contain_text("Lilac speaks first.")
    expect(talk(alice)).to_contain_text("Lilac speaks again.")


# --- a phone ------------------------------------------------------------------------------------


@pytest.mark.parametrize("device", [PHONE], ids=["phone"])
def test_on_a_phone_the_talk_fits_the_screen_and_its_form_is_usable(
    open_as, game, bob, charlie, device
):
    # Long words and long headings must wrap, not widen the page.
    chat.post(game.pk, bob.pk, "W" * MESSAGE_CHARS)
    chat.post(
        game.pk, charlie.pk, "https://example.org/" + "a-very-long-path/" * 20, to_colour="red"
    )
    page = open_as("alice", game)
    expect(talk(page).locator(".chat-line")).to_have_count(2)
    assert page_width(page) <= SCREEN
    assert page.evaluate(
        "(l => l.scrollWidth <= l.clientWidth)(document.querySelector('.chat-list'))"
    )  # wrapped, not scrolled
    for selector in ("#id_to", "#id_text", "#chat-send", "#chat-mute summary"):
        box = page.locator(selector).bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= SCREEN, selector
        if selector != "#chat-mute summary":
            assert box["height"] >= 24, selector  # big enough to tap
    page.locator("#id_text").tap()
    assert focused(page) == "id_text"
    page.keyboard.type("Tapped and typed on a phone.")
    page.locator("#chat-send").tap()
    page.wait_for_url("**/games/*/#chat")
    expect(talk(page)).to_contain_text("Tapped and typed on a phone.")
    assert page_width(page) <= SCREEN
