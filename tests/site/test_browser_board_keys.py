"""The board for thumbs, keyboards and screen readers (issue 24, item 2), in Chromium.

The position: the seeded 3-player game of tests/site/test_deadlines.py in its first
perform phase, where the start player places walls (RULES 5.1) and the wall field is the
form's default. A cell tapped or chosen with Enter then opens its sheet: a 44x44 px
button for each of its sides, which fills the wall field like a click on the thin edge
does on a desktop. The cells are buttons named "F7, forest, red knight", reached with Tab
and moved between with the arrow keys.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page

from engine.notation import format_cell
from games.models import Game
from tests.site import audit
from tests.site.test_browser_accessibility import DESKTOP
from tests.site.test_browser_phone import PHONE, log_in
from tests.site.test_deadlines import play_until, seeded_game


def placing_walls(game: Game) -> bool:
    return game.phase_kind == "perform" and game.engine_state.phase.action.startswith("W")


@pytest.fixture
def walls_game(alice, bob, charlie) -> Game:
    return play_until(seeded_game(alice, bob, charlie), placing_walls, "a walls action")


def open_game(new_page, game: Game, options: dict) -> Page:
    page = new_page(**options)
    log_in(page, game.seats.get(colour=game.waiting[0]).user.username)
    page.goto(f"/games/{game.pk}/")
    return page


def legal_walls(page: Page) -> list[str]:
    return page.eval_on_selector_all(
        "#board [data-wall][data-legal]", "els => els.map(e => e.getAttribute('data-wall'))"
    )


def test_a_thumb_sets_a_wall_through_a_cell_s_sheet(new_page, walls_game: Game):
    page = open_game(new_page, walls_game, PHONE)
    wall = legal_walls(page)[0]
    one, two = wall.split("/")
    # The thin edge takes no tap on a phone: what a thumb hits there is a cell.
    assert (
        page.eval_on_selector(
            f'#board [data-wall="{wall}"]', "e => getComputedStyle(e).pointerEvents"
        )
        == "none"
    )
    page.locator(f'#board [data-cell="{one}"]').tap()
    sheet = page.locator("#board-sheet")
    sheet.wait_for(state="visible")
    buttons = sheet.locator("button")
    sizes = [buttons.nth(i).bounding_box() for i in range(buttons.count())]
    assert all(b and b["width"] >= audit.TAP and b["height"] >= audit.TAP for b in sizes)
    side = sheet.locator(f'[data-choice="{wall}"]')
    assert two in side.inner_text() or one in side.inner_text()
    side.tap()
    assert page.input_value("[data-board-kind=wall]") == wall
    assert side.get_attribute("aria-pressed") == "true"
    side.tap()  # a second tap takes it out again
    assert page.input_value("[data-board-kind=wall]") == ""
    page.locator("#board-sheet-close").tap()
    assert sheet.is_hidden()


def test_the_keyboard_plays_the_whole_board(new_page, walls_game: Game):
    page = open_game(new_page, walls_game, DESKTOP)
    wall = legal_walls(page)[0]
    one = wall.split("/")[0]
    board = page.locator("#board")
    board.locator("[data-cell][tabindex='0']").focus()  # what Tab reaches: one cell
    assert board.locator("[data-cell][tabindex='0']").count() == 1
    start = page.evaluate("document.activeElement.getAttribute('data-cell')")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowDown")
    moved = page.evaluate("document.activeElement.getAttribute('data-cell')")
    column, row = re.fullmatch(r"([A-Z]+)(\d+)", start).groups()  # type: ignore[union-attr]
    assert moved == f"{chr(ord(column) + 1)}{int(row) + 1}"
    assert board.locator("[data-cell][tabindex='0']").get_attribute("data-cell") == moved
    # Walk to the cell beside the wall with the arrow keys, then Enter opens its sheet.
    walk_to(page, one)
    page.keyboard.press("Enter")
    sheet = page.locator("#board-sheet")
    sheet.wait_for(state="visible")
    assert sheet.locator("#board-sheet-title").inner_text().startswith(f"{one}, ")
    sheet.locator(f'[data-choice="{wall}"]').focus()
    page.keyboard.press("Enter")
    assert page.input_value("[data-board-kind=wall]") == wall
    page.keyboard.press("Escape")
    assert sheet.is_hidden()
    assert page.evaluate("document.activeElement.getAttribute('data-cell')") == one


def walk_to(page: Page, cell: str) -> None:
    """Arrow keys from the focused cell to `cell` (columns A-O, rows 1-10)."""
    here = page.evaluate("document.activeElement.getAttribute('data-cell')")
    dx = ord(cell[0]) - ord(here[0])
    dy = int(cell[1:]) - int(here[1:])
    for _ in range(abs(dx)):
        page.keyboard.press("ArrowRight" if dx > 0 else "ArrowLeft")
    for _ in range(abs(dy)):
        page.keyboard.press("ArrowDown" if dy > 0 else "ArrowUp")
    assert page.evaluate("document.activeElement.getAttribute('data-cell')") == cell


def test_a_screen_reader_hears_each_cell_s_terrain_and_pieces(new_page, walls_game: Game):
    """The board is a group of 150 buttons, each named by its cell, terrain and pieces;
    the drawing itself says nothing (aria-hidden)."""
    page = open_game(new_page, walls_game, DESKTOP)
    (x, y), owner = next(iter(walls_game.engine_state.pos.knights.items()))
    cell = format_cell((x, y))
    tree = page.locator("#board").aria_snapshot()
    buttons = [line for line in tree.splitlines() if line.strip().startswith("- button")]
    assert len(buttons) == 150, tree[:500]
    assert len(tree.splitlines()) == 151, "nothing but the group and its cells"
    name = page.get_attribute(f'#board [data-cell="{cell}"]', "aria-label")
    assert name and name.startswith(f"{cell}, ") and f"{owner} knight" in name
