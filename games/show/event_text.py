"""One plain English sentence per engine event, for the game log, the archive and emails.

`describe(event, names)` takes an event as the engine wrote it (cells as `[x, y]`
lists) and `names` mapping colours to the players' display names. It only words
what the event says.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from engine.reasons import sentence
from games.show.words import (
    CARD_NAMES,
    action_text,
    card_name,
    card_text,
    cell,
    choices_text,
    edge,
    name_of,
    names_list,
    plural,
    with_article,
)

Event = dict[str, Any]
Names = dict[str, str]


def _points(value: Any) -> str:
    return f"{int(value):+d} power"


# --- the sentences ------------------------------------------------------------------------


def describe(event: Event, names: Names, viewer: str | None = None) -> str:
    """The event as one sentence. An event of a kind without a sentence, or without a
    field its sentence needs, is a bug where it was written: it raises, so that tests
    (tests/site/test_event_text.py enumerates every kind the code writes) say so.

    A private event (`to`: its one reader) says "You" only to `viewer`, its reader; any
    other reader (the archive, once every secret is public) is told the player's name."""
    kind = event.get("kind", "")
    sentence = SENTENCES.get(kind)
    if sentence is None:
        raise KeyError(f"no sentence for the event kind {kind!r}: add one to SENTENCES")
    return sentence(event, _Who(names, event, viewer))


class _Who:
    """The names of the players an event mentions."""

    def __init__(self, names: Names, event: Event, viewer: str | None = None) -> None:
        self.names, self.event, self.viewer = names, event, viewer

    def __call__(self, key: str = "player") -> str:
        return name_of(self.event.get(key), self.names)

    def addressee(self, possessive: bool = False) -> str:
        """ "You" / "Your" to the reader a private event is for, else their name."""
        to = self.event.get("to")
        if to and to == self.viewer:
            return "Your" if possessive else "You"
        name = name_of(to, self.names) if to else "A player"
        return f"{name}'s" if possessive else name

    def all(self, key: str = "players") -> str:
        return names_list(self.event.get(key) or (), self.names)


Sentence = Callable[[Event, _Who], str]


def _reveal(e: Event, who: _Who) -> str:
    card = e["card"]
    if card in CARD_NAMES:
        return f"The action card {CARD_NAMES[card]} is revealed."
    return (
        f"The action card {card} is revealed ({card_text(card)}); "
        f"{who('start_player')} is the start player."
    )


def _silver(e: Event, who: _Who) -> str:
    return (
        f"Silver mine: {who()} has {plural(e['hills'], 'hill')} in their regions "
        f"and gains {_points(e['points'])}."
    )


def _revealed(e: Event, who: _Who) -> str:
    parts = [
        f"{name_of(p, who.names)} {choices_text(c['cards'], c['politics'])}"
        for p, c in e["decisions"].items()
    ]
    return "The decisions are revealed: " + "; ".join(parts) + "."


def _decision(e: Event, who: _Who) -> str:
    return f"{who()} chooses {choices_text(e['cards'], e['politics'])}."


def _politics_returned(e: Event, who: _Who) -> str:
    return (
        f"{who()}'s {str(e['card']).title()} card cannot be played and goes back to "
        f"their hand: {reason_text(e['reason'])}."
    )


def _alliance(e: Event, who: _Who) -> str:
    own, other = e["castles"]
    return f"{who()} allies the region at {cell(own)} with the region at {cell(other)}."


def _alliance_broken(e: Event, who: _Who) -> str:
    one, two = e["castles"]
    return f"{who()} ends the alliance of the regions at {cell(one)} and {cell(two)}."


def _renegade(e: Event, who: _Who) -> str:
    return (
        f"{who()} plays a Renegade: {who('owner')}'s knight at {cell(e['removed'])} "
        "goes back to its supply."
    )


def _knight(e: Event, who: _Who) -> str:
    fee = f" (on forest, {e['fee']} ducats)" if e.get("fee") else ""
    return f"{who()} places a knight at {cell(e['cell'])}{fee}."


def _wall(e: Event, who: _Who) -> str:
    return f"{who()} places a wall at {edge(e['wall'])}."


def _founded(e: Event, who: _Who) -> str:
    towns = f" with {plural(e['towns'], 'town')}" if e.get("towns") else ""
    return (
        f"{who('owner')} founds a region of {plural(e['size'], 'cell')}{towns} at "
        f"{cell(e['castle'])}: {_points(e['points'])}."
    )


def _expanded(e: Event, who: _Who) -> str:
    cells = " and ".join(cell(c) for c in e["cells"])
    return f"{who()} expands the region at {cell(e['castle'])} by {cells}: {_points(e['points'])}."


def _lost(e: Event, who: _Who) -> str:
    return (
        f"{who()} loses {plural(e['cells'], 'cell')} of the region at "
        f"{cell(e['castle'])}: {_points(e['points'])}."
    )


def _severed(e: Event, who: _Who) -> str:
    return (
        f"A piece of {plural(e['size'], 'cell')} is cut off {who()}'s region at "
        f"{cell(e['castle'])} and becomes a neutral zone: {_points(e['points'])}."
    )


def _money(e: Event, who: _Who) -> str:
    verb = "takes" if len(e["players"]) == 1 else "take"
    return f"{who.all()} {verb} {action_text(e['action'])}: {plural(e['each'], 'ducat')} each."


def _negotiation(e: Event, who: _Who) -> str:
    return f"{who.all()} both chose {action_text(e['action'])}: they negotiate."


