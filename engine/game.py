"""The game as a state machine of phases (RULES 2, 3, 4, 8, 9).

`new_game(settings)` makes the start; `state.phase.waiting` says whom the game
waits for. A submission goes in in two steps, as python-chess's `push_san`
(parse and check) is to `push` (trusted):

- `check(state, player, move)` raises `IllegalMove` (with a sentence the player
  can read) if the game does not take `move` from `player` now; it never changes
  `state`. The rules it checks are `engine.phase_rules` and `engine.rules`.
- `apply(state, player, move)` returns a new state and the events the move caused,
  without checking again: `move` must have passed `check` on this same state.
- `submit(state, player, move)` is both: check, then apply.

The given state never changes. The handlers below (one per phase, `HANDLERS`)
are the phase machine: what a checked move does, and what the game waits for next.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from engine import phase_rules, rules
from engine.board import assemble
from engine.errors import IllegalMove
from engine.events import ChoiceJson, Log, new_log
from engine.moves import (
    Accept,
    Bid,
    BreakOff,
    Choice,
    ChoosePile,
    Decide,
    EndAlliance,
    Knight,
    Offer,
    Pass,
    Place,
    Politics,
    Submission,
    Swords,
    TakeCard,
    Walls,
)
from engine.phase_rules import decision_problem
from engine.setup import (
    Settings,
    arrangement,
    initial_position,
    placement_order,
    politics_piles,
    shuffled_deck,
)
from engine.state import GameState, Phase

Handler = Callable[[GameState, str, Submission, Log], None]

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


# --- a submission: check, apply, submit (RULES 9) --------------------------------------


def check(state: GameState, player: str, move: Submission) -> None:
    """Raise `IllegalMove` unless the game takes `move` from `player` now. `state` is
    not changed (moves of several steps are tried on a scratch copy of the position)."""
    phase_rules.check_submission(state, player, move)


def apply(state: GameState, player: str, move: Submission) -> tuple[GameState, Log]:
    """The new state and the events of a move that `check` has accepted on this same
    `state` (trusted: nothing is checked again; an unchecked move may leave a broken
    state). The given state never changes."""
    new, log = state.copy(), new_log()
    _apply(new, player, move, log)
    _stamp(log, new.turn)
    return new, log


def submit(state: GameState, player: str, move: Submission) -> tuple[GameState, Log]:
    """Check and apply one submission; the given state never changes."""
    check(state, player, move)
    return apply(state, player, move)


def attempt(state: GameState, player: str, move: Submission) -> tuple[GameState, Log] | None:
    """`submit`, or None where `check` refuses the move: for computer players, which try
    candidates and keep the state the one they take led to."""
    try:
        check(state, player, move)
    except IllegalMove:
        return None
    return apply(state, player, move)


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
    if isinstance(move, EndAlliance):  # RULES 7.1: at any time
        rules.break_alliance(
            state.pos, player, move.own, move.other, move.treasure, log, trusted=True
        )
        return
    HANDLERS[state.phase.kind](state, player, move, log)


# --- placement (RULES 2.3) -----------------------------------------------------------


def _next_placement(state: GameState) -> None:
    player, colour = state.placements[0]
    state.phase = Phase("placement", waiting=[player], colour=colour)


def _on_placement(state: GameState, player: str, move: Submission, log: Log) -> None:
    assert isinstance(move, Place)
    colour = state.phase.colour
    assert colour is not None
    rules.place_castle(state.pos, colour, move)
    log.append(
        {
            "kind": "placed",
            "player": player,
            "colour": colour,
            "castle": list(move.castle),
            "knight": list(move.knight),
        }
    )
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


def _play_politics(state: GameState, player: str, play: Politics, log: Log) -> None:
    """RULES 7: the card leaves the hand, takes effect, and is discarded."""
    rules.play_politics(state.pos, player, play, log, trusted=True)
    state.discard.append(rules.politics_card(play))


def _on_decision(state: GameState, player: str, move: Submission, log: Log) -> None:
    assert isinstance(move, Decide)
    state.phase.waiting.remove(player)
    if state.settings.decisions == "sealed":
        state.sealed[player] = move
        log.append({"kind": "decided", "player": player})
        if not state.phase.waiting:
            _reveal_decisions(state, log)
        return
    # Open mode (RULES 3.2): the choice is public at once, politics take effect now.
    state.decisions[player] = move.choices
    choices = _choice_json(move.choices)
    log.append(
        {
            "kind": "decision",
            "player": player,
            "cards": choices["cards"],
            "politics": choices["politics"],
        }
    )
    for choice in move.choices:
        if choice.politics is not None:
            _play_politics(state, player, choice.politics, log)
    following = state.order[len(state.decisions) :]
    if following:
        state.phase.waiting = following[:1]
    else:
        _resolve(state, log)


def _choice_json(choices: tuple[Choice, ...]) -> ChoiceJson:
    return {
        "cards": [c.card for c in choices],
        "politics": [
            None if c.politics is None else rules.politics_card(c.politics) for c in choices
        ],
    }


def _reveal_decisions(state: GameState, log: Log) -> None:
    """Sealed mode (RULES 3.2): all choices revealed together; then politics cards take
    effect in seat order from the start player; one no longer playable goes back."""
    for player in state.order:
        decided = state.sealed.pop(player)
        assert isinstance(decided, Decide)
        state.decisions[player] = decided.choices
    log.append(
        {"kind": "revealed", "decisions": {p: _choice_json(c) for p, c in state.decisions.items()}}
    )
    for player in state.order:
        for choice in state.decisions[player]:
            if choice.politics is None:
                continue
            problem = rules.politics_problem(state.pos, player, choice.politics)
            if problem:
                log.append(
                    {
                        "kind": "politics_returned",
                        "player": player,
                        "card": rules.politics_card(choice.politics),
                        "reason": problem.as_json(),
                    }
                )
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
        choosers = [
            p for p in state.order if state.slot + 1 in [c.card for c in state.decisions.get(p, ())]
        ]
        if action.startswith("M") and choosers:
            _share_money(state, action, choosers, log)
        elif len(choosers) == 1:
            if _begin_perform(state, choosers[0], log):
                return
        elif len(choosers) == 2:
            state.phase = Phase(
                "negotiation", waiting=list(choosers), action=action, contenders=list(choosers)
            )
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
    action = state.current_action()
    if not phase_rules.can_act(state, player, action):
        log.append({"kind": "nothing_to_do", "player": player, "action": action})
        return False
    state.phase = Phase("perform", waiting=[player], action=action)
    log.append({"kind": "perform", "player": player, "action": action})
    return True


def _on_perform(state: GameState, player: str, move: Submission, log: Log) -> None:
    action = state.phase.action
    assert action is not None
    if isinstance(move, Pass):
        log.append({"kind": "declined", "player": player, "action": action})
        _next_action(state, log)
        return
    if action.startswith("W"):
        _perform_walls(state, player, move, log)
    elif action.startswith("S"):
        _perform_swords(state, player, move, log)
    else:
        _choose_pile(state, player, move, log)
        return
    _next_action(state, log)


def _perform_walls(state: GameState, player: str, move: Submission, log: Log) -> None:
    """RULES 5.1: the walls one after another, each scored before the next."""
    assert isinstance(move, Walls)
    for edge in move.walls:
        rules.place_wall(state.pos, player, edge, log, trusted=True)


def _perform_swords(state: GameState, player: str, move: Submission, log: Log) -> None:
    """RULES 5.3: knights and an expansion in order; forest fees paid together at the
    end (RULES 7.3)."""
    assert isinstance(move, Swords)
    fees = 0
    for step in move.steps:
        if isinstance(step, Knight):
            fees += rules.knight_fee(state.pos, step.cell)
            rules.put_knight(state.pos, player, step.cell, log, trusted=True)
        else:
            rules.expand(state.pos, player, step.castle, step.cells, log, trusted=True)
    rules.pay(state.pos, player, fees, move.treasure, log, "knights_on_forest", trusted=True)


def _choose_pile(state: GameState, player: str, move: Submission, log: Log) -> None:
    assert isinstance(move, ChoosePile)
    state.phase = Phase("crown", waiting=[player], action="P", pile=move.pile)
    log.append({"kind": "looks", "player": player, "pile": move.pile})


def _on_crown(state: GameState, player: str, move: Submission, log: Log) -> None:
    """RULES 5.4: take one card of the pile into the hidden hand."""
    pile = state.phase.pile
    assert pile is not None
    if isinstance(move, TakeCard):
        state.piles[pile - 1].remove(move.card)
        state.pos.players[player].hand.append(move.card)
        log.append({"kind": "took_card", "player": player, "pile": pile})
        log.append({"kind": "card", "to": player, "card": move.card})
    else:
        log.append({"kind": "declined", "player": player, "action": "P"})
    _next_action(state, log)


# --- negotiation and duel (RULES 4) -------------------------------------------------------


def _on_negotiation(state: GameState, player: str, move: Submission, log: Log) -> None:
    phase = state.phase
    other = next(p for p in phase.contenders if p != player)
    if isinstance(move, Offer):
        phase.offer, phase.waiting = (player, move.amount), [other]
        log.append({"kind": "offer", "player": player, "ducats": move.amount, "other": other})
    elif isinstance(move, Accept):
        assert phase.offer is not None
        _accept_offer(state, player, other, phase.offer[1], log)
    else:
        assert isinstance(move, BreakOff)
        log.append({"kind": "broken_off", "player": player})
        _begin_duel(state, phase.action or "", list(phase.contenders), 1, log)


def _accept_offer(state: GameState, player: str, payer: str, ducats: int, log: Log) -> None:
    """RULES 4.1: the money changes hands, the payer acts alone."""
    state.pos.players[payer].ducats -= ducats
    state.pos.players[player].ducats += ducats
    log.append({"kind": "accepted", "player": player, "payer": payer, "ducats": ducats})
    if not _begin_perform(state, payer, log):
        _next_action(state, log)


def _begin_duel(state: GameState, action: str, players: list[str], round_: int, log: Log) -> None:
    state.phase = Phase(
        "duel", waiting=list(players), action=action, contenders=list(players), round=round_
    )
    log.append({"kind": "duel", "action": action, "players": players, "round": round_})


def _on_duel(state: GameState, player: str, move: Submission, log: Log) -> None:
    assert isinstance(move, Bid)
    state.sealed[player] = move
    state.phase.waiting.remove(player)
    log.append({"kind": "bid_made", "player": player})
    if not state.phase.waiting:
        _settle_duel(state, log)


def _settle_duel(state: GameState, log: Log) -> None:
    """RULES 4.2: highest bid pays the bank and acts; a tie re-duels once; a second tie
    means nobody acts."""
    phase = state.phase
    bids: dict[str, Bid] = {}
    for p in phase.contenders:
        bid = state.sealed.pop(p)
        assert isinstance(bid, Bid)
        bids[p] = bid
    log.append(
        {
            "kind": "bids",
            "round": phase.round,
            "bids": {
                p: {"ducats": b.ducats, "treasure": list(b.treasure), "total": b.total}
                for p, b in bids.items()
            },
        }
    )
    top = max(b.total for b in bids.values())
    leaders = [p for p in phase.contenders if bids[p].total == top]
    if len(leaders) == 1:
        winner, bid = leaders[0], bids[leaders[0]]
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
        log.append(
            {
                "kind": "final_hills",
                "player": player,
                "hills": hills,
                "points": rules.change_power(pos, player, hills),
            }
        )
        parchment = sum(
            int(c.split()[1]) for c in pos.players[player].hand if c.startswith("parchment")
        )
        if parchment:
            log.append(
                {
                    "kind": "parchment",
                    "player": player,
                    "points": rules.change_power(pos, player, parchment),
                }
            )
    state.winners = rules.winners(pos, state.players)
    state.phase = Phase("over")
    log.append(
        {
            "kind": "game_over",
            "winners": state.winners,
            "power": {p: pos.players[p].power for p in state.players},
        }
    )


# --- defaults at a deadline (RULES 9) ----------------------------------------------------


def default_move(state: GameState, player: str) -> Submission:
    """RULES 9: what a player who missed the deadline submits."""
    rng = random.Random(
        f"{state.settings.seed}/{state.turn}/{state.phase.kind}/"
        f"{player}/{len(state.placements)}/{state.slot}"
    )
    kind = state.phase.kind
    if kind == "placement":
        assert state.phase.colour is not None
        return rng.choice(rules.legal_placements(state.pos, state.phase.colour))
    if kind == "decision":
        cards = rng.sample((1, 2, 3), state.cards_to_choose(player))
        return Decide(tuple(Choice(c) for c in cards))
    if kind == "negotiation":
        return BreakOff()
    if kind == "duel":
        return Bid(0)
    return Pass()


HANDLERS: dict[str, Handler] = {
    "placement": _on_placement,
    "decision": _on_decision,
    "negotiation": _on_negotiation,
    "duel": _on_duel,
    "perform": _on_perform,
    "crown": _on_crown,
}

# `GameState`, `Phase` and `decision_problem` live in engine.state and
# engine.phase_rules; the site imports them from here.
__all__ = [
    "GameState",
    "Log",
    "Phase",
    "apply",
    "attempt",
    "check",
    "decision_problem",
    "default_move",
    "is_simultaneous",
    "new_game",
    "replay",
    "start_game",
    "submit",
]
