"""The game page's log (games.views.play._log): newest first, each line's words escaped
(an event may quote what a person typed), the badge on a private line only."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from django.utils import translation
from django.utils.html import format_html_join
from django.utils.safestring import mark_safe

from games.models import Game, Seat
from games.show.presenter import EventLine, EventRow, Presentation, present
from games.views import play
from games.views.play import LOG_LINE, _log, _log_lines


def line(index: int, turn: int, text: str, to: str = "") -> EventLine:
    return EventLine(index, turn, index, "refused", {}, text, to)


LINES = [
    line(1, 1, "Alice & Bob <b>allied</b>"),
    line(2, 2, "Your submission '<script>x</script>' could not be applied.", "red"),
    line(3, 2, "Turn ends."),
]


def test_the_log_escapes_each_line_and_badges_the_private_one() -> None:
    html = _log_lines(LINES)
    assert html == (
        '<li class="log-line"><span class="text-muted">Turn 2</span> · Turn ends.</li>'
        '<li class="log-line private"><span class="text-muted">Turn 2</span> · '
        "Your submission &#x27;&lt;script&gt;x&lt;/script&gt;&#x27; could not be applied."
        ' <span class="badge text-bg-light">only you</span></li>'
        '<li class="log-line"><span class="text-muted">Turn 1</span> · '
        "Alice &amp; Bob &lt;b&gt;allied&lt;/b&gt;</li>"
    )
    badge = mark_safe(' <span class="badge text-bg-light">only you</span>')
    assert html == format_html_join(  # what Django's own would write
        "",
        LOG_LINE,
        (
            (" private" if x.private else "", f"Turn {x.turn}", x.text, badge if x.private else "")
            for x in reversed(LINES)
        ),
    )


# --- the lines kept (play._log) -----------------------------------------------------------

CARD_ROW = EventRow(4, 3, 7, "card", {"card": "parchment 3"}, "red")
VOTE_ROW = EventRow(
    5,
    3,
    7,
    "vote_proposed",
    {"player": "ochre", "proposal": "pause", "days": 2, "until": "2030-01-02T10:00:00+00:00"},
    "",
)


def shown_to(
    colour: str | None, names: dict[str, str], zone: str, rows: list[EventRow]
) -> Presentation:
    """A presentation of a game that is not stored (no query): its seats, the reader's
    zone and the rows it reads given."""
    seats = [Seat(colour=c, imported_name=n) for c, n in names.items()]
    seat = next((s for s in seats if s.colour == colour), None)
    everything = colour == "archive"  # a finished game's archive: every event, no "You"
    game = Game(pk=1, status=Game.Status.FINISHED if everything else Game.Status.RUNNING)
    shown = present(game, seat, everything=everything)
    shown.__dict__.update(seats=seats, zone=ZoneInfo(zone))
    shown.newest_rows = lambda last: list(reversed(rows))  # type: ignore[method-assign]
    return shown


def test_the_kept_lines_are_those_written_afresh_whatever_changed() -> None:
    """The rows, the reader, the names, the time zone and the language are in the key:
    leave one out and lines written for another reading come back."""
    names = {"red": "Alice", "ochre": "Bob"}
    other_row = EventRow(4, 3, 7, "card", {"card": "treasure 5"}, "red")
    readings = [
        ("red", names, "UTC", [CARD_ROW, VOTE_ROW]),
        ("ochre", names, "UTC", [VOTE_ROW]),
        (None, names, "UTC", [VOTE_ROW]),
        ("archive", names, "UTC", [CARD_ROW, VOTE_ROW]),
        ("red", {**names, "ochre": "Bert"}, "UTC", [CARD_ROW, VOTE_ROW]),
        ("red", names, "Europe/Berlin", [CARD_ROW, VOTE_ROW]),
        ("red", names, "UTC", [other_row, VOTE_ROW]),
        ("red", names, "UTC", [CARD_ROW]),
    ]
    play._logs.clear()
    for language in ("en-gb", "de", "en-gb"):
        with translation.override(language):
            for colour, named, zone, rows in readings:
                shown = shown_to(colour, named, zone, rows)
                fresh = _log_lines([shown.row_line(row) for row in rows])
                assert _log(shown) == fresh
                assert _log(shown) == fresh


def test_a_bounded_number_of_logs_kept() -> None:
    play._logs.clear()
    for n in range(play.LOGS_KEPT + 10):
        row = EventRow(n, 1, 1, "card", {"card": "parchment 3"}, "red")
        _log(shown_to("red", {"red": "Alice"}, "UTC", [row]))
    assert len(play._logs) == play.LOGS_KEPT
