"""The whole history of a game, as its viewer saw it: every event they may read, a page
at a time, and each past phase step by step (`?step=K`): the board and the panels as
they were after that phase, seen through `view(snapshot, their colour)`, the spectator's
view for a spectator.

Nothing here shows more than the game page showed that viewer then: a past state is seen
only through the viewer's `Presentation` (engine.view), the events only through
`Event.objects.visible_to`. A finished game's secrets are the archive's to show.

The log's pages count from the game's start, so that a page keeps its events as the game
grows (a link to page 3 says the same tomorrow); without `?page=` the latest page opens,
where the game page's log leaves off. Who may open it: whoever may open the game page
(`visible_game`), and a session opened by a magic link for this game (its player's own
history; games.middleware).
"""

from __future__ import annotations

from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import Prefetch
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.safestring import mark_safe

from games import chat
from games.models import Game, Seat
from games.show.board_svg import render_board
from games.show.presenter import Presentation, present
from games.show.view_text import hand, sealed_text
from games.show.words import PHASE_NAMES, card_text
from games.views.archive import Step, game_steps, phase_events, pick_step, step_links, within
from games.views.play import _players as power_track
from games.visibility import visible_game

EVENTS_PER_PAGE = 100


def history(request: HttpRequest, game_id: int) -> HttpResponse:
    seats = Seat.objects.select_related("user__profile")
    game = visible_game(
        request,
        Game.objects.defer("state").prefetch_related(Prefetch("seats", queryset=seats)),
        pk=game_id,
    )
    seat = game.seat_for(request.user)
    if "step" in request.GET:
        return _step_page(request, game, seat)
    return _log_page(request, game, seat)


# --- the whole log, paged --------------------------------------------------------------------


def _log_page(request: HttpRequest, game: Game, seat: Seat | None) -> HttpResponse:
    shown = present(game, seat)
    paginator = Paginator(shown.visible_events(), EVENTS_PER_PAGE)
    last = paginator.num_pages
    page = paginator.page(within(request.GET.get("page"), 1, last, default=last))
    runs = _by_phase(shown, page, game_steps(game))
    _add_talk(shown, page, runs)
    return render(
        request,
        "games/history.html",
        {
            "game": game,
            "seat": seat,
            "mode": "log",
            "page": page,
            "page_links": _page_links(game.pk, page),
            "phases": runs,
        },
    )


def _add_talk(shown: Presentation, page: Page, runs: list[dict[str, Any]]) -> None:
    """The table talk the viewer reads, each message after the events of the phase it was
    written in (those that led to that phase: a message of phase P comes after the events
    of phase P, before those of P + 1). A page shows the messages of the phases from its
    first event's (from the start, on the first page) to the next page's first, whose
    messages are that page's: a phase cut by a page shows its talk once, where it ends."""
    first = runs[0]["phase_number"] if runs and page.number > 1 else 0
    following = None
    if page.has_next():
        after = shown.visible_events().filter(index__gt=runs[-1]["lines"][-1].index)
        following = after.values_list("phase_number", flat=True).first()
    upto = None if following is None else following - 1
    for message in chat.for_history(shown.game, shown.seat, first, upto):
        _run_of(runs, message.phase_number, message.turn)["talk"].append(
            {
                "heading": chat.heading(message, shown.seat),
                "turn": message.turn,
                "text": message.text,
                "when": message.created_at,
                "colour": message.sender.colour,
                "private": message.to_seat_id is not None,
            }
        )


def _run_of(runs: list[dict[str, Any]], phase_number: int, turn: int) -> dict[str, Any]:
    """The run of the latest phase at or before `phase_number`; one of its own (talk
    alone) when the page holds none."""
    earlier = [run for run in runs if run["phase_number"] <= phase_number]
    if earlier:
        return earlier[-1]
    run = _run(phase_number, turn, None, "")
    runs.insert(0, run)
    return run


def _run(phase_number: int, turn: int, at: int | None, url: str) -> dict[str, Any]:
    return {
        "phase_number": phase_number,
        "turn": turn,
        "lines": [],
        "talk": [],
        "step": at,
        "kind": "",
        "url": url,
    }


def _by_phase(shown: Presentation, page: Page, steps: list[Step]) -> list[dict[str, Any]]:
    """The page's events in runs of one phase each, with the link to that phase's step."""
    index = {step.phase_number: i for i, step in enumerate(steps)}
    url = reverse("game_history", args=[shown.game.pk])
    runs: list[dict[str, Any]] = []
    for event in page:
        line = shown.line(event)
        if not runs or runs[-1]["phase_number"] != line.phase_number:
            at = index.get(line.phase_number)
            run = _run(
                line.phase_number, line.turn, at, f"{url}?step={at}" if at is not None else ""
            )
            run["kind"] = PHASE_NAMES.get(steps[at].phase_kind, "") if at is not None else ""
            runs.append(run)
        runs[-1]["lines"].append(line)
    return runs


def _page_links(game_id: int, page: Page) -> dict[str, dict[str, Any]]:
    url = reverse("game_history", args=[game_id])
    last = page.paginator.num_pages
    targets = {
        "first": 1,
        "prev": max(page.number - 1, 1),
        "next": min(page.number + 1, last),
        "last": last,
    }
    return {
        name: {"url": f"{url}?page={target}", "disabled": target == page.number}
        for name, target in targets.items()
    }


# --- one past phase ----------------------------------------------------------------------------


def _step_page(request: HttpRequest, game: Game, seat: Seat | None) -> HttpResponse:
    steps, index, state = pick_step(game, request.GET.get("step"))
    step = steps[index]
    shown = present(game, seat, state=state)  # the viewer's view of then, never more
    v = shown.view
    assert v is not None
    return render(
        request,
        "games/history.html",
        {
            "game": game,
            "seat": seat,
            "mode": "step",
            "step": step,
            "index": index,
            "last": len(steps) - 1,
            "links": step_links(game.pk, index, len(steps), "game_history"),
            "v": v,
            "board": mark_safe(render_board(v)),  # render_board escapes what it writes
            "players": power_track(shown, v),
            "hand": hand(v) if v["viewer"] else None,
            "card_text": card_text(v.get("card")),
            "decisions": shown.decisions(),
            "phase_sentence": shown.phase_sentence(),
            "my_sealed": sealed_text(v),
            "seats": list(game.seats.all()),
            "neutral": sorted({c[2] for c in v["castles"]} - set(v["players"])),
            "events": phase_events(shown, step.phase_number),
            "log_url": _log_page_of(shown, step.phase_number),
        },
    )


def _log_page_of(shown: Presentation, phase_number: int) -> str:
    """The log's page that holds this phase's first event the viewer may read."""
    before = shown.visible_events().filter(phase_number__lt=phase_number).count()
    url = reverse("game_history", args=[shown.game.pk])
    return f"{url}?page={before // EVENTS_PER_PAGE + 1}"
