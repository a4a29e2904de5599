"""Whole games in a real browser: people sign up, create and join games, and play them
through the game page's forms, board clicks and notation field, while a real Celery
worker resolves the phases and plays the computer seats.

Everything a player does goes through the UI. To decide which legal move to make the
test reads that player's own `view.json` (through the player's browser context): what
the page shows them. Waiting for the worker is polling that JSON for the next phase
(never a fixed sleep), then loading the page again.

1. Three people sign up, play a sealed 3-player game with the variable setup, and in
   its first turns cover a duel (a negotiation broken off, sealed bids), walls that
   found a region (a castle and its knight placed in a board corner, enclosed by one
   W3 action), a knight, an expansion of that region and a politics card (crown).
   Which player chooses which decision card is decided turn by turn from the revealed
   action card by a `Director`, which serves the goals still missing.
2. One person plays a game against two computers to the end, then finds it in the
   archive, steps through it and replays the downloaded record.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page

from engine.board import Cell, format_cell, format_edge, make_edge
from engine.errors import IllegalMove
from engine.game import is_simultaneous, new_game, submit
from engine.notation import parse_move
from engine.replay import Result, read_record, replay_record
from engine.setup import Settings
from engine.view import view
from games.models import Game, OutgoingEmail
from games.show.board_svg import CELL, MARGIN
from tests.site.conftest import PASSWORD, Worker

View = dict[str, Any]
PHASE_TIMEOUT = 20  # seconds for the worker to resolve one phase (it takes a fraction)
POLL = 0.05  # seconds between two looks at view.json
GOALS = ("found", "duel", "knight", "expand", "politics")
PLAYERS = ("red", "ochre", "lilac")  # the seat order of the first test's game
FOUNDER = "red"  # the creator's colour: places a castle in a corner and encloses it

# The first test's game is fixed by its seed (Game.seed, set while the game is still
# open, before the third player joins and starts it): the seed draws the board, the
# start player and the action deck. Every card of pile A (on top in the variable setup)
# has a W3, so the region can be founded in turn 1 whatever the seed; but the expansion
# needs an S after that W3, the knight another S, the politics card a P, and pile A has
# only two cards with an S and one with a P: no deck serves all five goals in two
# turns, and most need four or more. `rehearse(seed)` plays the whole scenario with the
# engine alone, the Director deciding every move as it does in the browser; SEED is the
# seed in range(1, MAX_SEED) whose rehearsal reaches every goal in the fewest phases
# (`best_seed()`): 3 turns, 30 phases with the 12 placements. Should the engine or the
# deck change so that it no longer does, the test searches again (some ten seconds).
SEED = 104
MAX_SEED = 400


# --- the moves --------------------------------------------------------------------------


@dataclass(frozen=True)
class Move:
    """One submission, as the page's forms take it; `text()` is its notation."""

    kind: str  # the form: place, decide, break-off, bid, walls, swords, pile, take, pass
    cells: tuple[str, ...] = ()  # place: castle and knight; swords: new knights
    expand: tuple[str, ...] = ()  # swords: the expansion's cell
    walls: tuple[str, ...] = ()
    cards: tuple[int, ...] = ()  # decide
    number: int = 0  # bid: ducats; pile: which
    card: str = ""  # take

    def text(self) -> str:
        if self.kind == "place":
            return f"place {self.cells[0]} {self.cells[1]}"
        if self.kind == "decide":
            return "decide " + ", ".join(map(str, self.cards))
        if self.kind == "break-off":
            return "break off"
        if self.kind == "bid":
            return f"bid {self.number}"
        if self.kind == "walls":
            return "walls " + " ".join(self.walls)
        if self.kind == "swords":
            steps = [f"knight {c}" for c in self.cells]
            steps += [f"expand {' '.join(self.expand)}"] if self.expand else []
            return ", ".join(steps)
        if self.kind == "pile":
            return f"pile {self.number}"
        if self.kind == "take":
            return f"take {self.card}"
        return self.kind  # pass


# --- the board, as a view shows it ----------------------------------------------------------


def cell_of(value: Iterable[int]) -> Cell:
    x, y = value
    return int(x), int(y)


def terrain(v: View, cell: Cell) -> str:
    return v["board"][cell[1]][cell[0]]


