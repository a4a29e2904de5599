"""The game's words, shared by every page and email: actions, cards, names, cells,
plurals, the phase in a sentence, the engine's refusals. Only wording: what to say comes
from the engine's view. Every word a person reads goes through Django's translations
(the reader's language is the active one), with whole sentences and named placeholders.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Collection, Iterable, Mapping, Sequence
from datetime import datetime, tzinfo
from typing import Any

from django.utils import dateformat, timezone
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop, ngettext, pgettext_lazy

from engine.errors import IllegalMove, NotationError
from engine.notation import format_cell, format_edge
from engine.reasons import SENTENCES as REASON_SENTENCES
from engine.reasons import Reason
from engine.view import PhaseView
from games.show.command_words import listed_to_reader, to_reader

# The name of each kind of phase (engine.state.Phase.kind), in the reader's language.
PHASE_NAMES = {
    "placement": pgettext_lazy("phase", "placement"),
    "decision": pgettext_lazy("phase", "decision"),
    "negotiation": pgettext_lazy("phase", "negotiation"),
    "duel": pgettext_lazy("phase", "duel"),
    "perform": pgettext_lazy("phase", "perform"),
    "crown": pgettext_lazy("phase", "crown"),
    "over": pgettext_lazy("phase", "over"),
}

Names = dict[str, str]

ACTION_WORDS = {"W": ("wall", "walls"), "S": ("sword", "swords"), "M": ("ducat", "ducats")}
CARD_NAMES: dict[str, str | Promise] = {
    "SILVER": pgettext_lazy("action card", "Silver mine"),
    "KING": pgettext_lazy("action card", "The King is dead!"),
}
# The colours as words in a sentence ("the red castle"; German "Rot", Italian "rosso").
COLOUR_WORDS: dict[str, str | Promise] = {
    "red": pgettext_lazy("colour", "red"),
    "ochre": pgettext_lazy("colour", "ochre"),
    "lilac": pgettext_lazy("colour", "lilac"),
    "grey": pgettext_lazy("colour", "grey"),
}
# The politics cards' names (engine.moves POLITICS_CARDS: "alliance", "treasure 10").
POLITICS_NAMES: dict[str, str | Promise] = {
    "alliance": pgettext_lazy("politics card", "Alliance"),
    "renegade": pgettext_lazy("politics card", "Renegade"),
    "treasure": pgettext_lazy("politics card", "Treasure"),
    "parchment": pgettext_lazy("politics card", "Parchment"),
}
# The same names as the engine's refusals quote a card ("pile 1 holds no 'alliance' card").
POLITICS_WORDS: dict[str, str | Promise] = {
    "alliance": pgettext_lazy("politics card in a sentence", "alliance"),
    "renegade": pgettext_lazy("politics card in a sentence", "renegade"),
    "treasure": pgettext_lazy("politics card in a sentence", "treasure"),
    "parchment": pgettext_lazy("politics card in a sentence", "parchment"),
}
NOBODY = gettext_lazy("nobody")


# --- the game's words -------------------------------------------------------------


def action_text(symbol: str) -> str:
    """`W2` is "2 walls", `S1` "1 sword", `M5` "5 ducats", `P` "the crown"."""
    if symbol == "P":
        return _("the crown")
    kind = symbol[:1]
    if kind not in ACTION_WORDS or not symbol[1:].isdigit():
        return symbol
    count = int(symbol[1:])
    if kind == "W":
        return ngettext("%(count)d wall", "%(count)d walls", count) % {"count": count}
    if kind == "S":
        return ngettext("%(count)d sword", "%(count)d swords", count) % {"count": count}
    return ducats_text(count)


def ducats_text(count: int) -> str:
    """ "1 ducat", "5 ducats"."""
    return ngettext("%(count)d ducat", "%(count)d ducats", count) % {"count": count}


def card_text(card: str | None) -> str:
    """`W2 S1 M5` is "1: 2 walls · 2: 1 sword · 3: 5 ducats"."""
    if not card:
        return _("no card")
    if card in CARD_NAMES:
        return str(CARD_NAMES[card])
    return " · ".join(f"{i}: {action_text(a)}" for i, a in enumerate(card.split(), start=1))


def card_label(card: str) -> str:
    """An action card as a list of the deck shows it: its actions' code ("S1 W2 P"), or
    the name of a special card ("Silver mine")."""
    return str(CARD_NAMES[card]) if card in CARD_NAMES else card


def card_name(card: str) -> str:
    """A politics card as players call it: `treasure 10` is "Treasure 10"."""
    kind, _space, value = card.lower().partition(" ")
    name = POLITICS_NAMES.get(kind)
    if name is None:
        return card.capitalize()
    return f"{name} {value}" if value else str(name)


def card_word(card: str) -> str:
    """A politics card as a refusal quotes it: `treasure 10` is "treasure 10"."""
    kind, _space, value = card.partition(" ")
    word = POLITICS_WORDS.get(kind)
    if word is None:
        return card
    return f"{word} {value}" if value else str(word)


def colour_word(colour: str) -> str:
    """A colour in the reader's language, as a sentence names it ("red")."""
    return str(COLOUR_WORDS.get(colour, colour))


