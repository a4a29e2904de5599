"""The game as a state machine of phases (RULES 2, 3, 4, 8, 9).

`new_game(settings)` makes the start; `submit(state, player, move)` returns a
new state and the events it caused, or raises `IllegalMove` and leaves the
state untouched. `state.phase.waiting` says whom the game waits for.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TypeVar

from engine import rules
from engine.board import PLAIN, Cell, assemble, format_cell
from engine.errors import IllegalMove
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
    TakeCard,
    Walls,
)
from engine.position import Position
from engine.setup import (
    Settings,
    arrangement,
    initial_position,
    placement_order,
    politics_piles,
    rotated,
    shuffled_deck,
)

Log = list[dict]
M = TypeVar("M")
CASTLE_DISTANCE = 7  # RULES 2.3: at least 6 cells between, i.e. Manhattan distance ≥ 7
PHASE_KINDS = ("placement", "decision", "negotiation", "duel", "perform", "crown", "over")


@dataclass
class Phase:
    """What the game waits for now, and from whom."""

    kind: str
    waiting: list[str] = field(default_factory=list)
    action: str | None = None  # the action card symbol being resolved: W2, S1, P, ...
    contenders: list[str] = field(default_factory=list)
    offer: tuple[str, int] | None = None  # negotiation: the standing (offerer, ducats)
    round: int = 1  # duel: 1, or 2 for the re-duel after a tie
    colour: str | None = None  # placement: the colour whose pieces are placed
    pile: int | None = None  # crown: the politics pile looked through (1 or 2)

    def copy(self) -> Phase:
        return replace(self, waiting=list(self.waiting), contenders=list(self.contenders))


@dataclass
class GameState:
    """The whole truth of a game; players see it only through `engine.view`."""

    settings: Settings
    pos: Position
    start: int  # index in settings.players of the start player
    deck: list[str]  # action cards still face down, top first
    piles: list[list[str]]  # the two politics piles
    phase: Phase
    turn: int = 1
    card: str | None = None  # the action card being played
    slot: int = 0  # index (0..2) of the card's action being resolved
    placements: list[tuple[str, str]] = field(default_factory=list)
    decisions: dict[str, tuple[Choice, ...]] = field(default_factory=dict)  # revealed
    sealed: dict[str, Decide | Bid] = field(default_factory=dict)  # not yet revealed
    discard: list[str] = field(default_factory=list)  # politics cards played
    winners: list[str] = field(default_factory=list)

    def copy(self) -> GameState:
        return replace(
            self, pos=self.pos.copy(), deck=list(self.deck),
            piles=[list(p) for p in self.piles], phase=self.phase.copy(),
            placements=list(self.placements), decisions=dict(self.decisions),
            sealed=dict(self.sealed), discard=list(self.discard), winners=list(self.winners),
        )

    @property
    def players(self) -> tuple[str, ...]:
        return self.settings.players

    @property
    def start_player(self) -> str:
        return self.players[self.start]

    @property
    def order(self) -> list[str]:
        """Seat order beginning with the start player."""
        return rotated(self.players, self.start)

    @property
    def waiting(self) -> list[str]:
        return list(self.phase.waiting)

    @property
    def is_over(self) -> bool:
        return self.phase.kind == "over"

    def cards_to_choose(self, player: str) -> int:
        """RULES 3.2: the start player of a 2- or 3-player game chooses two cards."""
        return 2 if len(self.players) <= 3 and player == self.start_player else 1


# --- starting ------------------------------------------------------------------------


def new_game(settings: Settings) -> GameState:
    """RULES 2: draw every random thing from the seed, then set up."""
    return start_game(settings)[0]


def start_game(settings: Settings) -> tuple[GameState, Log]:
    """`new_game`, with the events of the start (the first cards revealed)."""
    rng = random.Random(settings.seed)
    board = assemble(arrangement(settings, rng))
    state = GameState(
        settings=settings,
        pos=initial_position(settings, board),
        start=rng.randrange(len(settings.players)),
        deck=shuffled_deck(settings, rng),
        piles=politics_piles(rng),
        phase=Phase("placement"),
    )
    log: Log = []
    if settings.setup == "variable":
        state.placements = placement_order(settings, state.start)
        _next_placement(state)
    else:
        _begin_turn(state, log)
    _stamp(log, state.turn)
    return state, log


def is_simultaneous(state: GameState) -> bool:
    """Sealed phases (RULES 3.2, 4.2) resolve when every awaited player has submitted;
    in the others the first awaited submission is applied at once."""
    kind = state.phase.kind
    return kind == "duel" or (kind == "decision" and state.settings.decisions == "sealed")


def submit(state: GameState, player: str, move: Submission) -> tuple[GameState, Log]:
    """Validate and apply one submission to a copy; the given state never changes."""
    new, log = state.copy(), []
    _apply(new, player, move, log)
    _stamp(log, new.turn)
    return new, log


def _stamp(log: Log, turn: int) -> None:
    """Give every event the turn it happened in (those before a turn's end are stamped
    by `_end_turn`)."""
    for event in log:
        event.setdefault("turn", turn)


def replay(settings: Settings, record: Sequence[tuple[str, Submission]]) -> GameState:
    """The settings plus the accepted submissions are the game."""
    state = new_game(settings)
    for player, move in record:
        state, _ = submit(state, player, move)
    return state


def _apply(state: GameState, player: str, move: Submission, log: Log) -> None:
    if player not in state.players:
        raise IllegalMove(f"{player} does not play in this game")
    if state.is_over:
        raise IllegalMove("the game is over")
    if isinstance(move, EndAlliance):  # RULES 7.1: at any time
        _check_uncommitted(state, player, move)
        rules.break_alliance(state.pos, player, move.own, move.other, move.treasure, log)
        return
    if player not in state.phase.waiting:
        names = ", ".join(state.phase.waiting)
        raise IllegalMove(f"the game is waiting for {names}, not for {player}")
    HANDLERS[state.phase.kind](state, player, move, log)


def committed(state: GameState, player: str) -> tuple[int, list[int]]:
    """Ducats and Treasure cards the player has promised and not yet paid: a standing
    offer (RULES 4.1) and a sealed bid (RULES 4.2)."""
    ducats, treasure = 0, []
    offer = state.phase.offer if state.phase.kind == "negotiation" else None
    if offer is not None and offer[0] == player:
        ducats += offer[1]
    bid = state.sealed.get(player)
    if isinstance(bid, Bid):
        ducats += bid.ducats
        treasure += list(bid.treasure)
    return ducats, treasure


def _check_uncommitted(state: GameState, player: str, move: EndAlliance) -> None:
    """Ending an alliance at any time may not spend what is promised elsewhere."""
    ducats, treasure = committed(state, player)
    holder = state.pos.players[player]
    spent = rules.check_payment(state.pos, player, rules.ALLIANCE_BREAK_FEE, move.treasure)
    if holder.ducats - spent < ducats:
        raise IllegalMove(f"{player} has promised {ducats} of {holder.ducats} ducats in an "
                          "offer or bid, too many to pay for ending the alliance now")
    free = holder.treasure()
    for value in treasure:
        free.remove(value)
    for value in move.treasure:
        if value not in free:
            raise IllegalMove(f"the Treasure card worth {value} is bid in the duel")
        free.remove(value)


def _expect(move: Submission, kind: type[M], what: str) -> M:
    if not isinstance(move, kind):
        raise IllegalMove(f"the game waits for {what} now")
    return move


# --- placement (RULES 2.3) -----------------------------------------------------------


def _next_placement(state: GameState) -> None:
    player, colour = state.placements[0]
    state.phase = Phase("placement", waiting=[player], colour=colour)


def placement_problem(pos: Position, colour: str, move: Place,
                      distance: int | None = None) -> str | None:
    castle, knight = move.castle, move.knight
    for cell, what in ((castle, "castle"), (knight, "knight")):
        if not pos.board.on_board(cell):
            return f"{format_cell(cell)} is not on the board"
        if pos.board.terrain(cell) != PLAIN:
            return f"the {what} must stand on a plain cell, and {format_cell(cell)} is not one"
        if pos.piece_at(cell):
            return f"{format_cell(cell)} is taken by {rules.describe(pos, cell)}"
    if abs(castle[0] - knight[0]) + abs(castle[1] - knight[1]) != 1:
        return f"the knight at {format_cell(knight)} must be next to its castle"
    need = castle_distance(pos, colour) if distance is None else distance
    nearest = _nearest_castle(pos, colour, castle)
    if nearest is not None and _distance(nearest, castle) < need:
        return (f"{format_cell(castle)} is too close to the {colour} castle at "
                f"{format_cell(nearest)}: same-colour castles need {need - 1} cells "
                "between them")
    return None


def _distance(a: Cell, b: Cell) -> int:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def _nearest_castle(pos: Position, colour: str, cell: Cell) -> Cell | None:
    own = [c for c, owner in pos.castles.items() if owner == colour]
    return min(own, key=lambda c: _distance(c, cell)) if own else None


def castle_distance(pos: Position, colour: str) -> int:
    """RULES 2.3 asks for 6 cells between same-colour castles. When no free cell is that
    far (it happens, rarely, to the fourth castle of a 2-player game), the castle goes
    as far from its colour's others as any free cell allows (docs/rules-decisions.md)."""
    best = 0
    for castle in _castle_cells(pos):
        nearest = _nearest_castle(pos, colour, castle)
        best = max(best, CASTLE_DISTANCE if nearest is None else _distance(nearest, castle))
        if best >= CASTLE_DISTANCE:
            return CASTLE_DISTANCE
    return best


