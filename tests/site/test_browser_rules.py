"""The rules on a phone and by keyboard (issue 24, item 3), in Chromium: at 360 px the
rules pages fit the screen and every link to the rules (the contents, the help's
citations, the new-game form's, the navigation's and the footer's) is a target of at least
44 x 44 CSS px; and a citation in the help on the game page, reached with the Tab key and
followed with Enter, opens the rules at its section."""

from __future__ import annotations

from tests.site.test_browser_phone import PHONE, log_in, page_width

TARGET = 44  # CSS px, each way
LINKS = ".rules-link, .rules-contents a, #nav-rules"


def small_targets(page) -> list[str]:
    """The visible rules links smaller than a thumb, with their size."""
    return page.eval_on_selector_all(
        LINKS,
        """(links, least) => links
            .filter(a => a.getClientRects().length)
            .map(a => [a.textContent.trim(), a.getBoundingClientRect()])
            .filter(([, box]) => box.width < least || box.height < least)
            .map(([text, box]) => `${text}: ${box.width}x${box.height}`)""",
        TARGET,
    )


def test_the_rules_pages_fit_a_phone_and_their_links_fit_a_thumb(new_page, game, alice):
    page = new_page(**PHONE)
    log_in(page, "alice")
    page.click("#nav-toggle")
    page.locator("#nav-rules").wait_for(state="visible")
    assert small_targets(page) == []  # the navigation's and the footer's
    for path in ["/rules/", "/rules/how-to-win/", "/games/new/", f"/games/{game.pk}/"]:
        page.goto(path)
        assert page_width(page) <= 360, path
        assert page.locator(LINKS).count() > 0, path
        assert small_targets(page) == [], path


def test_a_citation_in_the_help_opens_the_rules_at_its_section_by_keyboard(page, game, alice):
    log_in(page, "alice")
    page.goto(f"/games/{game.pk}/")
    citation = page.locator("#help a.rules-link[href='/rules/#s3']").first
    for _ in range(200):  # Tab through the page until the citation has the focus
        page.keyboard.press("Tab")
        if citation.evaluate("a => a === document.activeElement"):
            break
    else:
        raise AssertionError("the citation is never reached with the Tab key")
    page.keyboard.press("Enter")
    page.wait_for_url("**/rules/#s3")
    # The browser scrolls to the anchor (smoothly, by Bootstrap's stylesheet): the heading
    # comes into the window.
    page.wait_for_function(
        """() => {
            const box = document.getElementById("s3").getBoundingClientRect();
            return box.top >= 0 && box.bottom <= window.innerHeight;
        }"""
    )
