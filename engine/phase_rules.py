"""What a submission may be in each phase of the game (RULES 2.3, 3, 4, 5, 7.1, 9).

The rules of the pieces on a `Position` are `engine.rules`; these are the rules
of the game on a whole `GameState`: whom the game waits for, which kind of
submission each phase takes, and what a player may promise, bid or spend. The
phase machine that applies a submission is `engine.game`.

Same naming habit as `engine.rules`: `*_problem` returns the reason a submission
is refused (a `Reason`: its code and values, the sentence the player reads) or
None; `check_*` raises `IllegalMove` with it. Nothing here changes the state it
is given: where a move takes effect step by step (walls one after another, knights and an expansion,
politics cards in an open decision) the steps before the last are tried on a
scratch copy of the position.
"""

from __future__ import annotations

from collections.abc import Callable

from engine import rules
from engine.errors import IllegalMove
from engine.moves import (
    Accept,
    Bid,
    BreakOff,
    ChoosePile,
    Decide,
    EndAlliance,
    Expand,
    Knight,
    Offer,
    Pass,
    Place,
    Submission,
    Swords,
    TakeCard,
    Walls,
)
from engine.position import Position
from engine.reasons import Reason
from engine.state import GameState

Problem = Callable[[GameState, str, Submission], Reason | None]


def check_submission(state: GameState, player: str, move: Submission) -> None:
    problem = submission_problem(state, player, move)
    if problem:
        raise IllegalMove(problem)


def submission_problem(state: GameState, player: str, move: Submission) -> Reason | None:
    """Why `player` may not submit `move` now (RULES 9), or None if the game takes it."""
    if player not in state.players:
        return Reason("not_a_player", colour=player)
    if state.is_over:
        return Reason("game_over")
    if isinstance(move, EndAlliance):  # RULES 7.1: at any time
        return end_alliance_problem(state, player, move)
    if player not in state.phase.waiting:
        return Reason("waiting_for_others", waiting=list(state.phase.waiting), colour=player)
    return PROBLEMS[state.phase.kind](state, player, move)


# --- at any time (RULES 7.1) -----------------------------------------------------------


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


def uncommitted_problem(state: GameState, player: str, move: EndAlliance) -> Reason | None:
    """Ending an alliance at any time may not spend what is promised elsewhere."""
    ducats, treasure = committed(state, player)
    holder = state.pos.players[player]
    try:
        spent = rules.check_payment(state.pos, player, rules.ALLIANCE_BREAK_FEE, move.treasure)
    except IllegalMove as exc:
        return exc.reason
    if holder.ducats - spent < ducats:
        return Reason("promised_elsewhere", colour=player, promised=ducats, ducats=holder.ducats)
    free = holder.treasure()
    for value in treasure:
        free.remove(value)
    for value in move.treasure:
        if value not in free:
            return Reason("treasure_card_bid", value=value)
        free.remove(value)
    return None


def end_alliance_problem(state: GameState, player: str, move: EndAlliance) -> Reason | None:
    """RULES 7.1: a party to the alliance pays 10 ducats, not out of its promises."""
    return uncommitted_problem(state, player, move) or rules.alliance_end_problem(
        state.pos, player, move.own, move.other
    )


# --- placement (RULES 2.3) ---------------------------------------------------------------


def placement_phase_problem(state: GameState, player: str, move: Submission) -> Reason | None:
    if not isinstance(move, Place):
        return Reason("waits_for_placement")
    colour = state.phase.colour
    assert colour is not None
    return rules.placement_problem(state.pos, colour, move)


# --- decisions (RULES 3.2, 7) ------------------------------------------------------------


def decision_phase_problem(state: GameState, player: str, move: Submission) -> Reason | None:
    if not isinstance(move, Decide):
        return Reason("waits_for_decision")
    problem = decision_problem(state, player, move)
    if problem or state.settings.decisions == "sealed":
        return problem
    return open_politics_problem(state.pos, player, move)


