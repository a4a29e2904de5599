"""The game page, its JSON, and submitting moves (games.views.play).

alice (red), bob (ochre) and charlie (lilac) play the `game` fixture, a basic sealed
game; dave is an outsider. Secrets are planted, then searched for in every other
viewer's page and JSON; the owner's page must show them, so each search can fail.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import dateformat

from engine.ai import RandomPlayer
from engine.errors import IllegalMove, NotationError
from engine.game import GameState, Phase, default_move, is_simultaneous
from engine.game import submit as engine_submit
from engine.notation import format_cell, format_move, parse_move
from engine.position import alliance_key
from engine.serialize import state_from_json, state_to_json
from engine.view import view
from games import chat, services, votes
from games.models import Event, Game, PendingSubmission, Seat, with_pending
from games.play_forms import (
    AcceptForm,
    BidForm,
    BreakOffForm,
    DecisionForm,
    EndAllianceForm,
    MoveTextForm,
    OfferForm,
    PassForm,
    PileForm,
    PlacementForm,
    PlayForm,
    SwordsForm,
    TakeForm,
    WallsForm,
    asked_kinds,
)
from games.show.words import refusal_text


@pytest.fixture(autouse=True)
def fast_password_hashing(settings) -> None:
    """Argon2 makes each of the four users cost a second; these tests never check one."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


# --- helpers --------------------------------------------------------------------------------


def url(game: Game, name: str = "game") -> str:
    return reverse(name, args=[game.pk])


def page_text(client, user: User | None, game: Game) -> str:
    _log_in(client, user)
    response = client.get(url(game))
    assert response.status_code == 200
    return response.content.decode()


def as_json(client, user: User | None, game: Game) -> dict:
    _log_in(client, user)
    response = client.get(url(game, "game_json"))
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    return response.json()


def json_text(client, user: User | None, game: Game) -> str:
    return json.dumps(as_json(client, user, game))


def _log_in(client, user: User | None) -> None:
    client.logout()
    if user is not None:
        client.force_login(user)


def post(client, user: User, game: Game, data: dict) -> str:
    """POST a submission as `user`, made for the current phase as the page's forms are,
    and return the page it redirects to."""
    _log_in(client, user)
    data = {"phase": str(fresh(game).phase_number), **data}
    response = client.post(url(game, "submit"), data, follow=True)
    assert response.redirect_chain == [(url(game), 302)]
    return response.content.decode()


def fresh(game: Game) -> Game:
    return Game.objects.get(pk=game.pk)


def state_of(game: Game) -> GameState:
    return fresh(game).engine_state


def plant(game: Game, change: Callable[[GameState], None]) -> None:
    """Edit the stored state, as the engine's JSON (a test's way to set up a position)."""
    stored = fresh(game)
    state = state_from_json(stored.state)
    change(state)
    stored.state = state_to_json(state)
    stored.save(update_fields=["state"])


def seat(game: Game, user: User) -> Seat:
    return Seat.objects.get(game=game, user=user)


def user_of(game: Game, colour: str) -> User:
    return Seat.objects.get(game=game, colour=colour).user


def decision_for(game: Game, colour: str, cards: tuple[int, ...] = (2, 3)) -> str:
    """A decision with as many cards as this player chooses (two for the start player)."""
    need = state_of(game).cards_to_choose(colour)
    return "decide " + ", ".join(map(str, cards[:need]))


def everyone_but(game: Game, owner: User, *extra: User | None) -> list[User | None]:
    players = [s.user for s in Seat.objects.filter(game=game) if s.user != owner]
    return [*players, *extra, None]


def play_phases(game: Game, count: int) -> Game:
    """Drive the game as the site does: submissions through services, then resolve."""
    for _ in range(count):
        game = fresh(game)
        if game.status != Game.Status.RUNNING:
            break
        state = game.engine_state
        movers = state.waiting if is_simultaneous(state) else state.waiting[:1]
        for colour in movers:
            state = state_of(game)  # an ended alliance changes the state at once
            move = RandomPlayer(f"{game.phase_number}/{colour}").choose(state, colour)
            try:
                services.submit(game.pk, seat_id(game, colour), move)
            except IllegalMove:
                services.submit(game.pk, seat_id(game, colour), default_move(state, colour))
        services.resolve(game.pk, game.phase_number)
    return fresh(game)


def seat_id(game: Game, colour: str) -> int:
    return Seat.objects.get(game=game, colour=colour).pk