# The letter on a colour's castles and knights, the board's and the legend's: colours
# told apart without colour (issue 24). The initials of the colours' words, the same in
# English, German and Italian, yet each the reader's own.
COLOUR_LETTERS: dict[str, str | Promise] = {
    "red": pgettext_lazy("the letter on red pieces", "R"),
    "ochre": pgettext_lazy("the letter on ochre pieces", "O"),
    "lilac": pgettext_lazy("the letter on lilac pieces", "L"),
    "grey": pgettext_lazy("the letter on grey pieces", "G"),
}


def colour_letter(colour: str) -> str:
    return str(COLOUR_LETTERS.get(colour, "?"))


def colour_name(colour: str) -> str:
    """A colour as a player's name ("Red")."""
    word = colour_word(colour)
    return word.title() if word == colour else word[:1].upper() + word[1:]


def name_of(colour: str | None, names: Names) -> str:
    if not colour:
        return str(NOBODY)
    return names.get(colour) or colour_name(colour)


def moment_text(moment: datetime, zone: tzinfo | None = None) -> str:
    """A moment in the reader's time zone (`zone`, else the active one: the page's
    reader's), named: "Tue 4 Mar 2025, 14:00 CET (Europe/Berlin)"; "..., 14:00 UTC"."""
    local = timezone.localtime(moment, zone)
    key = getattr(local.tzinfo, "key", "")
    named = f" ({key})" if key and local.tzname() != key else ""  # not "UTC (UTC)"
    return f"{dateformat.format(local, 'D j M Y, H:i T')}{named}"


def labelled(name: str, colour: str, *, computer: bool) -> str:
    """A player's name with their colour, as lists, score lines and message headings show
    it: "Alice (red)". A computer's name says its colour already ("Computer (lilac)")."""
    if computer:
        return name
    return _("%(name)s (%(colour)s)") % {"name": name, "colour": colour_word(colour)}


def join_and(items: Sequence[str]) -> str:
    """ "C3", "C3 and F7", "C3, F7 and J2"."""
    if len(items) <= 1:
        return "".join(items)
    return _("%(items)s and %(last)s") % {"items": ", ".join(items[:-1]), "last": items[-1]}


def names_list(colours: Iterable[str], names: Names) -> str:
    """ "Alice", "Alice and Bob", "Alice, Bob and Charlie"."""
    words = [name_of(c, names) for c in colours]
    return join_and(words) or str(NOBODY)


def choices_text(cards: list[int], politics: list[str | None]) -> str:
    """Decision cards with any Alliance or Renegade played with them: "1 (Alliance) and 3"."""
    padded = [*politics, *[None] * len(cards)]
    parts = [
        f"{card} ({card_name(play)})" if play else str(card)
        for card, play in zip(cards, padded, strict=False)
    ]
    text = parts[0] if parts else ""
    for part in parts[1:]:
        text = _("%(items)s and %(last)s") % {"items": text, "last": part}
    return text


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
    which is right for the colours and the game's other words). English only: a sentence
    to translate names its article in its own words."""
    vowel = word[:1].lower() in tuple("aeiou")
    return f"{'an' if vowel else 'a'} {word}"


def plural(count: int, word: str) -> str:
    """English only ("3 walls"): a sentence to translate counts with `ngettext`."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