def decision_problem(state: GameState, player: str, move: Decide) -> Reason | None:
    """RULES 3.2 and 7: the right number of different cards, politics cards in hand."""
    need = state.cards_to_choose(player)
    cards = move.cards
    if len(cards) != need:
        code = "decision_cards" if need > 1 else "one_decision_card"
        return Reason(code, colour=player, count=need)
    if len(set(cards)) != len(cards) or any(c not in (1, 2, 3) for c in cards):
        return Reason("decision_card_numbers")
    hand = state.pos.players[player].hand
    for kind in ("alliance", "renegade"):
        wanted = sum(
            1
            for c in move.choices
            if c.politics is not None and rules.politics_card(c.politics) == kind
        )
        if wanted > hand.count(kind):
            return Reason(f"{kind}_cards_in_hand", colour=player, count=hand.count(kind))
    for choice in move.choices:
        if choice.politics is not None:
            problem = rules.politics_problem(state.pos, player, choice.politics)
            if problem:
                return problem
    return None


def open_politics_problem(pos: Position, player: str, move: Decide) -> Reason | None:
    """Open decisions (RULES 3.2): the politics cards take effect one after another as
    the decision is made, so each after the first must still be playable after the
    ones before it (`decision_problem` has checked each on the position as it is)."""
    plays = [c.politics for c in move.choices if c.politics is not None]
    scratch = pos.copy() if len(plays) > 1 else pos
    for i, play in enumerate(plays):
        if i > 0:
            problem = rules.politics_problem(scratch, player, play)
            if problem:
                return problem
        if i < len(plays) - 1:
            rules.play_politics(scratch, player, play, [], trusted=True)
    return None


# --- contests (RULES 4) -------------------------------------------------------------------


def negotiation_phase_problem(state: GameState, player: str, move: Submission) -> Reason | None:
    """RULES 4.1: offer ducats one has, accept the other's standing offer, or break off."""
    phase = state.phase
    other = next(p for p in phase.contenders if p != player)
    if isinstance(move, Offer):
        ducats = state.pos.players[player].ducats
        if not 0 <= move.amount <= ducats:
            return Reason("offer_range", ducats=ducats)
        return None
    if isinstance(move, Accept):
        if phase.offer is None or phase.offer[0] != other:
            return Reason("no_offer", colour=other)
        offered = phase.offer[1]
        if state.pos.players[other].ducats < offered:  # cannot happen: offers are committed
            return Reason("offer_gone", colour=other, ducats=offered)
        return None
    if not isinstance(move, BreakOff):
        return Reason("waits_for_negotiation")
    return None


def duel_phase_problem(state: GameState, player: str, move: Submission) -> Reason | None:
    if not isinstance(move, Bid):
        return Reason("waits_for_bid")
    return bid_problem(state, player, move)


def bid_problem(state: GameState, player: str, bid: Bid) -> Reason | None:
    """RULES 4.2: ducats one has, Treasure cards one holds."""
    holder = state.pos.players[player]
    if not 0 <= bid.ducats <= holder.ducats:
        return Reason("bid_range", ducats=holder.ducats)
    held = holder.treasure()
    for value in set(bid.treasure):
        if bid.treasure.count(value) > held.count(value):
            return Reason("no_treasure_card", colour=player, value=value)
    return None


# --- performing an action (RULES 5) ---------------------------------------------------------


def perform_phase_problem(state: GameState, player: str, move: Submission) -> Reason | None:
    action = state.phase.action
    assert action is not None
    if isinstance(move, Pass):  # RULES 3: an action may be declined
        return None
    if action.startswith("W"):
        return walls_problem(state.pos, player, int(action[1:]), move)
    if action.startswith("S"):
        return swords_problem(state.pos, player, int(action[1:]), move)
    return pile_problem(state, move)