def _castle_cells(pos: Position) -> list[Cell]:
    """Free plain cells with a free plain neighbour: where a castle and its knight fit."""
    def free_plain(c: Cell) -> bool:
        return pos.board.terrain(c) == PLAIN and pos.piece_at(c) is None

    return [c for c in pos.board.cells
            if free_plain(c) and any(free_plain(n) for n in pos.board.neighbours(c))]


def legal_placements(pos: Position, colour: str) -> list[Place]:
    need = castle_distance(pos, colour)
    return [Place(castle, knight) for castle in _castle_cells(pos)
            for knight in pos.board.neighbours(castle)
            if placement_problem(pos, colour, Place(castle, knight), need) is None]


def _on_placement(state: GameState, player: str, move: Submission, log: Log) -> None:
    move = _expect(move, Place, "a castle and a knight, like 'place C3 D3'")
    colour = state.phase.colour
    assert colour is not None
    problem = placement_problem(state.pos, colour, move)
    if problem:
        raise IllegalMove(problem)
    pos = state.pos
    pos.castles[move.castle], pos.knights[move.knight] = colour, colour
    pos.knight_supply[colour] -= 1
    pos.invalidate_areas()
    log.append({"kind": "placed", "player": player, "colour": colour,
                "castle": list(move.castle), "knight": list(move.knight)})
    state.placements.pop(0)
    if state.placements:
        _next_placement(state)
    else:
        _begin_turn(state, log)


