"""A person's page and the leaderboard in Chromium (issue 27): audited by axe-core on a
desktop and 360 px wide with every tap target at least 44x44 CSS px
(tests/site/test_browser_accessibility.py's `Audit`), and walked by keyboard alone: from
the leaderboard to a person's page and on through its pages of finished games."""

from __future__ import annotations

from django.utils import timezone

from games.models import Game, Rating, RatingChange
from games.views.people import FINISHED_PAGE
from tests.site.test_browser_accessibility import Audit, auditor  # noqa: F401 (a fixture)
from tests.site.test_people import table


def rated_history(alice, bob) -> None:
    """Alice and Bob: more finished games than a page holds, each rated; one running."""
    ordinal = 0.0
    for i in range(FINISHED_PAGE + 3):
        game = table(
            f"Duel {i:02}",
            alice,
            bob,
            status=Game.Status.FINISHED,
            finished_at=timezone.now(),
            winners=["red" if i % 3 else "ochre"],
        )
        ordinal += 1.5 if i % 3 else -1.0
        RatingChange.objects.create(game=game, user=alice, place=1, mu=25, sigma=5, ordinal=ordinal)
    table("Still going", alice, bob)
    Rating.objects.create(user=alice, mu=25, sigma=5, ordinal=ordinal, games=FINISHED_PAGE + 3)
    Rating.objects.create(user=bob, mu=20, sigma=5, ordinal=5, games=FINISHED_PAGE + 3)


def test_the_person_page_and_the_leaderboard_pass_the_audit(auditor: Audit, alice, bob):  # noqa: F811
    rated_history(alice, bob)
    auditor.visit("/leaderboard/", "the leaderboard")
    auditor.visit(f"/people/{alice.pk}/", "a person's page")
    auditor.visit(f"/people/{alice.pk}/?finished=2", "a person's older games")
    auditor.log_in(alice)
    auditor.visit(f"/people/{alice.pk}/", "one's own page")


def test_the_pages_work_by_keyboard(page, alice, bob):
    rated_history(alice, bob)
    page.goto("/leaderboard/")
    link = page.locator("#leaderboard a", has_text="Alice")
    for _ in range(40):  # Tab until the link has the focus, as a keyboard user would
        page.keyboard.press("Tab")
        if link.evaluate("a => a === document.activeElement"):
            break
    page.keyboard.press("Enter")
    page.wait_for_url(f"**/people/{alice.pk}/")
    assert page.locator("#person-name").inner_text() == "Alice"
    assert page.locator("#rating-chart svg polyline.rating-line").count() == 1
    assert page.locator("#finished-games tbody tr").count() == FINISHED_PAGE

    page.locator("#finished-next").focus()
    page.keyboard.press("Enter")
    page.wait_for_url("**finished=2**")
    assert page.locator("#finished-games tbody tr").count() == 3
    assert page.locator("#running-games tbody tr").count() == 1
