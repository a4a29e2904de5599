"""Computer players: they stand in for absent players (RULES 9) and drive simulations.

`RandomPlayer.choose(state, player)` returns a legal submission for whatever the
game waits on `player` for; `GreedyPlayer` does the same but picks the walls,
knights and expansions that gain it the most power. Every choice is checked by
`engine.game.check` before it is returned; after a bounded number of refused
tries the deadline default of RULES 9 is used instead, so a choice always exists.
`play(state, player)` is `choose` with the state the move leads to: the check that
accepts a move also applies it (`engine.game.attempt`), and a state a tactic has
produced while scoring moves is reused, so no move is checked or applied twice.

As `engine.game` has one handler per phase, a player has one tactic per phase
(`PlacementTactic`, `DecisionTactic`, ...), and tactics for walls, knights and
expansions, and politics that several phases use. All of one player's tactics
draw from the player's one random generator, in the order the choices are made,
so that a seed plays the same game.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

from engine import rules, search
from engine.board import BOARD_SIZES_KEPT, Cell, Edge, make_edge
from engine.errors import IllegalMove
from engine.events import Log
from engine.game import GameState, attempt, check, default_move, submit
from engine.moves import (
    Accept,
    Alliance,
    Bid,
    BreakOff,
    Choice,
    ChoosePile,
    Decide,
    EndAlliance,
    Expand,
    Knight,
    Offer,
    Pass,
    Place,
    Politics,
    Renegade,
    Submission,
    Swords,
    Walls,
)
from engine.phase_rules import legal_takes
from engine.position import Area, Position

M = TypeVar("M")
Outcome = tuple[GameState, Log]  # the state a move led to, and its events
MAX_TRIES = 12  # proposals checked before falling back to the deadline default
PLACEMENT_TRIES = 10  # placements looked ahead from before taking one blindly
PASS_CHANCE = 0.05  # how often an action is declined although it could be performed
POLITICS_CHANCE = 0.6  # how often a held Alliance or Renegade goes with a decision
END_ALLIANCE_CHANCE = 0.02
TREASURE_CHANCE = 0.2  # how often Treasure is spent where ducats would do
MAX_OFFERS = 2  # offers one player makes in one negotiation before accepting or breaking off
PLAN_CHANCE = 0.6  # how often a wall goes towards enclosing an own castle
INSIDE_CHANCE = 0.1  # how often a wall goes inside such an enclosure (cleared at founding)
ENCLOSURE_CELLS = 10  # largest box around a castle that a wall plan aims to enclose
POLITICS_TRIES = 8  # renegade (knight, cell) pairs checked per bordering pair of regions
GREEDY_WALLS = 60  # walls a greedy player scores per wall placed
GREEDY_SWORDS = 12  # random sword moves a greedy player scores


def is_legal(state: GameState, player: str, move: Submission) -> bool:
    try:
        check(state, player, move)
    except IllegalMove:
        return False
    return True


class RandomPlayer:
    """Random legal moves, biased to act rather than pass so that games are eventful."""

    def __init__(self, seed: int | str | None = None) -> None:
        self.rng = random.Random(seed)
        self.politics = PoliticsTactic(self.rng)
        self.tactics: dict[str, PhaseTactic] = {
            "placement": PlacementTactic(self.rng),
            "decision": DecisionTactic(self.rng, self.politics),
            "negotiation": NegotiationTactic(self.rng),
            "duel": DuelTactic(self.rng),
            "perform": self.perform_tactic(),
            "crown": CrownTactic(self.rng),
        }

    def perform_tactic(self) -> PerformTactic:
        return PerformTactic(self.rng)

    def choose(self, state: GameState, player: str) -> Submission:
        return self.decide(state, player, applying=False)[0]

    def play(self, state: GameState, player: str) -> tuple[Submission, GameState, Log]:
        """`choose`, and the state and events the move leads to: each move is applied
        once, by the check that accepts it (or by the tactic that scored it)."""
        move, outcome = self.decide(state, player, applying=True)
        assert outcome is not None
        return move, *outcome

    def decide(
        self, state: GameState, player: str, *, applying: bool
    ) -> tuple[Submission, Outcome | None]:
        """A legal move; with `applying`, also what it leads to (else only when a tactic
        had that already)."""
        if player not in state.phase.waiting:
            raise ValueError(f"the game does not wait for {player}")
        for _ in range(MAX_TRIES):
            move = self.propose(state, player)
            known = self.tactics[state.phase.kind].applied(state, player, move)
            if known is not None:
                return move, known
            if applying:
                if (outcome := attempt(state, player, move)) is not None:
                    return move, outcome
            elif is_legal(state, player, move):
                return move, None
        move = default_move(state, player)
        return move, submit(state, player, move) if applying else None

    def propose(self, state: GameState, player: str) -> Submission:
        """One candidate submission; `choose` checks it."""
        ending = self.politics.end_alliance(state.pos, player)
        if ending is not None:
            return ending
        return self.tactics[state.phase.kind].propose(state, player)


class GreedyPlayer(RandomPlayer):
    """Like `RandomPlayer`, but walls, knights and expansions are scored by simulating
    them and the one gaining the most power is chosen."""

    def perform_tactic(self) -> PerformTactic:
        return GreedyPerformTactic(self.rng)


# --- what every tactic may use --------------------------------------------------------


def favour(
    rng: random.Random,
    items: Sequence[M],
    preferred: Callable[[M], bool],
) -> Sequence[M]:
    """Half of the time only the preferred items, when there are any: knights that
    strengthen a region, expansions that attack one (RULES 5.3)."""
    chosen = [i for i in items if preferred(i)]
    return chosen if chosen and rng.random() < 0.5 else items


def treasure_for(rng: random.Random, pos: Position, player: str, amount: int) -> tuple[int, ...]:
    """RULES 7.3: one Treasure card when ducats fall short, and sometimes anyway."""
    holder = pos.players[player]
    if amount == 0:
        return ()
    if amount <= holder.ducats and rng.random() >= TREASURE_CHANCE:
        return ()
    covering = [t for t in holder.treasure() if t + holder.ducats >= amount]
    return (covering[0],) if covering else ()


class Tactic:
    """A part of a computer player's play; it draws from the player's generator."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng


