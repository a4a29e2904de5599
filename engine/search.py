"""A computer player that searches: determinised Monte Carlo over the seat's view.

What it may know is exactly `engine.view.view(state, seat)`: the search never reads
the state it is given for anything else. From the view it rebuilds a state in which
every hidden part is drawn at random, consistent with what the view shows
(`Skeleton.determinise`):

- others' hands: dealt from the politics cards that are neither in the seat's hand
  nor discarded (RULES 1: 13 cards), as many to each as the view counts; the rest
  make up the piles, as many as each holds (the pile the seat looks through, in a
  crown phase, is known);
- the action deck: the piles of RULES 1.2 are stacked in order, so the view's count
  of cards left says which pile is being drawn; the rest of that pile and every
  later pile are shuffled (the King is somewhere in pile E);
- sealed decisions and bids of others: not drawn, but made again in the rollouts
  (the players who sealed are awaited again);
- others' ducats, when money is hidden (RULES 1): drawn near the seat's own.

Each iteration draws one such state, then plays every candidate move on it and
follows each with a rollout by a fast policy (the greedy player) for all seats,
to the end of the turn after the next one or of the game; the state reached is scored
for the seat (`utility`). Every candidate meets the same drawn state and the same
rollout seeds (common random numbers), so the comparison of candidates is paired.
The candidate with the best mean wins. A decision with one legal candidate takes
no search.

Candidates are few by design: every card choice (with the politics plays a policy
proposes), bids and offers at spaced amounts, and the walls and swords moves the
policy proposes with different seeds. Placements (RULES 2.3) are left to the policy.

Determinism: the decision's random generator is seeded from the player's seed and
the view, so the same view, seat and seed give the same move when the search is
bounded by iterations (`budget=None`); with a time budget the number of iterations
depends on the machine. Memory: each iteration's states are dropped when it ends.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from engine.board import Board
from engine.errors import IllegalMove
from engine.events import Log
from engine.game import GameState, apply, check
from engine.moves import (
    POLITICS_CARDS,
    Accept,
    Bid,
    BreakOff,
    Choice,
    ChoosePile,
    Decide,
    EndAlliance,
    Offer,
    Pass,
    Submission,
    TakeCard,
)
from engine.position import Player, Position
from engine.serialize import decode, move_from_json, phase_from_json
from engine.setup import Settings, default_deck, placement_order
from engine.view import View, view

BUDGET = 0.25  # seconds a decision, by default
MAX_ITERATIONS = 10_000  # a bound when there is no time budget
HORIZON = 2  # turns a rollout plays: this one and the next (or to the end of the game)
PERFORM_HORIZON = 1  # for walls, swords and a politics card: to the end of this turn
POLICY_PROPOSALS = 5  # proposals asked of the policy for walls, swords and politics
MAX_CANDIDATES = 6
MONEY_WORTH = 0.3  # power a ducat is worth at the horizon (it wins duels later)
HAND_CARD_WORTH = 1.5  # power an Alliance or Renegade in hand is worth
UTILITY_SCALE = 4.0  # power lead that makes a position about 73% won
HIDDEN_DUCATS_SPREAD = 5  # others' hidden ducats are drawn within this of one's own
BID_FRACTIONS = (0.0, 0.15, 0.3, 0.5, 0.75, 1.0)  # duel bids, as shares of the ducats held
OFFERS = (1, 2, 4, 6)  # negotiation offers tried (RULES 4.1), when held


class Policy(Protocol):
    """A fast computer player for rollouts and for proposing candidates (engine.ai)."""

    def play(self, state: GameState, player: str) -> tuple[Submission, GameState, Log]: ...

    def propose(self, state: GameState, player: str) -> Submission: ...


PolicyMaker = Callable[[str], Policy]


@dataclass
class Stats:
    """What the last decision did: for tests and the arena."""

    iterations: int = 0
    rollouts: int = 0
    candidates: int = 0
    seconds: float = 0.0
    means: dict[str, float] = field(default_factory=dict)


class Search:
    """Choose a seat's move by determinised rollouts (see the module's docstring)."""

    def __init__(
        self,
        seed: object,
        policy: PolicyMaker,
        budget: float | None = BUDGET,
        iterations: int | None = None,
        horizon: int = HORIZON,
    ) -> None:
        self.seed = seed
        self.policy = policy
        self.budget = budget
        self.iterations = iterations
        self.horizon = horizon
        self.stats = Stats()

    def choose(self, state: GameState, seat: str) -> Submission | None:
        """The seat's move, or None where the search leaves the choice to the policy
        (placement). Only `view(state, seat)` is read."""
        return self.choose_from_view(view(state, seat))

    def choose_from_view(self, seen: View) -> Submission | None:
        started = time.perf_counter()
        self.stats = Stats()
        seat = seen["viewer"]
        if seat is None or "ask" not in seen or seen["phase"]["kind"] == "placement":
            return None
        rng = random.Random(decision_seed(self.seed, seen))
        skeleton = Skeleton(seen, seat)
        candidates = self.candidates(skeleton, rng)
        self.stats.candidates = len(candidates)
        if len(candidates) == 1:  # one legal move: no search
            return candidates[0]
        totals = [0.0] * len(candidates)
        limit = self.iterations or MAX_ITERATIONS
        horizon = PERFORM_HORIZON if seen["phase"]["kind"] in ("perform", "crown") else self.horizon
        done = rollouts = 0
        while done < limit:
            world = skeleton.determinise(rng)
            seeds = rng.getrandbits(32)
            scores: list[float] = []
            for move in candidates:
                if rollouts and self.out_of_time(started, rollouts):
                    break
                scores.append(self.rollout(world, seat, move, seeds, horizon))
                rollouts += 1
            if len(scores) < len(candidates):
                if not done:  # out of time in the first: compare the candidates it reached
                    totals, candidates = scores, candidates[: len(scores)]
                    done = 1
                break  # a later iteration cut short is not compared
            totals = [t + s for t, s in zip(totals, scores, strict=True)]
            done += 1
        self.stats.iterations, self.stats.rollouts = done, rollouts
        self.stats.seconds = time.perf_counter() - started
        self.stats.means = {repr(m): t / done for m, t in zip(candidates, totals, strict=True)}
        best = max(range(len(candidates)), key=lambda i: (totals[i], -i))
        return candidates[best]

    def out_of_time(self, started: float, rollouts: int) -> bool:
        """Whether one more rollout would likely end past the budget."""
        if self.budget is None:
            return False
        elapsed = time.perf_counter() - started
        return elapsed + elapsed / max(1, rollouts) > self.budget

    # --- candidates ----------------------------------------------------------------

    def candidates(self, skeleton: Skeleton, rng: random.Random) -> list[Submission]:
        """Distinct legal moves worth comparing, in a fixed order."""
        world = skeleton.determinise(rng)
        seat = skeleton.seat
        kind = world.phase.kind
        found: list[Submission] = []
        if kind == "decision":
            found += card_choices(world, seat)
        elif kind == "duel":
            found += bids(world.pos.players[seat])
        elif kind == "negotiation":
            found += negotiation_moves(world, seat)
        elif kind == "crown":
            pile = world.piles[(world.phase.pile or 1) - 1]
            found += [TakeCard(c) for c in sorted(set(pile))] + [Pass()]
        elif kind == "perform" and (world.phase.action or "") == "P":
            found += [ChoosePile(i + 1) for i, pile in enumerate(world.piles) if pile]
        if kind in ("decision", "perform"):
            found += self.proposals(world, seat, rng)
        unique: list[Submission] = list(
            dict.fromkeys(m for m in found if not isinstance(m, EndAlliance))
        )
        legal = [m for m in unique if is_legal(world, seat, m)]
        if kind == "perform" and not legal:
            legal = [Pass()]
        return legal[:MAX_CANDIDATES] if kind != "decision" else legal

    def proposals(self, world: GameState, seat: str, rng: random.Random) -> list[Submission]:
        """What the policy proposes with several seeds: walls and swords moves, and
        decisions with a politics card (RULES 7)."""
        found: list[Submission] = []
        for _ in range(POLICY_PROPOSALS):
            move = self.policy(str(rng.getrandbits(32))).propose(world, seat)
            if world.phase.kind == "decision":
                if isinstance(move, Decide) and any(c.politics for c in move.choices):
                    found.append(canonical(move))
            else:
                found.append(move)
        return found

    # --- rollouts ------------------------------------------------------------------

    def rollout(
        self, world: GameState, seat: str, move: Submission, seeds: int, horizon: int
    ) -> float:
        """Play `move`, then the policy for every seat to the horizon; the seat's utility."""
        state, _ = apply(world, seat, move)
        players = {p: self.policy(f"{seeds}/{i}") for i, p in enumerate(state.players)}
        last_turn = world.turn + horizon - 1
        while not state.is_over and state.turn <= last_turn:
            player = state.phase.waiting[0]
            _, state, _ = players[player].play(state, player)
        return utility(state, seat)


