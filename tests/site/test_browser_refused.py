"""A refused move keeps what was typed and ticked (issue 10, item 5), in Chromium at a
desktop and a phone viewport: the decision form with the wrong number of cards ticked,
and the text field with a move the phase refuses. Nothing is stored either way."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from games.models import PendingSubmission
from tests.site.test_browser_phone import PHONE, log_in

VIEWPORTS = {"desktop": {"viewport": {"width": 1280, "height": 900}}, "phone": PHONE}


@pytest.mark.parametrize("screen", sorted(VIEWPORTS))
def test_wrongly_ticked_decision_cards_stay_ticked_after_the_refusal(new_page, game, screen):
    # RULES.md 3.2: in a 3-player game the start player chooses two cards, the others one.
    two = game.engine_state.cards_to_choose("red") == 2
    wrong = ["1"] if two else ["1", "3"]
    page = new_page(**VIEWPORTS[screen])
    log_in(page, "alice")
    page.goto(f"/games/{game.pk}/")
    form = page.locator("#decide-form")
    for card in wrong:
        form.locator(f"input[name=cards][value='{card}']").check()
    form.locator("#decide-submit").click()
    expect(page.locator("[role=alert]").first).to_contain_text("Not accepted")
    form = page.locator("#decide-form")
    for card in ("1", "2", "3"):
        box = form.locator(f"input[name=cards][value='{card}']")
        assert box.is_checked() == (card in wrong), card
    assert not PendingSubmission.objects.exists()


@pytest.mark.parametrize("screen", sorted(VIEWPORTS))
def test_a_refused_move_stays_in_the_text_field(new_page, game, screen):
    page = new_page(**VIEWPORTS[screen])
    log_in(page, "alice")
    page.goto(f"/games/{game.pk}/")
    typed = "walls F7/F8"  # no walls are asked in a decision
    page.fill("#move-text", typed)
    page.locator("#move-submit").click()
    expect(page.locator("[role=alert]").first).to_contain_text("Not accepted")
    assert page.locator("#move-text").input_value() == typed
    assert not PendingSubmission.objects.exists()
