"""The search player (engine.search) and the arena (engine.arena).

It may know only its seat's view (engine.view): the hidden parts of a game (others'
hands and sealed moves, the piles, the deck's order, others' ducats when money is
hidden, RULES 1, 3.2, 4.2) are drawn, never read. Its searches here are bounded by
iterations (`budget=None`), so that a move depends only on the view and the seed."""

from __future__ import annotations

import contextlib
import io
import json
import random

import pytest

from engine import arena
from engine.ai import PLAYERS, RandomPlayer, SearchPlayer
from engine.game import GameState, check, new_game
from engine.moves import Accept, Bid, Choice, Decide, Offer
from engine.position import COLOURS
from engine.search import Skeleton, negotiation_moves
from engine.setup import Settings
from engine.simulate import game_seed
from engine.view import view


def searcher(seed: object = "s", iterations: int = 1) -> SearchPlayer:
    return SearchPlayer(seed, budget=None, iterations=iterations)


def states_of_a_game(players: int = 3, seed: int = 4) -> list[GameState]:
    """Every state of a game between random players, placement left out (RULES 2.3:
    the search leaves placements to its policy)."""
    settings = Settings(players=COLOURS[:players], seed=game_seed(seed, 0))
    seats = {p: RandomPlayer(f"{seed}/{p}") for p in settings.players}
    state, states = new_game(settings), []
    while not state.is_over:
        if state.phase.kind != "placement":
            states.append(state)
        player = state.phase.waiting[0]
        _, state, _ = seats[player].play(state, player)
    return states


@pytest.fixture(scope="module")
def states() -> list[GameState]:
    return states_of_a_game()


def one_of_each_kind(states: list[GameState], each: int = 2) -> list[GameState]:
    """A few states of every kind of phase (decision, negotiation, duel, perform, crown)."""
    picked: dict[str, list[GameState]] = {}
    for state in states:
        if len(found := picked.setdefault(state.phase.kind, [])) < each:
            found.append(state)
    return [s for found in picked.values() for s in found]


def test_the_search_submits_only_legal_moves(states: list[GameState]) -> None:
    chosen = one_of_each_kind(states)
    assert {s.phase.kind for s in chosen} >= {"decision", "perform", "duel", "negotiation"}
    for state in chosen:
        player = state.phase.waiting[0]
        check(state, player, searcher().choose(state, player))  # raises if illegal


def seen_without_resealing(state: GameState, seat: str) -> dict[str, object]:
    """The seat's view, less what the search changes on purpose: others who sealed
    are awaited again in a drawn state (their choices are made in the rollouts)."""
    seen = dict(view(state, seat))
    seen.pop("submitted")
    seen["phase"] = {**seen["phase"], "waiting": sorted(seen["phase"]["waiting"])}  # type: ignore[dict-item]
    return seen


def test_a_drawn_state_looks_to_the_seat_as_the_true_one(states: list[GameState]) -> None:
    """Every part of a determinisation the seat can see is as in the game: only what it
    cannot see was drawn (RULES 1: hands, piles, deck order and others' ducats)."""
    rng = random.Random(1)
    for state in states[::7]:
        for seat in state.players:
            if set(state.sealed) - {seat}:
                continue  # others' sealed moves are made again: checked below
            drawn = Skeleton(view(state, seat), seat).determinise(rng)
            assert seen_without_resealing(drawn, seat) == seen_without_resealing(state, seat)


def hide_differently(state: GameState, seat: str, rng: random.Random) -> GameState:
    """The same game for `seat`, its hidden parts changed: others' hands and the piles
    dealt again, the deck reordered, others' ducats and sealed moves changed."""
    twin = state.copy()
    others = [p for p in twin.players if p != seat]
    # The pile the seat looks through in a crown phase (RULES 5.4) it sees.
    looked_at = twin.phase.pile if twin.phase.kind == "crown" else None
    piles = [pile for i, pile in enumerate(twin.piles) if i + 1 != looked_at]
    cards = [c for p in others for c in twin.pos.players[p].hand]
    cards += [c for pile in piles for c in pile]
    rng.shuffle(cards)
    for p in others:
        size = len(twin.pos.players[p].hand)
        twin.pos.players[p].hand, cards = cards[:size], cards[size:]
        twin.pos.players[p].ducats += rng.randint(0, 9)
    for pile in piles:
        pile[:], cards = cards[: len(pile)], cards[len(pile) :]
    rng.shuffle(twin.deck)
    for p in others:
        move = twin.sealed.get(p)
        if isinstance(move, Bid):
            twin.sealed[p] = Bid(twin.pos.players[p].ducats)
        elif isinstance(move, Decide):
            twin.sealed[p] = Decide(tuple(reversed(move.choices)))
    return twin


