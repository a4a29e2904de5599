"""Help at the point of need (issue 10, item 7): what the choice in front of a player
means, in a few sentences built from their view. The rules are RULES.md's; the numbers
(a pile's cards, the ducats in an offer, the actions on the card) come from the view,
so the help says what this choice does, not what choices do in general.

A leaf helper beside games.show.words: it imports only the engine's types and the words.
"""

from __future__ import annotations

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from engine.view import View
from games.show.words import action_text, join_and

FOREST_FEE = 5  # RULES 5.2
ALLIANCE_END_FEE = 10  # RULES 7.1

ACTION_HELP = {  # RULES 3 step 3 and 5: "Card 1: 2 walls: <help>."
    "W": gettext_lazy(
        "Card %(n)s: %(action)s: place up to %(action)s of the common supply, one by one; "
        "each may found a region (RULES 5.1)."
    ),
    "S": gettext_lazy(
        "Card %(n)s: %(action)s: place knights next to your own pieces or expand a region: "
        "one sword is one knight or one expansion (RULES 5.2, 5.3)."
    ),
    "M": gettext_lazy(
        "Card %(n)s: %(action)s: the ducats are shared equally, rounded down, among everyone "
        "who chose it."
    ),
    "P": gettext_lazy(
        "Card %(n)s: %(action)s: look through one of the two politics piles and take a card "
        "into your hidden hand (RULES 5.4)."
    ),
}
NO_HELP = gettext_lazy("Card %(n)s: %(action)s: see the rules.")
POLITICS_HELP = {  # RULES 7
    "alliance": gettext_lazy(
        "Alliance: played with a decision card; names one of your regions and a "
        "neighbouring region of another player: neither may expand into the other "
        "until one of you ends it for %(fee)s ducats."
    ),
    "renegade": gettext_lazy(
        "Renegade: played with a decision card; sends one knight of a neighbour "
        "home from their region and places one of yours in your neighbouring "
        "region."
    ),
    "treasure": gettext_lazy(
        "Treasure: worth its value in duels, forest fees and ending alliances, "
        "never in negotiations; spent whole, no change."
    ),
    "parchment": gettext_lazy("Parchment: kept hidden; its power counts at the end of the game."),
}
PILES = gettext_lazy(
    "The politics cards are 3 Alliance, 3 Renegade, 4 Treasure (8, 10, 12, 15) and "
    "3 Parchment (3, 4, 5 power), dealt into two piles."
)


def help_for(v: View) -> list[str]:
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


def _politics_help(kind: str) -> str:
    return str(POLITICS_HELP[kind]) % {"fee": ALLIANCE_END_FEE}


def _decision(v: View) -> list[str]:
    card = (v.get("card") or "").split()
    lines = [
        str(ACTION_HELP.get(a[:1], NO_HELP)) % {"n": n, "action": action_text(a)}
        for n, a in enumerate(card, start=1)
    ]
    lines.append(
        _(
            "Everyone who picks the same card shares or contests it: two players "
            "negotiate, three or more bid in a duel (RULES 3, 4)."
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


def _negotiation(offer: list[str | int] | None, v: View) -> list[str]:
    lines = [
        _(
            "Offer: propose ducats (never Treasure cards) to the other player for "
            "acting alone. Break off: the action goes to a sealed duel (RULES 4.1)."
        )
    ]
    if offer:
        offerer, ducats = str(offer[0]), int(offer[1])
        if offerer != v["viewer"]:
            lines.insert(
                0,
                ngettext(
                    "Accept %(ducats)d ducat: you receive %(ducats)d ducat from the other "
                    "player, who then performs the action alone; you do not.",
                    "Accept %(ducats)d ducats: you receive %(ducats)d ducats from the other "
                    "player, who then performs the action alone; you do not.",
                    ducats,
                )
                % {"ducats": ducats},
            )
    return lines


def _duel() -> list[str]:
    return [
        _(
            "Bid any ducats up to what you have, plus any Treasure cards at full value. The "
            "highest bid pays the bank and performs the action; the others keep their "
            "money. Tied highest bids bid again once; a second tie means nobody acts "
            "(RULES 4.2)."
        ),
        _politics_help("treasure"),
    ]


def _perform(action: str, v: View) -> list[str]:
    if action.startswith("S"):
        return [
            _(
                "A knight goes on an empty plain or forest cell next to your own knight "
                "or castle, with no wall between. A forest costs %(fee)s ducats to "
                "the bank (a Treasure card may pay, no change) (RULES 5.2)."
            )
            % {"fee": FOREST_FEE},
            _(
                "An expansion adds 1 or 2 cells to one of your regions: free land, a "
                "neutral zone, or a weaker region of another colour that is not allied "
                "with it (RULES 5.3)."
            ),
        ]
    if action.startswith("W"):
        return [
            _(
                "Place up to %(action)s of the common supply, one by one; each may found a "
                "region (RULES 5.1). A wall may not separate two pieces of one colour, nor "
                "stand inside a region."
            )
            % {"action": action_text(action)}
        ]
    if action == "P":
        piles = v.get("politics_piles") or []
        counts = join_and(
            [
                ngettext("pile %(pile)d: %(count)d card", "pile %(pile)d: %(count)d cards", c)
                % {"pile": n, "count": c}
                for n, c in enumerate(piles, start=1)
            ]
        )
        look = _(
            "Look through one of the two politics piles and take a card into your hidden "
            "hand (RULES 5.4)."
        )
        if counts:
            return [look, _("%(piles)s Now %(counts)s.") % {"piles": PILES, "counts": counts}]
        return [look, str(PILES)]
    return []
