"""What a game's view says, in sentences: the reader's name, time zone and deadline,
the phase's name, what is asked of the reader and replies that would do, their hand, the
scores, their sealed move. The game page and every email of a game word a view through
these functions, so that both say the same, and a translation finds each sentence here.

Only wording: what to say comes from the engine's view for the reader (`engine.view`),
never from the state.
"""

from __future__ import annotations

import zoneinfo
from typing import Any

from django.contrib.auth.models import User
from django.utils import dateformat, timezone

from engine.notation import format_move
from engine.serialize import move_from_json
from engine.view import Ask, PhaseView, View
from games.models import Game
from games.show.words import (
    Names,
    action_text,
    card_name,
    card_text,
    cell,
    edge,
    name_of,
    offer_parts,
    phase_text,
    plural,
)

CELLS_SHOWN = 30


def display_name(user: User | None) -> str:
    if user is None:
        return ""
    profile = getattr(user, "profile", None)
    return profile.display_name if profile else user.get_username()


def time_zone_of(user: User | None) -> zoneinfo.ZoneInfo:
    profile = getattr(user, "profile", None) if user is not None else None
    try:
        return zoneinfo.ZoneInfo(profile.time_zone if profile else "UTC")
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return zoneinfo.ZoneInfo("UTC")


def deadline_text(game: Game, user: User | None) -> str:
    """The deadline in the reader's own time zone, named: 'Tue 4 Mar 2025, 14:00 CET
    (Europe/Berlin)'."""
    if game.paused:
        return "none while the game is paused"
    if game.deadline is None:
        return "none"
    zone = time_zone_of(user)
    local = timezone.localtime(game.deadline, zone)
    named = "" if local.tzname() == zone.key else f" ({zone.key})"  # not "UTC (UTC)"
    return f"{dateformat.format(local, 'D j M Y, H:i T')}{named}"


def phase_name(phase: PhaseView) -> str:
    """'decision', 'duel for 2 walls', 'perform 1 sword': the phase's kind, as the heading of
    what is asked (`words.phase_label` adds the turn, for a form made for another phase)."""
    kind, action = phase.get("kind") or "", phase.get("action") or ""
    if kind in ("negotiation", "duel") and action:
        return f"{kind} for {action_text(action)}"
    if kind == "perform" and action:
        return f"perform {action_text(action)}"
    return kind


def hand(v: View) -> dict[str, Any]:
    viewer = v["viewer"]
    assert viewer is not None, "a hand is shown only to its player"
    me = v["players"][viewer]
    return {
        "ducats": me.get("ducats"),
        "cards": [card_name(c) for c in me.get("hand", [])],
        "knights": me.get("knights_in_supply"),
        "walls": v.get("wall_supply"),
    }


def scores(v: View, names: Names, ranked: bool = False) -> list[str]:
    """Each player's power, and what else the view shows of them."""
    players = list(v["players"].items())
    if ranked:
        players.sort(key=lambda item: -item[1]["power"])
    lines = []
    for colour, data in players:
        you = " (you)" if colour == v["viewer"] else ""
        money = f", {plural(data['ducats'], 'ducat')}" if "ducats" in data else ""
        lines.append(
            f"{name_of(colour, names)} ({colour}){you}: power {data['power']}{money}, "
            f"{plural(data['hand_size'], 'politics card')}"
        )
    return lines


def sealed_text(v: View) -> str:
    """The reader's own sealed submission, which the view holds for them alone."""
    sealed = v.get("my_sealed")
    return format_move(move_from_json(sealed)) if sealed else ""


def asked(v: View, names: Names) -> list[str]:
    """What the game asks of the reader, in sentences, from the view's `ask`."""
    ask = v.get("ask")
    if not ask:
        return []
    kind, action = ask["phase"], action_text(ask.get("action") or "")
    if kind == "placement":
        return [
            f"Place a {ask['colour']} castle and a knight beside it.",
            f"Castle cells you may choose: {cells(ask['castles'])}.",
        ]
    if kind == "decision":
        return _asked_decision(v, ask)
    if kind == "negotiation":
        return _asked_negotiation(v, ask, action, names)
    if kind == "duel":
        again = " again (the bids tied)" if (ask.get("round") or 1) > 1 else ""
        treasure = ask.get("treasure") or []
        extra = f", plus Treasure cards ({', '.join(map(str, treasure))})" if treasure else ""
        return [f"Make a sealed bid{again} for {action}: up to {ask['max_ducats']} ducats{extra}."]
    if kind == "perform":
        return _asked_perform(ask)
    if kind == "crown":
        cards = ", ".join(card_name(c) for c in v.get("pile_cards", []))
        return [f"Take one card from politics pile {ask['pile']}: {cards or 'it is empty'}."]
    return [phase_text(v["phase"], names)]