def neighbours(v: View, cell: Cell) -> list[Cell]:
    width, height = len(v["board"][0]), len(v["board"])
    x, y = cell
    return [
        (a, b)
        for a, b in ((x, y - 1), (x - 1, y), (x + 1, y), (x, y + 1))
        if 0 <= a < width and 0 <= b < height
    ]


def occupied(v: View) -> set[Cell]:
    return {(x, y) for x, y, _ in [*v["castles"], *v["knights"]]}


def border_walls(v: View, cells: set[Cell]) -> set[str]:
    """The walls that enclose `cells` (apart from the rim), in notation."""
    return {format_edge(make_edge(c, n)) for c in cells for n in neighbours(v, c) if n not in cells}


@dataclass(frozen=True)
class Corner:
    """Where the founder's first castle and knight go: two plain cells in a board corner,
    enclosed by three walls (the rim does the rest), so that one W3 founds a region."""

    castle: Cell
    knight: Cell
    walls: tuple[str, ...]
    zone: frozenset[Cell]  # kept clear of other pieces, so that the region can grow

    @classmethod
    def find(cls, v: View) -> Corner:
        width, height = len(v["board"][0]), len(v["board"])
        for x, y in ((0, 0), (width - 1, 0), (0, height - 1), (width - 1, height - 1)):
            inward = ((x + 1 if x == 0 else x - 1, y), (x, y + 1 if y == 0 else y - 1))
            for knight in inward:
                pair = {(x, y), knight}
                if all(terrain(v, c) == "." for c in pair):
                    zone = frozenset(
                        (a, b)
                        for a in range(width)
                        for b in range(height)
                        if min(abs(a - c) + abs(b - d) for c, d in pair) <= 3
                    )
                    return cls((x, y), knight, tuple(sorted(border_walls(v, pair))), zone)
        raise AssertionError("no board corner has two plain cells: choose another seed")


# --- who does what ----------------------------------------------------------------------


@dataclass
class TurnPlan:
    cards: dict[str, list[int]]  # colour -> decision cards
    owners: dict[str, str]  # action -> the colour meant to perform it (wins its duel)


def plan_turn(
    actions: list[str], players: list[str], start: str, founder: str, done: set[str]
) -> TurnPlan:
    """Decision cards for everyone, serving the goals not yet reached: the founder
    takes the W3 (and, in a duel, wins it), then an S to expand; others an S for a
    knight and the P; a second player on an action already taken makes the duel; the
    remaining cards go where they change nothing (money, or an action nobody needs)."""
    left = {p: 2 if len(players) <= 3 and p == start else 1 for p in players}  # RULES 3.2
    slot = {a: i for i, a in enumerate(actions, start=1)}
    choosers: dict[str, list[str]] = {a: [] for a in actions}
    owners: dict[str, str] = {}

    def give(player: str, action: str, owner: bool = False) -> None:
        choosers[action].append(player)
        left[player] -= 1
        if owner:
            owners[action] = player

    def free(action: str) -> list[str]:
        return sorted(
            (p for p in players if left[p] and p not in choosers[action]), key=lambda p: -left[p]
        )

    swords = [a for a in actions if a.startswith("S")]
    founding = None
    if "found" not in done and "W3" in actions:
        give(founder, "W3", owner=True)
        founding = slot["W3"]
    two_in_one = False  # an S2 of the founder's: the expansion and a knight
    if ("found" in done or founding) and "expand" not in done and left[founder]:
        for action in swords:
            if action not in owners and ("found" in done or slot[action] > (founding or 0)):
                give(founder, action, owner=True)
                two_in_one = action == "S2"
                break
    if "knight" not in done and not two_in_one:
        for action in swords:
            if action not in owners and free(action):
                give(free(action)[0], action, owner=True)
                break
    if "politics" not in done and "P" in actions and "P" not in owners and free("P"):
        give(free("P")[0], "P", owner=True)
    if "duel" not in done:
        contested = [a for a in owners if free(a)]
        if contested:  # two choose it: a negotiation, broken off, then the owner outbids
            give(free(contested[0])[0], contested[0])
    for player in players:
        while left[player]:
            options = [a for a in actions if player not in choosers[a]]
            harmless = (
                [a for a in options if a.startswith("M")]
                or [a for a in options if not choosers[a]]
                or options
            )
            give(player, harmless[0])
    cards = {p: sorted(slot[a] for a in actions if p in choosers[a]) for p in players}
    return TurnPlan(cards, owners)


