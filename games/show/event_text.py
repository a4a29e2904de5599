"""One plain sentence per engine event, for the game log, the archive and emails, in the
reader's language (the active one; English by default).

`describe(event, names)` takes an event as the engine wrote it (cells as `[x, y]`
lists) and `names` mapping colours to the players' display names. It only words
what the event says. Each sentence is one translatable message with named
placeholders (ngettext where it counts), never glued from fragments.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, tzinfo
from typing import Any

from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop, ngettext, pgettext_lazy

from games.show import words
from games.show.words import (
    CARD_NAMES,
    action_text,
    card_name,
    card_text,
    cell,
    choices_text,
    colour_word,
    ducats_text,
    edge,
    join_and,
    moment_text,
    name_of,
    names_list,
)

Event = dict[str, Any]
Names = dict[str, str]


def _points(value: Any) -> str:
    points = int(value)
    return ngettext("%(points)+d power", "%(points)+d power", abs(points)) % {"points": points}


# --- the sentences ------------------------------------------------------------------------


def describe(
    event: Event, names: Names, viewer: str | None = None, zone: tzinfo | None = None
) -> str:
    """The event as one sentence. An event of a kind without a sentence, or without a
    field its sentence needs, is a bug where it was written: it raises, so that tests
    (tests/site/test_event_text.py enumerates every kind the code writes) say so.

    A private event (`to`: its one reader) says "You" only to `viewer`, its reader; any
    other reader (the archive, once every secret is public) is told the player's name.
    A time is told in the reader's time zone `zone` (None: the active one, the page's)."""
    kind = event.get("kind", "")
    sentence = SENTENCES.get(kind)
    if sentence is None:
        raise KeyError(f"no sentence for the event kind {kind!r}: add one to SENTENCES")
    return sentence(event, _Who(names, event, viewer, zone))


class _Who:
    """The names of the players an event mentions, and the reader's time zone."""

    def __init__(
        self, names: Names, event: Event, viewer: str | None = None, zone: tzinfo | None = None
    ) -> None:
        self.names, self.event, self.viewer, self.zone = names, event, viewer, zone

    def __call__(self, key: str = "player") -> str:
        return name_of(self.event.get(key), self.names)

    def to_reader(self) -> bool:
        """Whether the event is private to the reader: it says "You" / "Your" to them."""
        to = self.event.get("to")
        return bool(to) and to == self.viewer

    def addressee(self) -> str:
        """The name of the player a private event is for (to any other reader)."""
        to = self.event.get("to")
        return name_of(to, self.names) if to else _("A player")

    def all(self, key: str = "players") -> str:
        return names_list(self.event.get(key) or (), self.names)


Sentence = Callable[[Event, _Who], str]


def _reveal(e: Event, who: _Who) -> str:
    card = e["card"]
    if card in CARD_NAMES:
        return _("The action card %(card)s is revealed.") % {"card": CARD_NAMES[card]}
    return _(
        "The action card %(card)s is revealed (%(actions)s); %(player)s is the start player."
    ) % {"card": card, "actions": card_text(card), "player": who("start_player")}


def _silver(e: Event, who: _Who) -> str:
    return ngettext(
        "Silver mine: %(player)s has %(hills)d hill in their regions and gains %(points)s.",
        "Silver mine: %(player)s has %(hills)d hills in their regions and gains %(points)s.",
        e["hills"],
    ) % {"player": who(), "hills": e["hills"], "points": _points(e["points"])}


def _revealed(e: Event, who: _Who) -> str:
    parts = [
        f"{name_of(p, who.names)} {choices_text(c['cards'], c['politics'])}"
        for p, c in e["decisions"].items()
    ]
    return _("The decisions are revealed: %(decisions)s.") % {"decisions": "; ".join(parts)}


def _decision(e: Event, who: _Who) -> str:
    return _("%(player)s chooses %(cards)s.") % {
        "player": who(),
        "cards": choices_text(e["cards"], e["politics"]),
    }