def _asked_decision(v: View, ask: Ask) -> list[str]:
    count = ask["cards"]
    lines = [
        f"Choose {plural(count, 'decision card')} (1, 2 or 3) for the action card "
        f"{v.get('card')}: {card_text(v.get('card'))}."
    ]
    if ask.get("politics"):
        played = " or ".join(card_name(c) for c in ask["politics"])
        lines.append(f"You may play {played} with a card.")
    return lines


def _asked_negotiation(v: View, ask: Ask, action: str, names: Names) -> list[str]:
    offer = ask.get("offer")
    if offer and offer[0] != v["viewer"]:
        offerer, ducats = offer_parts(offer)
        return [
            f"{name_of(offerer, names)} offers you {plural(ducats, 'ducat')} to perform "
            f"{action} alone. Accept, offer more (you have {ask['max_offer']} ducats), "
            "or break off for a duel."
        ]
    return [
        f"Negotiate over {action}: offer the other player ducats to perform it alone "
        f"(you have {ask['max_offer']}), or break off for a duel."
    ]


def _asked_perform(ask: Ask) -> list[str]:
    if "walls" in ask:
        return [
            f"Place up to {plural(ask['walls'], 'wall')} ({len(ask['edges'])} places are "
            "legal), or pass."
        ]
    if "swords" in ask:
        lines = [f"Use {plural(ask['swords'], 'sword')}: place knights, expand a region, or pass."]
        if ask.get("knights"):
            lines.append(f"Knights may go to: {cells(ask['knights'])}.")
        if ask.get("expansions"):
            lines.append(f"Regions may expand into: {cells(ask['expansions'])}.")
        return lines
    piles = ask.get("piles") or []
    sizes = " and ".join(f"pile {i} ({plural(n, 'card')})" for i, n in enumerate(piles, 1))
    return [f"The crown: choose a politics pile to look through: {sizes}."]


def examples(v: View) -> list[str]:
    """Replies that would do, in the engine's notation, for the help line."""
    ask = v.get("ask")
    if not ask:
        return []
    kind = ask.get("phase")
    if kind == "placement":
        return _placement_examples(ask)
    if kind == "decision":
        return ["decide 2" if ask["cards"] == 1 else "decide 1, 3"]
    if kind == "negotiation":
        offer = ask.get("offer")
        if offer and offer[0] != v["viewer"]:
            return ["accept", f"offer {offer_parts(offer)[1] + 1}", "break off"]
        return [f"offer {min(3, ask['max_offer'])}", "break off"]
    if kind == "duel":
        treasure = ask.get("treasure") or []
        return [
            f"bid {min(5, ask['max_ducats'])}",
            *([f"bid 0 treasure {treasure[0]}"] if treasure else []),
        ]
    if kind == "perform":
        return _perform_examples(ask)
    if kind == "crown" and v.get("pile_cards"):
        return [f"take {v['pile_cards'][0]}"]
    return []


def _placement_examples(ask: Ask) -> list[str]:
    """A legal placement: the first castle cell with a knight cell beside it (the ask's
    knight cells are those beside a legal castle cell)."""
    knights = [(int(k[0]), int(k[1])) for k in ask.get("knights") or []]
    for x, y in ask.get("castles") or []:
        beside = next((k for k in knights if abs(k[0] - x) + abs(k[1] - y) == 1), None)
        if beside is not None:
            return [f"place {cell((x, y))} {cell(beside)}"]
    return []


def _perform_examples(ask: Ask) -> list[str]:
    if "walls" in ask:
        edges = [edge(pair) for pair in ask["edges"]]
        return ["walls " + " ".join(edges[: ask["walls"]]), "pass"] if edges else ["pass"]
    if "swords" in ask:
        found = [f"knight {cell(ask['knights'][0])}"] if ask.get("knights") else []
        if ask.get("expansions"):
            found.append(f"expand {cell(ask['expansions'][0])}")
        return [*found, "pass"]
    return ["pile 1", "pile 2"]


def cells(values: list[list[int]]) -> str:
    named = [cell(c) for c in values]
    more = len(named) - CELLS_SHOWN
    return ", ".join(named[:CELLS_SHOWN]) + (f" and {more} more" if more > 0 else "")
