"""The rules on the site (issue 24, item 3): the whole rules for players, and a short
page on how to win. Both are open to everyone, a visitor and a session opened by an
email's link alike (games.middleware.OPEN_TO_SCOPED): the help on a game page links here.
Their words are their templates'; their tables and numbers, the engine's
(games.show.rules_text)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from games.show import rules_text


@require_safe
def rules(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "rules/rules.html",
        {
            "facts": rules_text.facts(),
            "headings": rules_text.headings(),
            "deck": rules_text.deck_rows(),
            "founding": rules_text.founding_rows(),
            "politics_piles": rules_text.politics_piles(),
        },
    )


@require_safe
def how_to_win(request: HttpRequest) -> HttpResponse:
    return render(request, "rules/how_to_win.html", {"facts": rules_text.facts()})
