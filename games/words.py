"""The game's words, shared by every page and email: actions, cards, names, cells,
plurals, the phase in a sentence. Only wording: what to say comes from the engine's view.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from engine.notation import format_cell, format_edge
from engine.view import PhaseView

Names = dict[str, str]

ACTION_WORDS = {"W": ("wall", "walls"), "S": ("sword", "swords"), "M": ("ducat", "ducats")}
CARD_NAMES = {"SILVER": "Silver mine", "KING": "The King is dead!"}


# --- the game's words -------------------------------------------------------------


def action_text(symbol: str) -> str:
    """`W2` is "2 walls", `S1` "1 sword", `M5` "5 ducats", `P` "the crown"."""
    if symbol == "P":
        return "the crown"
    words = ACTION_WORDS.get(symbol[:1])
    if words is None or not symbol[1:].isdigit():
        return symbol
    count = int(symbol[1:])
    return f"{count} {words[0] if count == 1 else words[1]}"


def card_text(card: str | None) -> str:
    """`W2 S1 M5` is "1: 2 walls · 2: 1 sword · 3: 5 ducats"."""
    if not card:
        return "no card"
    if card in CARD_NAMES:
        return CARD_NAMES[card]
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


def edge(value: Any) -> str:
    a, b = value
    return format_edge(((int(a[0]), int(a[1])), (int(b[0]), int(b[1]))))


def offer_parts(offer: Sequence[str | int]) -> tuple[str, int]:
    """A standing offer as the view holds it, `[offerer, ducats]`: its two parts."""
    offerer, ducats = offer
    assert isinstance(offerer, str) and isinstance(ducats, int), offer
    return offerer, ducats


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def sentence(reason: object) -> str:
    """A service's or form's reason as a sentence: capital first, full stop last."""
    text = str(reason).strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


# --- the phase, for the page's heading ---------------------------------------------------------


def phase_text(phase: PhaseView, names: Names) -> str:
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
            offerer, ducats = offer_parts(offer)
            return (f"{contenders} negotiate over {action}. "
                    f"{name_of(offerer, names)} offers {plural(ducats, 'ducat')}.")
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