# --- the turn (RULES 3) ----------------------------------------------------------------


def _begin_turn(state: GameState, log: Log) -> None:
    """RULES 3.1: reveal cards until one with actions; SILVER scores, KING ends."""
    while True:
        if not state.deck:
            _end_game(state, log)
            return
        state.card = state.deck.pop(0)
        log.append({"kind": "reveal", "card": state.card, "start_player": state.start_player})
        if state.card == "SILVER":
            rules.silver_mine(state.pos, log)
            continue
        if state.card == "KING":
            _end_game(state, log)
            return
        break
    state.slot, state.decisions = 0, {}
    waiting = state.order if state.settings.decisions == "sealed" else state.order[:1]
    state.phase = Phase("decision", waiting=waiting)


def decision_problem(state: GameState, player: str, move: Decide) -> str | None:
    """RULES 3.2 and 7: the right number of different cards, politics cards in hand."""
    need = state.cards_to_choose(player)
    cards = move.cards
    if len(cards) != need:
        return f"{player} chooses {need} decision card{'s' if need > 1 else ''} this turn"
    if len(set(cards)) != len(cards) or any(c not in (1, 2, 3) for c in cards):
        return "decision cards are 1, 2 and 3, each at most once"
    hand = state.pos.players[player].hand
    for kind in ("alliance", "renegade"):
        wanted = sum(1 for c in move.choices if _card_name(c.politics) == kind)
        if wanted > hand.count(kind):
            return f"{player} has {hand.count(kind)} {kind.title()} card(s) in hand"
    for choice in move.choices:
        if choice.politics is not None:
            try:
                _check_politics(state.pos, player, choice.politics)
            except IllegalMove as exc:
                return str(exc)
    return None