@dataclass
class Director:
    """Every player's next move in the first test, from that player's own view."""

    founder: str
    done: set[str] = field(default_factory=set)
    corner: Corner | None = None
    plans: dict[int, TurnPlan] = field(default_factory=dict)
    expanded_into: str = ""
    took_card: str = ""  # the colour that took a politics card

    def observe(self, events: Iterable[dict]) -> None:
        """Goals reached, from the game's events (as the engine writes them)."""
        for event in events:
            kind = event["kind"]
            if kind == "founded" and event["owner"] == self.founder:
                self.done.add("found")
            elif kind == "bids":
                self.done.add("duel")
            elif kind == "knight":
                self.done.add("knight")
            elif kind == "expanded" and event["player"] == self.founder:
                self.done.add("expand")
                self.expanded_into = format_cell(cell_of(event["cells"][0]))
            elif kind == "took_card":
                self.done.add("politics")
                self.took_card = event["player"]

    @property
    def finished(self) -> bool:
        return self.done >= set(GOALS)

    def move(self, colour: str, v: View) -> Move:
        ask = v["ask"]
        kind = ask["phase"]
        if kind == "placement":
            return self.place(colour, v)
        if kind == "decision":
            return Move("decide", cards=tuple(self.plan(v).cards[colour]))
        if kind == "negotiation":
            return Move("break-off")
        if kind == "duel":
            return Move("bid", number=1 if self.duel_winner(v) == colour else 0)
        if kind == "crown":
            return Move("take", card=sorted(v["pile_cards"])[0])
        return self.perform(colour, v)

    def plan(self, v: View) -> TurnPlan:
        if v["turn"] not in self.plans:
            self.plans[v["turn"]] = plan_turn(
                v["card"].split(), list(v["players"]), v["start_player"], self.founder, self.done
            )
        return self.plans[v["turn"]]

    def duel_winner(self, v: View) -> str:
        contenders = v["phase"]["contenders"]
        owner = self.plan(v).owners.get(v["phase"]["action"])
        return owner if owner in contenders else contenders[0]

    def place(self, colour: str, v: View) -> Move:
        """The founder's first castle in the corner; every other one outside its zone."""
        if self.corner is None:
            self.corner = Corner.find(v)
        corner, ask = self.corner, v["ask"]
        legal = [cell_of(c) for c in ask["castles"]]
        taken = occupied(v)
        if ask["colour"] == self.founder and corner.castle not in taken:
            assert corner.castle in legal, "the corner is no legal castle cell"
            return Move("place", cells=(format_cell(corner.castle), format_cell(corner.knight)))
        for castle in legal:
            if castle in corner.zone:
                continue
            for knight in neighbours(v, castle):
                if terrain(v, knight) == "." and knight not in taken | corner.zone:
                    return Move("place", cells=(format_cell(castle), format_cell(knight)))
        raise AssertionError("no castle cell left outside the corner's zone")

    def perform(self, colour: str, v: View) -> Move:
        ask, action = v["ask"], v["ask"]["action"]
        assert self.corner is not None
        if action.startswith("W"):
            legal = {format_edge(make_edge(cell_of(a), cell_of(b))) for a, b in ask["edges"]}
            if (
                colour == self.founder
                and "found" not in self.done
                and action == "W3"
                and set(self.corner.walls) <= legal
            ):
                return Move("walls", walls=self.corner.walls)
            return Move("pass")
        if action.startswith("S"):
            expand = ""
            if colour == self.founder and "found" in self.done and "expand" not in self.done:
                near = [format_cell(cell_of(c)) for c in ask["expansions"]]
                expand = near[0] if near else ""
            knight = ""
            if "knight" not in self.done and (not expand or action == "S2"):
                cells = [cell_of(c) for c in ask["knights"]]
                plain = [
                    format_cell(c)
                    for c in cells
                    if terrain(v, c) == "." and format_cell(c) != expand
                ]
                knight = plain[0] if plain else ""
            if expand or knight:
                return Move(
                    "swords", cells=(knight,) if knight else (), expand=(expand,) if expand else ()
                )
            return Move("pass")
        piles = [n for n, size in enumerate(ask["piles"], start=1) if size]
        if "politics" not in self.done and piles:
            return Move("pile", number=piles[0])
        return Move("pass")


