"""Moves tied to their phase (issue 10, item 9), and a refused move that keeps its input
(item 5): every form on the game page says the phase it was made for; a form for a phase
gone by, or one that says none (an old page), is refused under the game's row lock and
changes nothing. Ending an alliance (RULES 7.1: at any time) is for no phase.

alice (red), bob (ochre) and charlie (lilac) play the `game` fixture, a basic sealed game.
"""

from __future__ import annotations

import html
import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from engine.game import Phase
from engine.notation import parse_move
from engine.position import alliance_key
from games import services
from games.models import Game, PendingSubmission, Seat, Snapshot
from games.play_forms import DecisionForm, MoveTextForm
from games.views.play import KEPT, KEPT_VALUES
from tests.site.test_game_page import fresh, plant, play_phases, state_of


@pytest.fixture(autouse=True)
def fast_password_hashing(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


HIDDEN_PHASE = re.compile(
    r'<form id="([\w-]+)"[^>]*>\s*<input[^>]*>'
    r'<input type="hidden" name="form" value="[\w-]+">'
    r'(?:<input type="hidden" name="phase" value="(\d+)">)?'
)


def phases_of_forms(client, user: User, game: Game) -> dict[str, str | None]:
    """Each form of the game page, by id, with the phase its hidden field names."""
    client.force_login(user)
    page = client.get(reverse("game", args=[game.pk])).content.decode()
    return {form_id: number or None for form_id, number in HIDDEN_PHASE.findall(page)}


def plant_phase(game: Game, phase: Phase) -> None:
    """The current phase, set in the game and in its snapshot (which says what each
    phase was)."""
    plant(game, lambda s: setattr(s, "phase", phase))
    game = fresh(game)
    Snapshot.objects.filter(game=game, phase_number=game.phase_number).update(
        state=game.state, phase_kind=phase.kind
    )


def submit(client, user: User, game: Game, data: dict) -> str:
    client.force_login(user)
    response = client.post(reverse("submit", args=[game.pk]), data, follow=True)
    assert response.redirect_chain == [(reverse("game", args=[game.pk]), 302)]
    return html.unescape(response.content.decode())


def cards_for(game: Game, colour: str) -> list[str]:
    return ["2", "3"][: state_of(game).cards_to_choose(colour)]


def next_decision_phase(game: Game) -> Game:
    """Play on (everyone through services, as the site does) to the next turn's decisions."""
    turn = fresh(game).turn
    for _ in range(40):
        game = play_phases(game, 1)
        if game.turn > turn and game.phase_kind == "decision":
            return game
    raise AssertionError("no second decision phase within 40 phases")


def snapshot(game: Game) -> tuple:
    game = fresh(game)
    return (game.phase_number, game.state, list(PendingSubmission.objects.values_list("text")))


# --- every form says its phase ---------------------------------------------------------------


def test_every_form_on_the_page_carries_the_current_phase(client, game, alice):
    plant(game, lambda s: s.pos.alliances.add(alliance_key((1, 0), (13, 0))))
    forms = phases_of_forms(client, alice, game)
    number = str(fresh(game).phase_number)
    assert forms["decide-form"] == number and forms["move-form"] == number
    assert forms["end-alliance-form"] is None  # RULES 7.1: at any time, so for no phase


# --- a form for a phase gone by ----------------------------------------------------------------


def test_a_form_from_a_phase_gone_by_is_refused_and_changes_nothing(client, game, alice):
    made_for = fresh(game).phase_number
    assert phases_of_forms(client, alice, game)["decide-form"] == str(made_for)
    game = next_decision_phase(game)  # the same form would be legal again here
    before = snapshot(game)
    page = submit(
        client,
        alice,
        game,
        {"form": "decide", "phase": str(made_for), "cards": cards_for(game, "red")},
    )
    assert (
        f"This form was for phase {made_for} (decisions, turn 1); the game has moved on "
        f"to phase {game.phase_number} (decisions, turn {game.turn}): nothing was "
        "applied. Here is the game as it is now."
    ) in page
    assert snapshot(game) == before


def test_typed_text_from_a_phase_gone_by_is_refused_too(client, game, alice):
    made_for = fresh(game).phase_number
    game = next_decision_phase(game)
    before = snapshot(game)
    typed = "decide " + ", ".join(cards_for(game, "red"))
    page = submit(client, alice, game, {"form": "move", "move": typed, "phase": str(made_for)})
    assert f"This form was for phase {made_for} (decisions, turn 1)" in page
    assert snapshot(game) == before


def test_a_form_from_the_phase_just_gone_is_refused_with_both_phases_named(client, game, alice):
    plant_phase(game, Phase("perform", waiting=["red"], action="W2"))
    made_for = fresh(game).phase_number
    assert phases_of_forms(client, alice, game)["pass-form"] == str(made_for)
    # The phase resolves (a pass) and the next one asks red again: the old Pass still fits.
    services.submit(game.pk, Seat.objects.get(game=game, user=alice).pk, parse_move("pass"))
    assert services.resolve(game.pk, made_for)
    plant_phase(game, Phase("perform", waiting=["red"], action="S1"))
    before, turn = snapshot(game), fresh(game).turn
    page = submit(client, alice, game, {"form": "pass", "phase": str(made_for)})
    assert (
        f"This form was for phase {made_for} (performing 2 walls, turn 1); the game has "
        f"moved on to phase {made_for + 1} (performing 1 sword, turn {turn}): nothing was "
        "applied."
    ) in page
    assert snapshot(game) == before


def test_a_form_that_says_no_phase_is_refused_as_from_an_old_page(client, game, alice):
    before = snapshot(game)
    page = submit(client, alice, game, {"form": "decide", "cards": cards_for(game, "red")})
    assert (
        "This form came from an older page that does not say which phase it was for; "
        f"the game has moved on to phase {fresh(game).phase_number} (decisions, turn 1): "
        "nothing was applied."
    ) in page
    assert snapshot(game) == before


def test_the_form_of_the_current_phase_is_accepted(client, game, alice):
    number = str(fresh(game).phase_number)
    page = submit(
        client, alice, game, {"form": "decide", "phase": number, "cards": cards_for(game, "red")}
    )
    assert "Your submission: decide" in page
    assert PendingSubmission.objects.filter(seat__user=alice).count() == 1


def test_services_compare_the_phase_under_the_row_lock(game, alice):
    """Checked in services.submit, not only in the view: a resolve that ran between the
    page's check and the submission is seen there."""
    seat = Seat.objects.get(game=game, user=alice)
    move = parse_move("decide " + ", ".join(cards_for(game, "red")))
    with pytest.raises(services.PhaseGone):
        services.submit(game.pk, seat.pk, move, phase_number=fresh(game).phase_number - 1)
    with pytest.raises(services.PhaseGone):
        services.submit(game.pk, seat.pk, move, phase_number=services.UNKNOWN_PHASE)
    assert not PendingSubmission.objects.exists()
    services.submit(game.pk, seat.pk, move, phase_number=fresh(game).phase_number)
    assert PendingSubmission.objects.count() == 1


def test_ending_an_alliance_is_for_no_phase(client, game, alice):
    plant(game, lambda s: s.pos.alliances.add(alliance_key((1, 0), (13, 0))))
    page = submit(client, alice, game, {"form": "end-alliance", "alliance": "B1 N1"})
    assert "Alice ends the alliance of the regions at B1 and N1." in page
    assert not state_of(game).pos.alliances


# --- a refused move keeps what was typed and ticked ---------------------------------------------


def test_a_refused_text_move_is_shown_again_in_the_text_field(client, game, alice):
    number = str(fresh(game).phase_number)
    page = submit(
        client, alice, game, {"form": "move", "move": "walls F7/F8 G7/Q99", "phase": number}
    )
    assert "Not accepted:" in page
    assert re.search(r'<input[^>]*name="move"[^>]*value="walls F7/F8 G7/Q99"', page)
    assert '<details id="text-fallback" open>' in page
    client.force_login(alice)  # once: the next view of the page starts afresh
    again = client.get(reverse("game", args=[game.pk])).content.decode()
    assert "G7/Q99" not in again


def test_a_refused_form_keeps_its_ticks(client, game, bob):
    wrong = ["1", "2"] if state_of(game).cards_to_choose("ochre") == 1 else ["1"]
    client.force_login(bob)
    response = client.post(
        reverse("submit", args=[game.pk]),
        {"form": "decide", "phase": str(fresh(game).phase_number), "cards": wrong},
        follow=True,
    )
    assert "Not accepted:" in response.content.decode()
    [decide] = [f for f in response.context["forms"] if f.kind == "decide"]
    assert decide.is_bound and decide.data.getlist("cards") == wrong
    for card in ("1", "2", "3"):
        box = re.search(
            rf'<input type="checkbox"[^>]*name="cards" value="{card}"[^>]*>',
            response.content.decode(),
        )
        assert box is not None and ("checked" in box[0]) == (card in wrong)
    assert not PendingSubmission.objects.exists()


def test_typed_text_that_says_no_phase_is_refused_as_from_an_old_page(client, game, alice):
    """The text field's form says its phase like every other: typed text without it (an
    old page, or a hand-made POST) is not taken as for the current phase."""
    before = snapshot(game)
    typed = "decide " + ", ".join(cards_for(game, "red"))
    page = submit(client, alice, game, {"form": "move", "move": typed})
    assert (
        "This form came from an older page that does not say which phase it was for; "
        f"the game has moved on to phase {fresh(game).phase_number} (decisions, turn 1): "
        "nothing was applied."
    ) in page
    assert snapshot(game) == before


def test_a_refused_form_s_kept_input_is_bounded_like_the_form(client, game, alice):
    """A POST may hold anything; what the session keeps of a refused one for the next
    page is no more than the form takes: no value longer than its longest field (the
    text move), no more values than a field has boxes to tick."""
    longest = MoveTextForm.base_fields["move"].max_length
    assert longest is not None
    boxes = len(DecisionForm.base_fields["cards"].choices)  # type: ignore[attr-defined]
    assert boxes <= KEPT_VALUES  # every box a person can tick is kept
    number = str(fresh(game).phase_number)
    client.force_login(alice)
    for data in (
        {"form": "decide", "phase": number, "cards": ["1"] * 400},
        {"form": "move", "phase": number, "move": "walls F7/F8 " * 10_000},
        {"form": "walls", "phase": number, "walls": "F7/F8 " * 10_000, "treasure": ["8"] * 400},
    ):
        response = client.post(reverse("submit", args=[game.pk]), data)
        assert response.status_code == 302
        kept = client.session[KEPT]["data"]
        assert kept["form"] == [data["form"]]
        for name, values in kept.items():
            assert values and len(values) <= KEPT_VALUES, (name, len(values))
            assert all(len(value) <= longest for value in values), (name, len(values[0]))
        shown = client.get(reverse("game", args=[game.pk]))  # drawn once, from what was kept
        assert shown.status_code == 200 and KEPT not in client.session
    assert not PendingSubmission.objects.exists()