def _politics_returned(e: Event, who: _Who) -> str:
    return _(
        "%(player)s's %(card)s card cannot be played and goes back to their hand: %(reason)s."
    ) % {"player": who(), "card": card_name(str(e["card"])), "reason": reason_text(e["reason"])}


def _alliance(e: Event, who: _Who) -> str:
    own, other = e["castles"]
    return _("%(player)s allies the region at %(own)s with the region at %(other)s.") % {
        "player": who(),
        "own": cell(own),
        "other": cell(other),
    }


def _alliance_broken(e: Event, who: _Who) -> str:
    one, two = e["castles"]
    return _("%(player)s ends the alliance of the regions at %(one)s and %(other)s.") % {
        "player": who(),
        "one": cell(one),
        "other": cell(two),
    }


def _renegade(e: Event, who: _Who) -> str:
    return _(
        "%(player)s plays a Renegade: %(owner)s's knight at %(cell)s goes back to its supply."
    ) % {"player": who(), "owner": who("owner"), "cell": cell(e["removed"])}


def _knight(e: Event, who: _Who) -> str:
    words = {"player": who(), "cell": cell(e["cell"]), "fee": e.get("fee")}
    if e.get("fee"):
        return _("%(player)s places a knight at %(cell)s (on forest, %(fee)s ducats).") % words
    return _("%(player)s places a knight at %(cell)s.") % words


def _wall(e: Event, who: _Who) -> str:
    return _("%(player)s places a wall at %(wall)s.") % {"player": who(), "wall": edge(e["wall"])}


def _founded(e: Event, who: _Who) -> str:
    words = {
        "player": who("owner"),
        "cells": _cells(e["size"]),
        "towns": _towns(e.get("towns") or 0),
        "castle": cell(e["castle"]),
        "points": _points(e["points"]),
    }
    if e.get("towns"):
        return (
            _("%(player)s founds a region of %(cells)s with %(towns)s at %(castle)s: %(points)s.")
            % words
        )
    return _("%(player)s founds a region of %(cells)s at %(castle)s: %(points)s.") % words


def _cells(count: int) -> str:
    return ngettext("%(count)d cell", "%(count)d cells", count) % {"count": count}


def _towns(count: int) -> str:
    return ngettext("%(count)d town", "%(count)d towns", count) % {"count": count}


def _expanded(e: Event, who: _Who) -> str:
    return _("%(player)s expands the region at %(castle)s by %(cells)s: %(points)s.") % {
        "player": who(),
        "castle": cell(e["castle"]),
        "cells": join_and([cell(c) for c in e["cells"]]),
        "points": _points(e["points"]),
    }


def _lost(e: Event, who: _Who) -> str:
    return ngettext(
        "%(player)s loses %(cells)d cell of the region at %(castle)s: %(points)s.",
        "%(player)s loses %(cells)d cells of the region at %(castle)s: %(points)s.",
        e["cells"],
    ) % {
        "player": who(),
        "cells": e["cells"],
        "castle": cell(e["castle"]),
        "points": _points(e["points"]),
    }


def _severed(e: Event, who: _Who) -> str:
    return ngettext(
        "A piece of %(size)d cell is cut off %(player)s's region at %(castle)s and becomes "
        "a neutral zone: %(points)s.",
        "A piece of %(size)d cells is cut off %(player)s's region at %(castle)s and becomes "
        "a neutral zone: %(points)s.",
        e["size"],
    ) % {
        "player": who(),
        "size": e["size"],
        "castle": cell(e["castle"]),
        "points": _points(e["points"]),
    }


def _money(e: Event, who: _Who) -> str:
    """RULES 3.3: one taker has the whole bag; several share it, each an equal part."""
    words = {
        "players": who.all(),
        "action": action_text(e["action"]),
        "each": ducats_text(e["each"]),
    }
    if len(e["players"]) == 1:
        return _("%(players)s takes %(action)s.") % words
    return _("%(players)s share %(action)s: %(each)s each.") % words


def _negotiation(e: Event, who: _Who) -> str:
    return _("%(players)s both chose %(action)s: they negotiate.") % {
        "players": who.all(),
        "action": action_text(e["action"]),
    }