# --- rehearsing with the engine alone, to choose the seed ----------------------------------


def game_settings(seed: int) -> Settings:
    return Settings(
        players=PLAYERS, setup="variable", decisions="sealed", money="hidden", seed=seed
    )


def rehearse(seed: int, max_turns: int = 3) -> int | None:
    """The phases the first test's game takes to reach every goal with this seed, or
    None if it does not within `max_turns` turns."""
    state = new_game(game_settings(seed))
    director, phases = Director(FOUNDER), 0
    while not director.finished:
        if state.is_over or state.turn > max_turns:
            return None
        movers = state.waiting if is_simultaneous(state) else state.waiting[:1]
        for colour in movers:
            seen = json.loads(json.dumps(view(state, colour)))  # as view.json has it
            try:
                state, log = submit(state, colour, parse_move(director.move(colour, seen).text()))
            except (IllegalMove, AssertionError):
                return None
            director.observe(log)
        phases += 1
    return phases


def best_seed(seeds: Iterable[int] = range(1, MAX_SEED)) -> int:
    rehearsed = {seed: phases for seed in seeds if (phases := rehearse(seed)) is not None}
    assert rehearsed, "no seed lets the scenario reach every goal in three turns"
    return min(rehearsed, key=lambda seed: (rehearsed[seed], seed))


def scenario() -> tuple[int, int]:
    """The seed for the first test's game, and the phases its rehearsal takes."""
    seed = SEED if rehearse(SEED) is not None else best_seed()
    phases = rehearse(seed)
    assert phases is not None
    return seed, phases


# --- people in browsers ---------------------------------------------------------------------


@dataclass
class Person:
    """One person: their own browser context (cookies), name and colour."""

    page: Page
    username: str
    name: str
    colour: str = ""

    def data(self, game: int) -> dict:
        """The game's JSON as this person may see it (view.json, with their cookies)."""
        response = self.page.request.get(f"/games/{game}/view.json")
        assert response.ok, response.status
        return response.json()

    def open_game(self, game: int) -> Page:
        self.page.goto(f"/games/{game}/", wait_until="domcontentloaded")
        return self.page


def submit_form(page: Page, button: str) -> None:
    with page.expect_navigation(wait_until="domcontentloaded"):
        page.click(button)


def sign_up(page: Page, username: str, name: str, time_zone: str) -> Person:
    page.goto("/")
    page.click("#nav-signup")
    page.fill("#id_username", username)
    page.fill("#id_email", f"{username}@example.org")
    page.fill("#id_display_name", name)
    page.select_option("#id_time_zone", time_zone)
    page.fill("#id_password1", PASSWORD)
    page.fill("#id_password2", PASSWORD)
    submit_form(page, "#signup")
    assert page.locator(".alert-danger, .invalid-feedback").count() == 0, page.content()
    assert page.locator("#signup-sent").count() == 1, page.content()
    # Issue 9: the account opens with the link emailed to its address, and "Continue".
    text = (
        OutgoingEmail.objects.filter(kind="signup_confirm", user__username=username)
        .latest("id")
        .text
    )
    link = re.search(r"https?://\S+?(/accounts/signup/\S+)", text)
    assert link is not None, text
    page.goto(link.group(1), wait_until="domcontentloaded")
    submit_form(page, "#signup-confirm")
    assert page.locator("#nav-profile").inner_text() == name  # signed up and logged in
    return Person(page, username, name)


def log_in(page: Page, username: str, name: str) -> Person:
    page.goto("/")
    page.click("#nav-login")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    submit_form(page, "#login")
    assert page.locator("#nav-profile").inner_text() == name
    return Person(page, username, name)