def _card_name(play: Politics | None) -> str | None:
    if play is None:
        return None
    return "alliance" if isinstance(play, Alliance) else "renegade"


def _check_politics(pos: Position, player: str, play: Politics) -> None:
    if isinstance(play, Alliance):
        rules.check_alliance(pos, player, play.own, play.other)
    else:
        rules.check_renegade(pos, player, play.remove, play.place, play.treasure)


def _play_politics(state: GameState, player: str, play: Politics, log: Log) -> None:
    """RULES 7: the card leaves the hand, takes effect, and is discarded."""
    card = _card_name(play)
    assert card is not None
    if isinstance(play, Alliance):
        rules.make_alliance(state.pos, player, play.own, play.other, log)
    else:
        rules.play_renegade(state.pos, player, play.remove, play.place, play.treasure, log)
    state.pos.players[player].hand.remove(card)
    state.discard.append(card)


def _on_decision(state: GameState, player: str, move: Submission, log: Log) -> None:
    move = _expect(move, Decide, "a decision, like 'decide 2'")
    problem = decision_problem(state, player, move)
    if problem:
        raise IllegalMove(problem)
    state.phase.waiting.remove(player)
    if state.settings.decisions == "sealed":
        state.sealed[player] = move
        log.append({"kind": "decided", "player": player})
        if not state.phase.waiting:
            _reveal_decisions(state, log)
        return
    # Open mode (RULES 3.2): the choice is public at once, politics take effect now.
    state.decisions[player] = move.choices
    log.append({"kind": "decision", "player": player, **_choice_json(move.choices)})
    for choice in move.choices:
        if choice.politics is not None:
            _play_politics(state, player, choice.politics, log)
    following = state.order[len(state.decisions):]
    if following:
        state.phase.waiting = following[:1]
    else:
        _resolve(state, log)


def _choice_json(choices: tuple[Choice, ...]) -> dict:
    return {"cards": [c.card for c in choices],
            "politics": [_card_name(c.politics) for c in choices]}


def _reveal_decisions(state: GameState, log: Log) -> None:
    """Sealed mode (RULES 3.2): all choices revealed together; then politics cards take
    effect in seat order from the start player; one no longer playable goes back."""
    for player in state.order:
        decided = state.sealed.pop(player)
        assert isinstance(decided, Decide)
        state.decisions[player] = decided.choices
    log.append({"kind": "revealed", "decisions": {
        p: _choice_json(c) for p, c in state.decisions.items()}})
    for player in state.order:
        for choice in state.decisions[player]:
            if choice.politics is None:
                continue
            try:
                _check_politics(state.pos, player, choice.politics)
            except IllegalMove as exc:
                log.append({"kind": "politics_returned", "player": player,
                            "card": _card_name(choice.politics), "reason": str(exc)})
                continue
            _play_politics(state, player, choice.politics, log)
    _resolve(state, log)


# --- resolving the actions (RULES 3.3, 4) --------------------------------------------------


def _resolve(state: GameState, log: Log) -> None:
    """Resolve actions from `state.slot` on until one waits for somebody."""
    assert state.card is not None
    actions = state.card.split()
    while state.slot < len(actions):
        action = actions[state.slot]
        choosers = [p for p in state.order if state.slot + 1 in
                    [c.card for c in state.decisions.get(p, ())]]
        if action.startswith("M") and choosers:
            _share_money(state, action, choosers, log)
        elif len(choosers) == 1:
            if _begin_perform(state, choosers[0], log):
                return
        elif len(choosers) == 2:
            state.phase = Phase("negotiation", waiting=list(choosers), action=action,
                                contenders=list(choosers))
            log.append({"kind": "negotiation", "action": action, "players": choosers})
            return
        elif choosers:
            _begin_duel(state, action, choosers, 1, log)
            return
        state.slot += 1
    _end_turn(state, log)


