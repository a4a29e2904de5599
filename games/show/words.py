"""The game's words, shared by every page and email: actions, cards, names, cells,
plurals, the phase in a sentence. Only wording: what to say comes from the engine's view.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
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
    """ "Alice", "Alice and Bob", "Alice, Bob and Charlie"."""
    words = [name_of(c, names) for c in colours]
    if len(words) <= 1:
        return "".join(words) or "nobody"
    return ", ".join(words[:-1]) + " and " + words[-1]


def choices_text(cards: list[int], politics: list[str | None]) -> str:
    """Decision cards with any Alliance or Renegade played with them: "1 (Alliance) and 3"."""
    padded = [*politics, *[None] * len(cards)]
    return " and ".join(
        f"{card} ({play.title()})" if play else str(card)
        for card, play in zip(cards, padded, strict=False)
    )


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


def with_article(word: str) -> str:
    """ "a red", "an ochre": the indefinite article a word takes (by its first letter,
    which is right for the colours and the game's other words)."""
    vowel = word[:1].lower() in tuple("aeiou")
    return f"{'an' if vowel else 'a'} {word}"


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


# Joiners that some scripts (and emoji) need; every other format character goes.
KEPT_FORMAT_CHARACTERS = frozenset({"\u200c", "\u200d"})


def clean_text(text: str) -> str:
    """A name or subject as one plain line: without control characters (a newline in an
    email header), format characters (right-to-left overrides U+202A-U+202E and
    isolates U+2066-U+2069, which turn a subject around) and line separators."""
    kept = "".join(
        " "
        if unicodedata.category(c) in {"Cc", "Zl", "Zp"}
        else ""
        if unicodedata.category(c) == "Cf" and c not in KEPT_FORMAT_CHARACTERS
        else c
        for c in text
    )
    return " ".join(kept.split())


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
        return f"{waiting} places {with_article(str(phase.get('colour')))} castle and knight."
    if kind == "decision":
        return "The players choose their decision cards."
    if kind == "negotiation":
        offer = phase.get("offer")
        if offer:
            offerer, ducats = offer_parts(offer)
            return (
                f"{contenders} negotiate over {action}. "
                f"{name_of(offerer, names)} offers {plural(ducats, 'ducat')}."
            )
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


# --- a phase named, for a form or an email made for another phase --------------------------


def phase_label(phase: Mapping[str, Any] | None, turn: int) -> str:
    """A phase in a few words: "decisions, turn 4", "the duel for 2 walls, turn 4"."""
    kind = (phase or {}).get("kind")
    action = action_text((phase or {}).get("action") or "")
    if kind == "over":
        return "the end of the game"
    if kind == "placement":
        return "placing the first castles"
    what = {
        "decision": "decisions",
        "negotiation": f"the negotiation over {action}",
        "duel": f"the duel for {action}",
        "perform": f"performing {action}",
        "crown": "the crown",
    }.get(str(kind), str(kind or "a phase"))
    return f"{what}, turn {turn}"


def phase_moved_on(made_for: int | None, then: str | None, now: int, current: str) -> str:
    """Why a form made for another phase was refused, and what the game does now."""
    if made_for is None:
        was = "This form came from an older page that does not say which phase it was for"
    else:
        was = f"This form was for phase {made_for}" + (f" ({then})" if then else "")
    return (
        f"{was}; the game has moved on to phase {now} ({current}): nothing was applied. "
        "Here is the game as it is now."
    )
