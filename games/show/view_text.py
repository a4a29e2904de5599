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
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from engine.board import FOREST
from engine.notation import format_move
from engine.rules import FOREST_FEE
from engine.serialize import move_from_json
from engine.view import Ask, PhaseView, View
from games.models import Game
from games.show.command_words import to_reader
from games.show.words import (
    PHASE_NAMES,
    Names,
    action_text,
    card_name,
    card_text,
    cell,
    colour_word,
    ducats_text,
    edge,
    join_and,
    moment_text,
    name_of,
    offer_parts,
    phase_text,
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
    if game.paused_by_vote:
        assert game.paused_until is not None
        return _("none while the phase is paused, until %(until)s") % {
            "until": moment_text(game.paused_until, time_zone_of(user))
        }
    if game.paused:
        return _("none while the game is paused")
    if game.deadline is None:
        return _("none")
    return moment_text(game.deadline, time_zone_of(user))


def absence_policy(game: Game) -> list[str]:
    """The game's absence policy (chosen when it was created), in sentences: what an
    announced absence does, and what missed deadlines do (games.deadlines)."""
    away = (
        _("A player who is away pauses the game: the deadline stops until they are back.")
        if game.on_absence == "pause"
        else _("A player who is away gets a whole phase's time after they are back.")
    )
    missed = game.max_missed_deadlines
    if missed == 0:
        standin = _(
            "At a missed deadline the rules' default move is made for the player; no "
            "computer stands in."
        )
    else:
        standin = ngettext(
            "At a missed deadline the rules' default move is made for the player; after "
            "%(count)s in a row a computer plays their seat until they take it back.",
            "At a missed deadline the rules' default move is made for the player; after "
            "%(count)s in a row a computer plays their seat until they take it back.",
            missed,
        ) % {"count": missed}
    return [away, standin]


def phase_name(phase: PhaseView) -> str:
    """'decision', 'duel for 2 walls', 'perform 1 sword': the phase's kind, as the heading of
    what is asked (`words.phase_label` adds the turn, for a form made for another phase)."""
    kind, action = phase.get("kind") or "", phase.get("action") or ""
    if kind == "negotiation" and action:
        return _("negotiation for %(action)s") % {"action": action_text(action)}
    if kind == "duel" and action:
        return _("duel for %(action)s") % {"action": action_text(action)}
    if kind == "perform" and action:
        return _("perform %(action)s") % {"action": action_text(action)}
    return str(PHASE_NAMES.get(kind, kind))


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


def scores(v: View, labels: Names, ranked: bool = False) -> list[str]:
    """Each player's power, and what else the view shows of them; `labels`: each colour's
    name with the colour (`Presentation.labels`)."""
    players = list(v["players"].items())
    if ranked:
        players.sort(key=lambda item: -item[1]["power"])
    lines = []
    for colour, data in players:
        words = {
            "player": labels.get(colour) or colour_word(colour),
            "power": data["power"],
            "ducats": ducats_text(data["ducats"]) if "ducats" in data else "",
            "cards": ngettext(
                "%(count)d politics card", "%(count)d politics cards", data["hand_size"]
            )
            % {"count": data["hand_size"]},
        }
        mine = colour == v["viewer"]
        if mine and "ducats" in data:
            line = _("%(player)s (you): power %(power)s, %(ducats)s, %(cards)s")
        elif mine:
            line = _("%(player)s (you): power %(power)s, %(cards)s")
        elif "ducats" in data:
            line = _("%(player)s: power %(power)s, %(ducats)s, %(cards)s")
        else:
            line = _("%(player)s: power %(power)s, %(cards)s")
        lines.append(line % words)
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
        colour = str(ask["colour"])
        words = {"colour": colour_word(colour)}
        return [
            (
                _("Place an %(colour)s castle and a knight beside it.")
                if colour[:1].lower() in tuple("aeiou")
                else _("Place a %(colour)s castle and a knight beside it.")
            )
            % words,
            _("Castle cells you may choose: %(cells)s.") % {"cells": cells(ask["castles"])},
        ]
    if kind == "decision":
        return _asked_decision(v, ask)
    if kind == "negotiation":
        return _asked_negotiation(v, ask, action, names)
    if kind == "duel":
        treasure = ask.get("treasure") or []
        bid: dict[str, Any] = {
            "action": action,
            "ducats": ask["max_ducats"],
            "treasure": ", ".join(map(str, treasure)),
        }
        again = (ask.get("round") or 1) > 1
        if again and treasure:
            line = _(
                "Make a sealed bid again (the bids tied) for %(action)s: up to %(ducats)s "
                "ducats, plus Treasure cards (%(treasure)s)."
            )
        elif again:
            line = _(
                "Make a sealed bid again (the bids tied) for %(action)s: up to %(ducats)s ducats."
            )
        elif treasure:
            line = _(
                "Make a sealed bid for %(action)s: up to %(ducats)s ducats, plus Treasure "
                "cards (%(treasure)s)."
            )
        else:
            line = _("Make a sealed bid for %(action)s: up to %(ducats)s ducats.")
        return [line % bid]
    if kind == "perform":
        return _asked_perform(ask)
    if kind == "crown":
        cards = ", ".join(card_name(c) for c in v.get("pile_cards", []))
        pile: dict[str, Any] = {"pile": ask["pile"], "cards": cards}
        if cards:
            return [_("Take one card from politics pile %(pile)s: %(cards)s.") % pile]
        return [_("Take one card from politics pile %(pile)s: it is empty.") % pile]
    return [phase_text(v["phase"], names, v["viewer"])]


def _asked_decision(v: View, ask: Ask) -> list[str]:
    count = ask["cards"]
    lines = [
        ngettext(
            "Choose %(count)d decision card (1, 2 or 3) for the action card %(card)s: %(actions)s.",
            "Choose %(count)d decision cards (1, 2 or 3) for the action card %(card)s: "
            "%(actions)s.",
            count,
        )
        % {"count": count, "card": v.get("card"), "actions": card_text(v.get("card"))}
    ]
    if ask.get("politics"):
        played = [card_name(c) for c in ask["politics"]]
        text = played[0]
        for card in played[1:]:
            text = _("%(cards)s or %(card)s") % {"cards": text, "card": card}
        lines.append(_("You may play %(cards)s with a card.") % {"cards": text})
    return lines


def _asked_negotiation(v: View, ask: Ask, action: str, names: Names) -> list[str]:
    offer = ask.get("offer")
    if offer and offer[0] != v["viewer"]:
        offerer, ducats = offer_parts(offer)
        return [
            ngettext(
                "%(offerer)s offers you %(ducats)d ducat to perform %(action)s alone. Accept, "
                "offer more (you have %(most)s ducats), or break off for a duel.",
                "%(offerer)s offers you %(ducats)d ducats to perform %(action)s alone. Accept, "
                "offer more (you have %(most)s ducats), or break off for a duel.",
                ducats,
            )
            % {
                "offerer": name_of(offerer, names),
                "ducats": ducats,
                "action": action,
                "most": ask["max_offer"],
            }
        ]
    return [
        _(
            "Negotiate over %(action)s: offer the other player ducats to perform it alone "
            "(you have %(most)s), or break off for a duel."
        )
        % {"action": action, "most": ask["max_offer"]}
    ]


def _asked_perform(ask: Ask) -> list[str]:
    if "walls" in ask:
        return [
            ngettext(
                "Place up to %(walls)d wall (%(places)d places are legal), or pass.",
                "Place up to %(walls)d walls (%(places)d places are legal), or pass.",
                ask["walls"],
            )
            % {"walls": ask["walls"], "places": len(ask["edges"])}
        ]
    if "swords" in ask:
        lines = [
            ngettext(
                "Use %(swords)d sword: place knights, expand a region, or pass.",
                "Use %(swords)d swords: place knights, expand a region, or pass.",
                ask["swords"],
            )
            % {"swords": ask["swords"]}
        ]
        if ask.get("knights"):
            lines.append(_("Knights may go to: %(cells)s.") % {"cells": cells(ask["knights"])})
        if ask.get("expansions"):
            lines.append(
                _("Regions may expand into: %(cells)s.") % {"cells": cells(ask["expansions"])}
            )
        return lines
    piles = ask.get("piles") or []
    sizes = join_and(
        [
            ngettext("pile %(pile)d (%(count)d card)", "pile %(pile)d (%(count)d cards)", n)
            % {"pile": i, "count": n}
            for i, n in enumerate(piles, 1)
        ]
    )
    return [_("The crown: choose a politics pile to look through: %(piles)s.") % {"piles": sizes}]


def examples(v: View) -> list[str]:
    """Replies that would do, for the help line: the engine's notation in the reader's
    command words (games.show.command_words; cells stay)."""
    return [to_reader(example) for example in _examples(v)]


def _examples(v: View) -> list[str]:
    ask = v.get("ask")
    if not ask:
        return []
    kind = ask.get("phase")
    if kind == "placement":
        return _placement_examples(ask)
    if kind == "decision":
        return ["decide 2" if ask["cards"] == 1 else "decide 1, 3"]
    if kind == "negotiation":
        return _negotiation_examples(v, ask)
    if kind == "duel":
        treasure = ask.get("treasure") or []
        return [
            f"bid {min(5, ask['max_ducats'])}",
            *([f"bid 0 treasure {treasure[0]}"] if treasure else []),
        ]
    if kind == "perform":
        return _perform_examples(v, ask)
    if kind == "crown" and v.get("pile_cards"):
        return [f"take {v['pile_cards'][0]}"]
    return []


def _negotiation_examples(v: View, ask: Ask) -> list[str]:
    """RULES 4.1: an offer is of ducats the reader has (`max_offer`); a counter-offer
    that outbids the other's is shown only when the reader has the ducats for it."""
    most, offer = ask["max_offer"], ask.get("offer")
    if offer and offer[0] != v["viewer"]:
        more = offer_parts(offer)[1] + 1
        return ["accept", *([f"offer {more}"] if more <= most else []), "break off"]
    return [f"offer {min(3, most)}", "break off"]


def _placement_examples(ask: Ask) -> list[str]:
    """A legal placement: the first castle cell with a knight cell beside it (the ask's
    knight cells are those beside a legal castle cell)."""
    knights = [(int(k[0]), int(k[1])) for k in ask.get("knights") or []]
    for x, y in ask.get("castles") or []:
        beside = next((k for k in knights if abs(k[0] - x) + abs(k[1] - y) == 1), None)
        if beside is not None:
            return [f"place {cell((x, y))} {cell(beside)}"]
    return []


def _perform_examples(v: View, ask: Ask) -> list[str]:
    if "walls" in ask:
        edges = [edge(pair) for pair in ask["edges"]]
        return ["walls " + " ".join(edges[: ask["walls"]]), "pass"] if edges else ["pass"]
    if "swords" in ask:
        knight = _example_knight(v, ask)
        found = [f"knight {cell(knight)}"] if knight else []
        if ask.get("expansions"):
            found.append(f"expand {cell(ask['expansions'][0])}")
        return [*found, "pass"]
    return ["pile 1", "pile 2"]


def _example_knight(v: View, ask: Ask) -> list[int] | None:
    """A knight cell whose fee `knight CELL` pays as written, in ducats (RULES 5.2): one
    with no fee, else a forest if the reader has the engine's fee (the ask's cells may
    need a Treasure card, which the example does not name)."""
    cells = ask.get("knights") or []
    free = next((c for c in cells if v["board"][c[1]][c[0]] != FOREST), None)
    if free is not None:
        return free
    ducats = v["players"][v["viewer"] or ""].get("ducats", 0)
    return cells[0] if cells and ducats >= FOREST_FEE else None


def cells(values: list[list[int]]) -> str:
    named = [cell(c) for c in values]
    more = len(named) - CELLS_SHOWN
    if more > 0:
        return _("%(cells)s and %(more)s more") % {
            "cells": ", ".join(named[:CELLS_SHOWN]),
            "more": more,
        }
    return ", ".join(named)