def count_queries(client, user: User | None, game: Game) -> tuple[int, int]:
    _log_in(client, user)
    counts = []
    for name in ("game", "game_json"):
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url(game, name)).status_code == 200
        counts.append(len(queries))
    return counts[0], counts[1]


# --- the page for each kind of visitor --------------------------------------------------------


def test_it_shows_a_seated_player_their_hand_and_the_forms(client, game, alice):
    text = page_text(client, alice, game)
    assert 'id="board"' in text and text.count('data-cell="') == 150
    assert 'id="decide-form"' in text and 'id="move-text"' in text and 'id="move-submit"' in text
    assert 'id="my-hand"' in text and 'id="my-ducats">12<' in text
    assert "You play" in text


def test_it_shows_a_spectator_the_board_without_forms(client, game, dave):
    text = page_text(client, dave, game)
    assert "You are watching" in text and '<svg id="board" class="board-svg"' in text
    assert 'id="decide-form"' not in text and 'id="move-text"' not in text
    assert 'id="my-hand"' not in text and "data-cell=" not in text


def test_it_shows_an_anonymous_visitor_the_board(client, game):
    text = page_text(client, None, game)
    assert '<svg id="board" class="board-svg"' in text and 'id="decide-form"' not in text


def test_it_404s_for_a_game_that_does_not_exist(client, db):
    assert client.get(reverse("game", args=[999])).status_code == 404
    assert client.get(reverse("game_json", args=[999])).status_code == 404


def test_a_game_not_started_shows_its_seats(client, alice):
    game = services.create_game(
        alice,
        name="Open",
        player_count=3,
        setup="basic",
        decisions="sealed",
        money="hidden",
        deadline_hours=48,
        invite_only=False,
        colour="red",
        computer_colours=[],
    )
    text = page_text(client, alice, game)
    assert 'id="game-not-started"' in text and "Alice" in text
    assert as_json(client, None, game)["view"] is None


def test_the_page_shows_the_walls_of_the_basic_layout(client, game, alice):
    text = page_text(client, alice, game)
    for wall in ("C1/D1", "C2/D2", "A2/A3", "M8/M9", "C10/D10"):
        assert f'data-wall-at="{wall}"' in text
    assert text.count('class="wall"') == 20


def test_the_deadline_is_shown_in_each_viewers_time_zone(client, game, alice, bob):
    deadline = fresh(game).deadline
    for user, zone in ((alice, "Europe/Berlin"), (bob, "America/New_York")):
        local = deadline.astimezone(ZoneInfo(zone))
        assert dateformat.format(local, "D j M Y, H:i T") in page_text(client, user, game)
    assert isinstance(deadline, datetime)


def test_the_page_says_whom_the_phase_waits_for(client, game, alice):
    text = page_text(client, alice, game)
    assert 'id="waiting"' in text
    for name, colour in (("Alice", "red"), ("Bob", "ochre"), ("Charlie", "lilac")):
        assert f'data-colour="{colour}">{name}' in text


def test_the_current_action_card_and_the_deck_position_are_shown(client, game, alice):
    state = state_of(game)
    text = page_text(client, alice, game)
    assert f'id="current-card">{state.card}<' in text
    assert f"Deck: {len(state.deck)} cards left" in text


def test_legal_targets_are_marked_for_the_player_who_performs(client, game, alice):
    plant(game, lambda s: setattr(s, "phase", Phase("perform", waiting=["red"], action="W2")))
    legal = view(state_of(game), "red")["ask"]["edges"]
    text = page_text(client, alice, game)
    assert legal and text.count('class="edge legal"') == len(legal)
    assert 'id="walls-form"' in text and 'id="pass-form"' in text
    assert 'class="edge legal"' not in page_text(client, None, game)


# --- submitting -----------------------------------------------------------------------------


def test_submitting_requires_post(client, game, alice):
    client.force_login(alice)
    assert client.get(url(game, "submit")).status_code == 405


def test_submitting_requires_a_login(client, game):
    response = client.post(url(game, "submit"), {"move": "decide 2"})
    assert response.status_code == 302 and reverse("login") in response["Location"]
    assert PendingSubmission.objects.count() == 0


def test_an_outsider_cannot_submit(client, game, dave):
    text = post(client, dave, game, {"move": "decide 2"})
    assert "You have no seat in this game." in text
    assert PendingSubmission.objects.count() == 0


