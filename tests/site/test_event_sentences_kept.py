"""An event's sentence is kept per process (games.show.presenter.worded) by everything
it is made of: the reader, the names, the language and the time zone each get their
own, and the kept ones stay a bounded number."""

from __future__ import annotations

from datetime import UTC
from zoneinfo import ZoneInfo

from django.utils import timezone, translation

from games.show import presenter
from games.show.event_text import describe

NAMES = {"red": "Alice", "ochre": "Bob"}
CARD = {"kind": "card", "to": "red", "card": "parchment 3"}
VOTE = {
    "kind": "vote_proposed",
    "player": "red",
    "proposal": "pause",
    "days": 2,
    "until": "2030-01-02T10:00:00+00:00",
}


def said(event: dict, names: dict[str, str], reader: str | None, zone=None) -> str:
    return presenter.worded(event, names, tuple(names.items()), reader, zone)


def test_a_private_event_kept_for_its_reader_is_not_what_others_read() -> None:
    assert said(CARD, NAMES, "red") == "You took the Parchment 3 card."
    assert said(CARD, NAMES, "ochre") == "Alice took the Parchment 3 card."
    assert said(CARD, NAMES, None) == "Alice took the Parchment 3 card."
    assert said(CARD, NAMES, "red") == "You took the Parchment 3 card."


def test_a_new_name_is_told() -> None:
    assert said(CARD, NAMES, None).startswith("Alice ")
    assert said(CARD, {**NAMES, "red": "Alicia"}, None).startswith("Alicia ")


def test_each_language_its_sentence() -> None:
    english = said(CARD, NAMES, "ochre")
    with translation.override("de"):
        german = said(CARD, NAMES, "ochre")
        assert german == describe(CARD, NAMES, "ochre")
    assert german != english
    assert said(CARD, NAMES, "ochre") == english


def test_each_time_zone_its_moment() -> None:
    event = {**VOTE}
    berlin = said(event, NAMES, "ochre", ZoneInfo("Europe/Berlin"))
    assert berlin.startswith("Alice asks the table to pause")
    assert "11:00" in berlin
    assert "10:00" in said(event, NAMES, "ochre", UTC)
    with translation.override("en-gb"):
        with timezone.override(ZoneInfo("Europe/Berlin")):  # None: the active zone
            assert said(event, NAMES, "ochre") == berlin
        assert "10:00" in said(event, NAMES, "ochre")


def test_a_bounded_number_kept() -> None:
    for n in range(presenter.SENTENCES_KEPT + 10):
        said({**CARD, "card": f"treasure {n % 20}", "n": n}, NAMES, None)
    assert len(presenter._sentences) == presenter.SENTENCES_KEPT
