"""Live pages in Chromium: the game page, the lobby and the navigation's "your move"
count follow the game without a reload (games/static/games/live.js polling
games.views.live), and a move form left open when the phase moves on is kept, with a
notice. The poll is every second here (LIVE_POLL_SECONDS); the tests wait for what the
page shows, with a timeout, never for a time.

Each test also marks the page's window object and checks that the mark survives: the
page changed in place, it was not reloaded. And no page broke the CSP on the way."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Page, Route, expect

from engine.game import default_move
from games import chat, services, watching
from games.mail import notify
from games.models import Game, OutgoingEmail, Seat
from tests.site.browser import record_requests
from tests.site.conftest import three_player_game
from tests.site.test_browser_phone import log_in

WAIT = 15_000  # ms: a poll a second, a page fetched again, a worker-free resolve


@pytest.fixture(autouse=True)
def fast_polls(settings) -> None:
    settings.LIVE_POLL_SECONDS = 1


@pytest.fixture
def open_as(new_page) -> Iterator:
    """`open_as("alice", path)`: a page of alice's, logged in, at `path`, watched for CSP
    violations and errors (checked at the end of the test)."""
    problems: list[str] = []

    def open_page(username: str, path: str) -> Page:
        page = new_page()
        page.on(
            "console",
            lambda m: (
                problems.append(m.text)
                if m.type == "error" and "Content Security Policy" in m.text
                else None
            ),
        )
        page.on("pageerror", lambda error: problems.append(str(error)))
        log_in(page, username)
        page.goto(path)
        page.evaluate("window.notReloaded = true")
        return page

    yield open_page
    assert problems == []


def not_reloaded(page: Page) -> bool:
    return page.evaluate("window.notReloaded === true")


def submit_default(game: Game, colour: str) -> None:
    game = Game.objects.get(pk=game.pk)
    seat = Seat.objects.get(game=game, colour=colour)
    services.submit(game.pk, seat.pk, default_move(game.engine_state, colour))


def resolve(game: Game) -> Game:
    """What the worker would do once everyone is in (no worker runs here)."""
    game = Game.objects.get(pk=game.pk)
    assert services.resolve(game.pk, game.phase_number)
    return Game.objects.get(pk=game.pk)


def test_a_move_shows_on_the_other_players_page(open_as, game):
    page = open_as("alice", f"/games/{game.pk}/")
    bob = page.locator('#waiting [data-colour="ochre"]')
    expect(bob).not_to_contain_text("submitted")
    old_phase = page.locator("#phase-text").inner_text()

    submit_default(game, "ochre")
    expect(bob).to_contain_text("submitted", timeout=WAIT)

    for colour in ("red", "lilac"):
        submit_default(game, colour)
    resolve(game)
    expect(page.locator("#phase-text")).not_to_have_text(old_phase, timeout=WAIT)
    expect(page.locator("#live-game")).to_have_attribute(
        "data-live-phase", str(game.phase_number + 1)
    )
    expect(page.locator("#log")).to_contain_text("Turn")
    assert not_reloaded(page)


def test_a_move_made_before_the_first_poll_is_answered_still_shows(new_page, game):
    """The page's first poll is held until another player has moved: its answer is then
    newer than the page, which must fetch itself (it knows the version it was drawn
    from), not take the answer for what it already shows."""
    page = new_page()
    log_in(page, "alice")
    polls: list[str] = []

    def hold_the_first(route: Route) -> None:
        if not polls:
            submit_default(game, "ochre")  # while the page waits for its first answer
        polls.append(route.request.url)
        route.continue_()

    page.route(re.compile(rf"/games/{game.pk}/live/"), hold_the_first)
    page.goto(f"/games/{game.pk}/")
    page.evaluate("window.notReloaded = true")
    expect(page.locator('#waiting [data-colour="ochre"]')).to_contain_text(
        "submitted", timeout=WAIT
    )
    assert polls and not_reloaded(page)


def test_a_form_left_open_is_kept_and_says_the_game_moved_on(open_as, game):
    submit_default(game, "red")  # alice has decided, and may still change her mind
    page = open_as("alice", f"/games/{game.pk}/")
    field = page.locator("#move-text")
    field.fill("decide 3, 1")

    submit_default(game, "ochre")  # the same phase: the rest of the page follows
    expect(page.locator('#waiting [data-colour="ochre"]')).to_contain_text(
        "submitted", timeout=WAIT
    )
    expect(page.locator("#live-notice")).to_have_count(0)

    submit_default(game, "lilac")
    resolve(game)
    notice = page.locator("#live-notice")
    expect(notice).to_contain_text("The game has moved on", timeout=WAIT)
    expect(notice).to_contain_text("reload to see it")
    expect(page.locator("#live-reload")).to_be_visible()
    assert field.input_value() == "decide 3, 1"
    assert not_reloaded(page)

    page.click("#live-reload")  # the new phase, the form made for it
    expect(page.locator("#live-game")).to_have_attribute(
        "data-live-phase", str(game.phase_number + 1)
    )
    expect(page.locator("#live-notice")).to_have_count(0)


@pytest.fixture
def placing(alice, bob) -> Game:
    """A two-player game in its placements (a castle and a knight each, in turns)."""
    game = services.create_game(
        alice,
        name="Placing",
        player_count=2,
        setup="variable",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=[],
    )
    services.join_game(game.pk, bob, "ochre")
    return Game.objects.get(pk=game.pk)


def test_the_board_still_fills_the_form_after_the_page_changed(open_as, placing):
    game = placing
    while "red" in game.waiting:  # placements until it is not alice's turn
        submit_default(game, "red")
        game = resolve(game)
    page = open_as("alice", f"/games/{game.pk}/")  # nothing asked of her: no form
    expect(page.locator("#board [data-cell].legal")).to_have_count(0)
    while "red" not in game.waiting:  # bob places until the game waits for alice again
        submit_default(game, game.waiting[0])
        game = resolve(game)
    expect(page.locator("#live-game")).to_have_attribute(
        "data-live-phase", str(game.phase_number), timeout=WAIT
    )
    legal = page.locator("#board [data-cell].legal").first
    cell = legal.get_attribute("data-cell")
    legal.click()
    fields = page.locator("[data-board-target]")
    assert cell in [fields.nth(i).input_value() for i in range(fields.count())]
    assert not_reloaded(page)


def test_the_your_move_count_follows_the_games(open_as, alice, bob, charlie):
    game = three_player_game(alice, bob, charlie)
    page = open_as("bob", "/archive/")  # a page with nothing live but the navigation
    badge = page.locator("#nav-your-move")
    expect(badge).to_be_visible()
    expect(page.locator("#your-move-count")).to_have_text("1")

    submit_default(game, "ochre")
    expect(badge).to_be_hidden(timeout=WAIT)

    three_player_game(alice, bob, charlie, name="Second")
    three_player_game(alice, bob, charlie, name="Third")
    expect(badge).to_be_visible(timeout=WAIT)
    expect(page.locator("#your-move-count")).to_have_text("2")
    assert not_reloaded(page)


def test_the_lobby_follows_my_games(open_as, alice, bob, charlie):
    game = services.create_game(
        alice,
        name="Gathering",
        player_count=3,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=[],
    )
    services.join_game(game.pk, bob, "ochre")
    page = open_as("alice", "/")
    row = page.locator(f"#my-game-{game.pk}")
    expect(row).to_contain_text("Gathering players")

    services.join_game(game.pk, charlie, "lilac")  # the third player: the game starts
    expect(row).to_contain_text("Your move", timeout=WAIT)
    expect(page.locator("#your-move-count")).to_have_text("1")

    submit_default(game, "ochre")  # bob is in: the row waits for charlie alone
    expect(row).to_contain_text("also waiting for Charlie)", timeout=WAIT)
    assert not_reloaded(page)


def test_a_page_opened_by_an_emailed_link_follows_its_game_and_mutes_it(new_page, game, alice):
    """Issue 21, item 9: a session a magic link opened polls its game (the page stood
    still before), never the account's count, and its mute button works."""
    from tests.site.test_magic_links import emailed_link

    page = new_page()
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    requests = record_requests(page)
    page.goto(emailed_link(game, alice))  # the link from a real "waits for you" email
    # The page learns its version from its first poll: the move is made after it.
    with page.expect_response(lambda r: urlsplit(r.url).path == f"/games/{game.pk}/live/"):
        page.click("#magic-link-continue")
    page.evaluate("window.notReloaded = true")
    bob = page.locator('#waiting [data-colour="ochre"]')
    expect(bob).not_to_contain_text("submitted")

    submit_default(game, "ochre")
    expect(bob).to_contain_text("submitted", timeout=WAIT)
    assert not_reloaded(page)
    paths = [urlsplit(url).path for url in requests]
    assert f"/games/{game.pk}/live/" in paths
    assert "/live/" not in paths and not [p for p in paths if p.startswith("/accounts/")]

    page.click("#mute-button")
    expect(page.locator("[role=alert]")).to_contain_text("muted", timeout=WAIT)
    assert Seat.objects.get(game=game, user=alice).mail_muted
    assert problems == []