def _offer(e: Event, who: _Who) -> str:
    return (
        f"{who()} offers {who('other')} {plural(e['ducats'], 'ducat')} to perform the action alone."
    )


def _accepted(e: Event, who: _Who) -> str:
    return (
        f"{who()} accepts {who('payer')}'s offer of {plural(e['ducats'], 'ducat')}; "
        f"{who('payer')} acts alone."
    )


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
    return f"{who()} wins the duel and pays {plural(e['paid'], 'ducat')} to the bank."


# What a payment is for (engine.events.PaidFor). A game stored before the codes holds
# the words themselves, shown as they are.
PAID_FOR = {
    "knights_on_forest": "knights on forest",
    "knight_on_forest": "a knight on forest",
    "renegade_knights_on_forest": "renegade knights on forest",
    "alliance_break": "breaking an alliance",
}


def _paid(e: Event, who: _Who) -> str:
    treasure = ", ".join(map(str, e.get("treasure") or []))
    how = f" (Treasure {treasure} and {e['ducats']} ducats)" if treasure else ""
    purpose = PAID_FOR.get(e["for"], e["for"])
    return f"{who()} pays {plural(e['amount'], 'ducat')}{how} for {purpose}."


def _placed(e: Event, who: _Who) -> str:
    return (
        f"{who()} places {with_article(e['colour'])} castle at {cell(e['castle'])} and a "
        f"knight at {cell(e['knight'])}."
    )


def _game_over(e: Event, who: _Who) -> str:
    power = ", ".join(f"{name_of(p, who.names)} {v}" for p, v in (e.get("power") or {}).items())
    verb = "wins" if len(e["winners"]) == 1 else "share the victory"
    return f"The game is over: {who.all('winners')} {verb}. Power: {power}."


def _paused(e: Event, who: _Who) -> str:
    left = _duration(int(e["remaining_seconds"]))
    return (
        f"The game is paused while {who.all()} {_be(e['players'])} away; "
        f"{left} will be left for the phase when it resumes."
    )


def _extended(e: Event, who: _Who) -> str:
    """By whom (the creator, or the absence of whom) and until when."""
    until = _until(e.get("deadline"))
    if e["reason"] == "creator":
        creator = f"{who()}, the game's creator," if e.get("player") else "The game's creator"
        return (
            f"{creator} extends the deadline by {plural(e['hours'], 'hour')}"
            f"{', ' + until if until else ''}."
        )
    away = f"while {who.all()} {_be(e['players'])} away"
    return f"The deadline is extended {until + ', ' if until else ''}{away}."


def _until(deadline: Any) -> str:
    """ "until Wed 2 Jan 2030, 10:00 UTC": in UTC, named, since a log line is the same for
    every reader (the page shows the deadline in each reader's own zone)."""
    if not deadline:
        return ""
    moment = datetime.fromisoformat(str(deadline)).astimezone(UTC)
    return f"until {moment:%a} {moment.day} {moment:%b %Y, %H:%M} UTC"


def _be(players: list[str]) -> str:
    return "is" if len(players) == 1 else "are"


def _duration(seconds: int) -> str:
    """ "2 days and 3 hours", "5 hours", "40 minutes" (what a pause keeps of a phase)."""
    days, hours, minutes = seconds // 86400, seconds % 86400 // 3600, seconds % 3600 // 60
    parts = [plural(n, unit) for n, unit in ((days, "day"), (hours, "hour")) if n]
    return " and ".join(parts) or plural(minutes, "minute")


def reason_text(reason: Any) -> str:
    """A stored refusal's reason in words: a code and its values (engine.reasons), or, in
    an event stored before reasons were codes, the English sentence as it was written."""
    if isinstance(reason, dict):
        return sentence(str(reason["code"]), reason.get("values") or {})
    return str(reason)


def _refused(e: Event, who: _Who) -> str:
    return (
        f"{who.addressee(possessive=True)} submission '{e['move']}' could not be "
        f"applied: {reason_text(e['reason'])}."
    )


SENTENCES: dict[str, Sentence] = {
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
    "card": lambda e, who: f"{who.addressee()} took the {card_name(e['card'])} card.",
    "paid": _paid,
    "placed": _placed,
    "turn_end": lambda e, who: f"Turn {e['turn']} ends." if "turn" in e else "The turn ends.",
    "final_hills": lambda e, who: (
        f"Final scoring: {who()} has {plural(e['hills'], 'hill')} "
        f"in their regions: {_points(e['points'])}."
    ),
    "end_game": lambda e, who: SENTENCES["final_hills"](e, who),  # engine.scenario's scoring
    "parchment": lambda e, who: f"{who()} reveals Parchment: {_points(e['points'])}.",
    "game_over": _game_over,
    "refused": _refused,
    # written by the site (games.deadlines), not the engine
    "paused": _paused,
    "resumed": lambda e, who: "The game resumes: the deadline runs again.",
    "deadline_extended": _extended,
    "deadline_missed": lambda e, who: (
        f"{who.all()} missed the deadline: the default move was played for them."
    ),
    "standin": lambda e, who: (
        f"{who()} missed {plural(e['missed'], 'deadline')} in a row: "
        "a computer plays their seat until they take it back."
    ),
    "seat_taken_back": lambda e, who: f"{who()} takes their seat back from the computer.",
    "conceded": lambda e, who: f"{who()} conceded: a computer plays their seat to the end.",
}