class PhaseTactic(Tactic):
    """What the player proposes in one kind of phase."""

    def propose(self, state: GameState, player: str) -> Submission:
        raise NotImplementedError

    def applied(self, state: GameState, player: str, move: Submission) -> Outcome | None:
        """What `move` led to, if this tactic applied it to `state` while proposing it."""
        return None


# --- the phases -------------------------------------------------------------------------


class PlacementTactic(PhaseTactic):
    def propose(self, state: GameState, player: str) -> Submission:
        """RULES 2.3: a random legal placement, avoiding (with a look one placement
        ahead) those after which a colour still to place a castle has no legal cell."""
        colour = state.phase.colour
        assert colour is not None
        legal = rules.placement_cells(state.pos, colour)
        if not legal:
            return Pass()  # refused: `choose` falls back to the deadline default
        self.rng.shuffle(legal)
        if not state.placements[1:]:
            return Place(*legal[0])  # nobody places after this: every placement will do
        for castle, knight in legal[:PLACEMENT_TRIES]:
            scratch = state.pos.copy()
            scratch.castles[castle], scratch.knights[knight] = colour, colour
            if rules.can_place(scratch):  # for every colour alike
                return Place(castle, knight)
        return Place(*legal[0])


class DecisionTactic(PhaseTactic):
    def __init__(self, rng: random.Random, politics: PoliticsTactic) -> None:
        super().__init__(rng)
        self.politics = politics

    def propose(self, state: GameState, player: str) -> Submission:
        """RULES 3.2: the right number of cards, sometimes with a politics card (7)."""
        cards = self.rng.sample((1, 2, 3), state.cards_to_choose(player))
        choices = [Choice(card) for card in cards]
        if self.rng.random() < POLITICS_CHANCE:
            play = self.politics.play(state.pos, player)
            if play is not None:
                at = self.rng.randrange(len(choices))
                choices[at] = Choice(cards[at], play)
        return Decide(tuple(choices))


