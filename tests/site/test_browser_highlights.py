"""The board highlights only what is legal for the field being filled (issue 10, item 5),
in Chromium, on a desktop and on a phone: the engine's legal targets of each kind
(`engine.view.ask`), as games.show.board_svg marks them and games/static/games/board.js
shows them for the focused field.

The position: a basic 3-player game whose first action card is planted as `S2 W2 M5`;
the start player (drawn from the seed: logged in as whoever the game waits for) takes
`S2` alone and performs it holding 3 ducats and no Treasure card, so the forests next
to their knights are no knight target (RULES 5.2: the forest fee is 5 ducats; 7.3).
Their region can expand (RULES 5.3) into cells that are no knight cells.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from playwright.sync_api import Page

from engine import rules
from engine.board import FOREST, format_cell
from engine.moves import Choice, Decide
from engine.view import ask
from games import services
from games.models import Game, Seat
from tests.site.conftest import three_player_game
from tests.site.test_browser_phone import PHONE, log_in
from tests.site.test_game_page import fresh, plant

DESKTOP = {"viewport": {"width": 1280, "height": 900}}
VIEWPORTS = {"desktop": DESKTOP, "phone": PHONE}
DUCATS = 3  # fewer than the forest fee (RULES 5.2)


def seat_of(game: Game, colour: str) -> Seat:
    return Seat.objects.get(game=game, colour=colour)


@pytest.fixture
def performing(alice, bob, charlie) -> Game:
    """The game waiting for its start player to perform `S2` with 3 ducats."""
    game = three_player_game(alice, bob, charlie)
    start = game.engine_state.start_player

    def stack(state) -> None:
        state.card = "S2 W2 M5"  # the revealed card of turn 1 (RULES 3.1)
        state.pos.players[start].ducats = DUCATS

    plant(game, stack)
    game = fresh(game)
    for colour in game.waiting:  # RULES 3.2: the start player chooses two cards
        cards = (1, 3) if colour == start else (2,)
        services.submit(
            game.pk,
            seat_of(game, colour).pk,
            Decide(tuple(Choice(n) for n in cards)),
            game.phase_number,
        )
    services.resolve(game.pk, game.phase_number)
    game = fresh(game)
    assert game.phase_kind == "perform" and game.waiting == [start]
    assert game.engine_state.phase.action == "S2"
    return game


def names(cells) -> set[str]:
    return {format_cell((x, y)) for x, y in cells}


@pytest.fixture
def targets(performing: Game) -> dict[str, set[str]]:
    """What the engine says, by kind, and the forests it must leave out."""
    state = performing.engine_state
    player = state.phase.waiting[0]
    asked = ask(state, player)
    forests = {
        c
        for c in rules.legal_knight_cells(state.pos, player)
        if state.pos.board.terrain(c) == FOREST
    }
    found = {
        "knight": names(asked["knights"]),
        "expansion": names(asked["expansions"]),
        "region": names(asked["expanding"]),
        "forest": names(forests),
    }
    # The position tests what it should: forests to leave out, expansion-only cells.
    assert found["forest"] and found["knight"] and found["region"]
    assert found["expansion"] - found["knight"]
    return found


@dataclass
class Screen:
    """The player's game page; `touch` taps on a phone and clicks on a desktop."""

    page: Page
    phone: bool

    def touch(self, selector: str) -> None:
        target = self.page.locator(selector)
        if self.phone:
            target.tap()
        else:
            target.click()

    def highlighted(self) -> set[str]:
        return set(
            self.page.eval_on_selector_all(
                "#board [data-cell].legal", "els => els.map(e => e.getAttribute('data-cell'))"
            )
        )


@pytest.fixture(params=sorted(VIEWPORTS))
def screen(request, new_page, performing: Game) -> Iterator[Screen]:
    """The waiting player's game page, in a desktop or a phone viewport; no page error
    and no CSP violation on the way."""
    problems: list[str] = []
    page = new_page(**VIEWPORTS[request.param])
    page.on(
        "console",
        lambda m: (
            problems.append(m.text)
            if m.type == "error" and "Content Security Policy" in m.text
            else None
        ),
    )
    page.on("pageerror", lambda error: problems.append(str(error)))
    user = seat_of(performing, performing.waiting[0]).user
    log_in(page, user.username)
    page.goto(f"/games/{performing.pk}/")
    page.wait_for_load_state("networkidle")
    yield Screen(page, phone=request.param == "phone")
    assert problems == []


def test_the_knight_field_highlights_knight_cells_only_and_no_unaffordable_forest(
    screen: Screen, targets: dict[str, set[str]]
):
    assert screen.highlighted() == targets["knight"]  # the default field: knights
    screen.touch("#swords-knights")
    shown = screen.highlighted()
    assert shown == targets["knight"]
    assert not shown & targets["forest"], "a forest the player cannot pay for is highlighted"
    assert not shown & (targets["expansion"] - targets["knight"]), (
        "an expansion cell is highlighted while the knight field is filled"
    )


def test_focusing_the_expansion_field_switches_the_highlights(
    screen: Screen, targets: dict[str, set[str]]
):
    screen.touch("#swords-expand")
    assert screen.highlighted() == targets["expansion"]
    screen.touch("#swords-expand_from")
    assert screen.highlighted() == targets["region"]
    screen.touch("#swords-knights")
    assert screen.highlighted() == targets["knight"]
    # A tap on a highlighted expansion cell fills the expansion field.
    screen.touch("#swords-expand")
    cell = sorted(targets["expansion"])[0]
    screen.touch(f'#board [data-cell="{cell}"]')
    assert screen.page.input_value("#swords-expand") == cell
    assert screen.page.input_value("#swords-knights") == ""


def test_the_text_field_shows_every_target(screen: Screen, targets: dict[str, set[str]]):
    screen.page.locator("#move-text").focus()
    assert screen.highlighted() == targets["knight"] | targets["expansion"] | targets["region"]


def test_running_the_board_script_again_binds_nothing_twice(
    screen: Screen, targets: dict[str, set[str]]
):
    """games/static/games/live.js runs board.js again after it swaps the page: one
    click must still add the cell once (listeners bound twice would add and remove it)."""
    screen.page.evaluate("""() => new Promise((done, failed) => {
        const old = document.querySelector("script[data-live-rerun]");
        const script = document.createElement("script");
        script.src = old.src;
        script.setAttribute("data-live-rerun", "");
        script.onload = done;
        script.onerror = failed;
        old.parentNode.replaceChild(script, old);
    })""")
    cell = sorted(targets["knight"])[0]
    screen.touch(f'#board [data-cell="{cell}"]')
    assert screen.page.input_value("#swords-knights") == cell
    screen.touch("#swords-expand")
    assert screen.highlighted() == targets["expansion"]
