"""The browser fixtures work: Chromium loads the lobby from the live server, and the
page fetches nothing from anywhere else (Bootstrap and the rest are served locally)."""

from __future__ import annotations

from tests.site.browser import foreign, record_requests


def test_the_lobby_loads_with_nothing_from_outside(page, live_server):
    requested = record_requests(page)
    response = page.goto("/")
    page.wait_for_load_state("networkidle")
    assert response is not None and response.ok
    assert "Löwenherz" in page.title()
    assert "Löwenherz" in page.locator("body").inner_text()
    assert any(url.endswith(".css") for url in requested), requested  # the recorder records
    assert foreign(requested, live_server.url) == []