def _next_action(state: GameState, log: Log) -> None:
    state.slot += 1
    _resolve(state, log)


def _share_money(state: GameState, action: str, choosers: list[str], log: Log) -> None:
    """RULES 3.3: equal shares, rounded down; the rest is lost."""
    share = int(action[1:]) // len(choosers)
    for player in choosers:
        state.pos.players[player].ducats += share
    log.append({"kind": "money", "action": action, "players": choosers, "each": share})


def _begin_perform(state: GameState, player: str, log: Log) -> bool:
    """Wait for the performer, unless the action can do nothing for them."""
    action = _current_action(state)
    if not can_act(state, player, action):
        log.append({"kind": "nothing_to_do", "player": player, "action": action})
        return False
    state.phase = Phase("perform", waiting=[player], action=action)
    log.append({"kind": "perform", "player": player, "action": action})
    return True


def _current_action(state: GameState) -> str:
    assert state.card is not None
    return state.card.split()[state.slot]


def can_act(state: GameState, player: str, action: str) -> bool:
    pos = state.pos
    if action.startswith("W"):
        return rules.has_legal_wall(pos, player)
    if action.startswith("S"):
        return rules.has_knight_cell(pos, player) or bool(legal_expansions(pos, player))
    return any(state.piles)


def legal_expansions(pos: Position, player: str) -> list[Expand]:
    """Every legal one-cell expansion (a two-cell one starts with one of these)."""
    found = []
    for region in pos.regions(player):
        near = {n for c in region.cells for n, _ in pos.links(c) if n not in region.cells}
        for cell in sorted(near, key=lambda c: (c[1], c[0])):
            try:
                rules.check_expansion(pos, player, region.castle, [cell])
            except IllegalMove:
                continue
            found.append(Expand((cell,), region.castle))
    return found


def _on_perform(state: GameState, player: str, move: Submission, log: Log) -> None:
    action = state.phase.action
    assert action is not None
    if isinstance(move, Pass):
        log.append({"kind": "declined", "player": player, "action": action})
        _next_action(state, log)
        return
    if action.startswith("W"):
        _perform_walls(state, player, int(action[1:]), move, log)
    elif action.startswith("S"):
        _perform_swords(state, player, int(action[1:]), move, log)
    else:
        _choose_pile(state, player, move, log)
        return
    _next_action(state, log)


def _perform_walls(state: GameState, player: str, most: int, move: Submission,
                   log: Log) -> None:
    """RULES 5.1: up to `most` walls, each checked and scored before the next."""
    move = _expect(move, Walls, f"up to {most} walls, like 'walls F7/F8', or 'pass'")
    if not 1 <= len(move.walls) <= most:
        raise IllegalMove(f"this action places 1 to {most} walls, not {len(move.walls)}")
    for edge in move.walls:
        rules.place_wall(state.pos, player, edge, log)


def _perform_swords(state: GameState, player: str, swords: int, move: Submission,
                    log: Log) -> None:
    """RULES 5.3: S1 one knight or one expansion; S2 two knights, or a knight and an
    expansion in either order; forest fees paid together at the end (RULES 7.3)."""
    move = _expect(move, Swords, "knights or an expansion, like 'knight F7', or 'pass'")
    expansions = sum(1 for s in move.steps if isinstance(s, Expand))
    if not 1 <= len(move.steps) <= swords or expansions > 1:
        allowed = "one knight or one expansion" if swords == 1 else \
            "two knights, or one knight and one expansion"
        raise IllegalMove(f"this action allows {allowed}")
    fees = 0
    for step in move.steps:
        if isinstance(step, Knight):
            fees += rules.knight_fee(state.pos, step.cell) if state.pos.board.on_board(
                step.cell) else 0
            rules.put_knight(state.pos, player, step.cell, log)
        else:
            rules.expand(state.pos, player, step.castle, step.cells, log)
    rules.pay(state.pos, player, fees, move.treasure, log, "knights on forest")