@pytest.mark.parametrize("typed", ["decide 4", "walls F7/F8 G7/Q99", "fly away", ""])
def test_a_malformed_move_is_refused_with_the_engines_sentence(client, game, alice, typed):
    before = fresh(game).state
    with pytest.raises(NotationError) as refusal:
        parse_move(typed)
    text = post(client, alice, game, {"move": typed})
    assert html.escape(f"Not accepted: {refusal.value}") in text
    assert PendingSubmission.objects.count() == 0 and fresh(game).state == before


def test_an_illegal_move_is_refused_with_the_engines_sentence(client, game, alice):
    before, phase = fresh(game).state, fresh(game).phase_number
    typed = "walls F7/F8"
    with pytest.raises(IllegalMove) as refusal:
        engine_submit(state_of(game), "red", parse_move(typed))
    text = post(client, alice, game, {"move": typed})
    assert html.escape(f"Not accepted: {refusal.value}") in text
    assert PendingSubmission.objects.count() == 0
    assert fresh(game).state == before and fresh(game).phase_number == phase


def test_the_wrong_number_of_decision_cards_is_refused(client, game, alice):
    wrong = "decide 1" if state_of(game).cards_to_choose("red") == 2 else "decide 1, 2"
    with pytest.raises(IllegalMove) as refusal:
        engine_submit(state_of(game), "red", parse_move(wrong))
    text = post(client, alice, game, {"move": wrong})
    told = refusal_text(refusal.value, "red")  # to red: "you choose ..." (issue 24)
    assert told.startswith("you choose") and html.escape(told) in text
    assert PendingSubmission.objects.count() == 0


def test_a_sealed_decision_is_stored_and_can_be_replaced(client, game, alice):
    first, second = decision_for(game, "red", (2, 3)), decision_for(game, "red", (1, 3))
    text = post(client, alice, game, {"move": first})
    assert (
        f"Your submission: <code>{first}</code> (you can change it until everyone has "
        "decided)" in text
    )
    assert list(PendingSubmission.objects.values_list("text", flat=True)) == [first]
    post(client, alice, game, {"move": second})
    assert list(PendingSubmission.objects.values_list("text", flat=True)) == [second]
    assert fresh(game).phase_number == 1 and state_of(game).phase.kind == "decision"


def test_the_decision_form_builds_the_submission(client, game, bob):
    cards = ["2", "3"][: state_of(game).cards_to_choose("ochre")]
    text = post(client, bob, game, {"form": "decide", "cards": cards})
    stored = PendingSubmission.objects.get()
    assert stored.text == "decide " + ", ".join(cards) and stored.seat.colour == "ochre"
    assert "Your submission: decide" in text


def test_an_empty_decision_form_is_refused_and_nothing_is_stored(client, game, bob):
    text = post(client, bob, game, {"form": "decide"})
    assert "Not accepted: Decision cards: This field is required." in text
    assert PendingSubmission.objects.count() == 0


def test_the_walls_form_places_walls_once_resolved(client, game, alice):
    plant(game, lambda s: setattr(s, "phase", Phase("perform", waiting=["red"], action="W2")))
    a, b = view(state_of(game), "red")["ask"]["edges"][0]
    wall = format_move(parse_move(f"walls {_cell(a)}/{_cell(b)}"))
    post(client, alice, game, {"form": "walls", "walls": wall.removeprefix("walls ")})
    assert PendingSubmission.objects.get().text == wall
    assert services.resolve(game.pk, fresh(game).phase_number)
    assert [a, b] in view(state_of(game), None)["walls"]
    assert "Alice places a wall at" in page_text(client, alice, game)


def _cell(xy: list[int]) -> str:
    return format_cell((xy[0], xy[1]))


def test_after_everyone_decides_the_page_shows_the_revealed_decisions(
    client, game, alice, bob, charlie
):
    plant(game, lambda s: setattr(s, "card", "W2 S1 M5"))  # all choose W2: a duel waits
    for user, colour in ((alice, "red"), (bob, "ochre"), (charlie, "lilac")):
        post(client, user, game, {"move": decision_for(game, colour, (1, 2))})
    assert 'id="decisions"' not in page_text(client, bob, game)
    phase = fresh(game).phase_number
    assert services.resolve(game.pk, phase)
    assert fresh(game).phase_number == phase + 1 and state_of(game).phase.kind == "duel"
    text = page_text(client, bob, game)
    assert "The decisions are revealed: " in text and 'id="bid-form"' in text
    for name, colour in (("Alice", "red"), ("Bob", "ochre"), ("Charlie", "lilac")):
        cards = "1 and 2" if state_of(game).cards_to_choose(colour) == 2 else "1"
        assert f'<span class="colour-{colour}">{name}</span>: {cards}' in text


