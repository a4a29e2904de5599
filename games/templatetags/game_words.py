"""Words the templates print from a game's data, in the reader's language: a colour's name
(`{{ seat.colour|colour_name }}`), a game's settings (`{{ game|setup_words }}`) and a list
joined with "and" (`{{ names|and_join }}`).

Each setting is one whole phrase per value ("variable setup", "sealed decisions"), never an
adjective glued to a noun, so that German and Italian can inflect it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django import template
from django.utils.translation import gettext, pgettext

from games.show import words
from games.show.words import PHASE_NAMES

register = template.Library()


def _colour_names() -> dict[str, str]:
    return {
        "red": pgettext("colour", "red"),
        "ochre": pgettext("colour", "ochre"),
        "lilac": pgettext("colour", "lilac"),
        "grey": pgettext("colour", "grey"),
    }


@register.filter
def colour_name(colour: Any) -> str:
    """ "red" is "red" / "Rot" / "rosso"; a colour this list lacks is shown as it is."""
    key = str(colour or "")
    return _colour_names().get(key, key)


@register.filter
def colour_letter(colour: Any) -> str:
    """The letter on a colour's pieces ("R"), for the legend's swatches."""
    return words.colour_letter(str(colour or ""))


@register.filter
def setup_words(game: Any) -> str:
    """ "basic setup" / "variable setup"."""
    words = {"basic": gettext("basic setup"), "variable": gettext("variable setup")}
    return words.get(game.setup) or f"{game.get_setup_display().lower()} setup"


@register.filter
def decisions_words(game: Any) -> str:
    """ "sealed decisions" / "open decisions"."""
    words = {"sealed": gettext("sealed decisions"), "open": gettext("open decisions")}
    return words.get(game.decisions) or f"{game.get_decisions_display().lower()} decisions"


@register.filter
def money_words(game: Any) -> str:
    """ "money hidden" / "money open" (the lobby's and the join page's order)."""
    words = {"hidden": gettext("money hidden"), "open": gettext("money open")}
    return words.get(game.money) or f"money {game.get_money_display().lower()}"


@register.filter
def money_words_before(game: Any) -> str:
    """ "hidden money" / "open money" (the archive's order)."""
    words = {"hidden": gettext("hidden money"), "open": gettext("open money")}
    return words.get(game.money) or f"{game.get_money_display().lower()} money"


@register.filter
def and_join(items: Iterable[Any]) -> str:
    """ "Alice", "Alice and Bob", "Alice and Bob and Charlie": each pair joined by the
    language's "and"."""
    words = [str(item) for item in items]
    if not words:
        return ""
    text = words[0]
    for word in words[1:]:
        text = pgettext("list", "%(first)s and %(second)s") % {"first": text, "second": word}
    return text


@register.filter
def phase_kind(kind: Any) -> str:
    """A kind of phase by its name ("decision", "duel") in the reader's language."""
    return str(PHASE_NAMES.get(str(kind), kind))