def test_what_the_seat_cannot_see_does_not_change_its_move(states: list[GameState]) -> None:
    rng = random.Random(2)
    chosen = [s for s in one_of_each_kind(states, each=3) if s.phase.kind != "perform"]
    chosen += [s for s in states if set(s.sealed) - set(s.phase.waiting)][:3]
    for state in chosen:
        seat = state.phase.waiting[0]
        twin = hide_differently(state, seat, rng)
        assert view(twin, seat) == view(state, seat)
        assert twin.deck != state.deck or len(state.deck) < 2
        on_twin, on_state = searcher(iterations=2), searcher(iterations=2)
        assert on_twin.choose(twin, seat) == on_state.choose(state, seat)
        # Not only the move: every rollout scored the same (nothing hidden was read).
        assert on_twin.search.stats.means == on_state.search.stats.means


def test_the_same_state_seat_and_seed_give_the_same_move(states: list[GameState]) -> None:
    for state in one_of_each_kind(states, each=1):
        seat = state.phase.waiting[0]
        first, again = searcher("7", 3), searcher("7", 3)
        assert first.choose(state, seat) == again.choose(state, seat)
        assert first.search.stats.means == again.search.stats.means  # the same rollouts


def test_one_legal_move_takes_no_search(states: list[GameState]) -> None:
    """RULES 4.2: with no ducats and no Treasure the only bid is 0."""
    duel = next(s for s in states if s.phase.kind == "duel")
    seat = duel.phase.waiting[0]
    broke = duel.copy()
    broke.pos.players[seat].ducats = 0
    broke.pos.players[seat].hand = [c for c in broke.pos.players[seat].hand if "treasure" not in c]
    player = SearchPlayer("s", budget=None, iterations=50)
    assert player.choose(broke, seat) == Bid(0)
    assert (player.search.stats.candidates, player.search.stats.iterations) == (1, 0)
    rich = duel.copy()
    rich.pos.players[seat].ducats = 5
    player.search.iterations = 3
    assert player.choose(rich, seat) is not None
    assert player.search.stats.iterations == 3  # with a choice, it searches


def test_the_search_stops_at_its_time_budget(states: list[GameState]) -> None:
    """Past the time budget no more rollouts start (the iteration bound is far off):
    one rollout at least, to have a move."""
    state = next(s for s in states if s.phase.kind == "decision")
    player = SearchPlayer("s", budget=1e-9)
    assert player.choose(state, state.phase.waiting[0]) == Decide((Choice(1), Choice(2)))
    assert (player.search.stats.iterations, player.search.stats.rollouts) == (1, 1)


def run_arena(*args: str) -> dict[str, object]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert arena.main(list(args)) == 0
    return json.loads(out.getvalue())


def test_the_arena_plays_kinds_against_each_other() -> None:
    result = run_arena(
        "--players", "2", "--games", "2", "--seats", "search,random", "--seed", "3",
        "--budget", "0", "--iterations", "1",
    )  # fmt: skip
    kinds = result["kinds"]
    assert isinstance(kinds, dict) and set(kinds) == {"search", "random"}
    assert sum(k["share"] for k in kinds.values()) == pytest.approx(1.0)
    for kind in kinds.values():
        low, high = kind["interval95"]
        assert 0 <= low <= kind["share"] <= high <= 1
        assert kind["decisions"] > 0 and kind["seconds_median"] <= kind["seconds_p99"]
        assert kind["parity"] == 0.5


def test_the_arena_rotates_the_seats() -> None:
    table = arena.Table(3, ("search", "greedy", "random"), 1, None, 1)
    rotations = [arena.seat_kinds(table, g) for g in range(3)]
    assert [r.index("search") for r in rotations] == [0, 1, 2]


@pytest.mark.parametrize(
    "args",
    [
        ["--players", "3", "--seats", "search,greedy"],
        ["--players", "2", "--seats", "search,clever"],
        ["--players", "2", "--seats", "search,greedy", "--budget", "0"],
        ["--players", "2", "--seats", "search,greedy", "--budget", "-1"],
    ],
)
def test_the_arena_refuses_bad_arguments(args: list[str]) -> None:
    with pytest.raises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
        arena.main(args)


def test_every_kind_can_sit_in_the_arena() -> None:
    assert set(PLAYERS) == {"random", "greedy", "search"}
    table = arena.Table(2, ("random", "greedy"), 1, None, 1)
    assert all(isinstance(arena.make_player(k, "1", table), RandomPlayer) for k in PLAYERS)


def test_offers_rise_so_that_a_negotiation_ends(states: list[GameState]) -> None:
    """RULES 4.1: the search offers only above the standing offer, so two searching
    players cannot offer each other the same ducats for ever."""
    talk = next(s for s in states if s.phase.kind == "negotiation").copy()
    seat = talk.phase.waiting[0]
    other = next(p for p in talk.phase.contenders if p != seat)
    talk.pos.players[other].ducats = talk.pos.players[seat].ducats = 10
    talk.phase.offer = (other, 2)
    offers = [m.amount for m in negotiation_moves(talk, seat) if isinstance(m, Offer)]
    assert offers and min(offers) > 2
    assert Accept() in negotiation_moves(talk, seat)
