"""The archive of finished games. Once a game is over every secret of it is public
(RULES: hands, sealed decisions and bids, the deck), so these pages show each past
position through `view(state, None, reveal=True)` and every event, private ones too.

Pages load a constant number of rows whatever the game's length: the chart reads
only the snapshots' power, and the one step shown is the one state loaded.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.db.models import Case, Count, F, JSONField, Prefetch, Q, QuerySet, When, Window
from django.db.models.functions import RowNumber
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse

from engine.notation import format_move
from engine.serialize import move_from_json, state_from_json
from engine.state import GameState
from engine.view import View
from games import chat
from games.models import Game, Seat
from games.records import game_record, record_filename
from games.show.board_svg import render_board
from games.show.charts import power_chart
from games.show.presenter import Presentation, present
from games.show.transcript import final_scores, transcript
from games.show.words import card_label, card_name, card_text
from games.views.archive_search import ArchiveFilter, page_number, read_page, search
from games.visibility import visible_game, visible_games

MAX_STEP = 10**9  # a `?step=` beyond any game's phases (the last is shown)


def finished_games() -> QuerySet[Game]:
    seats = Seat.objects.select_related("user__profile")
    return (
        Game.objects.filter(status=Game.Status.FINISHED)
        .defer("state")
        .prefetch_related(Prefetch("seats", queryset=seats))
        .order_by("-finished_at", "-pk")
    )


def archive_list(request: HttpRequest) -> HttpResponse:
    """The search (games.views.archive_search): one query for the page's games and one for
    their seats, whatever the filters."""
    form = ArchiveFilter(request.GET)
    games = visible_games(request, finished_games())  # invite-only: its people only
    page = read_page(search(games, form.criteria()), page_number(request.GET.get("page")))
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request, "archive/list.html", {"form": form, "page": page, "query": query.urlencode()}
    )


# --- one game, step by step ------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One snapshot in the list of a game's phases, without its state."""

    phase_number: int
    turn: int
    phase_kind: str
    power: dict[str, int]


def archive_game(request: HttpRequest, game_id: int) -> HttpResponse:
    seats = Seat.objects.select_related("user__profile")
    game = visible_game(
        request,
        Game.objects.defer("state").prefetch_related(Prefetch("seats", queryset=seats)),
        pk=game_id,
        status=Game.Status.FINISHED,
    )
    steps, index, state = pick_step(game, request.GET.get("step"))
    step = steps[index]
    shown = present(game, everything=True, state=state)  # the game is over: no secrets
    v, names = shown.view, shown.names
    assert v is not None
    context = {
        "game": game,
        "step": step,
        "index": index,
        "last": len(steps) - 1,
        "links": step_links(game.pk, index, len(steps)),
        "v": v,
        "deck": [card_label(card) for card in v.get("deck") or []],
        "board": render_board(v),
        "players": [player_row(seat, v, steps[-1].power) for seat in game.seats.all()],
        **step_details(shown, v),
        "events": phase_events(shown, step.phase_number),
        "moves": phase_moves(shown, step.phase_number),
        "winner_names": [shown.name(c) for c in game.winners],
        "chart": power_chart(
            [(i, s.power) for i, s in enumerate(steps)],
            [seat.colour for seat in game.seats.all()],
            marker=index,
            labels=names,
        ),
        # The table talk to everyone (private messages stay private, even now).
        "talk": [
            {
                "heading": chat.heading(m, None),
                "turn": m.turn,
                "text": m.text,
                "colour": m.sender.colour,
            }
            for m in chat.for_archive(game)
        ],
    }
    return render(request, "archive/game.html", context)


def player_row(seat: Seat, shown: View, final: dict[str, int]) -> dict[str, Any]:
    player = shown["players"][seat.colour]
    return {
        **player,
        "seat": seat,
        "final_power": final.get(seat.colour),
        "hand": [card_name(c) for c in player["hand"]],
    }


def step_details(shown: Presentation, v: View) -> dict[str, Any]:
    """What the game waited for, this turn's decisions, any sealed submission and the
    cards still face down."""
    return {
        "phase_text": shown.phase_sentence(),
        "card_text": card_text(v["card"]),
        "decisions": [
            {"colour": c, "name": shown.name(c), "cards": [choice["card"] for choice in choices]}
            for c, choices in v["decisions"].items()
        ],
        "sealed": [
            {"colour": c, "name": shown.name(c), "text": format_move(move_from_json(move))}
            for c, move in v.get("sealed", {}).items()
        ],
        "piles": [[card_name(c) for c in pile] for pile in v["pile_contents"]],
    }


def game_steps(game: Game) -> list[Step]:
    """The game's phases, oldest first, without their states."""
    return [
        Step(*row)
        for row in game.snapshots.values_list("phase_number", "turn", "phase_kind", "power")
    ]


