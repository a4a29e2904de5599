"""One plain English sentence per engine event, for the game log, the archive and emails.

`describe(event, names)` takes an event as the engine wrote it (cells as `[x, y]`
lists) and `names` mapping colours to the players' display names. It only words
what the event says; an unknown kind still gets a sentence.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from engine.notation import format_cell, format_edge

Event = dict[str, Any]
Names = dict[str, str]

_ACTION_WORDS = {"W": ("wall", "walls"), "S": ("sword", "swords"), "M": ("ducat", "ducats")}
_CARD_NAMES = {"SILVER": "Silver mine", "KING": "The King is dead!"}


# --- words shared with the pages -------------------------------------------------------------


def action_text(symbol: str) -> str:
    """`W2` is "2 walls", `S1` "1 sword", `M5` "5 ducats", `P` "the crown"."""
    if symbol == "P":
        return "the crown"
    words = _ACTION_WORDS.get(symbol[:1])
    if words is None or not symbol[1:].isdigit():
        return symbol
    count = int(symbol[1:])
    return f"{count} {words[0] if count == 1 else words[1]}"


def card_text(card: str | None) -> str:
    """`W2 S1 M5` is "1: 2 walls · 2: 1 sword · 3: 5 ducats"."""
    if not card:
        return "no card"
    if card in _CARD_NAMES:
        return _CARD_NAMES[card]
    return " · ".join(f"{i}: {action_text(a)}" for i, a in enumerate(card.split(), start=1))


def card_name(card: str) -> str:
    """A politics card as players call it: `treasure 10` is "Treasure 10"."""
    return card.capitalize()


def name_of(colour: str | None, names: Names) -> str:
    if not colour:
        return "nobody"
    return names.get(colour) or colour.title()


def names_list(colours: Iterable[str], names: Names) -> str:
    """"Alice", "Alice and Bob", "Alice, Bob and Charlie"."""
    words = [name_of(c, names) for c in colours]
    if len(words) <= 1:
        return "".join(words) or "nobody"
    return ", ".join(words[:-1]) + " and " + words[-1]


def choices_text(cards: list[int], politics: list[str | None]) -> str:
    """Decision cards with any Alliance or Renegade played with them: "1 (Alliance) and 3"."""
    padded = [*politics, *[None] * len(cards)]
    return " and ".join(f"{card} ({play.title()})" if play else str(card)
                        for card, play in zip(cards, padded, strict=False))


def cell(value: Any) -> str:
    return format_cell((int(value[0]), int(value[1])))


def _edge(value: Any) -> str:
    a, b = value
    return format_edge(((int(a[0]), int(a[1])), (int(b[0]), int(b[1]))))


def _points(value: Any) -> str:
    return f"{int(value):+d} power"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


# --- the sentences ------------------------------------------------------------------------


def describe(event: Event, names: Names) -> str:
    """The event as one sentence."""
    sentence = _SENTENCES.get(event.get("kind", ""))
    if sentence is None:
        return _generic(event)
    try:
        return sentence(event, _Who(names, event))
    except (KeyError, TypeError, ValueError, IndexError):
        return _generic(event)


def _generic(event: Event) -> str:
    kind = str(event.get("kind", "something")).replace("_", " ")
    return f"Something happened in the game: {kind}."


class _Who:
    """The names of the players an event mentions."""

    def __init__(self, names: Names, event: Event) -> None:
        self.names, self.event = names, event

    def __call__(self, key: str = "player") -> str:
        return name_of(self.event.get(key), self.names)

    def all(self, key: str = "players") -> str:
        return names_list(self.event.get(key) or (), self.names)


Sentence = Callable[[Event, _Who], str]


def _reveal(e: Event, who: _Who) -> str:
    card = e["card"]
    if card in _CARD_NAMES:
        return f"The action card {_CARD_NAMES[card]} is revealed."
    return (f"The action card {card} is revealed ({card_text(card)}); "
            f"{who('start_player')} is the start player.")


def _silver(e: Event, who: _Who) -> str:
    return (f"Silver mine: {who()} has {_plural(e['hills'], 'hill')} in their regions "
            f"and gains {_points(e['points'])}.")


def _revealed(e: Event, who: _Who) -> str:
    parts = [f"{name_of(p, who.names)} {choices_text(c['cards'], c['politics'])}"
             for p, c in e["decisions"].items()]
    return "The decisions are revealed: " + "; ".join(parts) + "."


def _decision(e: Event, who: _Who) -> str:
    return f"{who()} chooses {choices_text(e['cards'], e['politics'])}."


def _politics_returned(e: Event, who: _Who) -> str:
    return (f"{who()}'s {str(e['card']).title()} card cannot be played and goes back to "
            f"their hand: {e['reason']}.")


def _alliance(e: Event, who: _Who) -> str:
    own, other = e["castles"]
    return f"{who()} allies the region at {cell(own)} with the region at {cell(other)}."


def _alliance_broken(e: Event, who: _Who) -> str:
    one, two = e["castles"]
    return f"{who()} ends the alliance of the regions at {cell(one)} and {cell(two)}."


def _renegade(e: Event, who: _Who) -> str:
    return (f"{who()} plays a Renegade: {who('owner')}'s knight at {cell(e['removed'])} "
            "goes back to its supply.")


def _knight(e: Event, who: _Who) -> str:
    fee = f" (on forest, {e['fee']} ducats)" if e.get("fee") else ""
    return f"{who()} places a knight at {cell(e['cell'])}{fee}."


def _wall(e: Event, who: _Who) -> str:
    return f"{who()} places a wall at {_edge(e['wall'])}."


def _founded(e: Event, who: _Who) -> str:
    towns = f" with {_plural(e['towns'], 'town')}" if e.get("towns") else ""
    return (f"{who('owner')} founds a region of {_plural(e['size'], 'cell')}{towns} at "
            f"{cell(e['castle'])}: {_points(e['points'])}.")


def _expanded(e: Event, who: _Who) -> str:
    cells = " and ".join(cell(c) for c in e["cells"])
    return (f"{who()} expands the region at {cell(e['castle'])} by {cells}: "
            f"{_points(e['points'])}.")


def _lost(e: Event, who: _Who) -> str:
    return (f"{who()} loses {_plural(e['cells'], 'cell')} of the region at "
            f"{cell(e['castle'])}: {_points(e['points'])}.")


def _severed(e: Event, who: _Who) -> str:
    return (f"A piece of {_plural(e['size'], 'cell')} is cut off {who()}'s region at "
            f"{cell(e['castle'])} and becomes a neutral zone: {_points(e['points'])}.")


def _money(e: Event, who: _Who) -> str:
    verb = "takes" if len(e["players"]) == 1 else "take"
    return f"{who.all()} {verb} {action_text(e['action'])}: {_plural(e['each'], 'ducat')} each."


def _negotiation(e: Event, who: _Who) -> str:
    return f"{who.all()} both chose {action_text(e['action'])}: they negotiate."


def _offer(e: Event, who: _Who) -> str:
    return (f"{who()} offers {who('other')} {_plural(e['ducats'], 'ducat')} "
            "to perform the action alone.")


def _accepted(e: Event, who: _Who) -> str:
    return (f"{who()} accepts {who('payer')}'s offer of {_plural(e['ducats'], 'ducat')}; "
            f"{who('payer')} acts alone.")


def _duel(e: Event, who: _Who) -> str:
    again = " again, after a tie" if e.get("round", 1) > 1 else ""
    return f"{who.all()} make sealed bids{again} for {action_text(e['action'])}."


def _bids(e: Event, who: _Who) -> str:
    parts = []
    for player, bid in e["bids"].items():
        treasure = ", ".join(map(str, bid.get("treasure") or []))
        extra = f" ({bid['ducats']} ducats + Treasure {treasure})" if treasure else ""
        parts.append(f"{name_of(player, who.names)} {bid['total']}{extra}")
    return "The bids are revealed: " + "; ".join(parts) + "."


def _duel_won(e: Event, who: _Who) -> str:
    return f"{who()} wins the duel and pays {_plural(e['paid'], 'ducat')} to the bank."


def _paid(e: Event, who: _Who) -> str:
    treasure = ", ".join(map(str, e.get("treasure") or []))
    how = f" (Treasure {treasure} and {e['ducats']} ducats)" if treasure else ""
    return f"{who()} pays {_plural(e['amount'], 'ducat')}{how} for {e['for']}."


def _placed(e: Event, who: _Who) -> str:
    return (f"{who()} places a {e['colour']} castle at {cell(e['castle'])} and a knight at "
            f"{cell(e['knight'])}.")


def _game_over(e: Event, who: _Who) -> str:
    power = ", ".join(f"{name_of(p, who.names)} {v}" for p, v in (e.get("power") or {}).items())
    verb = "wins" if len(e["winners"]) == 1 else "share the victory"
    return f"The game is over: {who.all('winners')} {verb}. Power: {power}."


def _refused(e: Event, who: _Who) -> str:
    return f"Your submission '{e['move']}' could not be applied: {e['reason']}."


_SENTENCES: dict[str, Sentence] = {
    "reveal": _reveal,
    "silver": _silver,
    "decided": lambda e, who: f"{who()} has decided.",
    "revealed": _revealed,
    "decision": _decision,
    "politics_returned": _politics_returned,
    "alliance": _alliance,
    "alliance_broken": _alliance_broken,
    "renegade": _renegade,
    "knight": _knight,
    "wall": _wall,
    "founded": _founded,
    "expanded": _expanded,
    "lost": _lost,
    "severed": _severed,
    "money": _money,
    "negotiation": _negotiation,
    "offer": _offer,
    "accepted": _accepted,
    "broken_off": lambda e, who: f"{who()} breaks off the negotiation: a duel decides.",
    "duel": _duel,
    "bid_made": lambda e, who: f"{who()} has made a sealed bid.",
    "bids": _bids,
    "duel_won": _duel_won,
    "duel_void": lambda e, who: f"{who.all()} tie again: nobody performs the action.",
    "perform": lambda e, who: f"{who()} performs {action_text(e['action'])}.",
    "nothing_to_do": lambda e, who: f"{who()} can do nothing with {action_text(e['action'])}.",
    "declined": lambda e, who: f"{who()} declines {action_text(e['action'])}.",
    "looks": lambda e, who: f"{who()} looks through politics pile {e['pile']}.",
    "took_card": lambda e, who: f"{who()} takes a card from politics pile {e['pile']}.",
    "card": lambda e, who: f"You took the {card_name(e['card'])} card.",
    "paid": _paid,
    "placed": _placed,
    "turn_end": lambda e, who: f"Turn {e['turn']} ends." if "turn" in e else "The turn ends.",
    "final_hills": lambda e, who: (f"Final scoring: {who()} has {_plural(e['hills'], 'hill')} "
                                   f"in their regions: {_points(e['points'])}."),
    "parchment": lambda e, who: f"{who()} reveals Parchment: {_points(e['points'])}.",
    "game_over": _game_over,
    "refused": _refused,
}


# --- the phase, for the page's heading ---------------------------------------------------------


def phase_text(phase: dict[str, Any], names: Names) -> str:
    """What the game waits for now, as the view's `phase` says: one short sentence."""
    kind, action = phase.get("kind"), action_text(phase.get("action") or "")
    waiting = names_list(phase.get("waiting") or (), names)
    contenders = names_list(phase.get("contenders") or (), names)
    if kind == "placement":
        return f"{waiting} places a {phase.get('colour')} castle and knight."
    if kind == "decision":
        return "The players choose their decision cards."
    if kind == "negotiation":
        offer = phase.get("offer")
        if offer:
            return (f"{contenders} negotiate over {action}. "
                    f"{name_of(offer[0], names)} offers {_plural(offer[1], 'ducat')}.")
        return f"{contenders} negotiate over {action}."
    if kind == "duel":
        again = " again (after a tie)" if (phase.get("round") or 1) > 1 else ""
        return f"{contenders} bid{again} for {action}."
    if kind == "perform":
        return f"{waiting} performs {action}."
    if kind == "crown":
        return f"{waiting} takes a card from politics pile {phase.get('pile')}."
    if kind == "over":
        return "The game is over."
    return f"The game waits for {waiting}."