# --- what a move is compared by -------------------------------------------------------


def utility(state: GameState, seat: str) -> float:
    """The seat's share of the win once the game is over (RULES 8); before, a smooth
    guess of it from the lead in what each player's position is worth."""
    if state.is_over:
        return 1 / len(state.winners) if seat in state.winners else 0.0
    silver = silver_to_come(state.deck)
    worth = {p: position_worth(state.pos, p, silver) for p in state.players}
    lead = worth[seat] - max(w for p, w in worth.items() if p != seat)
    return 1 / (1 + math.exp(-lead / UTILITY_SCALE))


def silver_to_come(deck: Sequence[str]) -> int:
    """SILVER cards before the King in a (drawn) deck: hills score that often more."""
    count = 0
    for card in deck:
        if card == "KING":
            break
        count += card == "SILVER"
    return count


def position_worth(pos: Position, player: str, silver: int) -> float:
    """Power now, plus what the seat will surely add (hills at each SILVER still to come
    and at the end, RULES 6.3; Parchment, 7.4), plus money and playable cards."""
    holder = pos.players[player]
    parchment = sum(int(c.split()[1]) for c in holder.hand if c.startswith("parchment"))
    politics = sum(1 for c in holder.hand if c in ("alliance", "renegade"))
    money = holder.ducats + sum(holder.treasure())
    hills = pos.hills_in_regions(player)
    return (
        holder.power
        + hills * (1 + silver)
        + parchment
        + MONEY_WORTH * money
        + HAND_CARD_WORTH * politics
    )