def walls_problem(pos: Position, player: str, most: int, move: Submission) -> Reason | None:
    """RULES 5.1: up to `most` walls, each legal after the ones before it (and their
    foundings, RULES 6.1)."""
    if not isinstance(move, Walls):
        return Reason("waits_for_walls", most=most)
    if not 1 <= len(move.walls) <= most:
        return Reason("wall_count", most=most, count=len(move.walls))
    scratch = pos
    for i, edge in enumerate(move.walls):
        problem = rules.wall_problem(scratch, player, edge)
        if problem:
            return problem
        if i < len(move.walls) - 1:
            scratch = pos.copy() if scratch is pos else scratch
            rules.place_wall(scratch, player, edge, [], trusted=True)
    return None


def swords_problem(pos: Position, player: str, swords: int, move: Submission) -> Reason | None:
    """RULES 5.3: S1 one knight or one expansion; S2 two knights, or a knight and an
    expansion in either order, each legal after the one before; the forest fees
    (RULES 5.2) paid together at the end, Treasure cards first (RULES 7.3)."""
    if not isinstance(move, Swords):
        return Reason("waits_for_swords")
    expansions = sum(1 for s in move.steps if isinstance(s, Expand))
    if not 1 <= len(move.steps) <= swords or expansions > 1:
        return Reason("one_sword" if swords == 1 else "two_swords")
    fees, scratch = 0, pos
    for i, step in enumerate(move.steps):
        if isinstance(step, Knight):
            fees += rules.knight_fee(pos, step.cell) if pos.board.on_board(step.cell) else 0
            problem = rules.knight_problem(scratch, player, step.cell)
        else:
            problem = rules.expansion_problem(scratch, player, step.castle, step.cells)
        if problem:
            return problem
        if i < len(move.steps) - 1:
            scratch = pos.copy() if scratch is pos else scratch
            if isinstance(step, Knight):
                rules.put_knight(scratch, player, step.cell, [], trusted=True)
            else:
                rules.expand(scratch, player, step.castle, step.cells, [], trusted=True)
    # Knights and expansions spend neither ducats nor cards: the payment is as it was.
    return rules.payment_problem(pos, player, fees, move.treasure)


def pile_problem(state: GameState, move: Submission) -> Reason | None:
    """RULES 5.4: the Crown looks through a politics pile that has cards."""
    if not isinstance(move, ChoosePile):
        return Reason("waits_for_pile")
    if move.pile not in (1, 2):
        return Reason("no_such_pile")
    if not state.piles[move.pile - 1]:
        return Reason("pile_empty", pile=move.pile)
    return None


def crown_phase_problem(state: GameState, player: str, move: Submission) -> Reason | None:
    """RULES 5.4: one card of the pile looked through, or none."""
    pile = state.phase.pile
    assert pile is not None
    if isinstance(move, TakeCard):
        if move.card not in state.piles[pile - 1]:
            return Reason("card_not_in_pile", pile=pile, card=move.card)
        return None
    if not isinstance(move, Pass):
        return Reason("waits_for_card")
    return None


PROBLEMS: dict[str, Problem] = {
    "placement": placement_phase_problem,
    "decision": decision_phase_problem,
    "negotiation": negotiation_phase_problem,
    "duel": duel_phase_problem,
    "perform": perform_phase_problem,
    "crown": crown_phase_problem,
}


# --- what there is to do ------------------------------------------------------------------


def can_act(state: GameState, player: str, action: str) -> bool:
    """Whether the action can do anything for `player` (if not, it is skipped)."""
    pos = state.pos
    if action.startswith("W"):
        return rules.has_legal_wall(pos, player)
    if action.startswith("S"):
        return rules.has_knight_cell(pos, player) or bool(rules.legal_expansions(pos, player))
    return any(state.piles)


def legal_takes(state: GameState) -> list[TakeCard]:
    """RULES 5.4: the cards of the pile looked through, one of each name."""
    pile = state.phase.pile
    return [TakeCard(c) for c in sorted(set(state.piles[pile - 1]))] if pile else []