# --- the number of queries ------------------------------------------------------------------


def test_the_number_of_queries_does_not_grow_with_the_game(client, game, alice, dave):
    early = {user: count_queries(client, user, game) for user in (alice, dave, None)}
    game = play_phases(game, 40)
    assert game.phase_number > 30 and Event.objects.filter(game=game).count() > 100
    late = {user: count_queries(client, user, game) for user in (alice, dave, None)}
    assert late == early
    assert max(early[alice]) <= 12


def tables_read(client, user: User, game: Game) -> list[str]:
    """The table of each ORM query of the user's game page: its first column's."""
    _log_in(client, user)
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url(game)).status_code == 200
    return [q["sql"].split()[1].split(".")[0].strip('"') for q in queries]


def test_a_game_with_no_talk_or_vote_asks_no_query_for_them(client, game, alice, bob):
    """The game's row says whether it has any talk or vote (`models.page_flags`): a page
    asks for them where there are some, and shows them."""
    read = tables_read(client, alice, game)
    assert "games_message" not in read and "games_deadlinevote" not in read
    chat.post(game.pk, bob.pk, "Shall we extend?")
    votes.propose(game.pk, bob, "extend", 24)
    read = tables_read(client, alice, game)
    assert read.count("games_message") == 1 and read.count("games_deadlinevote") == 1
    text = page_text(client, alice, game)
    assert "Shall we extend?" in text and 'id="table-vote"' in text and "24" in text


def test_the_log_shows_the_last_fifty_events(client, game, alice):
    game = play_phases(game, 40)
    log = as_json(client, alice, game)["events"]
    newest = Event.objects.filter(game=game, to_colour__in=["", "red"]).order_by("-index")[:50]
    assert [e["index"] for e in log] == sorted(e.index for e in newest)


# --- secrets ----------------------------------------------------------------------------------


def assert_only_owner_sees(client, game: Game, owner: User, secret: str, dave: User) -> None:
    """The owner's page and JSON show `secret`; nobody else's do (case-blind)."""
    secret = secret.lower()
    assert secret in page_text(client, owner, game).lower()
    assert secret in json_text(client, owner, game).lower()
    for other in everyone_but(game, owner, dave):
        assert secret not in page_text(client, other, game).lower(), other
        assert secret not in json_text(client, other, game).lower(), other


def test_a_sealed_decision_is_seen_by_its_owner_alone(client, game, dave):
    start = state_of(game).start_player
    owner = user_of(game, start)
    post(client, owner, game, {"move": "decide 2, 3"})
    assert PendingSubmission.objects.get().text == "decide 2, 3"
    assert_only_owner_sees(client, game, owner, "decide 2, 3", dave)


def test_the_seats_bring_only_the_readers_own_stored_move(client, game, alice, bob):
    """The page reads who has moved and the reader's own move with the seats
    (`models.with_pending`); another's move never leaves the database."""
    start = state_of(game).start_player
    moves = {c: "decide 2, 3" if c == start else "decide 1" for c in ("red", "ochre")}
    for user, colour in ((alice, "red"), (bob, "ochre")):
        post(client, user, game, {"move": moves[colour]})
    seats = with_pending(Seat.objects.filter(game=game), game.phase_number, alice)
    read = {s.colour: (s.has_submitted, s.own_pending) for s in seats}
    assert read == {"red": (True, moves["red"]), "ochre": (True, None), "lilac": (False, None)}


def test_a_sealed_bid_is_seen_by_its_owner_alone(client, game, alice, dave):
    def duel(state: GameState) -> None:
        state.phase = Phase(
            "duel", waiting=["red", "ochre"], action="S1", contenders=["red", "ochre"]
        )
        state.pos.players["red"].hand.append("treasure 15")

    plant(game, duel)
    text = post(client, alice, game, {"form": "bid", "ducats": "7", "treasure": ["15"]})
    assert 'id="bid-form"' in text
    assert PendingSubmission.objects.get().text == "bid 7 treasure 15"
    assert_only_owner_sees(client, game, alice, "bid 7 treasure 15", dave)
    assert_only_owner_sees(client, game, alice, "treasure 15", dave)


