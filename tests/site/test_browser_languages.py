"""A German, an Italian and an English player at one table, in Chromium (issue 23): each
reads the game page, its live updates and the notice of a form left open in their own
language, whatever their browser asks for, and the same page switches language under a
visitor's thumb."""

from __future__ import annotations

import pytest
from django.utils import translation
from django.utils.translation import gettext
from playwright.sync_api import Page, expect

from games.models import Game, Profile
from tests.site.test_browser_live import (
    WAIT,
    fast_polls,  # noqa: F401 - a poll a second in these tests too
    not_reloaded,
    open_as,  # noqa: F401 - the pages, watched for CSP violations
    resolve,
    submit_default,
)

LANGUAGES = {"alice": "de", "bob": "it", "charlie": "en-gb"}


def said(language: str, english: str) -> str:
    with translation.override(language):
        return gettext(english)


@pytest.fixture
def table(game: Game) -> Game:
    for name, language in LANGUAGES.items():
        Profile.objects.filter(user__username=name).update(language=language)
    return game


def test_each_player_reads_the_page_and_its_live_updates_in_their_language(open_as, table):  # noqa: F811
    pages: dict[str, Page] = {}
    for name, language in LANGUAGES.items():
        page = open_as(name, f"/games/{table.pk}/")
        expect(page.locator("html")).to_have_attribute("lang", language)
        expect(page.locator("#phase-text")).to_contain_text(
            said(language, "The players choose their decision cards.")
        )
        pages[name] = page
    assert len({pages[n].locator("#phase-text").inner_text() for n in pages}) == 3

    submit_default(table, "lilac")  # charlie decides: the others' pages tick him off
    for name in ("alice", "bob"):
        charlie = pages[name].locator('#waiting [data-colour="lilac"]')
        expect(charlie).to_contain_text(said(LANGUAGES[name], "submitted"), timeout=WAIT)
        assert not_reloaded(pages[name])


def test_a_form_left_open_is_told_the_game_moved_on_in_its_reader_s_language(open_as, table):  # noqa: F811
    submit_default(table, "red")
    pages = {name: open_as(name, f"/games/{table.pk}/") for name in ("alice", "bob")}
    for page in pages.values():
        page.locator("#move-text").fill("decide 3")
    for colour in ("ochre", "lilac"):
        submit_default(table, colour)
    resolve(table)
    for name, page in pages.items():
        moved = said(LANGUAGES[name], "The game has moved on: %(sentence)s; reload to see it.")
        before = moved.split("%(sentence)s")[0]
        assert before and before != "The game has moved on: "
        expect(page.locator("#live-notice")).to_contain_text(before, timeout=WAIT)
        expect(page.locator("#live-reload")).to_have_text(said(LANGUAGES[name], "Reload"))
        assert page.locator("#move-text").input_value() == "decide 3"


def test_a_visitor_switches_the_page_s_language_with_the_switcher(new_page, table):
    page = new_page(locale="it-IT", extra_http_headers={"Accept-Language": "it-IT,it"})
    page.goto(f"/games/{table.pk}/")
    expect(page.locator("html")).to_have_attribute("lang", "it")
    page.click("#language-de")
    expect(page.locator("html")).to_have_attribute("lang", "de")
    assert page.url.endswith(f"/games/{table.pk}/")
    expect(page.locator("#language-switcher")).to_contain_text(said("de", "Language"))
    box = page.locator("#language-de").bounding_box()
    assert box is not None and box["height"] >= 44 and box["width"] >= 44