def _choose_pile(state: GameState, player: str, move: Submission, log: Log) -> None:
    move = _expect(move, ChoosePile, "a politics pile to look through, like 'pile 1'")
    if move.pile not in (1, 2):
        raise IllegalMove("there are politics piles 1 and 2")
    if not state.piles[move.pile - 1]:
        raise IllegalMove(f"politics pile {move.pile} is empty")
    state.phase = Phase("crown", waiting=[player], action="P", pile=move.pile)
    log.append({"kind": "looks", "player": player, "pile": move.pile})


def _on_crown(state: GameState, player: str, move: Submission, log: Log) -> None:
    """RULES 5.4: take one card of the pile into the hidden hand."""
    pile = state.phase.pile
    assert pile is not None
    if isinstance(move, TakeCard):
        cards = state.piles[pile - 1]
        if move.card not in cards:
            raise IllegalMove(f"pile {pile} holds no '{move.card}' card")
        cards.remove(move.card)
        state.pos.players[player].hand.append(move.card)
        log.append({"kind": "took_card", "player": player, "pile": pile})
        log.append({"kind": "card", "to": player, "card": move.card})
    else:
        _expect(move, Pass, "a card from the pile, like 'take alliance', or 'pass'")
        log.append({"kind": "declined", "player": player, "action": "P"})
    _next_action(state, log)


# --- negotiation and duel (RULES 4) -------------------------------------------------------


def _on_negotiation(state: GameState, player: str, move: Submission, log: Log) -> None:
    phase = state.phase
    other = next(p for p in phase.contenders if p != player)
    if isinstance(move, Offer):
        ducats = state.pos.players[player].ducats
        if not 0 <= move.amount <= ducats:
            raise IllegalMove(f"an offer is of ducats you have: 0 to {ducats}")
        phase.offer, phase.waiting = (player, move.amount), [other]
        log.append({"kind": "offer", "player": player, "ducats": move.amount, "other": other})
    elif isinstance(move, Accept):
        if phase.offer is None or phase.offer[0] != other:
            raise IllegalMove(f"there is no offer from {other} to accept")
        _accept_offer(state, player, other, phase.offer[1], log)
    else:
        _expect(move, BreakOff, "an offer ('offer 3'), 'accept' or 'break off'")
        log.append({"kind": "broken_off", "player": player})
        _begin_duel(state, phase.action or "", list(phase.contenders), 1, log)


def _accept_offer(state: GameState, player: str, payer: str, ducats: int, log: Log) -> None:
    """RULES 4.1: the money changes hands, the payer acts alone."""
    if state.pos.players[payer].ducats < ducats:  # cannot happen: offers are committed
        raise IllegalMove(f"{payer} no longer has the {ducats} ducats offered")
    state.pos.players[payer].ducats -= ducats
    state.pos.players[player].ducats += ducats
    log.append({"kind": "accepted", "player": player, "payer": payer, "ducats": ducats})
    if not _begin_perform(state, payer, log):
        _next_action(state, log)


def _begin_duel(state: GameState, action: str, players: list[str], round_: int,
                log: Log) -> None:
    state.phase = Phase("duel", waiting=list(players), action=action,
                        contenders=list(players), round=round_)
    log.append({"kind": "duel", "action": action, "players": players, "round": round_})


def bid_problem(state: GameState, player: str, bid: Bid) -> str | None:
    holder = state.pos.players[player]
    if not 0 <= bid.ducats <= holder.ducats:
        return f"a bid is of ducats you have: 0 to {holder.ducats}"
    held = holder.treasure()
    for value in set(bid.treasure):
        if bid.treasure.count(value) > held.count(value):
            return f"{player} holds no Treasure card worth {value}"
    return None


def _on_duel(state: GameState, player: str, move: Submission, log: Log) -> None:
    move = _expect(move, Bid, "a sealed bid, like 'bid 5' or 'bid 2 treasure 10'")
    problem = bid_problem(state, player, move)
    if problem:
        raise IllegalMove(problem)
    state.sealed[player] = move
    state.phase.waiting.remove(player)
    log.append({"kind": "bid_made", "player": player})
    if not state.phase.waiting:
        _settle_duel(state, log)