def test_a_politics_card_in_hand_is_seen_by_its_owner_alone(client, game, bob, dave):
    plant(game, lambda s: s.pos.players["ochre"].hand.append("parchment 5"))
    assert_only_owner_sees(client, game, bob, "parchment 5", dave)


def test_the_cards_of_a_politics_pile_are_seen_by_the_crown_taker_alone(client, game, alice, dave):
    def crown(state: GameState) -> None:
        state.piles[0] = ["parchment 4"]
        state.phase = Phase("crown", waiting=["red"], action="P", pile=1)

    plant(game, crown)
    assert 'id="take-form"' in page_text(client, alice, game)
    assert_only_owner_sees(client, game, alice, "parchment 4", dave)


def test_a_private_event_is_seen_by_its_addressee_alone(client, game, alice, dave):
    Event.objects.create(
        game=game,
        index=999,
        phase_number=1,
        turn=1,
        kind="card",
        data={"kind": "card", "card": "parchment 3", "turn": 1},
        to_colour="red",
    )
    assert "You took the Parchment 3 card." in page_text(client, alice, game)
    assert_only_owner_sees(client, game, alice, "parchment 3", dave)


def unrevealed_card(game: Game) -> str:
    """An action card still face down, so never named in the log: the bottom regular one."""
    return next(c for c in reversed(state_of(game).deck) if c not in ("SILVER", "KING"))


def test_the_next_action_card_is_seen_by_nobody(client, game, alice, dave):
    card = unrevealed_card(game)
    plant(game, lambda s: setattr(s, "deck", [card, *[c for c in s.deck if c != card]]))
    assert state_of(game).deck[0] == card
    for user in (*everyone_but(game, alice, dave), alice):
        assert card not in page_text(client, user, game)
        assert card not in json_text(client, user, game)


def test_the_search_for_the_next_card_would_find_it_as_the_current_card(client, game, alice):
    card = unrevealed_card(game)
    plant(game, lambda s: setattr(s, "card", card))
    assert card in page_text(client, alice, game)
    assert card in json_text(client, None, game)


def test_others_ducats_stay_hidden_but_the_owner_sees_theirs(client, game, alice, bob, dave):
    plant(game, lambda s: setattr(s.pos.players["ochre"], "ducats", 37))
    assert as_json(client, bob, game)["view"]["players"]["ochre"]["ducats"] == 37
    assert "37 ducats" in page_text(client, bob, game)
    for user in (alice, dave, None):
        assert "ducats" not in as_json(client, user, game)["view"]["players"]["ochre"]
        assert "37 ducats" not in page_text(client, user, game)


def test_the_json_is_the_viewers_view_with_their_events(client, game, alice):
    data = as_json(client, alice, game)
    assert data["viewer"] == "red" and data["view"] == json.loads(
        json.dumps(view(state_of(game), "red"))
    )
    assert data["view"]["ask"]["phase"] == "decision"
    assert data["events"] and all(e["text"] for e in data["events"])
    assert as_json(client, None, game)["view"]["viewer"] is None


def test_a_politics_card_through_the_decision_form_is_judged_by_the_engine(client, game, alice):
    plant(game, lambda s: s.pos.players["red"].hand.append("alliance"))
    cards = ["1", "3"][: state_of(game).cards_to_choose("red")]
    typed = "decide " + ", ".join(cards).replace(cards[0], f"{cards[0]} alliance B1 N1", 1)
    with pytest.raises(IllegalMove) as refusal:
        engine_submit(state_of(game), "red", parse_move(typed))
    text = post(
        client,
        alice,
        game,
        {"form": "decide", "cards": cards, "politics": "alliance", "first": "B1", "second": "N1"},
    )
    assert html.escape(f"Not accepted: {refusal.value}") in text
    assert PendingSubmission.objects.count() == 0


def test_an_alliance_can_be_ended_at_any_time(client, game, alice):
    plant(game, lambda s: s.pos.alliances.add(alliance_key((1, 0), (13, 0))))
    text = page_text(client, alice, game)
    assert 'id="end-alliance-form"' in text
    text = post(client, alice, game, {"form": "end-alliance", "alliance": "B1 N1"})
    assert "Alice ends the alliance of the regions at B1 and N1." in text
    state = state_of(game)
    assert not state.pos.alliances and state.pos.players["red"].ducats == 2