# --- the engine's refusals -------------------------------------------------------------

COLOUR_VALUES = frozenset({"colour", "owner", "waiting"})
# The notation's lists of what may be written (`unknown_command`, `hint_take`, ...): English
# words a reply may use in the reader's language (games.show.command_words).
LISTED_WORDS = frozenset({"commands", "names"})
# A command, or a move as the engine read it (in English, after `to_english`): shown to the
# reader in their own words, as they may have written it.
MOVE_VALUES = frozenset({"command", "move"})
# The refusals whose {colour} may be their reader's own, as told to that reader: "you
# choose 2 decision cards this turn", never "red chooses ..." to red. The engine's own
# sentence (engine.reasons) to anyone else, and for every other refusal.
TO_READER: dict[str, str] = {
    "castle_too_close": gettext_noop(
        "{cell} is too close to your castle at {castle}: your castles need {between} cells "
        "between them"
    ),
    "no_treasure_card": gettext_noop("you hold no Treasure card worth {value}"),
    "too_few_ducats": gettext_noop("you have {ducats} ducats, {needed} are needed"),
    "wall_region_limit": gettext_noop("you own {regions} regions and may place no more walls"),
    "wall_separates_knights": gettext_noop(
        "a wall may not separate your knight at {one} from your knight at {other}"
    ),
    "wall_separates_knight_and_castle": gettext_noop(
        "a wall may not separate your knight at {one} from your castle at {other}"
    ),
    "no_knight_in_supply": gettext_noop("you have no knight left in supply"),
    "knight_not_linked": gettext_noop(
        "{cell} is not next to one of your knights or castles without a wall between them"
    ),
    "no_own_region_at": gettext_noop("you have no region with its castle at {castle}"),
    "borders_no_region": gettext_noop("{cell} does not border any of your regions"),
    "borders_several_regions": gettext_noop(
        "{cell} borders several of your regions (castles {castles}): say which, e.g. "
        "'from {castle}'"
    ),
    "own_other_region": gettext_noop("{cell} is in another of your regions"),
    "region_is_own": gettext_noop("the region at {castle} is your own"),
    "not_a_party": gettext_noop("you are not a party to the alliance of {own} and {other}"),
    "knight_is_own": gettext_noop("the knight at {cell} is your own"),
    "region_borders_none": gettext_noop(
        "the {owner} region at {castle} borders none of your regions"
    ),
    "renegade_not_bordering": gettext_noop(
        "{cell} is not in one of your regions bordering the {owner} region at {castle}"
    ),
    "promised_elsewhere": gettext_noop(
        "you have promised {promised} of your {ducats} ducats in an offer or bid, too many "
        "to pay for ending the alliance now"
    ),
    "not_a_player": gettext_noop("you do not play in this game"),
    "waiting_for_others": gettext_noop("the game is waiting for {waiting}, not for you"),
    "one_decision_card": gettext_noop("you choose {count} decision card this turn"),
    "decision_cards": gettext_noop("you choose {count} decision cards this turn"),
    "alliance_cards_in_hand": gettext_noop("Alliance cards in your hand: {count}"),
    "renegade_cards_in_hand": gettext_noop("Renegade cards in your hand: {count}"),
}


def reason_text(code: str, values: Mapping[str, Any], reader: str | None = None) -> str:
    """An engine refusal (engine.reasons: a code and its values) in the reader's language:
    its English sentence translated, with its values in words (colours, cards, lists);
    to `reader`, the colour of the player who reads it, their own colour is "you"."""
    sentence = REASON_SENTENCES[code]
    if reader is not None and values.get("colour") == reader and code in TO_READER:
        sentence = TO_READER[code]
    return _(sentence).format(**{key: _reason_value(key, value) for key, value in values.items()})