def _offer(e: Event, who: _Who) -> str:
    return ngettext(
        "%(player)s offers %(other)s %(ducats)d ducat to perform the action alone.",
        "%(player)s offers %(other)s %(ducats)d ducats to perform the action alone.",
        e["ducats"],
    ) % {"player": who(), "other": who("other"), "ducats": e["ducats"]}


def _accepted(e: Event, who: _Who) -> str:
    return ngettext(
        "%(player)s accepts %(payer)s's offer of %(ducats)d ducat; %(payer)s acts alone.",
        "%(player)s accepts %(payer)s's offer of %(ducats)d ducats; %(payer)s acts alone.",
        e["ducats"],
    ) % {"player": who(), "payer": who("payer"), "ducats": e["ducats"]}


def _duel(e: Event, who: _Who) -> str:
    words = {"players": who.all(), "action": action_text(e["action"])}
    if e.get("round", 1) > 1:
        return _("%(players)s make sealed bids again, after a tie for %(action)s.") % words
    return _("%(players)s make sealed bids for %(action)s.") % words


def _bids(e: Event, who: _Who) -> str:
    parts = []
    for player, bid in e["bids"].items():
        treasure = ", ".join(map(str, bid.get("treasure") or []))
        words = {
            "player": name_of(player, who.names),
            "total": bid["total"],
            "ducats": bid["ducats"],
            "treasure": treasure,
        }
        if treasure:
            parts.append(
                _("%(player)s %(total)s (%(ducats)s ducats + Treasure %(treasure)s)") % words
            )
        else:
            parts.append(f"{words['player']} {words['total']}")
    return _("The bids are revealed: %(bids)s.") % {"bids": "; ".join(parts)}


def _duel_won(e: Event, who: _Who) -> str:
    return ngettext(
        "%(player)s wins the duel and pays %(paid)d ducat to the bank.",
        "%(player)s wins the duel and pays %(paid)d ducats to the bank.",
        e["paid"],
    ) % {"player": who(), "paid": e["paid"]}


# What a payment is for (engine.events.PaidFor). A game stored before the codes holds
# the words themselves, shown as they are.
PAID_FOR: dict[str, str | Promise] = {
    "knights_on_forest": pgettext_lazy("paid for", "knights on forest"),
    "knight_on_forest": pgettext_lazy("paid for", "a knight on forest"),
    "renegade_knights_on_forest": pgettext_lazy("paid for", "renegade knights on forest"),
    "alliance_break": pgettext_lazy("paid for", "breaking an alliance"),
}


def _paid(e: Event, who: _Who) -> str:
    treasure = ", ".join(map(str, e.get("treasure") or []))
    words = {
        "player": who(),
        "amount": e["amount"],
        "treasure": treasure,
        "ducats": e.get("ducats"),
        "purpose": PAID_FOR.get(e["for"], e["for"]),
    }
    if treasure:
        return (
            ngettext(
                "%(player)s pays %(amount)d ducat (Treasure %(treasure)s and %(ducats)s ducats) "
                "for %(purpose)s.",
                "%(player)s pays %(amount)d ducats (Treasure %(treasure)s and %(ducats)s ducats) "
                "for %(purpose)s.",
                e["amount"],
            )
            % words
        )
    return (
        ngettext(
            "%(player)s pays %(amount)d ducat for %(purpose)s.",
            "%(player)s pays %(amount)d ducats for %(purpose)s.",
            e["amount"],
        )
        % words
    )


def _placed(e: Event, who: _Who) -> str:
    words = {
        "player": who(),
        "colour": colour_word(e["colour"]),
        "castle": cell(e["castle"]),
        "knight": cell(e["knight"]),
    }
    if str(e["colour"])[:1].lower() in tuple("aeiou"):
        return (
            _("%(player)s places an %(colour)s castle at %(castle)s and a knight at %(knight)s.")
            % words
        )
    return (
        _("%(player)s places a %(colour)s castle at %(castle)s and a knight at %(knight)s.") % words
    )


