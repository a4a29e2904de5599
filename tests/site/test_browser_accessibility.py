"""Every page, on a desktop and 360 px wide, audited by axe-core (no serious or critical
finding) and measured (every tap target at least 44x44 CSS px, inline links exempt:
tests/site/audit.py says why), issue 24 item 2.

The pages: a visitor's (lobby, log in, sign up, password reset, archive, a game watched,
a broken email link, the errors), a player's (lobby, new game, profile, notifications, a
variable set-up's placement), and one game walked from its first phase to the archive:
its page in each kind of phase as the player the phase waits for, its history (the whole
log and a past phase), its page once finished, and the archive's list, game and step.
Each test audits both screens, so that a game is played once for both. Run with `-s` to
print each page's figures (issue 24's note quotes them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
from django.contrib.auth.models import User
from django.template.loader import render_to_string
from playwright.sync_api import Page

from games.models import Game
from tests.site import audit, test_browser_phone
from tests.site.test_browser_phone import PHONE, log_in
from tests.site.test_deadlines import play_one_phase, seeded_game
from tests.site.test_game_page import fresh

DESKTOP = {"viewport": {"width": 1280, "height": 900}}
VIEWPORTS = {"desktop": DESKTOP, "phone": PHONE}
# The kinds of phase the game page is audited in, as the player the phase waits for
# (RULES 3, 4.1, 4.2, 5, 6); a variable set-up's placement (2.3) in the player's pages.
PHASE_KINDS = {"decision", "negotiation", "duel", "perform", "crown"}
ERROR_PAGES = ("400.html", "403.html", "403_csrf.html", "500.html", "errors/429.html")
MAX_PHASES = 400
placing_game = test_browser_phone.placing_game  # a fixture: a variable set-up's placement


@dataclass
class Audit:
    """The same pages on both screens; each page's findings and small targets, reported
    together at the end of the test."""

    pages: dict[str, Page]
    findings: dict[str, str] = field(default_factory=dict)
    small: dict[str, list[str]] = field(default_factory=dict)

    def check(self, viewport: str, name: str) -> None:
        page = self.pages[viewport]
        page.wait_for_load_state("load")
        grave = audit.grave_findings(page)
        small = audit.small_targets(page) if viewport == "phone" else []
        print(f"[{viewport}] {name}: axe {audit.counts(grave) or 0}, small targets {len(small)}")
        if grave:
            self.findings[f"[{viewport}] {name}"] = audit.describe(grave)
        if small:
            self.small[f"[{viewport}] {name}"] = small

    def visit(self, path: str, name: str | None = None) -> None:
        for viewport, page in self.pages.items():
            page.goto(path)
            self.check(viewport, name or path)

    def log_in(self, user: User) -> None:
        for page in self.pages.values():
            page.context.clear_cookies()
            log_in(page, user.username)

    def verdict(self) -> None:
        problems = [f"{name}:\n{text}" for name, text in self.findings.items()]
        problems += [f"{name}: targets under 44x44: {s}" for name, s in self.small.items()]
        assert not problems, "\n\n".join(problems)


@pytest.fixture
def auditor(new_page) -> Iterator[Audit]:
    found = Audit({name: new_page(**options) for name, options in VIEWPORTS.items()})
    yield found
    found.verdict()


def test_a_visitor_s_pages(auditor: Audit, game: Game):
    for path in ["/", "/accounts/login/", "/accounts/signup/", "/accounts/password_reset/"]:
        auditor.visit(path)
    auditor.visit("/archive/")
    auditor.visit("/rules/", "the rules")
    auditor.visit("/rules/how-to-win/", "how to win")
    auditor.visit(f"/games/{game.pk}/", "a game watched")
    auditor.visit("/no-such-page/", "404")
    auditor.visit("/m/not-a-link/", "a broken email link")


def test_the_error_pages(auditor: Audit, db):
    """The pages no visit reaches on purpose, drawn as the site draws them."""
    for viewport, page in auditor.pages.items():
        page.goto("/")
        for template in ERROR_PAGES:
            page.set_content(render_to_string(template, {"request": None}))
            auditor.check(viewport, template)


def test_a_player_s_pages(auditor: Audit, placing_game: Game, alice):
    auditor.log_in(alice)
    for path in ["/", "/games/new/", "/accounts/profile/", "/accounts/notifications/"]:
        auditor.visit(path)
    placer = placing_game.seats.get(colour=placing_game.waiting[0]).user
    auditor.log_in(placer)
    auditor.visit(f"/games/{placing_game.pk}/", "variable set-up: placement")


def _walk(game: Game, at_each_phase: Callable[[Game], None]) -> Game:
    """Plays the game to its end, showing each phase to `at_each_phase` first."""
    for step in range(MAX_PHASES):
        game = fresh(game)
        at_each_phase(game)
        if game.is_finished:
            return game
        play_one_phase(game, step)
    raise AssertionError(f"the game did not end in {MAX_PHASES} phases")


def test_one_game_from_its_first_phase_to_the_archive(auditor: Audit, alice, bob, charlie):
    kinds_left, history_left = set(PHASE_KINDS), [True]

    def look(game: Game) -> None:
        if game.phase_kind in kinds_left and game.waiting:
            kinds_left.discard(game.phase_kind)
            auditor.log_in(game.seats.get(colour=game.waiting[0]).user)
            auditor.visit(f"/games/{game.pk}/", f"game page: {game.phase_kind}")
        if history_left and game.turn >= 2:
            history_left.clear()
            auditor.visit(f"/games/{game.pk}/history/", "the whole log")
            auditor.visit(f"/games/{game.pk}/history/?step=2", "a past phase")

    done = _walk(seeded_game(alice, bob, charlie), look)
    assert not kinds_left and not history_left, "the game missed a page to audit"
    auditor.log_in(alice)
    auditor.visit(f"/games/{done.pk}/", "game page: finished")
    auditor.visit("/archive/", "the archive")
    auditor.visit(f"/archive/{done.pk}/", "a finished game")
    auditor.visit(f"/archive/{done.pk}/?step=5", "a finished game, step 5")