def refusal_text(error: IllegalMove | NotationError, reader: str | None = None) -> str:
    """Why the engine refused a move, or could not read it, in the reader's language; to
    `reader`, the colour of the player who made it, as "you" (`TO_READER`)."""
    return reason_text(error.reason.code, error.reason.values, reader)


def _reason_value(key: str, value: Any) -> Any:
    if isinstance(value, Reason):  # what is wrong with a move, quoted with it
        return reason_text(value.code, value.values)
    if isinstance(value, dict) and "code" in value:  # the same, as stored
        return reason_text(value["code"], value.get("values") or {})
    if isinstance(value, list):
        return join_and([str(_reason_value(key, v)) for v in value])
    if key in LISTED_WORDS and isinstance(value, str):
        return listed_to_reader(value, key)
    if key in MOVE_VALUES and isinstance(value, str):
        return to_reader(value)
    if key in COLOUR_VALUES and isinstance(value, str):
        return colour_word(value)
    if key == "card" and isinstance(value, str):
        return card_word(value)
    return value


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


# --- who the game waits for ----------------------------------------------------------------------


def away_name(name: str) -> str:
    """A player's name where the game waits for them while they are away: "Bob (away)"."""
    return _("%(name)s (away)") % {"name": name}


def waiting_names(colours: Sequence[str], names: Names, away: Collection[str]) -> str:
    """The players the game waits for, by name, the away named as away: "Bob (away),
    Charlie" (the page, the lobby and the emails say it so)."""
    return ", ".join(
        away_name(name_of(c, names)) if c in away else name_of(c, names) for c in colours
    )


# --- the phase, for the page's heading ---------------------------------------------------------


def phase_text(phase: PhaseView, names: Names, viewer: str | None = None) -> str:
    """What the game waits for now, as the view's `phase` says: one short sentence; to
    `viewer`, the colour of the player who reads it, their own part as "you"."""
    waiting = list(phase.get("waiting") or ())
    if viewer is not None and viewer in waiting and len(waiting) == 1:
        mine = _phase_text_to_reader(phase, names, viewer)
        if mine:
            return mine
    contest = phase.get("kind") in ("negotiation", "duel")
    if contest and viewer is not None and viewer in (phase.get("contenders") or ()):
        return _contest_to_reader(phase, names, viewer)
    return _phase_text(phase, names)


def _phase_text_to_reader(phase: PhaseView, names: Names, viewer: str) -> str:
    """The phase that waits for the reader alone, told to them ("" if not one of those)."""
    kind, action = phase.get("kind"), action_text(phase.get("action") or "")
    if kind == "placement":
        colour = str(phase.get("colour"))
        words = {"colour": colour_word(colour)}
        if colour[:1].lower() in tuple("aeiou"):
            return _("You place an %(colour)s castle and knight.") % words
        return _("You place a %(colour)s castle and knight.") % words
    if kind == "perform":
        return _("You perform %(action)s.") % {"action": action}
    if kind == "crown":
        return _("You take a card from politics pile %(pile)s.") % {"pile": phase.get("pile")}
    return ""


def _contest_to_reader(phase: PhaseView, names: Names, viewer: str) -> str:
    """A negotiation or duel the reader is in, told to them."""
    action = action_text(phase.get("action") or "")
    others = names_list([c for c in phase.get("contenders") or () if c != viewer], names)
    words = {"others": others, "action": action}
    if phase.get("kind") == "duel":
        if (phase.get("round") or 1) > 1:
            return _("You and %(others)s bid again (after a tie) for %(action)s.") % words
        return _("You and %(others)s bid for %(action)s.") % words
    offer = phase.get("offer")
    if not offer:
        return _("You and %(others)s negotiate over %(action)s.") % words
    offerer, ducats = offer_parts(offer)
    if offerer == viewer:
        return ngettext(
            "You and %(others)s negotiate over %(action)s. You offer %(ducats)d ducat.",
            "You and %(others)s negotiate over %(action)s. You offer %(ducats)d ducats.",
            ducats,
        ) % {**words, "ducats": ducats}
    return ngettext(
        "You and %(others)s negotiate over %(action)s. %(offerer)s offers you %(ducats)d ducat.",
        "You and %(others)s negotiate over %(action)s. %(offerer)s offers you %(ducats)d ducats.",
        ducats,
    ) % {**words, "ducats": ducats, "offerer": name_of(offerer, names)}