def pick_step(game: Game, raw: str | None) -> tuple[list[Step], int, GameState]:
    """The game's phases, the index `?step=` asks for (kept within them) and the state
    after that phase: the one state a step page loads, read with the list of phases in
    one query (each row numbered in the database; only the chosen row carries its state).
    A game without phases is a 404."""
    wanted = within(raw, 0, MAX_STEP, default=0) + 1  # counting rows from 1
    rows = list(
        game.snapshots.order_by("phase_number")
        .annotate(at=Window(RowNumber(), order_by="phase_number"), steps=Window(Count("*")))
        .annotate(
            chosen=Case(
                When(Q(at=wanted) | Q(at=F("steps"), steps__lt=wanted), then="state"),
                default=None,
                output_field=JSONField(),
            )
        )
        .values_list("phase_number", "turn", "phase_kind", "power", "chosen")
    )
    if not rows:
        raise Http404("this game has no recorded phases")
    index = step_index(raw, len(rows))
    state = rows[index][4]
    assert state is not None, "the chosen row is the step's"
    return [Step(*row[:4]) for row in rows], index, state_from_json(state)


def within(raw: str | None, low: int, high: int, default: int) -> int:
    """A whole number from a query string, kept within low..high; `default` when there
    is none or it is not a number."""
    try:
        wanted = int(raw) if raw else default
    except ValueError:  # not a number, or too many digits to read
        wanted = default
    return min(max(wanted, low), high)


def step_index(raw: str | None, count: int) -> int:
    """`?step=N`, counting from 0, kept within the game; anything else is the first."""
    return within(raw, 0, count - 1, default=0)


def step_links(
    game_id: int, index: int, count: int, url_name: str = "archive_game"
) -> dict[str, dict[str, Any]]:
    """First, previous, next and last `?step=` links of the page `url_name`."""
    url = reverse(url_name, args=[game_id])
    targets = {
        "first": 0,
        "prev": max(index - 1, 0),
        "next": min(index + 1, count - 1),
        "last": count - 1,
    }
    return {
        name: {"url": f"{url}?step={target}", "disabled": target == index}
        for name, target in targets.items()
    }


def phase_events(shown: Presentation, phase_number: int) -> list[dict[str, str]]:
    """Every event that led to this snapshot, those once meant for one player's eyes too."""
    return [
        {"text": e.text, "kind": e.kind, "secret_to": shown.name(e.to_colour) if e.private else ""}
        for e in shown.events(phase_number=phase_number)
    ]


def phase_moves(shown: Presentation, phase_number: int) -> list[dict[str, str]]:
    """The submissions that led to this snapshot: those of the phase before it. Breaking
    an alliance is applied at once, without a new snapshot, so its record entry (like its
    events) carries the number of the phase it was made in."""
    entries = shown.game.record.filter(
        Q(phase_number=phase_number - 1) & ~Q(move__type="EndAlliance")
        | Q(phase_number=phase_number, move__type="EndAlliance")
    )
    return [{"colour": e.colour, "name": shown.name(e.colour), "text": e.text} for e in entries]


# --- the record ---------------------------------------------------------------------------


def finished_game(request: HttpRequest, game_id: int) -> Game:
    """A finished game the reader may see: a running game has no record (its seed and
    moves would tell what its players cannot see yet; games.records)."""
    seats = Seat.objects.select_related("user__profile")
    return visible_game(
        request,
        Game.objects.prefetch_related(Prefetch("seats", queryset=seats)),
        pk=game_id,
        status=Game.Status.FINISHED,
    )


def attachment(response: HttpResponse, game: Game, extension: str) -> HttpResponse:
    response["Content-Disposition"] = f'attachment; filename="{record_filename(game, extension)}"'
    return response


def record_json(request: HttpRequest, game_id: int) -> HttpResponse:
    game = finished_game(request, game_id)
    text = json.dumps(game_record(game), indent=1, ensure_ascii=False)
    return attachment(
        HttpResponse(text, content_type="application/json; charset=utf-8"), game, "json"
    )


def record_text(request: HttpRequest, game_id: int) -> HttpResponse:
    """The record as a transcript to read, in the reader's language."""
    game = finished_game(request, game_id)
    scores = final_scores(game)
    names = {seat.colour: seat.display_name for seat in game.seats.all()}
    context = {
        "game": game,
        "turns": transcript(game),
        "scores": scores,
        "names": [score.name for score in scores],
        "winner_names": [names[c] for c in game.winners],
    }
    text = render_to_string("archive/record.txt", context, request)
    return attachment(HttpResponse(text, content_type="text/plain; charset=utf-8"), game, "txt")