def _game_over(e: Event, who: _Who) -> str:
    power = ", ".join(f"{name_of(p, who.names)} {v}" for p, v in (e.get("power") or {}).items())
    return ngettext(
        "The game is over: %(winners)s wins. Power: %(power)s.",
        "The game is over: %(winners)s share the victory. Power: %(power)s.",
        len(e["winners"]),
    ) % {"winners": who.all("winners"), "power": power}


def _paused(e: Event, who: _Who) -> str:
    if e.get("reason") == "vote":
        return ngettext(
            "The table votes to pause the phase for %(days)d day, until %(until)s; "
            "%(left)s will be left for the phase when it resumes.",
            "The table votes to pause the phase for %(days)d days, until %(until)s; "
            "%(left)s will be left for the phase when it resumes.",
            e["days"],
        ) % {
            "days": e["days"],
            "until": _until(e["until"], who.zone),
            "left": _duration(int(e["remaining_seconds"])),
        }
    return ngettext(
        "The game is paused while %(players)s is away; %(left)s will be left for the phase "
        "when it resumes.",
        "The game is paused while %(players)s are away; %(left)s will be left for the phase "
        "when it resumes.",
        len(e["players"]),
    ) % {"players": who.all(), "left": _duration(int(e["remaining_seconds"]))}


def _extended(e: Event, who: _Who) -> str:
    """By whom (the table's vote, the creator, or the absence of whom) and until when."""
    until = _until(e.get("deadline"), who.zone)
    if e["reason"] == "vote":
        return ngettext(
            "The table votes to extend the deadline by %(hours)d hour, until %(until)s.",
            "The table votes to extend the deadline by %(hours)d hours, until %(until)s.",
            e["hours"],
        ) % {"hours": e["hours"], "until": until}
    if e["reason"] == "creator":
        words = {"player": who(), "hours": e["hours"], "until": until}
        if e.get("player") and until:
            text = ngettext(
                "%(player)s, the game's creator, extends the deadline by %(hours)d hour, "
                "until %(until)s.",
                "%(player)s, the game's creator, extends the deadline by %(hours)d hours, "
                "until %(until)s.",
                e["hours"],
            )
        elif e.get("player"):
            text = ngettext(
                "%(player)s, the game's creator, extends the deadline by %(hours)d hour.",
                "%(player)s, the game's creator, extends the deadline by %(hours)d hours.",
                e["hours"],
            )
        elif until:
            text = ngettext(
                "The game's creator extends the deadline by %(hours)d hour, until %(until)s.",
                "The game's creator extends the deadline by %(hours)d hours, until %(until)s.",
                e["hours"],
            )
        else:
            text = ngettext(
                "The game's creator extends the deadline by %(hours)d hour.",
                "The game's creator extends the deadline by %(hours)d hours.",
                e["hours"],
            )
        return text % words
    words = {"players": who.all(), "until": until}
    away = len(e["players"])
    if until:
        return (
            ngettext(
                "The deadline is extended until %(until)s, while %(players)s is away.",
                "The deadline is extended until %(until)s, while %(players)s are away.",
                away,
            )
            % words
        )
    return (
        ngettext(
            "The deadline is extended while %(players)s is away.",
            "The deadline is extended while %(players)s are away.",
            away,
        )
        % words
    )


def _proposed(e: Event, who: _Who) -> str:
    words = {"player": who(), "until": _until(e["until"], who.zone)}
    if e["proposal"] == "pause":
        return ngettext(
            "%(player)s asks the table to pause the phase for %(days)d day; the vote is open "
            "until %(until)s.",
            "%(player)s asks the table to pause the phase for %(days)d days; the vote is open "
            "until %(until)s.",
            e["days"],
        ) % {**words, "days": e["days"]}
    return ngettext(
        "%(player)s asks the table to extend the deadline by %(hours)d hour; the vote is open "
        "until %(until)s.",
        "%(player)s asks the table to extend the deadline by %(hours)d hours; the vote is open "
        "until %(until)s.",
        e["hours"],
    ) % {**words, "hours": e["hours"]}


