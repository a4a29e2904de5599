"""What the game page keeps between requests, and the queries it saves (issue 11), never
at the cost of what a viewer sees: the board's terrain drawn once per layout (no
viewer's marks in it), the forms drawn once per signature (no viewer's words or choices
shared), the pending submissions, the table talk, the "your move" count and the
archive's step list each in one query."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.models import Q
from django.template import Context, Template
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from engine.game import default_move, new_game
from engine.serialize import state_from_json
from engine.setup import Settings
from engine.view import view
from games import chat, services
from games.context_processors import my_games, your_move_count
from games.forms import MessageForm
from games.models import Game, Seat, Snapshot
from games.play_forms import DecisionForm, MoveTextForm
from games.show import board_svg
from games.show.presenter import present
from games.templatetags import kept_forms
from games.views.archive import pick_step
from games.views.lists import my_games_in_order
from tests.engine_helpers import Play
from tests.engine_helpers import game as engine_game
from tests.site.conftest import three_player_game


def drawn_fresh(v: dict, **options) -> str:
    """The board drawn with nothing kept from before."""
    board_svg._layout.cache_clear()
    return board_svg.render_board(v, **options)


# --- the board -----------------------------------------------------------------------------


def test_the_kept_terrain_never_carries_one_viewer_s_marks_to_another():
    play = Play(engine_game(cards=("W2 S1 M5",)))
    s, a, b = play.order
    play.decide({s: "decide 1, 3", a: "decide 2", b: "decide 3"})
    performer, other = view(play.state, s), view(play.state, a)
    assert performer["board"] == other["board"]  # one layout, kept once
    mine = board_svg.render_board(performer, interactive=True)
    theirs = board_svg.render_board(other, interactive=True)  # from what was kept
    assert 'class="edge legal"' in mine  # the performer's legal walls are marked
    assert "data-legal" not in theirs and " legal" not in theirs
    assert board_svg.render_board(performer, interactive=True) == mine
    assert theirs == drawn_fresh(other, interactive=True)
    assert mine == drawn_fresh(performer, interactive=True)


def test_a_kept_board_is_drawn_as_a_fresh_one_for_every_viewer_and_phase():
    state = new_game(Settings(players=("red", "ochre", "lilac", "grey"), setup="variable", seed=11))
    for colour in (None, *state.players):
        v = view(state, colour)
        kept = board_svg.render_board(v, interactive=True, element_id="board")
        assert kept == drawn_fresh(v, interactive=True, element_id="board")
        assert board_svg.render_board(v) == drawn_fresh(v)


def test_two_layouts_are_kept_apart():
    one, two = (
        view(new_game(Settings(players=("red", "ochre", "lilac"), seed=seed)), None)
        for seed in (1, 2)
    )
    assert one["board"] != two["board"]
    assert board_svg.render_board(one) != board_svg.render_board(two)
    assert board_svg.render_board(two) == drawn_fresh(two)


# --- the forms -----------------------------------------------------------------------------


def crispy(form) -> str:
    return Template("{% load crispy_forms_tags %}{{ form|crispy }}").render(Context({"form": form}))


def kept(form) -> str:
    return Template("{% load kept_forms %}{{ form|crispy_kept }}").render(Context({"form": form}))


def test_a_kept_form_is_drawn_as_crispy_draws_it(game):
    v = view(game.engine_state, "red")
    for form in (
        DecisionForm(view=v, action="/x", phase_number=3),
        MoveTextForm(view=v, action="/x", phase_number=3),
    ):
        assert kept(form) == crispy(form)
        assert kept(form) == crispy(form)  # the second time, from what was kept


def test_forms_that_differ_in_what_they_offer_are_kept_apart(game):
    v = view(game.engine_state, "red")
    plain = DecisionForm(
        view={**v, "ask": {**(v.get("ask") or {}), "politics": []}}, action="/x", phase_number=3
    )
    richer = DecisionForm(
        view={**v, "ask": {**(v.get("ask") or {}), "politics": ["renegade"]}},
        action="/x",
        phase_number=3,
    )
    assert kept_forms.signature(plain) != kept_forms.signature(richer)
    assert kept(plain) == crispy(plain) and kept(richer) == crispy(richer)
    assert "Renegade" in kept(richer) and "Renegade" not in kept(plain)


def test_a_message_form_lists_each_viewer_s_own_addressees(game):
    seats = list(game.seats.select_related("user__profile"))
    by_colour = {s.colour: s for s in seats}
    for me in seats:
        form = MessageForm(seats, me)
        html = kept(form)
        assert html == crispy(form)
        assert html == Template("{% load crispy_forms_tags %}{% crispy form %}").render(
            Context({"form": form})
        )  # the page's tag, which the kept filter replaced
        assert f"({me.colour}) only" not in html
        others = [c for c in by_colour if c != me.colour]
        assert all(f"({c}) only" in html for c in others)


def test_a_bound_form_or_a_draft_is_never_kept(game):
    seats = list(game.seats.all())
    draft = MessageForm(seats, seats[0], initial={"text": "a secret plan"})
    bound = MoveTextForm({"move": "decide 1"}, view=view(game.engine_state, "red"))
    assert kept_forms.signature(draft) is None and kept_forms.signature(bound) is None
    assert "a secret plan" in kept(draft)
    assert not any("a secret plan" in html for html in kept_forms._kept.values())


# --- queries ---------------------------------------------------------------------------------


def test_the_pending_submissions_are_one_query_and_only_mine_is_read(game):
    seats = {s.colour: s for s in game.seats.all()}
    for colour in ("red", "ochre"):
        services.submit(game.pk, seats[colour].pk, default_move(game.engine_state, colour))
    game = Game.objects.get(pk=game.pk)
    shown = present(game, seats["red"])
    with CaptureQueriesContext(connection) as captured:
        mine, who = shown.my_pending(), shown.submitted()
    assert len(captured) == 1
    assert mine and who == {"red", "ochre"}
    assert all(text is None for colour, text in shown._stored if colour != "red")
    assert present(game, None).my_pending() is None


def test_the_table_talk_is_one_query_with_the_page_s_seats(game, alice, bob):
    chat.post(game.pk, alice.pk, "Hello table")
    chat.post(game.pk, bob.pk, "Only for you", to_colour="red")
    loaded = Game.objects.prefetch_related("seats__user__profile").get(pk=game.pk)
    red = next(s for s in loaded.seats.all() if s.colour == "red")
    with CaptureQueriesContext(connection) as captured:
        lines = [chat.heading(m, red) for m in chat.for_page(loaded, red)]
    assert len(captured) == 1
    assert lines == ["You to everyone", "Bob (ochre) to you only"]


def test_the_count_of_your_move_is_one_query_and_the_lobby_s_rule(alice, bob, charlie):
    games = [three_player_game(alice, bob, charlie, name=f"Game {n}") for n in range(3)]
    seat = Seat.objects.get(game=games[0], colour="red")
    services.submit(games[0].pk, seat.pk, default_move(games[0].engine_state, "red"))
    with CaptureQueriesContext(connection) as captured:
        count = your_move_count(alice)
    assert len(captured) == 1
    assert count == 2 == sum(g.my_turn for g in my_games_in_order(alice))
    assert your_move_count(bob) == 3 == my_games(bob).filter(Q(my_turn=True)).count()


@pytest.mark.parametrize("raw", ["0", "1", "2", "-4", "99999", "x", None, "9" * 40])
def test_the_step_list_and_the_step_s_state_come_in_one_query(game, raw):
    for colour in ("red", "ochre", "lilac"):  # a few phases: several snapshots
        seat = Seat.objects.get(game=game, colour=colour)
        services.submit(
            game.pk, seat.pk, default_move(Game.objects.get(pk=game.pk).engine_state, colour)
        )
    services.resolve(game.pk, Game.objects.get(pk=game.pk).phase_number)
    game = Game.objects.get(pk=game.pk)
    snapshots = list(Snapshot.objects.filter(game=game).order_by("phase_number"))
    assert len(snapshots) >= 2
    with CaptureQueriesContext(connection) as captured:
        steps, index, state = pick_step(game, raw)
    assert len(captured) == 1
    assert [s.phase_number for s in steps] == [s.phase_number for s in snapshots]
    try:
        wanted = int(raw or "0")
    except ValueError:
        wanted = 0
    assert index == min(max(wanted, 0), len(snapshots) - 1)
    assert state == state_from_json(snapshots[index].state)


def test_an_invite_only_game_page_is_still_a_404_to_outsiders(alice, bob, charlie, dave):
    private = three_player_game(alice, bob, charlie, invite_only=True)
    outsider = Client()
    outsider.force_login(dave)
    assert outsider.get(reverse("game", args=[private.pk])).status_code == 404
    assert Client().get(reverse("game", args=[private.pk])).status_code == 404
    player = Client()
    player.force_login(bob)
    assert player.get(reverse("game", args=[private.pk])).status_code == 200
