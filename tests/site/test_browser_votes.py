"""The table's vote in Chromium (issue 24, item 4; templates/deadlines/_controls.html), on a
desktop window and a phone 360 px wide: a proposal made and a vote cast with the keyboard
alone, every control of the vote at least 44x44 CSS px, and the proposer's open page
showing the outcome without a reload. The fixtures (sign-in, the device, the checks for
the CSP, script errors and the page's width) are test_browser_chat's.

The game: alice red, bob ochre, charlie lilac; two of three pass a proposal."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from games.models import Game
from tests.site.test_browser_chat import (  # noqa: F401 (fixtures)
    device,
    fast_polls_and_users,
    open_as,
    server,
)
from tests.site.test_browser_live import WAIT, not_reloaded

TAP = 44  # CSS px, each side


def too_small(page: Page, selector: str) -> list[str]:
    """The controls of `selector` smaller than a thumb, with their sizes."""
    small = []
    for control in page.locator(selector).all():
        box = control.bounding_box()
        assert box is not None, selector
        if box["width"] < TAP or box["height"] < TAP:
            small.append(f"{control.get_attribute('id') or control.inner_text()}: {box}")
    return small


def test_a_proposal_and_a_vote_by_keyboard_with_controls_a_thumb_can_hit(
    open_as,  # noqa: F811
    game: Game,
):
    alice = open_as("alice", game)
    controls = ", ".join(
        f"#propose-{kind} {what}"
        for kind in ("extend", "pause")
        for what in ("input:not([type=hidden])", "button")
    )
    assert too_small(alice, controls) == []
    alice.focus("#extend-hours")
    alice.keyboard.press("Control+A")
    alice.keyboard.type("12")
    alice.keyboard.press("Tab")  # to "Propose the extension"
    alice.keyboard.press("Enter")
    expect(alice.locator(".alert-success")).to_contain_text("Proposed", timeout=WAIT)
    expect(alice.locator("#my-vote")).to_have_text("You voted yes.")
    alice.evaluate("window.notReloaded = true")

    bob = open_as("bob", game)
    expect(bob.locator("#vote-proposal")).to_contain_text(
        "Alice asks the table to extend the deadline by 12 hours."
    )
    assert too_small(bob, "#vote-form button") == []
    bob.focus("#vote-form button[value=yes]")
    bob.keyboard.press("Enter")
    expect(bob.locator(".alert-success")).to_contain_text("The table said yes", timeout=WAIT)

    # alice's open page follows: the log says what the table voted, without a reload
    expect(alice.locator("#log")).to_contain_text(
        "The table votes to extend the deadline by 12 hours", timeout=WAIT
    )
    assert not_reloaded(alice)
