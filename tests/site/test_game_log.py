"""The game page's log (games.views.play._log): newest first, each line's words escaped
(an event may quote what a person typed), the badge on a private line only."""

from __future__ import annotations

from types import SimpleNamespace

from django.utils.html import format_html_join
from django.utils.safestring import mark_safe

from games.show.presenter import EventLine
from games.views.play import LOG_LINE, _log


def line(index: int, turn: int, text: str, to: str = "") -> EventLine:
    return EventLine(index, turn, index, "refused", {}, text, to)


LINES = [
    line(1, 1, "Alice & Bob <b>allied</b>"),
    line(2, 2, "Your submission '<script>x</script>' could not be applied.", "red"),
    line(3, 2, "Turn ends."),
]


def test_the_log_escapes_each_line_and_badges_the_private_one() -> None:
    shown = SimpleNamespace(events=lambda last: LINES)
    html = _log(shown)  # type: ignore[arg-type]
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
