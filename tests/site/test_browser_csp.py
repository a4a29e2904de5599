"""The Content-Security-Policy holds in a real browser: the pages that script the most
(the lobby, a running game's interactive board) raise no policy violation."""

from __future__ import annotations

from tests.site.conftest import PASSWORD


def test_a_running_game_page_runs_under_the_policy(new_page, game, alice):
    page = new_page()
    problems: list[str] = []
    page.on(
        "console",
        lambda m: (
            problems.append(m.text)
            if m.type == "error" and "Content Security Policy" in m.text
            else None
        ),
    )
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto("/accounts/login/")
    page.fill("#id_username", "alice")
    page.fill("#id_password", PASSWORD)
    page.click("#login")
    page.wait_for_selector("#nav-profile")
    page.goto(f"/games/{game.pk}/")
    page.wait_for_load_state("networkidle")
    assert page.locator("#board").count() == 1
    assert page.evaluate("document.querySelectorAll('script:not([src])').length") == 0
    assert problems == []