# --- the moves compared ------------------------------------------------------------------


def card_choices(state: GameState, seat: str) -> list[Submission]:
    """RULES 3.2: every set of decision cards, without politics."""
    count = state.cards_to_choose(seat)
    return [
        Decide(tuple(Choice(c) for c in cards))
        for cards in itertools.combinations((1, 2, 3), count)
    ]


def canonical(move: Decide) -> Decide:
    """Cards in rising order: the order of the cards chosen makes no difference."""
    return Decide(tuple(sorted(move.choices, key=lambda c: c.card)))


def bids(holder: Player) -> list[Submission]:
    """RULES 4.2: bids at spaced shares of the ducats, and all ducats with each
    Treasure card (7.3)."""
    amounts = sorted({round(holder.ducats * f) for f in BID_FRACTIONS})
    found: list[Submission] = [Bid(a) for a in amounts]
    found += [Bid(holder.ducats, (t,)) for t in sorted(set(holder.treasure()))]
    return found


def negotiation_moves(state: GameState, seat: str) -> list[Submission]:
    """RULES 4.1: accept a standing offer of the other's, break off, or offer."""
    found: list[Submission] = []
    offer = state.phase.offer
    if offer is not None and offer[0] != seat:
        found.append(Accept())
    found.append(BreakOff())
    # Only offers above the standing one: offers then rise and every negotiation ends,
    # also between two searching players.
    least = offer[1] + 1 if offer is not None else 1
    ducats = state.pos.players[seat].ducats
    found += [Offer(a) for a in OFFERS if least <= a <= ducats]
    return found


