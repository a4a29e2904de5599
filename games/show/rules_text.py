"""The rules on the site (issue 24, item 3): the sections of the rules page, numbered as
RULES.md numbers them, each with its title and the anchor a citation links to; and the
page's tables and numbers drawn from the engine's own data (the deck, the founding table,
the politics cards, the fees), so that the page cannot say other than the rules the site
plays by. The page's prose is its template's (templates/rules/), one message a paragraph.

A citation (`Citation("5.4")`) names a section that exists, or fails when it is made: the
help at the point of need (`games.show.help`) and the new-game form's help link to the
rules through it, and the page writes an anchor for every section here.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from django.utils.functional import Promise
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext, gettext_lazy, pgettext, pgettext_lazy

from engine import position, rules
from engine.moves import POLITICS_CARDS
from engine.setup import PILES, default_deck
from games.reversing import reverse_cached
from games.show.words import CARD_NAMES, POLITICS_NAMES, card_text

# Every numbered section of RULES.md that the page has, in its order: the page's headings
# and its contents come from here.
SECTIONS: dict[str, str | Promise] = {
    "1": gettext_lazy("Components"),
    "1.1": gettext_lazy("The board's tiles"),
    "1.2": gettext_lazy("The action cards"),
    "2": pgettext_lazy("rules section", "Setup"),
    "2.1": gettext_lazy("Common to all setups"),
    "2.2": gettext_lazy("Basic setup (3 or 4 players)"),
    "2.3": gettext_lazy("Variable setup (2, 3 or 4 players)"),
    "3": gettext_lazy("The turn"),
    "4": gettext_lazy("Contests"),
    "4.1": gettext_lazy("Negotiation"),
    "4.2": gettext_lazy("Duel"),
    "5": gettext_lazy("Actions"),
    "5.1": gettext_lazy("Walls"),
    "5.2": gettext_lazy("Knights"),
    "5.3": gettext_lazy("Expansion"),
    "5.4": gettext_lazy("The crown"),
    "6": gettext_lazy("Regions and scoring"),
    "6.1": gettext_lazy("Founding"),
    "6.2": gettext_lazy("Scoring an expansion"),
    "6.3": gettext_lazy("Silver mines and the end"),
    "7": gettext_lazy("Politics cards"),
    "7.1": POLITICS_NAMES["alliance"],
    "7.2": POLITICS_NAMES["renegade"],
    "7.3": POLITICS_NAMES["treasure"],
    "7.4": POLITICS_NAMES["parchment"],
    "8": gettext_lazy("End of the game"),
    "9": gettext_lazy("Play by email: phases and deadlines"),
}
LARGEST_FOUNDING = 15 * 10  # RULES 1: the board's cells, more than any region holds


def anchor(section: str) -> str:
    """The id of a section's heading on the rules page: "5.4" is "s5-4"."""
    return "s" + section.replace(".", "-")


@dataclass(frozen=True)
class Citation:
    """A link to one section of the rules page."""

    section: str

    def __post_init__(self) -> None:
        if self.section not in SECTIONS:
            raise ValueError(f"the rules have no section {self.section}")

    @property
    def url(self) -> str:
        return f"{reverse_cached('rules')}#{anchor(self.section)}"

    @property
    def label(self) -> str:
        """The link's words: "Rules 5.4"."""
        return gettext("Rules %(section)s") % {"section": self.section}

    def link(self) -> SafeString:
        """The link as every page draws it: a target a thumb can hit (games/site.css)."""
        return format_html('<a class="rules-link" href="{}">{}</a>', self.url, self.label)


def cite(*sections: str) -> tuple[Citation, ...]:
    return tuple(Citation(section) for section in sections)


@dataclass(frozen=True)
class Heading:
    section: str
    title: str
    anchor: str
    level: int  # 1 for "5", 2 for "5.4"


def heading(section: str) -> Heading:
    return Heading(section, str(SECTIONS[section]), anchor(section), section.count(".") + 1)


def headings() -> list[Heading]:
    return [heading(section) for section in SECTIONS]


def founding_rows() -> list[tuple[str, int]]:
    """The founding table of RULES 6 as the engine scores it: ("1–4", 3) … ("31 or more",
    12)."""
    rows: list[tuple[int, int, int]] = []  # first size, last size, power
    for size in range(1, LARGEST_FOUNDING + 1):
        points = position.founding_points(size)
        if rows and rows[-1][2] == points:
            rows[-1] = (rows[-1][0], size, points)
        else:
            rows.append((size, size, points))
    *ranges, (last_from, _last, last_points) = rows
    worded = [(f"{first}–{last}", points) for first, last, points in ranges]
    more = pgettext("cells in a region", "%(count)d or more") % {"count": last_from}
    return [*worded, (more, last_points)]


def deck_rows() -> list[tuple[str, list[str]]]:
    """The default action deck (RULES 1.2), pile by pile, each card in words."""
    deck = default_deck()
    return [(pile, [card_text(card) for card in deck[pile]]) for pile in PILES]


def politics_piles() -> str:
    """What the two politics piles hold (RULES 1, 2.1), counted from the engine's cards."""
    kinds = Counter(card.split()[0] for card in POLITICS_CARDS)
    values = {
        kind: ", ".join(card.split()[1] for card in POLITICS_CARDS if card.startswith(kind + " "))
        for kind in kinds
    }
    return gettext(
        "The politics cards are %(alliances)d Alliance, %(renegades)d Renegade, "
        "%(treasures)d Treasure (%(treasure_values)s ducats) and %(parchments)d Parchment "
        "(%(parchment_values)s power), dealt into two piles."
    ) % {
        "alliances": kinds["alliance"],
        "renegades": kinds["renegade"],
        "treasures": kinds["treasure"],
        "treasure_values": values["treasure"],
        "parchments": kinds["parchment"],
        "parchment_values": values["parchment"],
    }


def facts() -> dict[str, Any]:
    """The numbers and names the page's sentences take from the engine and the words."""
    deck = default_deck()
    return {
        "ducats": position.START_DUCATS,
        "knights": position.KNIGHTS_PER_COLOUR,
        "walls": position.WALLS_IN_GAME,
        "forest_fee": rules.FOREST_FEE,
        "alliance_fee": rules.ALLIANCE_BREAK_FEE,
        "max_regions": rules.MAX_REGIONS_FOR_WALLS,
        "castle_steps": rules.CASTLE_DISTANCE,
        "castle_gap": rules.CASTLE_DISTANCE - 1,
        "town_power": rules.TOWN_POWER,
        "silver": str(CARD_NAMES["SILVER"]),
        "king": str(CARD_NAMES["KING"]),
        "alliance": str(POLITICS_NAMES["alliance"]),
        "renegade": str(POLITICS_NAMES["renegade"]),
        "treasure": str(POLITICS_NAMES["treasure"]),
        "parchment": str(POLITICS_NAMES["parchment"]),
        "silver_cards": sum(cards.count("SILVER") for cards in deck.values()),
        "action_cards": sum(len(cards) for cards in deck.values()),
        "last_pile": len(deck[PILES[-1]]),
        "smallest_founding": position.founding_points(1),
        "largest_founding": position.founding_points(LARGEST_FOUNDING),
    }