def _vote_cast(e: Event, who: _Who) -> str:
    words = {"player": who()}
    if e["proposal"] == "pause":
        days = {**words, "days": e["days"]}
        if e["yes"]:
            return (
                ngettext(
                    "%(player)s votes for pausing the phase for %(days)d day.",
                    "%(player)s votes for pausing the phase for %(days)d days.",
                    e["days"],
                )
                % days
            )
        return (
            ngettext(
                "%(player)s votes against pausing the phase for %(days)d day.",
                "%(player)s votes against pausing the phase for %(days)d days.",
                e["days"],
            )
            % days
        )
    hours = {**words, "hours": e["hours"]}
    if e["yes"]:
        return (
            ngettext(
                "%(player)s votes for extending the deadline by %(hours)d hour.",
                "%(player)s votes for extending the deadline by %(hours)d hours.",
                e["hours"],
            )
            % hours
        )
    return (
        ngettext(
            "%(player)s votes against extending the deadline by %(hours)d hour.",
            "%(player)s votes against extending the deadline by %(hours)d hours.",
            e["hours"],
        )
        % hours
    )


def _vote_rejected(e: Event, who: _Who) -> str:
    if e["proposal"] == "pause":
        return ngettext(
            "The table rejects pausing the phase for %(days)d day: no majority is left for it.",
            "The table rejects pausing the phase for %(days)d days: no majority is left for it.",
            e["days"],
        ) % {"days": e["days"]}
    return ngettext(
        "The table rejects extending the deadline by %(hours)d hour: no majority is left for it.",
        "The table rejects extending the deadline by %(hours)d hours: no majority is left for it.",
        e["hours"],
    ) % {"hours": e["hours"]}


def _vote_expired(e: Event, who: _Who) -> str:
    if e["proposal"] == "pause":
        return ngettext(
            "The vote on pausing the phase for %(days)d day closed without a majority.",
            "The vote on pausing the phase for %(days)d days closed without a majority.",
            e["days"],
        ) % {"days": e["days"]}
    return ngettext(
        "The vote on extending the deadline by %(hours)d hour closed without a majority.",
        "The vote on extending the deadline by %(hours)d hours closed without a majority.",
        e["hours"],
    ) % {"hours": e["hours"]}


def _until(deadline: Any, zone: tzinfo | None) -> str:
    """ "Wed 2 Jan 2030, 11:00 CET (Europe/Berlin)": in the reader's zone, as the page
    and the emails tell the deadline beside it."""
    if not deadline:
        return ""
    return moment_text(datetime.fromisoformat(str(deadline)), zone)


def _duration(seconds: int) -> str:
    """ "2 days and 3 hours", "5 hours", "40 minutes" (what a pause keeps of a phase)."""
    days, hours, minutes = seconds // 86400, seconds % 86400 // 3600, seconds % 3600 // 60
    parts = []
    if days:
        parts.append(ngettext("%(count)d day", "%(count)d days", days) % {"count": days})
    if hours:
        parts.append(ngettext("%(count)d hour", "%(count)d hours", hours) % {"count": hours})
    if not parts:
        parts.append(
            ngettext("%(count)d minute", "%(count)d minutes", minutes) % {"count": minutes}
        )
    return join_and(parts)


def reason_text(reason: Any, reader: str | None = None) -> str:
    """A stored refusal's reason in words, in the reader's language (to `reader`, their
    own colour as "you"): a code and its values (engine.reasons), or, in an event stored
    before reasons were codes, the English sentence as it was written."""
    if isinstance(reason, dict):
        return words.reason_text(str(reason["code"]), reason.get("values") or {}, reader)
    return str(reason)


def _refused(e: Event, who: _Who) -> str:
    if who.to_reader():
        words = {"move": e["move"], "reason": reason_text(e["reason"], who.viewer)}
        return _("Your submission '%(move)s' could not be applied: %(reason)s.") % words
    return _("%(player)s's submission '%(move)s' could not be applied: %(reason)s.") % {
        "move": e["move"],
        "reason": reason_text(e["reason"]),
        "player": who.addressee(),
    }