def is_legal(state: GameState, player: str, move: Submission) -> bool:
    try:
        check(state, player, move)
    except IllegalMove:
        return False
    return True


def decision_seed(seed: object, seen: View) -> int:
    """A seed for one decision: the player's seed and everything the seat sees."""
    text = json.dumps(seen, sort_keys=True, default=str)
    digest = hashlib.sha256(f"{seed}\n{text}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


# --- a state from a view ------------------------------------------------------------------


class Skeleton:
    """A seat's view made a state, its hidden parts left to `determinise`."""

    def __init__(self, seen: View, seat: str) -> None:
        self.seat = seat
        self.seen = seen
        self.base = public_state(seen, seat)
        players = seen["players"]
        self.hand_sizes = {p: players[p]["hand_size"] for p in self.others}
        self.pile_sizes = list(seen["politics_piles"])
        self.known_pile = seen.get("pile_cards")
        self.unseen = unseen_politics(seen, seat)
        self.deck_left = seen["deck_left"]
        self.hidden_ducats = "ducats" not in players[self.others[0]] if self.others else False

    @property
    def others(self) -> list[str]:
        return [p for p in self.seen["settings"]["players"] if p != self.seat]

    def determinise(self, rng: random.Random) -> GameState:
        """A state the seat cannot tell from the true one: hidden parts drawn."""
        state = self.base.copy()
        pool = list(self.unseen)
        rng.shuffle(pool)

        def deal() -> str:
            # A made-up position (engine.scenario) may hold more cards than the game has.
            return pool.pop() if pool else rng.choice(POLITICS_CARDS)

        for p in self.others:
            state.pos.players[p].hand = [deal() for _ in range(self.hand_sizes[p])]
        looked_at = state.phase.pile if self.known_pile is not None else None
        for i, size in enumerate(self.pile_sizes):
            if looked_at == i + 1 and self.known_pile is not None:
                state.piles[i] = list(self.known_pile)
            else:
                state.piles[i] = [deal() for _ in range(size)]
        state.deck = remaining_deck(self.seen, rng)
        if self.hidden_ducats:
            mine = state.pos.players[self.seat].ducats
            offer = state.phase.offer
            for p in self.others:
                # A standing offer (RULES 4.1) is of money the offerer has.
                least = offer[1] if offer is not None and offer[0] == p else 0
                low = max(least, mine - HIDDEN_DUCATS_SPREAD)
                state.pos.players[p].ducats = rng.randint(
                    low, max(low, mine + HIDDEN_DUCATS_SPREAD)
                )
        return state


def unseen_politics(seen: View, seat: str) -> list[str]:
    """Politics cards the seat has not seen leave the game: all but its hand, the
    discard and the pile it looks through. (Treasure spent in a duel leaves the game
    unseen by the view; the deal then holds one card too many and leaves it out.)"""
    pool = list(POLITICS_CARDS)
    for card in [*seen["players"][seat].get("hand", []), *seen["discard"]]:
        if card in pool:
            pool.remove(card)
    for card in seen.get("pile_cards", []):
        if card in pool:
            pool.remove(card)
    return sorted(pool)


def remaining_deck(seen: View, rng: random.Random) -> list[str]:
    """RULES 1.2: the cards still face down, drawn. The piles are stacked in order, so
    the count left says which pile is being drawn; its undrawn cards (less the card on
    the table) and the later piles are shuffled. A custom deck (its piles hidden) is
    taken to be shaped as the default one."""
    settings = seen["settings"]
    piles = [
        list(cards)
        for name, cards in default_deck().items()
        if not (name == "A" and settings["setup"] == "basic")
    ]
    left = seen["deck_left"]
    deck: list[str] = []
    for pile in reversed(piles):
        if left <= 0:
            break
        if len(pile) <= left:
            rng.shuffle(pile)
            deck[:0] = pile
            left -= len(pile)
            continue
        card = seen["card"]
        rest = [c for c in pile if c != card] if card in pile else list(pile)
        rng.shuffle(rest)
        deck[:0] = rest[:left]
        left = 0
    return deck


def public_state(seen: View, seat: str) -> GameState:
    """The state as far as the view shows it; hidden parts are left empty."""
    settings_seen = seen["settings"]
    players = tuple(settings_seen["players"])
    settings = Settings(
        players=players,
        setup=settings_seen["setup"],
        decisions=settings_seen["decisions"],
        money=settings_seen["money"],
        neutral=settings_seen["neutral"],
    )
    pos = public_position(seen, seat)
    start = players.index(seen["start_player"])
    phase = phase_from_json(seen["phase"])
    sealed: dict[str, Decide | Bid] = {}
    mine = seen.get("my_sealed")
    if mine is not None:
        move = move_from_json(mine)
        assert isinstance(move, Decide | Bid)
        sealed[seat] = move
    # Others who sealed a decision or bid are awaited again: their choices are drawn
    # by the rollouts, not read.
    resealing = set(seen["submitted"]) - {seat}
    if resealing:
        order = [*players[start:], *players[:start]]
        phase.waiting = [p for p in order if p in resealing or p in phase.waiting]
    state = GameState(
        settings=settings,
        pos=pos,
        start=start,
        deck=[],
        piles=[[] for _ in seen["politics_piles"]],
        phase=phase,
        turn=seen["turn"],
        card=seen["card"],
        slot=slot_of(seen),
        decisions={p: decode(c, tuple[Choice, ...]) for p, c in seen["decisions"].items()},
        sealed=sealed,
        discard=list(seen["discard"]),
        winners=list(seen["winners"]),
    )
    if phase.kind == "placement":
        state.placements = placement_order(settings, start)[len(pos.castles) :]
    return state


def slot_of(seen: View) -> int:
    """The action being resolved: no card shows one symbol twice (RULES 1.2)."""
    card, action = seen["card"], seen["phase"]["action"]
    if card is None or action is None or action not in card.split():
        return 0
    return card.split().index(action)


def public_position(seen: View, seat: str) -> Position:
    holders = {}
    for p, shown in seen["players"].items():
        hand = list(shown.get("hand", [])) if p == seat else []
        holders[p] = Player(shown.get("ducats", 0), shown["power"], hand)
    pos = Position(
        board=board_of(tuple(seen["board"])),
        players=holders,
        castles={(int(x), int(y)): str(c) for x, y, c in seen["castles"]},
        knights={(int(x), int(y)): str(c) for x, y, c in seen["knights"]},
        walls={((a[0], a[1]), (b[0], b[1])) for a, b in seen["walls"]},
        wall_supply=seen["wall_supply"],
        knight_supply=dict(seen["knight_supply"]),
        alliances={((a[0], a[1]), (b[0], b[1])) for a, b in seen["alliances"]},
    )
    # Every region there is was founded (RULES 6.1): walls never undo one.
    pos.founded = {r.castle for r in pos.regions()}
    return pos


_BOARDS: dict[tuple[str, ...], Board] = {}


def board_of(rows: tuple[str, ...]) -> Board:
    """One Board per terrain (boards are immutable): checked once, shared after."""
    if rows not in _BOARDS:
        if len(_BOARDS) > 64:
            _BOARDS.clear()
        _BOARDS[rows] = Board(rows)
    return _BOARDS[rows]