# --- the forms, alone -------------------------------------------------------------------------

ASKED = {
    "viewer": "red",
    "card": "W2 S1 M5",
    "players": {"red": {"hand": ["treasure 10", "alliance"]}},
    "castles": [[1, 0, "red"], [13, 0, "ochre"], [6, 2, "ochre"]],
    "alliances": [[[1, 0], [6, 2]]],
}


def bound(form_class: type[PlayForm], data: dict, **ask) -> PlayForm:
    return form_class(data, view={**ASKED, "ask": ask} if ask else ASKED)


@pytest.mark.parametrize(
    ("form_class", "data", "ask", "text"),
    [
        (PlacementForm, {"castle": "c3", "knight": "D3"}, {}, "place C3 D3"),
        (DecisionForm, {"cards": ["2"]}, {"cards": 1, "politics": []}, "decide 2"),
        (
            DecisionForm,
            {
                "cards": ["1", "3"],
                "politics": "alliance",
                "politics_with": "3",
                "first": "B1",
                "second": "G3",
            },
            {"cards": 2, "politics": ["alliance"]},
            "decide 1, 3 alliance B1 G3",
        ),
        (
            DecisionForm,
            {"cards": ["2"], "politics": "renegade", "first": "F7", "second": "G7"},
            {"cards": 1, "politics": ["renegade"]},
            "decide 2 renegade F7 G7",
        ),
        (OfferForm, {"ducats": "3"}, {}, "offer 3"),
        (AcceptForm, {}, {}, "accept"),
        (BreakOffForm, {}, {}, "break off"),
        (BidForm, {"ducats": "5", "treasure": ["10"]}, {"treasure": [10]}, "bid 5 treasure 10"),
        (BidForm, {"ducats": "0"}, {"treasure": []}, "bid 0"),
        (WallsForm, {"walls": "F7/F8, g8/g7"}, {}, "walls F7/F8 G7/G8"),
        (SwordsForm, {"knights": "F7 G7"}, {}, "knight F7, knight G7"),
        (
            SwordsForm,
            {
                "knights": "F7",
                "expand": "G7 G8",
                "expand_from": "C3",
                "expand_first": "on",
                "treasure": ["10"],
            },
            {"treasure": [10]},
            "expand G7 G8 from C3, knight F7 treasure 10",
        ),
        (PileForm, {"pile": "2"}, {"piles": [6, 7]}, "pile 2"),
        (PassForm, {}, {}, "pass"),
        (
            EndAllianceForm,
            {"alliance": "B1 G3", "treasure": ["10"]},
            {},
            "break alliance B1 G3 treasure 10",
        ),
        (MoveTextForm, {"move": "decide 2"}, {}, "decide 2"),
    ],
)
def test_each_form_builds_its_submission_in_notation(form_class, data, ask, text):
    form = bound(form_class, data, **ask)
    assert form.is_valid(), form.errors
    assert form.move_text() == text


@pytest.mark.parametrize(
    ("form_class", "data", "ask"),
    [
        (PlacementForm, {"castle": "C3 C4", "knight": "D3"}, {}),
        (DecisionForm, {"cards": []}, {"cards": 1, "politics": []}),
        (DecisionForm, {"cards": ["1", "2", "3"]}, {"cards": 2, "politics": []}),
        (
            DecisionForm,
            {
                "cards": ["1"],
                "politics": "alliance",
                "politics_with": "3",
                "first": "B1",
                "second": "G3",
            },
            {"cards": 1, "politics": ["alliance"]},
        ),
        (
            DecisionForm,
            {"cards": ["1"], "politics": "alliance", "first": "B1"},
            {"cards": 1, "politics": ["alliance"]},
        ),
        (OfferForm, {"ducats": "-1"}, {}),
        (WallsForm, {"walls": "F7/G8"}, {}),
        (SwordsForm, {}, {}),
        (SwordsForm, {"expand": "G7 G8 G9"}, {}),
        (BidForm, {"ducats": "1", "treasure": ["12"]}, {"treasure": [10]}),
        (TakeForm, {"card": "parchment 5"}, {}),
        (EndAllianceForm, {"alliance": "N1 G3"}, {}),
    ],
)
def test_a_form_of_the_wrong_shape_is_invalid(form_class, data, ask):
    assert not bound(form_class, data, **ask).is_valid()


