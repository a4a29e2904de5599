"""Help at the point of need (issue 10, item 7): what the choice in front of a player
means, in a few sentences built from their view. The rules are RULES.md's; the numbers
(a pile's cards, the ducats in an offer, the actions on the card) come from the view,
so the help says what this choice does, not what choices do in general. Each sentence
links to the sections of the rules page it comes from (issue 24, item 3).

A helper beside games.show.words: it imports the engine's types and numbers, the words and
the rules page's sections.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from engine.rules import ALLIANCE_BREAK_FEE, FOREST_FEE
from engine.view import View
from games.show.rules_text import Citation, cite, politics_piles
from games.show.words import action_text, join_and


@dataclass(frozen=True)
class HelpLine:
    """One sentence of help, and the sections of the rules it comes from."""

    text: str
    cites: tuple[Citation, ...] = ()


ACTION_HELP = {  # RULES 3 step 3 and 5: "Card 1: 2 walls: <help>."
    "W": (
        gettext_lazy(
            "Card %(n)s: %(action)s: place up to %(action)s of the common supply, one by one; "
            "each may found a region."
        ),
        cite("5.1"),
    ),
    "S": (
        gettext_lazy(
            "Card %(n)s: %(action)s: place knights next to your own pieces or expand a "
            "region: one sword is one knight or one expansion."
        ),
        cite("5.2", "5.3"),
    ),
    "M": (
        gettext_lazy(
            "Card %(n)s: %(action)s: the ducats are shared equally, rounded down, among "
            "everyone who chose it."
        ),
        cite("3"),
    ),
    "P": (
        gettext_lazy(
            "Card %(n)s: %(action)s: look through one of the two politics piles and take a "
            "card into your hidden hand."
        ),
        cite("5.4"),
    ),
}
NO_HELP = (gettext_lazy("Card %(n)s: %(action)s: see the rules."), cite("1.2"))
POLITICS_HELP = {  # RULES 7
    "alliance": (
        gettext_lazy(
            "Alliance: played with a decision card; names one of your regions and a "
            "neighbouring region of another player: neither may expand into the other "
            "until one of you ends it for %(fee)s ducats."
        ),
        cite("7.1"),
    ),
    "renegade": (
        gettext_lazy(
            "Renegade: played with a decision card; sends one knight of a neighbour "
            "home from their region and places one of yours in your neighbouring "
            "region."
        ),
        cite("7.2"),
    ),
    "treasure": (
        gettext_lazy(
            "Treasure: worth its value in duels, forest fees and ending alliances, "
            "never in negotiations; spent whole, no change."
        ),
        cite("7.3"),
    ),
    "parchment": (
        gettext_lazy("Parchment: kept hidden; its power counts at the end of the game."),
        cite("7.4"),
    ),
}


def help_for(v: View) -> list[HelpLine]:
    """Sentences for what `v` asks of its viewer now ([] when nothing is asked)."""
    ask = v.get("ask")
    if not ask:
        return []
    phase = ask["phase"]
    if phase == "decision":
        return _decision(v)
    if phase == "negotiation":
        return _negotiation(ask.get("offer"), v)
    if phase == "duel":
        return _duel()
    if phase in {"perform", "crown"}:
        return _perform(ask.get("action") or "", v)
    return []


def _politics_help(kind: str) -> HelpLine:
    text, cites = POLITICS_HELP[kind]
    return HelpLine(str(text) % {"fee": ALLIANCE_BREAK_FEE}, cites)


def _action_help(n: int, action: str) -> HelpLine:
    text, cites = ACTION_HELP.get(action[:1], NO_HELP)
    return HelpLine(str(text) % {"n": n, "action": action_text(action)}, cites)


def _decision(v: View) -> list[HelpLine]:
    card = (v.get("card") or "").split()
    lines = [_action_help(n, a) for n, a in enumerate(card, start=1)]
    lines.append(
        HelpLine(
            _(
                "Everyone who picks the same card shares or contests it: two players "
                "negotiate, three or more bid in a duel."
            ),
            cite("3", "4"),
        )
    )
    ask = v.get("ask")
    hand = (ask.get("politics") or []) if ask else []
    lines.extend(
        _politics_help(kind)
        for kind in sorted({c.split()[0] for c in hand})
        if kind in POLITICS_HELP
    )
    return lines


def _negotiation(offer: list[str | int] | None, v: View) -> list[HelpLine]:
    lines = [
        HelpLine(
            _(
                "Offer: propose ducats (never Treasure cards) to the other player for "
                "acting alone. Break off: the action goes to a sealed duel."
            ),
            cite("4.1"),
        )
    ]
    if offer:
        offerer, ducats = str(offer[0]), int(offer[1])
        if offerer != v["viewer"]:
            accept = ngettext(
                "Accept %(ducats)d ducat: you receive %(ducats)d ducat from the other "
                "player, who then performs the action alone; you do not.",
                "Accept %(ducats)d ducats: you receive %(ducats)d ducats from the other "
                "player, who then performs the action alone; you do not.",
                ducats,
            )
            lines.insert(0, HelpLine(accept % {"ducats": ducats}, cite("4.1")))
    return lines


def _duel() -> list[HelpLine]:
    return [
        HelpLine(
            _(
                "Bid any ducats up to what you have, plus any Treasure cards at full value. "
                "The highest bid pays the bank and performs the action; the others keep "
                "their money. Tied highest bids bid again once; a second tie means nobody "
                "acts."
            ),
            cite("4.2"),
        ),
        _politics_help("treasure"),
    ]


def _perform(action: str, v: View) -> list[HelpLine]:
    if action.startswith("S"):
        return _swords()
    if action.startswith("W"):
        return [_walls(action)]
    if action == "P":
        return _crown(v)
    return []


def _swords() -> list[HelpLine]:
    knight = _(
        "A knight goes on an empty plain or forest cell next to your own knight or castle, "
        "with no wall between. A forest costs %(fee)s ducats to the bank (a Treasure card "
        "may pay, no change)."
    )
    expansion = _(
        "An expansion adds 1 or 2 cells to one of your regions: free land, a neutral zone, "
        "or a weaker region of another colour that is not allied with it."
    )
    return [
        HelpLine(knight % {"fee": FOREST_FEE}, cite("5.2")),
        HelpLine(expansion, cite("5.3")),
    ]


def _walls(action: str) -> HelpLine:
    walls = _(
        "Place up to %(action)s of the common supply, one by one; each may found a region. "
        "A wall may not separate two pieces of one colour, nor stand inside a region."
    )
    return HelpLine(walls % {"action": action_text(action)}, cite("5.1", "6.1"))


def _crown(v: View) -> list[HelpLine]:
    piles = v.get("politics_piles") or []
    counts = join_and(
        [
            ngettext("pile %(pile)d: %(count)d card", "pile %(pile)d: %(count)d cards", c)
            % {"pile": n, "count": c}
            for n, c in enumerate(piles, start=1)
        ]
    )
    look = _("Look through one of the two politics piles and take a card into your hidden hand.")
    held = politics_piles()
    if counts:
        held = _("%(piles)s Now %(counts)s.") % {"piles": held, "counts": counts}
    return [HelpLine(look, cite("5.4")), HelpLine(held, cite("7"))]