class NegotiationTactic(PhaseTactic):
    """RULES 4.1: at most MAX_OFFERS offers each, so every negotiation ends."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.negotiation: tuple[object, ...] | None = None  # the one offers are counted for
        self.offers = 0

    def propose(self, state: GameState, player: str) -> Submission:
        phase = state.phase
        key = (state.turn, state.slot, phase.action, tuple(phase.contenders))
        if key != self.negotiation:
            self.negotiation, self.offers = key, 0
        standing = phase.offer
        if standing is not None and standing[0] != player and self.rng.random() < 0.5:
            return Accept()
        if self.offers < MAX_OFFERS and self.rng.random() < 0.7:
            self.offers += 1
            return Offer(self.rng.randint(0, state.pos.players[player].ducats))
        return BreakOff()


class DuelTactic(PhaseTactic):
    def propose(self, state: GameState, player: str) -> Submission:
        """RULES 4.2: any ducats held, sometimes Treasure cards on top."""
        holder = state.pos.players[player]
        treasure: tuple[int, ...] = ()
        if holder.treasure() and self.rng.random() < 0.3:
            treasure = tuple(t for t in holder.treasure() if self.rng.random() < 0.5)
        return Bid(self.rng.randint(0, holder.ducats), treasure)


class PerformTactic(PhaseTactic):
    """RULES 5: walls, knights and expansions, or a politics pile to look through."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        self.walls = self.wall_tactic()
        self.swords = SwordsTactic(rng)

    def wall_tactic(self) -> WallTactic:
        return WallTactic(self.rng)

    def propose(self, state: GameState, player: str) -> Submission:
        action = state.phase.action
        assert action is not None
        if self.rng.random() < PASS_CHANCE:
            return Pass()
        if action.startswith("W"):
            return self.walls.propose(state.pos, player, int(action[1:]))
        if action.startswith("S"):
            return self.swords.propose(state.pos, player, int(action[1:]))
        return self.pile(state)

    def pile(self, state: GameState) -> Submission:
        """RULES 5.4: a politics pile that has cards."""
        piles = [i + 1 for i, pile in enumerate(state.piles) if pile]
        return ChoosePile(self.rng.choice(piles)) if piles else Pass()


class CrownTactic(PhaseTactic):
    def propose(self, state: GameState, player: str) -> Submission:
        """RULES 5.4: a card from the pile looked through."""
        takes = legal_takes(state)
        if not takes or self.rng.random() < PASS_CHANCE:
            return Pass()
        return self.rng.choice(takes)


# --- walls (RULES 5.1) ------------------------------------------------------------------


class WallTactic(Tactic):
    def propose(self, pos: Position, player: str, most: int) -> Submission:
        """1..most walls, each legal after the ones before it (simulated on a copy)."""
        scratch, chosen = pos.copy(), []
        for _ in range(self.rng.randint(1, most)):
            edge = self.pick_wall(scratch, player)
            if edge is None:
                break
            rules.place_wall(scratch, player, edge, [])
            chosen.append(edge)
        return Walls(tuple(chosen)) if chosen else Pass()

    def pick_wall(self, pos: Position, player: str) -> Edge | None:
        """Mostly a wall towards enclosing an own castle, so that regions get founded."""
        legal = rules.legal_walls(pos, player)
        if not legal:
            return None
        border, inside = enclosure_walls(pos, player, legal, self.rng)
        luck = self.rng.random()
        if border and luck < PLAN_CHANCE:
            return self.rng.choice(border)
        if inside and luck < PLAN_CHANCE + INSIDE_CHANCE:
            return self.rng.choice(inside)
        return self.rng.choice(legal)


# --- knights and expansion (RULES 5.2, 5.3) -----------------------------------------------


class SwordsTactic(Tactic):
    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        # The legal first steps on the last position proposed for, kept with it: the
        # greedy player proposes a dozen moves on one position.
        self.first: tuple[Position, str, list[Cell], list[Expand]] | None = None

    def first_steps(self, pos: Position, player: str) -> tuple[list[Cell], list[Expand]]:
        """`rules.legal_knight_cells` and `rules.legal_expansions` on `pos` (unchanged
        while it is proposed for: states are never changed once made)."""
        if self.first is None or self.first[0] is not pos or self.first[1] != player:
            knights = rules.legal_knight_cells(pos, player)
            self.first = (pos, player, knights, rules.legal_expansions(pos, player))
        return self.first[2], self.first[3]

    def propose(self, pos: Position, player: str, swords: int) -> Submission:
        """`S1`: a knight or an expansion; `S2`: two knights or a knight and an expansion.
        Forest knights only when ducats or one Treasure card cover the fees (RULES 7.3)."""
        scratch, fees = pos.copy(), 0
        steps: list[Knight | Expand] = []
        holder = pos.players[player]
        budget = holder.ducats + max(holder.treasure(), default=0)
        for _ in range(self.rng.randint(1, swords)):
            knights, expansions = (
                self.first_steps(pos, player)
                if not steps
                else (rules.legal_knight_cells(scratch, player), None)
            )
            cells = [c for c in knights if fees + rules.knight_fee(scratch, c) <= budget]
            expanded = any(isinstance(s, Expand) for s in steps)
            if expansions is None:
                expansions = [] if expanded else rules.legal_expansions(scratch, player)
            if not cells and not expansions:
                break
            if cells and (not expansions or self.rng.random() < 0.5):
                own = in_own_regions(scratch, player)
                cell = self.rng.choice(favour(self.rng, cells, own.__contains__))
                fees += rules.knight_fee(scratch, cell)
                rules.put_knight(scratch, player, cell, [])
                steps.append(Knight(cell))
            else:
                step = self.expansion(scratch, player, expansions)
                rules.expand(scratch, player, step.castle, step.cells, [])
                steps.append(step)
        if not steps:
            return Pass()
        return Swords(tuple(steps), treasure_for(self.rng, pos, player, fees))

    def expansion(self, pos: Position, player: str, singles: Sequence[Expand]) -> Expand:
        """A one-cell expansion, grown to two cells half of the time when one fits."""
        first = self.rng.choice(
            favour(self.rng, singles, lambda e: pos.area_at(e.cells[0]).is_region)
        )
        if self.rng.random() < 0.5:
            return first
        assert first.castle is not None
        region = pos.region_of_castle(first.castle)
        assert region is not None
        grown = region.cells | set(first.cells)
        near = sorted({n for c in grown for n, _ in pos.links(c)} - grown)
        self.rng.shuffle(near)
        for cell in near:
            if rules.expansion_problem(pos, player, first.castle, [*first.cells, cell]) is None:
                return Expand((*first.cells, cell), first.castle)
        return first