def create_game(
    person: Person, name: str, setup: str, computers: tuple[str, ...] = (), level: str = ""
) -> int:
    """A game made in the new-game form; `level`: the computers', if not the form's own."""
    page = person.page
    page.goto("/")
    page.click("#new-game")
    page.fill("#id_name", name)
    page.select_option("#id_player_count", "3")
    page.check(f'#create-game-form input[name="setup"][value="{setup}"]')
    page.check('#create-game-form input[name="decisions"][value="sealed"]')
    page.check('#create-game-form input[name="colour"][value="red"]')
    for colour in computers:
        page.check(f'#create-game-form input[name="computer_colours"][value="{colour}"]')
    if level:
        page.check(f'#create-game-form input[name="computer_level"][value="{level}"]')
    submit_form(page, "#create-game")
    found = re.search(r"/games/(\d+)/$", page.url)
    assert found, f"creating the game led to {page.url}: {page.content()}"
    person.colour = "red"
    return int(found[1])


def click_board(page: Page, selector: str) -> None:
    """Click a cell or an edge of the board that the page marks as a legal target."""
    target = page.locator(f"#board {selector}")
    assert "legal" in (target.get_attribute("class") or "").split(), (
        f"{selector} is not marked legal on the board"
    )
    target.click()


def play(person: Person, game: int, move: Move) -> bool:
    """Make the move through the game page's form for it (clicking the board where a
    form takes cells or walls); False if the page has no such form or refuses the move
    (the game moved on meanwhile), after which the caller looks again."""
    page = person.open_game(game)
    if page.locator(f"#{move.kind}-form").count() == 0:
        return False
    if move.kind == "place":
        click_board(page, f'[data-cell="{move.cells[0]}"]')  # the castle field takes it
        # then the knight's (the page marks only castle cells as legal)
        page.locator(f'#board [data-cell="{move.cells[1]}"]').click()
        assert page.input_value("#place-castle") == move.cells[0]
        assert page.input_value("#place-knight") == move.cells[1]
    elif move.kind == "decide":
        for card in move.cards:
            page.check(f"#decide-cards_{card - 1}")
    elif move.kind == "bid":
        page.fill("#bid-ducats", str(move.number))
    elif move.kind == "walls":
        for wall in move.walls:
            click_board(page, f'[data-wall="{wall}"]')
        assert page.input_value("#walls-walls") == " ".join(move.walls)
    elif move.kind == "swords":
        for cell in move.cells:
            click_board(page, f'[data-cell="{cell}"]')  # the board's default: knights
        if move.expand:
            page.focus("#swords-expand")
            for cell in move.expand:
                click_board(page, f'[data-cell="{cell}"]')
        assert page.input_value("#swords-knights") == " ".join(move.cells)
        assert page.input_value("#swords-expand") == " ".join(move.expand)
    elif move.kind == "pile":
        page.check(f"#pile-pile_{move.number - 1}")
    elif move.kind == "take":
        page.check(f'#take-form input[name="card"][value="{move.card}"]')
    submit_form(page, f"#{move.kind}-submit")
    return accepted(page, move)


def play_text(person: Person, game: int, text: str) -> bool:
    """Type the move in notation into the text fallback."""
    page = person.open_game(game)
    if page.locator("#move-text").count() == 0:
        return False
    page.fill("#move-text", text)
    submit_form(page, "#move-submit")
    return accepted(page, None)


def accepted(page: Page, move: Move | None) -> bool:
    if page.locator(".alert-danger").count():
        return False
    said = page.locator(".alert-success").inner_text()
    assert said.startswith("Your submission:"), said
    assert move is None or move.text() in said, (move, said)
    return True


def wait_for_phase(person: Person, game: int, after: int, worker: Worker) -> dict:
    """Poll the player's view.json until the worker has resolved phase `after`."""
    deadline = time.monotonic() + PHASE_TIMEOUT
    while True:
        data = person.data(game)
        if data["game"]["phase_number"] > after or data["game"]["status"] == "finished":
            return data
        if time.monotonic() > deadline:
            stored = Game.objects.get(pk=game)
            pending = list(stored.pending.values_list("seat__colour", "phase_number", "text"))
            events = "\n".join(e["text"] for e in data["events"][-8:])
            worker_log = "\n".join(worker.log().splitlines()[-15:])
            pytest.fail(
                f"phase {after} of game {game} (seed {stored.seed}) was not resolved in "
                f"{PHASE_TIMEOUT} s: {data['view']['phase']}, pending {pending}\n"
                f"last events:\n{events}\nworker:\n{worker_log}",
                pytrace=False,
            )
        time.sleep(POLL)


