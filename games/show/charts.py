"""Charts as inline SVG, drawn on the server: no script, no library, no CDN."""

from __future__ import annotations

import math
from collections.abc import Callable
from html import escape
from itertools import cycle

from django.utils.translation import gettext as _
from django.utils.translation import pgettext

from games.show.words import colour_name

COLOUR_HEX = {"red": "#b3261e", "ochre": "#c58a1b", "lilac": "#8e5bb5", "grey": "#6b6f75"}
WIDTH, HEIGHT = 720, 260
LEFT, RIGHT, TOP, BOTTOM = 44, 170, 14, 36  # margins around the plot: axis labels, legend
LABEL_CHARS = 20  # longer names are cut short to stay inside the legend
MAX_TICKS = 6

Points = list[tuple[int, dict[str, int]]]
Scale = Callable[[float], float]


def power_chart(
    points: Points,
    colours: list[str],
    *,
    x_label: str | None = None,
    marker: int | None = None,
    labels: dict[str, str] | None = None,
) -> str:
    """A line per colour of its power at each x (a phase's index, or a turn), with axes
    and a legend naming each colour (or its player, from `labels`) with its last power;
    `marker` draws a dashed line at that x (the step shown beside the chart); `x_label`
    names the x axis ("phase" in the reader's language unless given)."""
    if x_label is None:
        x_label = pgettext("chart axis", "phase")
    title = escape(_("Power of each player over the game"))
    xs = [x for x, _ in points] or [0]
    x_min, x_max = min(xs), max(xs)
    top = _nice_top(max((v for _x, power in points for v in power.values()), default=0))

    def px(x: float) -> float:
        return LEFT + (x - x_min) / ((x_max - x_min) or 1) * (WIDTH - LEFT - RIGHT)

    def py(y: float) -> float:
        return HEIGHT - BOTTOM - y / top * (HEIGHT - TOP - BOTTOM)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'class="power-chart" role="img" aria-label="{title}">',
        f"<title>{title}</title>",
        *_axes(px, py, x_min, x_max, top, x_label),
    ]
    if marker is not None:
        parts.append(
            f'<line class="marker" x1="{px(marker):.1f}" y1="{TOP}" '
            f'x2="{px(marker):.1f}" y2="{HEIGHT - BOTTOM}" stroke="#999" '
            f'stroke-dasharray="4 3"/>'
        )
    for colour in colours:
        line = " ".join(f"{px(x):.1f},{py(p[colour]):.1f}" for x, p in points if colour in p)
        parts.append(
            f'<polyline class="power-line" data-colour="{escape(colour)}" '
            f'fill="none" stroke="{_hex(colour)}" stroke-width="2" '
            f'stroke-linejoin="round" points="{line}"/>'
        )
    parts += _legend(colours, points, labels or {})
    parts.append("</svg>")
    return "\n".join(parts)


def rating_chart(ratings: list[float]) -> str:
    """A person's rating after each rated game (the first point is where they started),
    one line, with axes: the conservative figure the leaderboard orders by."""
    title = escape(_("Rating after each rated game"))
    xs = range(len(ratings))
    span = _tick_step(max(1, math.ceil(max(ratings, default=0) - min(ratings, default=0))))
    low = math.floor(min(ratings, default=0) / span) * span
    high = max(math.ceil(max(ratings, default=0) / span) * span, low + span)
    step = _tick_step(high - low)
    low, high = math.floor(low / step) * step, math.ceil(high / step) * step
    x_max = max(len(ratings) - 1, 1)

    def px(x: float) -> float:
        return LEFT + x / x_max * (WIDTH - LEFT - RIGHT)

    def py(y: float) -> float:
        return HEIGHT - BOTTOM - (y - low) / (high - low) * (HEIGHT - TOP - BOTTOM)

    line = " ".join(f"{px(x):.1f},{py(r):.1f}" for x, r in zip(xs, ratings, strict=True))
    axes = _axes(
        px,
        py,
        0,
        x_max,
        high,
        pgettext("chart axis", "rated games"),
        floor=low,
        y_label=pgettext("chart axis", "rating"),
    )
    return "\n".join(
        [
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH - RIGHT + 20} {HEIGHT}" '
            f'class="rating-chart" role="img" aria-label="{title}">',
            f"<title>{title}</title>",
            *axes,
            f'<polyline class="rating-line" fill="none" stroke="#1f5f99" stroke-width="2" '
            f'stroke-linejoin="round" points="{line}"/>',
            "</svg>",
        ]
    )


def _nice_top(highest: int) -> int:
    """The y axis' top: the highest power rounded up to a whole tick."""
    step = _tick_step(max(highest, 1))
    return -(-max(highest, 1) // step) * step


def _tick_step(span: int) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50, ... giving at most MAX_TICKS ticks."""
    step, factors = 1, cycle((2, 2.5, 2))
    while span / step > MAX_TICKS - 1:
        step = round(step * next(factors))
    return step


def _axes(
    px: Scale,
    py: Scale,
    x_min: int,
    x_max: int,
    top: int,
    x_label: str,
    *,
    floor: int = 0,
    y_label: str | None = None,
) -> list[str]:
    """The axes, the y ticks from `floor` to `top` (both whole ticks) and the x ticks."""
    base, right = HEIGHT - BOTTOM, WIDTH - RIGHT
    if y_label is None:
        y_label = pgettext("chart axis", "power")
    parts = [
        f'<g class="axes" stroke="#333" stroke-width="1">'
        f'<line x1="{LEFT}" y1="{base}" x2="{right}" y2="{base}"/>'
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{base}"/></g>',
        '<g class="ticks" font-size="11" fill="#333">',
    ]
    for y in range(floor, top + 1, _tick_step(top - floor)):
        parts.append(
            f'<line x1="{LEFT - 4}" y1="{py(y):.1f}" x2="{right}" y2="{py(y):.1f}" '
            f'stroke="#ddd"/><text x="{LEFT - 7}" y="{py(y) + 4:.1f}" '
            f'text-anchor="end">{y}</text>'
        )
    for x in range(x_min, x_max + 1, _tick_step(max(x_max - x_min, 1))):
        parts.append(f'<text x="{px(x):.1f}" y="{base + 15}" text-anchor="middle">{x}</text>')
    parts.append(
        f'<text x="{(LEFT + right) / 2:.1f}" y="{HEIGHT - 4}" '
        f'text-anchor="middle">{escape(x_label)}</text>'
    )
    parts.append(
        f'<text x="12" y="{(TOP + base) / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 12 {(TOP + base) / 2:.1f})">'
        f"{escape(y_label)}</text></g>"
    )
    return parts


def _legend(colours: list[str], points: Points, labels: dict[str, str]) -> list[str]:
    final = points[-1][1] if points else {}
    parts = ['<g class="legend" font-size="12" fill="#333">']
    for i, colour in enumerate(colours):
        y = TOP + 8 + i * 20
        value = f" {final[colour]}" if colour in final else ""
        label = labels.get(colour) or colour_name(colour)
        if len(label) > LABEL_CHARS:
            label = label[: LABEL_CHARS - 1] + "…"
        parts.append(
            f'<rect x="{WIDTH - RIGHT + 12}" y="{y - 9}" width="14" height="4" '
            f'fill="{_hex(colour)}"/><text x="{WIDTH - RIGHT + 32}" y="{y - 3}">'
            f"{escape(label)}{value}</text>"
        )
    parts.append("</g>")
    return parts


def _hex(colour: str) -> str:
    return COLOUR_HEX.get(colour, "#000000")