# --- politics (RULES 7) -------------------------------------------------------------------


class PoliticsTactic(Tactic):
    def play(self, pos: Position, player: str) -> Politics | None:
        """A legal Alliance or Renegade from the hand, or None."""
        hand = pos.players[player].hand
        pairs = bordering_pairs(pos, player)
        self.rng.shuffle(pairs)
        plays: list[Politics] = []
        if "alliance" in hand:
            plays += [
                Alliance(m.castle, t.castle) for m, t in pairs if not pos.allied(m.castle, t.castle)
            ]
        if "renegade" in hand:
            plays += [r for m, t in pairs[:3] if (r := self.renegade(pos, player, m, t))]
        return self.rng.choice(plays) if plays else None

    def renegade(self, pos: Position, player: str, mine: Area, theirs: Area) -> Renegade | None:
        """RULES 7.2: remove a knight from `theirs`, place one in `mine`."""
        owner = pos.owner(theirs)
        knights = [c for c in theirs.sorted_cells() if pos.knights.get(c) == owner]
        places = [c for c in mine.sorted_cells() if rules.knight_problem(pos, player, c) is None]
        pairs = [(k, p) for k in knights for p in places]
        self.rng.shuffle(pairs)
        for remove, place in pairs[:POLITICS_TRIES]:
            fees = rules.knight_fee(pos, remove) + rules.knight_fee(pos, place)
            play = Renegade(remove, place, treasure_for(self.rng, pos, player, fees))
            if rules.politics_problem(pos, player, play) is None:
                return play
        return None

    def end_alliance(self, pos: Position, player: str) -> EndAlliance | None:
        """RULES 7.1: now and then pay to end an alliance (legal at any time)."""
        mine = [
            key
            for key in sorted(pos.alliances)
            if player in (pos.castles[key[0]], pos.castles[key[1]])
        ]
        if not mine or self.rng.random() >= END_ALLIANCE_CHANCE:
            return None
        own, other = self.rng.choice(mine)
        return EndAlliance(
            own, other, treasure_for(self.rng, pos, player, rules.ALLIANCE_BREAK_FEE)
        )


# --- the greedy player's tactics ------------------------------------------------------------


