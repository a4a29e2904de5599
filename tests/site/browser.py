"""Debian's Chromium driven by Playwright, for the browser tests (fixtures in conftest).

`npx playwright install` cannot download a browser here, so Playwright drives the
system's /usr/bin/chromium (scripts/services.sh installs it). The flags keep it
headless and quiet: no GPU, no sandbox (CI runs as root), no update or
background traffic, so every request a page makes is one the site asked for.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from playwright.sync_api import Browser, Page, Playwright

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-dev-shm-usage",  # containers often have a tiny /dev/shm; Chromium then crashes
]
TIMEOUT_MS = 10_000  # fail fast: a local page answers in well under a second


def launch(playwright: Playwright) -> Browser:
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)


def record_requests(page: Page) -> list[str]:
    """The URLs of every request `page` makes from now on (the list fills as it goes)."""
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    return urls


def foreign(urls: list[str], server_url: str) -> list[str]:
    """The URLs that are not on the server's host and port (data: URLs are local)."""
    home = urlsplit(server_url).netloc
    return [u for u in urls if not u.startswith(("data:", "blob:")) and urlsplit(u).netloc != home]