def _card(e: Event, who: _Who) -> str:
    card = card_name(e["card"])
    if who.to_reader():
        return _("You took the %(card)s card.") % {"card": card}
    return _("%(player)s took the %(card)s card.") % {"player": who.addressee(), "card": card}


def _turn_end(e: Event, who: _Who) -> str:
    if "turn" in e:
        return _("Turn %(turn)s ends.") % {"turn": e["turn"]}
    return _("The turn ends.")


def _final_hills(e: Event, who: _Who) -> str:
    return ngettext(
        "Final scoring: %(player)s has %(hills)d hill in their regions: %(points)s.",
        "Final scoring: %(player)s has %(hills)d hills in their regions: %(points)s.",
        e["hills"],
    ) % {"player": who(), "hills": e["hills"], "points": _points(e["points"])}


def _action_of(text: str) -> Sentence:
    """A sentence about one player and an action: "%(player)s performs %(action)s."."""
    return lambda e, who: _(text) % {"player": who(), "action": action_text(e["action"])}


def _one(text: str) -> Sentence:
    """A sentence about one player."""
    return lambda e, who: _(text) % {"player": who()}


def _all(text: str) -> Sentence:
    """A sentence about the event's players."""
    return lambda e, who: _(text) % {"players": who.all()}


def _pile(text: str) -> Sentence:
    return lambda e, who: _(text) % {"player": who(), "pile": e["pile"]}


SENTENCES: dict[str, Sentence] = {
    "reveal": _reveal,
    "silver": _silver,
    "decided": _one(gettext_noop("%(player)s has decided.")),
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
    "broken_off": _one(gettext_noop("%(player)s breaks off the negotiation: a duel decides.")),
    "duel": _duel,
    "bid_made": _one(gettext_noop("%(player)s has made a sealed bid.")),
    "bids": _bids,
    "duel_won": _duel_won,
    "duel_void": _all(gettext_noop("%(players)s tie again: nobody performs the action.")),
    "perform": _action_of(gettext_noop("%(player)s performs %(action)s.")),
    "nothing_to_do": _action_of(gettext_noop("%(player)s can do nothing with %(action)s.")),
    "declined": _action_of(gettext_noop("%(player)s declines %(action)s.")),
    "looks": _pile(gettext_noop("%(player)s looks through politics pile %(pile)s.")),
    "took_card": _pile(gettext_noop("%(player)s takes a card from politics pile %(pile)s.")),
    "card": _card,
    "paid": _paid,
    "placed": _placed,
    "turn_end": _turn_end,
    "final_hills": _final_hills,
    "end_game": _final_hills,  # engine.scenario's scoring
    "parchment": lambda e, who: (
        _("%(player)s reveals Parchment: %(points)s.")
        % {"player": who(), "points": _points(e["points"])}
    ),
    "game_over": _game_over,
    "refused": _refused,
    # written by the site (games.deadlines), not the engine
    "paused": _paused,
    "resumed": lambda e, who: _("The game resumes: the deadline runs again."),
    "deadline_extended": _extended,
    # written by the site (games.votes)
    "vote_proposed": _proposed,
    "vote_cast": _vote_cast,
    "vote_rejected": _vote_rejected,
    "vote_expired": _vote_expired,
    "deadline_missed": lambda e, who: (
        ngettext(
            "%(players)s missed the deadline: the default move was played for them.",
            "%(players)s missed the deadline: the default move was played for them.",
            len(e["players"]),
        )
        % {"players": who.all()}
    ),
    "standin": lambda e, who: (
        ngettext(
            "%(player)s missed %(missed)d deadline in a row: a computer plays their seat until "
            "they take it back.",
            "%(player)s missed %(missed)d deadlines in a row: a computer plays their seat until "
            "they take it back.",
            e["missed"],
        )
        % {"player": who(), "missed": e["missed"]}
    ),
    "seat_taken_back": _one(gettext_noop("%(player)s takes their seat back from the computer.")),
    "conceded": _one(gettext_noop("%(player)s conceded: a computer plays their seat to the end.")),
}