class GreedyPerformTactic(PerformTactic):
    """Walls and swords scored by the power they gain; never a pass when it could act."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__(rng)
        # The best swords move of the last proposal: the state it was tried on, the
        # player, the move and what it led to.
        self.best: tuple[GameState, str, Submission, Outcome] | None = None

    def wall_tactic(self) -> WallTactic:
        return GreedyWallTactic(self.rng)

    def applied(self, state: GameState, player: str, move: Submission) -> Outcome | None:
        if self.best is None:
            return None
        tried_on, by, best, outcome = self.best
        return outcome if tried_on is state and by == player and best == move else None

    def propose(self, state: GameState, player: str) -> Submission:
        action = state.phase.action
        assert action is not None
        if action.startswith("W"):
            return self.walls.propose(state.pos, player, int(action[1:]))
        if action.startswith("S"):
            return self.best_swords(state, player, int(action[1:]))
        return super().propose(state, player)

    def best_swords(self, state: GameState, player: str, swords: int) -> Submission:
        candidates = {self.swords.propose(state.pos, player, swords) for _ in range(GREEDY_SWORDS)}
        before = state.pos.players[player].power
        best: tuple[int, int] | None = None
        choice: Submission = Pass()
        self.best = None
        for move in sorted(candidates, key=repr):
            outcome = attempt(state, player, move)
            if outcome is None:
                continue
            knights = len(move.steps) if isinstance(move, Swords) else 0
            score = (outcome[0].pos.players[player].power - before, knights)
            if best is None or score > best:
                best, choice = score, move
                self.best = (state, player, move, outcome)
        return choice


class GreedyWallTactic(WallTactic):
    def pick_wall(self, pos: Position, player: str) -> Edge | None:
        """The wall whose placement (with its founding, RULES 6.1) gains the most;
        ties go to walls near an own castle that has no region yet."""
        legal = rules.legal_walls(pos, player)
        if not legal:
            return None
        near = set(enclosure_walls(pos, player, legal, self.rng)[0])
        sample = self.rng.sample(legal, min(GREEDY_WALLS, len(legal)))
        sample += sorted(near - set(sample))
        before = pos.players[player].power

        def score(edge: Edge) -> tuple[int, bool]:
            scratch = pos.copy()
            rules.place_wall(scratch, player, edge, [])
            return scratch.players[player].power - before, edge in near

        return max(sample, key=score)


# --- helpers ------------------------------------------------------------------------


def open_castles(pos: Position, player: str) -> list[Cell]:
    """The player's castles not yet in a region."""
    return [
        c for c, owner in pos.castles.items() if owner == player and not pos.area_at(c).is_region
    ]


def enclosure_walls(
    pos: Position, player: str, legal: Sequence[Edge], rng: random.Random
) -> tuple[list[Edge], list[Edge]]:
    """For the box (a rectangle of cells holding one own open castle and no other)
    that needs the fewest more walls, all of them legal now: those walls, and the
    legal walls inside the box."""
    bits = board_bits(pos.board.width, pos.board.height)
    castles, walls = bits.cells(pos.castles), bits.edges(pos.walls)
    walled_or_legal = walls | bits.edges(legal)
    best: list[Box] = []
    fewest = 0
    for castle in open_castles(pos, player):
        for box in boxes_around(pos.board.width, pos.board.height, castle):
            if box.others & castles or box.border_bits & ~walled_or_legal:
                continue
            missing = (box.border_bits & ~walls).bit_count()
            if not missing:
                continue
            if not best or missing < fewest:
                best, fewest = [box], missing
            elif missing == fewest:
                best.append(box)
    if not best:
        return [], []
    box = rng.choice(best)
    return (
        [e for e in box.border(pos.board.width, pos.board.height) if e not in pos.walls],
        [e for e in legal if box.holds(e[0]) and box.holds(e[1])],
    )


@dataclass(frozen=True)
class BoardBits:
    """A bit for each cell and each edge of a board: a box is tested against the
    position with two integer `&`s instead of two set operations."""

    cell_bit: dict[Cell, int]
    edge_bit: dict[Edge, int]

    def cells(self, cells: Iterable[Cell]) -> int:
        return sum(self.cell_bit[c] for c in cells)

    def edges(self, edges: Iterable[Edge]) -> int:
        return sum(self.edge_bit[e] for e in edges)


@lru_cache(maxsize=BOARD_SIZES_KEPT)
def board_bits(width: int, height: int) -> BoardBits:
    cells = [(x, y) for y in range(height) for x in range(width)]
    edges = [
        make_edge(c, n)
        for c in cells
        for n in around(c)
        if 0 <= n[0] < width and 0 <= n[1] < height and c < n
    ]
    return BoardBits(
        {c: 1 << i for i, c in enumerate(cells)}, {e: 1 << i for i, e in enumerate(edges)}
    )


@dataclass(frozen=True, slots=True)
class Box:
    """A rectangle of cells around an own castle that walls could enclose. Kept as its
    corner, its size and the two bit masks the search tests: a castle's boxes are kept
    for every later search (`boxes_around`), its cells and border spelt out only for
    the box chosen."""

    left: int
    top: int
    w: int
    h: int
    others: int  # the bits of its cells but the castle's
    border_bits: int  # the bits of the edges round it off the rim

    @property
    def cells(self) -> frozenset[Cell]:  # the castle's too
        return rectangle_cells(self.left, self.top, self.w, self.h)

    def holds(self, cell: Cell) -> bool:
        x, y = cell
        return self.left <= x < self.left + self.w and self.top <= y < self.top + self.h

    def border(self, width: int, height: int) -> tuple[Edge, ...]:
        """The edges round it off the rim of a board of that size, sorted."""
        return rectangle_border(self.left, self.top, self.w, self.h, width, height)