def _phase_text(phase: PhaseView, names: Names) -> str:
    """The phase in the third person, as anyone reads it."""
    kind, action = phase.get("kind"), action_text(phase.get("action") or "")
    waiting = names_list(phase.get("waiting") or (), names)
    contenders = names_list(phase.get("contenders") or (), names)
    if kind == "placement":
        colour = str(phase.get("colour"))
        words = {"player": waiting, "colour": colour_word(colour)}
        if colour[:1].lower() in tuple("aeiou"):
            return _("%(player)s places an %(colour)s castle and knight.") % words
        return _("%(player)s places a %(colour)s castle and knight.") % words
    if kind == "decision":
        return _("The players choose their decision cards.")
    if kind == "negotiation":
        offer = phase.get("offer")
        if offer:
            offerer, ducats = offer_parts(offer)
            return ngettext(
                "%(players)s negotiate over %(action)s. %(offerer)s offers %(ducats)d ducat.",
                "%(players)s negotiate over %(action)s. %(offerer)s offers %(ducats)d ducats.",
                ducats,
            ) % {
                "players": contenders,
                "action": action,
                "offerer": name_of(offerer, names),
                "ducats": ducats,
            }
        return _("%(players)s negotiate over %(action)s.") % {
            "players": contenders,
            "action": action,
        }
    if kind == "duel":
        words = {"players": contenders, "action": action}
        if (phase.get("round") or 1) > 1:
            return _("%(players)s bid again (after a tie) for %(action)s.") % words
        return _("%(players)s bid for %(action)s.") % words
    if kind == "perform":
        return _("%(player)s performs %(action)s.") % {"player": waiting, "action": action}
    if kind == "crown":
        return _("%(player)s takes a card from politics pile %(pile)s.") % {
            "player": waiting,
            "pile": phase.get("pile"),
        }
    if kind == "over":
        return _("The game is over.")
    return _("The game waits for %(players)s.") % {"players": waiting}


# --- a phase named, for a form or an email made for another phase --------------------------


def phase_label(phase: Mapping[str, Any] | None, turn: int) -> str:
    """A phase in a few words: "decisions, turn 4", "the duel for 2 walls, turn 4"."""
    kind = (phase or {}).get("kind")
    action = action_text((phase or {}).get("action") or "")
    if kind == "over":
        return _("the end of the game")
    if kind == "placement":
        return _("placing the first castles")
    words = {"action": action, "turn": turn}
    if kind == "decision":
        return _("decisions, turn %(turn)s") % words
    if kind == "negotiation":
        return _("the negotiation over %(action)s, turn %(turn)s") % words
    if kind == "duel":
        return _("the duel for %(action)s, turn %(turn)s") % words
    if kind == "perform":
        return _("performing %(action)s, turn %(turn)s") % words
    if kind == "crown":
        return _("the crown, turn %(turn)s") % words
    if kind:
        return _("%(phase)s, turn %(turn)s") % {"phase": kind, "turn": turn}
    return _("a phase, turn %(turn)s") % words


def phase_moved_on(made_for: int | None, then: str | None, now: int, current: str) -> str:
    """Why a form made for another phase was refused, and what the game does now."""
    words = {"made_for": made_for, "then": then, "now": now, "current": current}
    if made_for is None:
        return (
            _(
                "This form came from an older page that does not say which phase it was "
                "for; the game has moved on to phase %(now)s (%(current)s): nothing was "
                "applied. Here is the game as it is now."
            )
            % words
        )
    if then:
        return (
            _(
                "This form was for phase %(made_for)s (%(then)s); the game has moved on to "
                "phase %(now)s (%(current)s): nothing was applied. Here is the game as it "
                "is now."
            )
            % words
        )
    return (
        _(
            "This form was for phase %(made_for)s; the game has moved on to phase "
            "%(now)s (%(current)s): nothing was applied. Here is the game as it is now."
        )
        % words
    )