def test_a_page_whose_reader_sees_nothing_new_does_not_fetch_itself(open_as, game):
    """alice muted charlie: his message changes nothing on her page, so the page polls on
    and never fetches itself; bob's message is new to her and is fetched and shown."""
    seats = {s.colour: s for s in Seat.objects.filter(game=game)}
    chat.set_player_muted(seats["red"], "lilac", True)
    page = open_as("alice", f"/games/{game.pk}/")
    requests = record_requests(page)
    path = f"/games/{game.pk}/"

    def count(suffix: str) -> int:
        return sum(urlsplit(u).path == path + suffix for u in requests)

    chat.post(game.pk, seats["lilac"].user_id, "Charlie talks to the table")
    # Three answers: the first may be to a poll sent before his message; a page fetch
    # one of them led to is under way before the next poll (a poll waits for it).
    for _ in range(3):
        with page.expect_response(lambda r: urlsplit(r.url).path == f"{path}live/", timeout=WAIT):
            pass
    assert count("") == 0 and "Charlie talks" not in page.content()

    chat.post(game.pk, seats["ochre"].user_id, "Bob talks to the table")
    expect(page.locator("#chat")).to_contain_text("Bob talks to the table", timeout=WAIT)
    assert count("") >= 1 and not_reloaded(page)


def test_a_phase_that_needs_a_watcher_is_told_by_the_page_not_by_email(open_as, game, alice):
    """Issue 24: alice has the game page open and visible; its polls say so (visible=1),
    and the "waits for you" email of a phase that needs her waits, held, while the page
    shows what is asked of her. bob and charlie, who are not watching, are emailed."""
    path = f"/games/{game.pk}/live/"
    page = open_as("alice", f"/games/{game.pk}/")
    with page.expect_response(lambda r: urlsplit(r.url).path == path, timeout=WAIT) as polled:
        pass
    assert "visible=1" in polled.value.url
    assert watching.seen_at(game.pk, alice.pk) is not None
    notify.phase_changed(game.pk, game.phase_number)
    expect(page.locator("#play")).to_contain_text("Your move")
    mine = OutgoingEmail.objects.filter(user=alice, game=game)
    assert list(mine.values_list("kind", "status")) == [("your_turn_owed", "coalescing")]
    others = OutgoingEmail.objects.filter(game=game, kind="your_turn").exclude(user=alice)
    assert others.count() == 2
