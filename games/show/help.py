"""Help at the point of need (issue 10, item 7): what the choice in front of a player
means, in a few sentences built from their view. The rules are RULES.md's; the numbers
(a pile's cards, the ducats in an offer, the actions on the card) come from the view,
so the help says what this choice does, not what choices do in general.

A leaf helper beside games.show.words: it imports only the engine's types and the words.
"""

from __future__ import annotations

from engine.view import View
from games.show.words import action_text, plural

FOREST_FEE = 5  # RULES 5.2
ALLIANCE_END_FEE = 10  # RULES 7.1

ACTION_HELP = {  # RULES 3 step 3 and 5
    "W": "place up to {n} of the common supply, one by one; each may found a region (RULES 5.1)",
    "S": "place knights next to your own pieces or expand a region: one sword is one "
    "knight or one expansion (RULES 5.2, 5.3)",
    "M": "the ducats are shared equally, rounded down, among everyone who chose it",
    "P": "look through one of the two politics piles and take a card into your hidden hand "
    "(RULES 5.4)",
}
POLITICS_HELP = {  # RULES 7
    "alliance": "Alliance: played with a decision card; names one of your regions and a "
    "neighbouring region of another player: neither may expand into the other "
    f"until one of you ends it for {ALLIANCE_END_FEE} ducats.",
    "renegade": "Renegade: played with a decision card; sends one knight of a neighbour "
    "home from their region and places one of yours in your neighbouring "
    "region.",
    "treasure": "Treasure: worth its value in duels, forest fees and ending alliances, "
    "never in negotiations; spent whole, no change.",
    "parchment": "Parchment: kept hidden; its power counts at the end of the game.",
}
PILES = (
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


def _decision(v: View) -> list[str]:
    card = (v.get("card") or "").split()
    lines = [f"Card {n}: {action_text(a)}: {_action_help(a)}." for n, a in enumerate(card, start=1)]
    lines.append(
        "Everyone who picks the same card shares or contests it: two players "
        "negotiate, three or more bid in a duel (RULES 3, 4)."
    )
    ask = v.get("ask")
    hand = (ask.get("politics") or []) if ask else []
    lines.extend(
        POLITICS_HELP[kind]
        for kind in sorted({c.split()[0] for c in hand})
        if kind in POLITICS_HELP
    )
    return lines


def _action_help(symbol: str) -> str:
    text = ACTION_HELP.get(symbol[:1], "")
    return text.format(n=action_text(symbol)) if text else "see the rules"


def _negotiation(offer: list[str | int] | None, v: View) -> list[str]:
    lines = [
        "Offer: propose ducats (never Treasure cards) to the other player for "
        "acting alone. Break off: the action goes to a sealed duel (RULES 4.1)."
    ]
    if offer:
        offerer, ducats = str(offer[0]), int(offer[1])
        if offerer != v["viewer"]:
            lines.insert(
                0,
                f"Accept {plural(ducats, 'ducat')}: you receive "
                f"{plural(ducats, 'ducat')} from the other player, who then "
                "performs the action alone; you do not.",
            )
    return lines


def _duel() -> list[str]:
    return [
        "Bid any ducats up to what you have, plus any Treasure cards at full value. The "
        "highest bid pays the bank and performs the action; the others keep their "
        "money. Tied highest bids bid again once; a second tie means nobody acts "
        "(RULES 4.2).",
        POLITICS_HELP["treasure"],
    ]


def _perform(action: str, v: View) -> list[str]:
    if action.startswith("S"):
        return [
            f"A knight goes on an empty plain or forest cell next to your own knight "
            f"or castle, with no wall between. A forest costs {FOREST_FEE} ducats to "
            "the bank (a Treasure card may pay, no change) (RULES 5.2).",
            "An expansion adds 1 or 2 cells to one of your regions: free land, a "
            "neutral zone, or a weaker region of another colour that is not allied "
            "with it (RULES 5.3).",
        ]
    if action.startswith("W"):
        return [
            f"{_action_help(action)[0].upper()}{_action_help(action)[1:]}. A wall may "
            "not separate two pieces of one colour, nor stand inside a region."
        ]
    if action == "P":
        piles = v.get("politics_piles") or []
        counts = " and ".join(
            f"pile {n}: {plural(c, 'card')}" for n, c in enumerate(piles, start=1)
        )
        return [
            f"{_action_help(action)[0].upper()}{_action_help(action)[1:]}.",
            f"{PILES} Now {counts}." if counts else PILES,
        ]
    return []
