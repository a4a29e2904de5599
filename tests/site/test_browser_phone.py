"""Phones (issue 10, item 4; issue 24): every page works 360 px wide in Chromium. Nothing
is wider than the screen, the navigation folds behind a button, the board of a player with
a move to make pans in a frame as wide as the screen with cells a thumb can tap (a board
only watched scales to the width), and the forms sit below the board."""

from __future__ import annotations

import pytest
from django.utils import timezone

from games import services
from games.models import Game
from tests.site import audit
from tests.site.conftest import PASSWORD, three_player_game
from tests.site.test_archive import finished_game

PHONE = {
    "viewport": {"width": 360, "height": 740},
    "is_mobile": True,
    "has_touch": True,
    "device_scale_factor": 2,
}


def page_width(page) -> int:
    return page.evaluate("document.documentElement.scrollWidth")


def log_in(page, username: str) -> None:
    page.goto("/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("#login")
    page.wait_for_url("**/")


@pytest.fixture
def placing_game(alice, bob) -> Game:
    """A two-player game in its first phase: its start player (drawn from the game's
    seed, so either seat) places a castle and a knight."""
    game = services.create_game(
        alice,
        name="Phone game",
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


def test_the_navigation_folds_behind_a_button(new_page, alice):
    page = new_page(**PHONE)
    log_in(page, "alice")
    assert page.locator("#nav-logout").is_hidden()
    page.click("#nav-toggle")
    page.locator("#nav-logout").wait_for(state="visible")
    box = page.locator("#nav-logout").bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 360


@pytest.mark.parametrize("path", ["/", "/accounts/login/", "/accounts/signup/", "/archive/"])
def test_public_pages_fit_the_screen(new_page, db, path):
    page = new_page(**PHONE)
    page.goto(path)
    assert page_width(page) <= 360, path


def test_a_player_s_pages_fit_the_screen(new_page, placing_game, alice):
    page = new_page(**PHONE)
    log_in(page, "alice")
    for path in [
        "/",
        "/games/new/",
        "/accounts/profile/",
        "/accounts/notifications/",
        f"/games/{placing_game.pk}/",
    ]:
        page.goto(path)
        assert page_width(page) <= 360, path


def test_the_board_pans_with_thumb_sized_cells_and_the_form_is_below_it(new_page, placing_game):
    """Issue 24: the board of a player who has a move to make is drawn with 44x44 CSS px
    cells and pans sideways inside a frame as wide as the screen."""
    # RULES.md 2.3: the placement starts with the start player, whom the seed draws;
    # only the player the phase waits for has legal cells to tap.
    placer = placing_game.seats.get(colour=placing_game.waiting[0]).user
    page = new_page(**PHONE)
    log_in(page, placer.username)
    page.goto(f"/games/{placing_game.pk}/")
    frame = page.locator("#board-wrap").bounding_box()
    assert frame is not None and frame["width"] <= 360
    sizes = page.evaluate(audit.TARGET_SIZES)
    assert len(sizes) == 150 and min(min(w, h) for w, h in sizes) >= audit.TAP
    legal = page.locator("#board [data-cell].legal").last  # far right: panned to
    cell = legal.get_attribute("data-cell")
    legal.tap()
    fields = page.locator("[data-board-target]")
    assert cell in [fields.nth(i).input_value() for i in range(fields.count())]
    form = page.locator("form.play-form, #move-text").first.bounding_box()
    assert form is not None and form["y"] >= frame["y"] + frame["height"]
    assert page_width(page) <= 360


def test_a_running_game_and_an_archived_one_fit_the_screen(new_page, alice, bob, charlie):
    running = three_player_game(alice, bob, charlie)
    done = finished_game(alice, bob, player_count=2, seed=3, name="Done", finished=timezone.now())
    page = new_page(**PHONE)
    log_in(page, "alice")
    for path in [
        f"/games/{running.pk}/",
        f"/archive/{done.pk}/",
        f"/archive/{done.pk}/?step=5",
        "/",
        "/archive/",
    ]:
        page.goto(path)
        assert page_width(page) <= 360, path