@pytest.mark.parametrize(
    ("fields", "typed"),
    [
        ({"knights": "C8 K3"}, "knight C8 K3"),
        ({"knights": "c8, K3"}, "knight c8, K3"),
        ({"knights": "F7 G7", "expand": "G8"}, "knight F7 G7, expand G8"),
        (
            {"knights": "F7", "expand": "G7 G8", "expand_from": "C3", "expand_first": "on"},
            "expand G7 G8 from C3, knight F7",
        ),
    ],
)
def test_the_text_field_reads_what_the_swords_form_takes(client, game, alice, fields, typed):
    """The same notation in both: the form's knights field and `knight` in the text."""
    form = bound(SwordsForm, fields)
    assert form.is_valid(), form.errors
    assert parse_move(typed) == form.submission()
    plant(game, lambda s: setattr(s, "phase", Phase("perform", waiting=["red"], action="S2")))
    text = post(client, alice, game, {"form": "move", "move": typed})
    assert "write knights and an expansion" not in text  # read; the engine judges it


def test_the_take_form_offers_the_cards_of_the_pile_looked_through():
    form = TakeForm(
        {"card": "treasure 15"},
        view={**ASKED, "pile_cards": ["alliance", "treasure 15", "alliance"]},
    )
    assert [c for c, _ in form.fields["card"].choices] == ["alliance", "treasure 15"]
    assert form.is_valid() and form.move_text() == "take treasure 15"


def test_the_decision_form_has_no_politics_fields_without_politics_cards():
    assert set(bound(DecisionForm, {}, cards=1, politics=[]).fields) == {"cards"}
    with_cards = bound(DecisionForm, {}, cards=1, politics=["alliance"]).fields
    assert {"politics", "first", "second"} <= set(with_cards)


@pytest.mark.parametrize(
    ("ask", "kinds"),
    [
        ({"phase": "placement"}, ["place"]),
        ({"phase": "decision"}, ["decide"]),
        ({"phase": "negotiation", "offer": None}, ["offer", "break-off"]),
        ({"phase": "negotiation", "offer": ["ochre", 3]}, ["offer", "accept", "break-off"]),
        ({"phase": "duel"}, ["bid"]),
        ({"phase": "perform", "action": "W3"}, ["walls", "pass"]),
        ({"phase": "perform", "action": "S2"}, ["swords", "pass"]),
        ({"phase": "perform", "action": "P"}, ["pile", "pass"]),
        ({"phase": "crown", "action": "P"}, ["take", "pass"]),
    ],
)
def test_the_forms_shown_follow_what_the_engine_asks(ask, kinds):
    assert asked_kinds({**ASKED, "ask": ask}) == kinds
    assert asked_kinds(ASKED) == []


# --- in a browser: clicks on the board fill the fields (games/static/games/board.js) -----------


def logged_in_page(new_page, client, user: User, live_server):
    client.force_login(user)
    browser_page = new_page()
    browser_page.context.add_cookies(
        [{"name": "sessionid", "url": live_server.url, "value": client.cookies["sessionid"].value}]
    )
    return browser_page


def test_clicking_edges_fills_the_walls_field_and_submits(
    new_page, client, live_server, game, alice
):
    plant(game, lambda s: setattr(s, "phase", Phase("perform", waiting=["red"], action="W2")))
    (a, b), (c, d) = view(state_of(game), "red")["ask"]["edges"][:2]
    first, second = f"{_cell(a)}/{_cell(b)}", f"{_cell(c)}/{_cell(d)}"
    browser = logged_in_page(new_page, client, alice, live_server)
    browser.goto(url(game))
    browser.click(f'#board [data-wall="{first}"]')
    browser.click(f'#board [data-wall="{second}"]')
    assert browser.input_value("#walls-walls") == f"{first} {second}"
    browser.click(f'#board [data-wall="{first}"]')  # a second click takes it out
    assert browser.input_value("#walls-walls") == second
    browser.click("#walls-submit")
    browser.wait_for_selector("#my-submission")
    assert PendingSubmission.objects.get().text == f"walls {second}"


def test_clicking_cells_fills_the_text_fallback(new_page, client, live_server, game, alice):
    browser = logged_in_page(new_page, client, alice, live_server)
    browser.goto(url(game))
    browser.fill("#move-text", "decide")
    browser.click('#board [data-cell="F7"]')
    browser.click('#board [data-cell="G7"]')
    browser.click('#board [data-cell="F7"]')
    assert browser.input_value("#move-text") == "decide G7"