# Castles whose boxes are kept, by the castle's cell and the board's size (a box ignores
# terrain, so every game on the site's 15 × 10 board finds them again): as many as the
# site's board has cells, so a busy worker keeps them all, up to 140 boxes and about
# 18 KB a castle, 3 MB in all; a castle's boxes made again cost about 2 ms.
CASTLES_KEPT = 150


@lru_cache(maxsize=CASTLES_KEPT)
def boxes_around(width: int, height: int, castle: Cell) -> tuple[Box, ...]:
    """Rectangles of up to ENCLOSURE_CELLS cells on a board of that size holding
    `castle`, with the bits of the edges on their border off the rim."""
    bits = board_bits(width, height)
    found = []
    for w in range(1, ENCLOSURE_CELLS + 1):
        for h in range(1, ENCLOSURE_CELLS // w + 1):
            for left in range(max(0, castle[0] - w + 1), min(castle[0], width - w) + 1):
                for top in range(max(0, castle[1] - h + 1), min(castle[1], height - h) + 1):
                    others = rectangle_cells(left, top, w, h) - {castle}
                    border = rectangle_border(left, top, w, h, width, height)
                    found.append(Box(left, top, w, h, bits.cells(others), bits.edges(border)))
    return tuple(found)


def rectangle_cells(left: int, top: int, w: int, h: int) -> frozenset[Cell]:
    return frozenset((x, y) for x in range(left, left + w) for y in range(top, top + h))


def rectangle_border(
    left: int, top: int, w: int, h: int, width: int, height: int
) -> tuple[Edge, ...]:
    """The edges between a rectangle and the cells round it on the board, sorted; each
    spelt as `make_edge` spells it (the upper or left cell first)."""
    right, bottom = left + w, top + h
    xs, ys = range(left, right), range(top, bottom)
    edges = [((x, top - 1), (x, top)) for x in xs if top > 0]
    edges += [((x, bottom - 1), (x, bottom)) for x in xs if bottom < height]
    edges += [((left - 1, y), (left, y)) for y in ys if left > 0]
    edges += [((right - 1, y), (right, y)) for y in ys if right < width]
    return tuple(sorted(edges))


def around(cell: Cell) -> tuple[Cell, ...]:
    x, y = cell
    return ((x, y - 1), (x - 1, y), (x + 1, y), (x, y + 1))


def in_own_regions(pos: Position, player: str) -> set[Cell]:
    return {c for r in pos.regions(player) for c in r.cells}


def bordering_pairs(pos: Position, player: str) -> list[tuple[Area, Area]]:
    """(own region, another player's region) pairs sharing a wall edge (RULES 7)."""
    rivals = [
        r
        for r in pos.regions()
        if pos.owner(r) not in (player, None) and pos.is_player(pos.owner(r) or "")
    ]
    return [
        (mine, theirs)
        for mine in pos.regions(player)
        for theirs in rivals
        if pos.borders(mine, theirs)
    ]


class SearchPlayer(GreedyPlayer):
    """Searches (engine.search): determinised rollouts by greedy players, from what its
    seat sees only; greedy where the search leaves the choice (placement, RULES 2.3).
    `budget` is seconds a decision; `iterations` bounds the search (with `budget=None`
    the move then depends only on the view and the seed)."""

    def __init__(
        self,
        seed: int | str | None = None,
        budget: float | None = search.BUDGET,
        iterations: int | None = None,
    ) -> None:
        super().__init__(seed)
        self.search = search.Search(seed, GreedyPlayer, budget, iterations)

    def decide(
        self, state: GameState, player: str, *, applying: bool
    ) -> tuple[Submission, Outcome | None]:
        if player not in state.phase.waiting:
            raise ValueError(f"the game does not wait for {player}")
        move = self.search.choose(state, player)
        if move is None:
            return super().decide(state, player, applying=applying)
        return move, submit(state, player, move) if applying else None


PLAYERS: dict[str, type[RandomPlayer]] = {
    "random": RandomPlayer,
    "greedy": GreedyPlayer,
    "search": SearchPlayer,
}