def new_events(data: dict, seen: set[int]) -> Iterator[dict]:
    """The events of view.json not seen before, as the engine wrote them."""
    for event in data["events"]:
        if event["index"] not in seen:
            seen.add(event["index"])
            yield {**event["data"], "kind": event["kind"]}


def log_text(page: Page) -> str:
    return page.locator("#log").inner_text()


# --- 1. three people ------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def fast_passwords(settings) -> None:
    """Argon2 costs a second per sign-up and log-in; the live server shares these settings."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def check_sealed_decision_stays_secret(
    owner: Person, others: list[Person], game: int, move: Move
) -> None:
    """Plant a sealed decision; the owner's page shows it, the others' pages and JSON
    say only that the owner has submitted."""
    page = owner.open_game(game)
    secret = page.locator("#my-submission").inner_text()
    assert move.text() in secret
    for other in others:
        page = other.open_game(game)
        html = page.content()
        assert page.locator("#my-submission").count() == 0
        assert secret not in html and "Your submission" not in html
        waiting = page.locator(f'#waiting [data-colour="{owner.colour}"]').inner_text()
        assert waiting == f"{owner.name} ✓ submitted"  # that, and nothing more
        assert page.locator("#decisions").count() == 0
        data = other.data(game)
        assert data["my_submission"] is None
        assert "my_sealed" not in data["view"] and "sealed" not in data["view"]
        assert data["view"]["decisions"] == {}
        assert move.text() not in json.dumps(data)


def test_three_people_sign_up_and_play_turns_through_the_ui(
    transactional_db, live_server, celery_worker, new_page
):
    seed, rehearsed = scenario()
    ada = sign_up(new_page(), "ada", "Ada Lovelace", "Europe/London")
    ben = sign_up(new_page(), "ben", "Ben Okri", "Africa/Lagos")
    cyd = sign_up(new_page(), "cyd", "Cyd Charisse", "America/Chicago")

    game = create_game(ada, "Three people", setup="variable")
    assert "has not started" in ada.page.locator("#game-not-started").inner_text()
    ben.page.goto("/")  # ben joins from the lobby
    submit_form(ben.page, f"#join-{game}-ochre")
    ben.colour = "ochre"
    ada.page.goto("/")  # ada passes the invite link on to cyd
    invite = ada.page.input_value(f"#invite-link-{game}")
    # The rehearsed game: fixed while the game is open, as the seed is drawn at creation.
    Game.objects.filter(pk=game, status=Game.Status.OPEN).update(seed=seed)
    cyd.page.goto(invite)
    submit_form(cyd.page, "#join-lilac")
    cyd.colour = "lilac"
    assert cyd.page.url.endswith(f"/games/{game}/")
    assert cyd.page.locator("#my-seat").inner_text() == "You play Lilac."
    assert "castle and knight" in cyd.page.locator("#phase-text").inner_text()  # placement
    people = {p.colour: p for p in (ada, ben, cyd)}
    assert tuple(people) == PLAYERS and ada.colour == FOUNDER

    director, seen, secret_checked, phases = Director(FOUNDER), set(), False, 0
    while True:
        data = ada.data(game)
        director.observe(new_events(data, seen))
        if director.finished:
            break
        assert data["game"]["status"] == "running" and data["game"]["turn"] <= 3, (
            f"goals {sorted(director.done)} not reached in 3 turns (seed {seed})"
        )
        phase = data["view"]["phase"]
        simultaneous = phase["kind"] in ("decision", "duel")  # sealed (RULES 3.2, 4.2)
        movers = phase["waiting"] if simultaneous else phase["waiting"][:1]
        for colour in movers:
            person = people[colour]
            mine = data if person is ada else person.data(game)  # each reads their own
            move = director.move(colour, mine["view"])
            assert play(person, game, move), f"{person.name} could not submit {move.text()}"
            if phase["kind"] == "decision" and not secret_checked:
                others = [p for p in people.values() if p is not person]
                check_sealed_decision_stays_secret(person, others, game, move)
                secret_checked = True
        wait_for_phase(ada, game, data["game"]["phase_number"], celery_worker)
        phases += 1
    assert phases == rehearsed  # the site played the very game the engine rehearsed

    # Every goal is in everyone's log, in the game's own words (games/show/event_text.py).
    corner = director.corner
    assert corner is not None
    at = format_cell(corner.castle)
    public = [
        f"Ada Lovelace founds a region of 2 cells at {at}: +3 power.",
        "breaks off the negotiation: a duel decides.",
        "make sealed bids for",
        "The bids are revealed:",
        "wins the duel and pays 1 ducat to the bank.",
        "places a knight at",
        f"Ada Lovelace expands the region at {at} by {director.expanded_into}",
        "takes a card from politics pile",
    ]
    # On the board the founded and grown region is tinted and its walls drawn.
    v = ada.data(game)["view"]
    regions = [r for r in v["regions"] if r["owner"] == FOUNDER]
    assert len(regions) == 1
    cells = {cell_of(c) for c in regions[0]["cells"]}
    assert {corner.castle, corner.knight} < cells
    assert director.expanded_into in {format_cell(c) for c in cells}
    for person in people.values():
        log = log_text(person.open_game(game))
        for sentence in public:
            assert sentence in log, f"{person.name}'s log lacks {sentence!r}:\n{log}"
        # the card taken is named to its taker alone
        assert ("You took the" in log) == (person.colour == director.took_card), log
        board = person.page.locator("#board")
        tinted = board.locator(f"rect.region-{FOUNDER}").evaluate_all(
            "rects => rects.map(r => [+r.getAttribute('x'), +r.getAttribute('y')])"
        )
        assert {((x - MARGIN) // CELL, (y - MARGIN) // CELL) for x, y in tinted} == cells
        for wall in border_walls(v, cells):
            assert board.locator(f'line.wall[data-wall-at="{wall}"]').count() == 1, wall
        power = person.page.locator(f"#player-{FOUNDER} .power").inner_text()
        assert int(power) == v["players"][FOUNDER]["power"] >= 4  # founded 3, expanded 1


# --- 2. against computers, to the end and into the archive ------------------------------------


MAX_PHASES = 600  # a whole game against computers is some 200 phases


def simple_move(v: View) -> Move | str:
    """A plain legal move for whatever is asked: a Move for a form, or notation text."""
    ask = v["ask"]
    kind = ask["phase"]
    if kind == "decision":  # money first: nothing to perform afterwards
        actions = v["card"].split()
        slots = sorted(range(1, 4), key=lambda n: (not actions[n - 1].startswith("M"), n))
        return Move("decide", cards=tuple(sorted(slots[: ask["cards"]])))
    if kind == "negotiation":
        return Move("break-off")
    if kind == "duel":
        return Move("bid", number=0)
    if kind == "placement":
        taken = occupied(v)
        for castle in map(cell_of, ask["castles"]):
            for knight in neighbours(v, castle):
                if terrain(v, knight) == "." and knight not in taken:
                    return Move("place", cells=(format_cell(castle), format_cell(knight)))
    return "pass"  # perform and crown: decline, typed into the text fallback


def test_a_game_with_hard_computers_is_made_in_the_form_and_plays_a_phase(
    transactional_db, live_server, celery_worker, new_page, alice
):
    """Issue 26, item 5: the level chosen in the new-game form is the game's; the table
    names each computer with it, and the computers (searching, in the worker) move."""
    person = log_in(new_page(), "alice", "Alice")
    game = create_game(
        person,
        "Alice against hard machines",
        setup="basic",
        computers=("ochre", "lilac"),
        level="hard",
    )
    assert Game.objects.get(pk=game).computer_level == "hard"
    page = person.open_game(game)
    for colour in ("ochre", "lilac"):
        assert f"Computer ({colour}, hard)" in page.locator(f"#player-{colour}").inner_text()
    data = person.data(game)
    number, move = data["game"]["phase_number"], simple_move(data["view"])
    assert play(person, game, move) if isinstance(move, Move) else play_text(person, game, move)
    data = wait_for_phase(person, game, number, celery_worker)
    assert data["game"]["phase_number"] > number  # the computers' moves came in too


def test_a_game_against_computers_is_played_to_the_end_and_found_in_the_archive(
    transactional_db, live_server, celery_worker, new_page, alice
):
    person = log_in(new_page(accept_downloads=True), "alice", "Alice")
    game = create_game(
        person, "Alice against the machines", setup="basic", computers=("ochre", "lilac")
    )
    seed = Game.objects.get(pk=game).seed
    moves = 0
    data = person.data(game)
    while data["game"]["status"] != "finished":
        assert data["game"]["phase_number"] < MAX_PHASES, f"game {game} (seed {seed}) is endless"
        number, v = data["game"]["phase_number"], data["view"]
        if v.get("ask") and data["my_submission"] is None:
            move = simple_move(v)
            done = (
                play(person, game, move)
                if isinstance(move, Move)
                else play_text(person, game, move)
            )
            if not done:  # a computer moved first in a negotiation: look again
                data = person.data(game)
                assert data["game"]["phase_number"] > number, (
                    f"{move} refused in phase {number} of game {game} (seed {seed})"
                )
                continue
            moves += 1
        data = wait_for_phase(person, game, number, celery_worker)
    assert moves >= 10  # at least a decision a turn

    page = person.open_game(game)
    assert page.locator("#game-status").inner_text() == "Finished"
    assert page.locator("#winners").count() == 1
    assert "The game is over" in log_text(page)
    final = {c: int(page.locator(f"#player-{c} .power").inner_text()) for c in PLAYERS}

    # The archive: filter by the player's name, open the game, step through it.
    page.goto("/")
    page.click("#all-finished")
    page.fill("#id_player", person.name)
    submit_form(page, "#archive-filter-submit")
    rows = page.locator("#archive-table tbody tr[data-game]")
    assert rows.count() == 1 and rows.get_attribute("data-game") == str(game)
    submit_form(page, f'#archive-table tr[data-game="{game}"] a')
    assert page.locator("#step-number").inner_text() == "0"
    assert "disabled" in (page.get_attribute("#step-prev", "class") or "")
    last = int(page.get_attribute("#step-input", "max") or 0)
    assert last > 20
    submit_form(page, "#step-next")
    assert page.locator("#step-number").inner_text() == "1"
    marker_at_1 = page.get_attribute("#power-chart line.marker", "x1")
    submit_form(page, "#step-last")
    assert page.locator("#step-number").inner_text() == str(last)
    assert "disabled" in (page.get_attribute("#step-next", "class") or "")
    assert page.get_attribute("#power-chart line.marker", "x1") != marker_at_1
    assert page.locator("#archive-events").inner_text().count("The game is over") == 1
    assert page.locator("#archive-board svg.board-svg").count() == 1
    castles_at_the_end = page.locator("#archive-board svg use.castle").count()
    chart = page.locator("#power-chart svg")
    assert chart.count() == 1 and chart.is_visible()
    assert sorted(
        chart.locator("polyline.power-line").evaluate_all(
            "lines => lines.map(line => line.dataset.colour)"
        )
    ) == sorted(PLAYERS)
    shown = page.locator("#archive-result").inner_text()
    submit_form(page, "#step-first")
    assert page.locator("#step-number").inner_text() == "0"
    assert page.locator("#archive-board svg.board-svg").is_visible()

    # The record: it replays, with the engine alone, to the final power shown.
    with page.expect_download() as download:
        page.click("#download-record")
    assert download.value.suggested_filename == f"lowenherz-game-{game}.json"
    record = read_record(Path(download.value.path()).read_bytes())
    replayed = replay_record(record)
    result = Result.of(replayed)
    assert record.result is not None and result.matches(record.result)
    assert result.power == final
    assert castles_at_the_end == len(replayed.pos.castles) > 0
    assert {player for player, _ in record.moves} == set(PLAYERS)  # the computers moved
    names = {
        "red": "Alice",
        "ochre": "Computer (ochre, normal)",
        "lilac": "Computer (lilac, normal)",
    }
    for colour, name in names.items():
        assert f"{name} {result.power[colour]}" in shown, shown
    assert shown.startswith("Won by " + " and ".join(names[c] for c in result.winners) + ".")