def _settle_duel(state: GameState, log: Log) -> None:
    """RULES 4.2: highest bid pays the bank and acts; a tie re-duels once; a second tie
    means nobody acts."""
    phase = state.phase
    bids = {p: state.sealed.pop(p) for p in phase.contenders}
    log.append({"kind": "bids", "round": phase.round, "bids": {
        p: {"ducats": b.ducats, "treasure": list(b.treasure), "total": b.total}  # type: ignore[union-attr]
        for p, b in bids.items()}})
    top = max(b.total for b in bids.values())  # type: ignore[union-attr]
    leaders = [p for p in phase.contenders if bids[p].total == top]  # type: ignore[union-attr]
    if len(leaders) == 1:
        winner, bid = leaders[0], bids[leaders[0]]
        assert isinstance(bid, Bid)
        holder = state.pos.players[winner]
        holder.ducats -= bid.ducats
        for value in bid.treasure:
            holder.hand.remove(f"treasure {value}")
        log.append({"kind": "duel_won", "player": winner, "paid": bid.total})
        if not _begin_perform(state, winner, log):
            _next_action(state, log)
    elif phase.round == 1:
        _begin_duel(state, phase.action or "", leaders, 2, log)
    else:
        log.append({"kind": "duel_void", "players": leaders})
        _next_action(state, log)


# --- the end (RULES 3.4, 8) --------------------------------------------------------------


def _end_turn(state: GameState, log: Log) -> None:
    """RULES 3.4: decision cards go back, the start player role passes on."""
    log.append({"kind": "turn_end"})
    _stamp(log, state.turn)
    state.decisions, state.slot = {}, 0
    state.start = (state.start + 1) % len(state.players)
    state.turn += 1
    _begin_turn(state, log)


def _end_game(state: GameState, log: Log) -> None:
    """RULES 8: hills once more, then Parchment; most power wins, ties by ducats."""
    pos = state.pos
    for player in state.order:
        hills = pos.hills_in_regions(player)
        log.append({"kind": "final_hills", "player": player, "hills": hills,
                    "points": rules.change_power(pos, player, hills)})
        parchment = sum(int(c.split()[1]) for c in pos.players[player].hand
                        if c.startswith("parchment"))
        if parchment:
            log.append({"kind": "parchment", "player": player,
                        "points": rules.change_power(pos, player, parchment)})
    state.winners = winners(pos, state.players)
    state.phase = Phase("over")
    log.append({"kind": "game_over", "winners": state.winners,
                "power": {p: pos.players[p].power for p in state.players}})


def wealth(pos: Position, player: str) -> int:
    """RULES 8: ducats with Treasure cards, for the tie-break."""
    return pos.players[player].ducats + sum(pos.players[player].treasure())


def winners(pos: Position, players: Sequence[str]) -> list[str]:
    def rank(p: str) -> tuple[int, int]:
        return (pos.players[p].power, wealth(pos, p))

    best = max(rank(p) for p in players)
    return [p for p in players if rank(p) == best]


# --- defaults at a deadline (RULES 9) ----------------------------------------------------


def default_move(state: GameState, player: str) -> Submission:
    """RULES 9: what a player who missed the deadline submits."""
    rng = random.Random(f"{state.settings.seed}/{state.turn}/{state.phase.kind}/"
                        f"{player}/{len(state.placements)}/{state.slot}")
    kind = state.phase.kind
    if kind == "placement":
        assert state.phase.colour is not None
        return rng.choice(legal_placements(state.pos, state.phase.colour))
    if kind == "decision":
        cards = rng.sample((1, 2, 3), state.cards_to_choose(player))
        return Decide(tuple(Choice(c) for c in cards))
    if kind == "negotiation":
        return BreakOff()
    if kind == "duel":
        return Bid(0)
    return Pass()


def legal_takes(state: GameState) -> list[TakeCard]:
    pile = state.phase.pile
    return [TakeCard(c) for c in sorted(set(state.piles[pile - 1]))] if pile else []


HANDLERS = {
    "placement": _on_placement,
    "decision": _on_decision,
    "negotiation": _on_negotiation,
    "duel": _on_duel,
    "perform": _on_perform,
    "crown": _on_crown,
}

__all__ = [
    "Cell", "GameState", "Phase", "Renegade", "default_move", "new_game", "replay", "submit",
]
