"""A game's whole history (games.views.history, issue 10 item 5): every event the viewer
may read, a page at a time, and each past phase as that viewer saw it then.

alice (red), bob (ochre) and charlie (lilac) play; dave is an outsider. Secrets are
planted in a past phase's snapshot (and private events in its log), then looked for on
every viewer's pages; their owner's page must show them, so that each search can fail.
"""

from __future__ import annotations

import re
from html import escape

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from engine.notation import parse_move
from engine.serialize import state_from_json, state_to_json
from engine.view import view
from games.models import Event, Game, Snapshot
from games.show.board_svg import render_board
from games.views.history import EVENTS_PER_PAGE
from tests.site.conftest import three_player_game
from tests.site.test_account_security import opened_by_link, refused
from tests.site.test_browser_phone import PHONE, log_in, page_width
from tests.site.test_game_page import fresh, play_phases


@pytest.fixture(autouse=True)
def fast_password_hashing(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def game(alice, bob, charlie) -> Game:
    """A running game a few phases in."""
    return play_phases(three_player_game(alice, bob, charlie), 6)


def url(game: Game) -> str:
    return reverse("game_history", args=[game.pk])


def as_viewer(user: User | None) -> Client:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client


def history(game: Game, user: User | None = None, **query: object):
    return as_viewer(user).get(url(game), query)


def text_of(game: Game, user: User | None = None, **query: object) -> str:
    response = history(game, user, **query)
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def indices(html: str) -> list[int]:
    return [int(i) for i in re.findall(r'class="log-line[^"]*" data-index="(\d+)"', html)]


def snapshots(game: Game) -> list[Snapshot]:
    return list(Snapshot.objects.filter(game=game).order_by("phase_number"))


def plant_in_snapshot(game: Game, index: int, change) -> Snapshot:
    """Edit a past phase's stored state, as the engine's JSON."""
    shot = snapshots(game)[index]
    state = state_from_json(shot.state)
    change(state)
    shot.state = state_to_json(state)
    shot.save(update_fields=["state"])
    return shot


def private_event(game: Game, shot: Snapshot, colour: str, card: str, index: int) -> None:
    Event.objects.create(
        game=game,
        index=index,
        phase_number=shot.phase_number,
        turn=shot.turn,
        kind="card",
        data={"kind": "card", "card": card, "turn": shot.turn},
        to_colour=colour,
    )


def viewers(game: Game, dave: User) -> dict[str, User | None]:
    """Each player by colour, the outsider and an anonymous visitor."""
    people: dict[str, User | None] = {s.colour: s.user for s in game.seats.all()}
    return {**people, "dave": dave, "anonymous": None}


# --- the whole log, paged ----------------------------------------------------------------


def test_every_event_the_player_may_read_is_on_one_page(alice, bob, charlie):
    game = play_phases(three_player_game(alice, bob, charlie), 40)
    mine = list(
        Event.objects.filter(game=game, to_colour__in=["", "red"])
        .order_by("index")
        .values_list("index", flat=True)
    )
    assert len(mine) > EVENTS_PER_PAGE, "the game should fill more than one page"
    pages = -(-len(mine) // EVENTS_PER_PAGE)
    seen: list[int] = []
    for number in range(1, pages + 1):
        found = indices(text_of(game, alice, page=number))
        assert len(found) == EVENTS_PER_PAGE or (number == pages and found)
        seen += found
    assert seen == mine  # oldest first, each once, none left out
    latest = text_of(game, alice)  # without ?page=: the latest page, where the game page ends
    assert indices(latest) == indices(text_of(game, alice, page=pages))
    assert f'id="log-page">{pages}</span> of {pages}' in latest


def test_the_log_links_each_phase_to_its_step(game, alice):
    html = text_of(game, alice, page=1)
    steps = re.findall(
        rf'href="{re.escape(url(game))}\?step=(\d+)" class="history-step-link"', html
    )
    assert steps and steps == sorted(set(steps), key=int)
    assert re.search(rf'id="log-next" href="{re.escape(url(game))}\?page=1"', html)


def test_a_player_reads_their_own_private_events_and_nobody_elses(game, alice, bob, dave):
    shot = snapshots(game)[2]
    # Cards no deck has (parchments are 3, 4 and 5): none can be in a hand the page shows,
    # whatever the game's seed dealt.
    private_event(game, shot, "red", "parchment 6", 900)
    private_event(game, shot, "ochre", "parchment 7", 901)
    step = snapshots(game).index(shot)
    for query in ({}, {"step": step}):
        pages = {
            who: text_of(game, user, **query).lower() for who, user in viewers(game, dave).items()
        }
        assert "you took the parchment 6 card." in pages["red"]
        assert "you took the parchment 7 card." in pages["ochre"]
        assert "only you" in pages["red"]
        for who, html in pages.items():
            assert ("parchment 6" in html) == (who == "red"), (who, query)
            assert ("parchment 7" in html) == (who == "ochre"), (who, query)


# --- one past phase, as that viewer saw it ----------------------------------------------------


def test_a_past_phase_shows_the_viewers_hidden_information_from_then(game, dave):
    now = fresh(game).engine_state
    then = state_from_json(snapshots(game)[1].state)
    held = {card for s in (now, then) for player in s.pos.players.values() for card in player.hand}
    # Cards nobody holds, then or now (the game's seed deals at random).
    parchment = next(f"parchment {n}" for n in (5, 4, 3) if f"parchment {n}" not in held)
    treasure = next(f"treasure {n}" for n in (15, 12, 10, 8) if f"treasure {n}" not in held)

    def secrets(state) -> None:
        state.pos.players["ochre"].ducats = 37
        state.pos.players["ochre"].hand.append(parchment)
        state.pos.players["red"].hand.append(treasure)
        state.sealed["red"] = parse_move(f"bid 7 {treasure}")

    shot = plant_in_snapshot(game, 1, secrets)
    assert now.pos.players["ochre"].ducats != 37  # the page must show then, not now
    pages = {who: text_of(game, user, step=1) for who, user in viewers(game, dave).items()}
    assert "37 ducats" in pages["ochre"] and parchment.title() in pages["ochre"]
    assert f"bid 7 {treasure}" in pages["red"] and treasure.title() in pages["red"]
    for who, html in pages.items():
        assert ("37 ducats" in html) == (who == "ochre"), who
        assert (parchment in html.lower()) == (who == "ochre"), who
        assert (treasure in html.lower()) == (who == "red"), who
        colour = who if who in ("red", "ochre", "lilac") else None
        board = render_board(view(state_from_json(shot.state), colour))
        assert board in html, who  # the board of that viewer's view of then


def test_the_next_action_card_of_then_is_seen_by_nobody(game, dave):
    state = state_from_json(snapshots(game)[1].state)
    card = next(
        c
        for c in reversed(state.deck)
        if c not in ("SILVER", "KING")
        and c != state.card
        and c not in {e.data.get("card") for e in Event.objects.filter(game=game)}
    )
    plant_in_snapshot(
        game, 1, lambda s: setattr(s, "deck", [card, *[c for c in s.deck if c != card]])
    )
    for who, user in viewers(game, dave).items():
        assert card not in text_of(game, user, step=1), who


def test_the_step_page_shows_that_phase_its_events_and_links(game, bob):
    shots = snapshots(game)
    html = text_of(game, bob, step=2)
    assert 'id="step-number">2</span> of ' + str(len(shots) - 1) in html
    for link, step in (("first", 0), ("prev", 1), ("next", 3), ("last", len(shots) - 1)):
        assert re.search(rf'id="step-{link}" href="{re.escape(url(game))}\?step={step}"', html)
    state = state_from_json(shots[2].state)
    assert f'<code id="current-card">{state.card or "none"}</code>' in html
    public = Event.objects.filter(game=game, phase_number=shots[2].phase_number, to_colour="")
    assert public.exists()
    assert (
        html.count('class="log-line')
        == Event.objects.filter(
            game=game, phase_number=shots[2].phase_number, to_colour__in=["", "ochre"]
        ).count()
    )
    assert re.search(rf'href="{re.escape(url(game))}\?page=1" id="history-log"', html)


def test_a_spectator_sees_the_spectator_view_of_then(game, dave):
    shot = snapshots(game)[3]
    for user in (dave, None):
        html = text_of(game, user, step=3)
        assert render_board(view(state_from_json(shot.state), None)) in html
        assert 'id="my-hand"' not in html and "As a spectator saw it" in html


def test_the_step_page_never_loads_the_full_state(game, alice):
    client = as_viewer(alice)
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url(game), {"step": 2}).status_code == 200
    assert not any('"games_game"."state"' in q["sql"] for q in captured)
    assert len([q for q in captured if '"games_snapshot"."state"' in q["sql"]]) == 1


# --- bad values, access -----------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["abc", "-3", "0", "99999", "", "1.5", "9" * 5000, "٣"])
def test_a_bad_page_or_step_is_kept_within_the_game(game, alice, raw):
    last_step = len(snapshots(game)) - 1
    page = history(game, alice, page=raw)
    assert page.status_code == 200
    assert 1 <= page.context["page"].number <= page.context["page"].paginator.num_pages
    step = history(game, alice, step=raw)
    assert step.status_code == 200
    assert 0 <= step.context["index"] <= last_step
    if raw == "99999":
        assert step.context["index"] == last_step


def test_a_game_not_started_has_an_empty_log_and_no_steps(alice):
    from games import services

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
    assert "Nothing has happened yet." in text_of(game, alice)
    assert history(game, alice, step=0).status_code == 404
    assert as_viewer(None).get(reverse("game_history", args=[999_999])).status_code == 404


def test_an_invite_only_game_s_history_is_its_people_s_alone(alice, bob, charlie, dave):
    game = play_phases(three_player_game(alice, bob, charlie, invite_only=True), 2)
    for query in ({}, {"step": 1}):
        assert history(game, alice, **query).status_code == 200
        assert history(game, dave, **query).status_code == 404
        assert history(game, None, **query).status_code == 404


def test_a_magic_link_session_reaches_its_game_s_history_only(alice, bob, charlie):
    game = three_player_game(alice, bob, charlie)
    other = three_player_game(alice, bob, charlie, name="Other game")
    client = opened_by_link(Client(), game, alice)
    assert client.get(url(game)).status_code == 200
    assert client.get(url(game), {"step": 0}).status_code == 200
    assert refused(client.get(url(other)), client)


def test_the_archive_still_hides_the_running_game(game):
    assert Client().get(reverse("archive_game", args=[game.pk])).status_code == 404
    assert Client().get(reverse("record_json", args=[game.pk])).status_code == 404


def test_the_link_include_leads_to_the_history(game):
    from django.template.loader import render_to_string

    html = render_to_string("games/_history_link.html", {"game": game})
    assert f'href="{url(game)}"' in html and 'id="history-link"' in html


def test_a_finished_game_s_history_points_to_the_archive(game, alice):
    Game.objects.filter(pk=game.pk).update(status=Game.Status.FINISHED)
    html = text_of(fresh(game), alice)
    assert f'href="{reverse("archive_game", args=[game.pk])}"' in html
    assert escape("the finished game") in html


# --- a phone ------------------------------------------------------------------------------------


def test_stepping_through_past_phases_on_a_phone(new_page, alice, bob, charlie):
    """From the log to a phase's board, then next, previous and first, 360 px wide."""
    game = play_phases(three_player_game(alice, bob, charlie), 6)
    page = new_page(**PHONE)
    problems: list[str] = []  # Content-Security-Policy violations and script errors
    page.on(
        "console",
        lambda m: (
            problems.append(m.text)
            if m.type == "error" and "Content Security Policy" in m.text
            else None
        ),
    )
    page.on("pageerror", lambda error: problems.append(str(error)))
    log_in(page, "alice")
    page.goto(url(game))
    assert page_width(page) <= 360
    page.locator(".history-step-link").first.click()
    page.wait_for_url("**step=0")
    assert page.locator("#step-number").inner_text() == "0"
    for expected in ("1", "2"):
        page.click("#step-next")
        page.wait_for_url(f"**step={expected}")
        assert page.locator("#step-number").inner_text() == expected
        assert page_width(page) <= 360
        board = page.locator("#history-board svg").bounding_box()
        assert board is not None and board["width"] <= 360
    page.click("#step-prev")
    page.wait_for_url("**step=1")
    assert page.locator("#step-number").inner_text() == "1"
    assert page.locator("#step-prev").get_attribute("aria-disabled") is None
    page.click("#step-first")
    page.wait_for_url("**step=0")
    assert page.locator("#step-prev").get_attribute("aria-disabled") == "true"
    assert page.evaluate("document.querySelectorAll('script:not([src])').length") == 0
    assert problems == []
