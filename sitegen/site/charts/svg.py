"""Charts as small inline SVG documents: line charts (linear, log or date axes) and histograms.

Hand-written rather than matplotlib's SVG backend: matplotlib would add ~40 MB and a
numpy build to `pip install .` for three chart shapes, and its SVG carries generated ids
and a font cache whose bytes change between versions. Here every coordinate is printed
with one decimal, so the same data gives the same bytes on every machine.

Each chart carries <title> and <desc> (read by screen readers, shown as a tooltip) and
no script; the page prints the same numbers in a table beside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date
from sitegen.site.text import xmltext

WIDTH, HEIGHT = 640, 300
LEFT, RIGHT, TOP, BOTTOM = 72, 16, 18, 44
# On a phone the stylesheet draws chart text at 21 units, so that it reads at 11 px or more on a
# 358 px wide chart. Every label is placed to have room at that size, not only at the 12 units of
# a wide screen: laid out for 12, the legend's entries overlapped one another and the x axis's
# title, the y axis's title ran into its tick labels and the last date was cut off.
# TOP leaves a phone-sized y label at the very top of the plot inside the chart.
PHONE_TEXT = 21
# Okabe–Ito: distinguishable with the common colour-vision deficiencies; dashes tell
# lines apart in print and in grey.
# The last, Okabe–Ito's black, is the page's text colour instead, so it stays visible in dark mode.
COLOURS = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "currentColor")
DASHES = ("", "6 3", "2 3", "8 3 2 3", "1 2", "10 4", "4 4")


def _escape(value: str) -> str:
    return xmltext.text(value, quotes=True)


@dataclass(frozen=True)
class Series:
    """One line: its legend name and (x, y) points, x ascending."""

    name: str
    points: list[tuple[float, float]]
    floor: bool = False
    """A reference line (e.g. the roofline floor): drawn grey and dashed, never a data colour."""
    slot: int | None = None
    """Which colour and dash: the same implementation keeps its slot in every chart of a page."""


@dataclass(frozen=True)
class Axis:
    label: str
    log: bool = False
    dates: bool = False
    """x values are days since 1970-01-01, labelled as YYYY-MM-DD."""
    format: object = None
    """value → tick label; str(value) when None."""


def _num(value: float) -> str:
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _scale(values: list[float], log: bool, lo_px: float, hi_px: float):
    lo, hi = min(values), max(values)
    if log:
        lo, hi = math.log10(lo), math.log10(hi)
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    pad = (hi - lo) * 0.05
    lo, hi = lo - pad, hi + pad

    def to_px(value: float) -> float:
        v = math.log10(value) if log else value
        return lo_px + (v - lo) / (hi - lo) * (hi_px - lo_px)

    return to_px, lo, hi


def _ticks(lo: float, hi: float, log: bool, given: list[float] | None = None) -> list[float]:
    """Tick values inside [lo, hi] (in log10 units when ``log``)."""
    if given is not None and len(given) <= 8:
        return sorted(given)
    if log:
        ticks = []
        for exponent in range(math.floor(lo), math.ceil(hi) + 1):
            for mantissa in (1, 2, 5):
                value = mantissa * 10.0 ** exponent
                if lo <= math.log10(value) <= hi:
                    ticks.append(value)
        if len(ticks) > 8:
            ticks = [t for t in ticks if round(math.log10(t), 6).is_integer()] or ticks[::3]
        return ticks
    span = hi - lo
    step = 10 ** math.floor(math.log10(span / 4)) if span > 0 else 1
    for factor in (1, 2, 5, 10):
        if span / (step * factor) <= 6:
            step *= factor
            break
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step) + 1)]


def _label(axis: Axis, value: float) -> str:
    if axis.dates:
        return date.fromordinal(int(math.floor(value)) + date(1970, 1, 1).toordinal()).isoformat()
    if axis.format is not None:
        return axis.format(value)
    return _num(value)


def _distinct_labels(axis: Axis, ticks: list[float]) -> list[str]:
    """Tick labels, with more decimals when the axis's own format makes neighbours equal (516.5 and 517 both "517")."""
    labels = [_label(axis, t) for t in ticks]
    decimals = 0
    while len(set(labels)) < len(labels) and decimals < 6:
        decimals += 1
        labels = [f"{t:.{decimals}f}" for t in ticks]
    return labels


def _text_width(text: str, size: float = PHONE_TEXT) -> float:
    """A generous estimate of a label's width in chart units: 0.64 em a character (DejaVu Sans, the
    widest common system-ui font, draws digits at 0.64 em and text at about 0.55)."""
    return len(text) * 0.64 * size


# Below the plot, in chart units: the x tick labels' baseline, the x axis title's, the first
# legend row's, and the step from one legend row to the next (each a line of phone-sized text).
X_LABELS_BELOW, X_TITLE_BELOW, LEGEND_BELOW, LEGEND_ROW = 20, 46, 70, 26
Y_TITLE_X = 20  # the rotated y title's centre line; the tick labels start past its band (Y_TITLE_BAND)
Y_TITLE_BAND = 28


@dataclass(frozen=True)
class _Layout:
    """Where the plot sits in the 640-unit-wide chart: its left and right edges and its x axis."""

    left: float = LEFT
    right: float = WIDTH - RIGHT
    bottom: float = HEIGHT - BOTTOM


def _layout(y_labels: list[str], x_labels: list[str], x_fractions: list[float]) -> _Layout:
    """A plot area leaving room, at phone text size, for the y tick labels beside the rotated y
    title, and for the last x tick label inside the chart's right edge (``x_fractions``: where
    each x tick falls between the plot's edges, 0 to 1)."""
    widest = max((_text_width(label) for label in y_labels), default=0.0)
    left = max(LEFT, Y_TITLE_BAND + widest + 6)  # the rotated title's band, the labels, their gap to the axis
    right = WIDTH - RIGHT
    for label, fraction in zip(x_labels, x_fractions):
        if fraction > 0:
            right = min(right, left + (WIDTH - 2 - _text_width(label) / 2 - left) / fraction)
    return _Layout(left=round(left), right=round(right))


def _fractions(values: list[float], log: bool, ticks: list[float]) -> list[float]:
    to_unit, _, _ = _scale(values, log, 0.0, 1.0)
    return [to_unit(t) for t in ticks]


def _shown_labels(labels: list[str], positions: list[float]) -> list[str]:
    """Every tick's label where they all fit side by side at phone text size; else every second
    one (every third, ...), starting from the first, so that no two labels overlap."""
    for step in range(1, len(labels) + 1):
        kept = [i for i in range(len(labels)) if i % step == 0]
        if all(positions[b] - positions[a] >= (_text_width(labels[a]) + _text_width(labels[b])) / 2 + 8
               for a, b in zip(kept, kept[1:])):
            return [label if i % step == 0 else "" for i, label in enumerate(labels)]
    return labels[:1] + [""] * (len(labels) - 1)


def _frame(title: str, desc: str, body: list[str], legend: list[tuple[str, str, str]], layout: _Layout) -> str:
    placed, rows = _legend(legend, layout)
    # The x tick labels, the x axis's title and each legend row get a line of phone-sized text.
    height = layout.bottom + (LEGEND_BELOW + (rows - 1) * LEGEND_ROW + 12 if rows else X_TITLE_BELOW + 12)
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {_num(height)}" role="img" class="chart"'
        f' font-family="system-ui, sans-serif" font-size="12">'
        f"<title>{_escape(title)}</title><desc>{_escape(desc)}</desc>"
    )
    return head + "".join(body) + "".join(placed) + "</svg>"


def _axes(x: Axis, y: Axis, x_px, y_px, x_ticks, y_ticks, layout: _Layout) -> list[str]:
    left, right, bottom = layout.left, layout.right, layout.bottom
    out = [f'<g stroke="#8c959f" fill="none"><path d="M{left} {TOP}V{_num(bottom)}H{right}"/></g>']
    text = []
    positions = [x_px(t) for t in x_ticks]
    for t, px_value, label in zip(x_ticks, positions, _shown_labels([_label(x, t) for t in x_ticks], positions)):
        px = _num(px_value)
        out.append(f'<path d="M{px} {_num(bottom)}v4" stroke="#8c959f"/>')
        if label:
            text.append(f'<text x="{px}" y="{_num(bottom + X_LABELS_BELOW)}" text-anchor="middle">{_escape(label)}</text>')
    y_labels = _distinct_labels(y, y_ticks)
    for t, text_label in zip(y_ticks, y_labels):
        py = _num(y_px(t))
        out.append(f'<path class="grid" d="M{left} {py}H{right}" stroke="#d0d7de" stroke-width="0.5"/>')
        text.append(f'<text x="{left - 6}" y="{py}" dy="4" text-anchor="end">{_escape(text_label)}</text>')
    text.append(f'<text x="{_num((left + right) / 2)}" y="{_num(bottom + X_TITLE_BELOW)}" text-anchor="middle">{_escape(x.label)}</text>')
    text.append(f'<text transform="translate({Y_TITLE_X} {_num((TOP + bottom) / 2)}) rotate(-90)" text-anchor="middle">{_escape(y.label)}</text>')
    return out + [f'<g fill="currentColor">{"".join(text)}</g>']


def _legend(items: list[tuple[str, str, str]], layout: _Layout) -> tuple[list[str], int]:
    """Each entry (name, colour, dash) after the one before, on as many rows as their phone-sized
    widths need; returns the drawn entries and the number of rows."""
    out, x, row = [], layout.left, 0
    for name, colour, dash in items:
        name = name[:28]
        width = 30 + _text_width(name)
        if x > layout.left and x + width > WIDTH - 8:
            row, x = row + 1, layout.left
        y = layout.bottom + LEGEND_BELOW + row * LEGEND_ROW
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<path d="M{_num(x)} {_num(y)}h24" stroke="{colour}" stroke-width="2.5"{dash_attr}/>'
                   f'<text x="{_num(x + 30)}" y="{_num(y + 5)}" fill="currentColor">{_escape(name)}</text>')
        x += width + 20
    return out, (row + 1 if items else 0)


def _plot(x: Axis, y: Axis, xs: list[float], ys: list[float], y_ticks_of, x_ticks_of) -> tuple:
    """The layout and both scales of a chart of these values: the y scale first (its labels set
    the left margin), then the x scale over the plot's width."""
    y_px, y_lo, y_hi = _scale(ys, y.log, HEIGHT - BOTTOM, TOP)
    y_ticks = y_ticks_of(y_lo, y_hi)
    _, x_lo, x_hi = _scale(xs, x.log, 0.0, 1.0)
    x_ticks = x_ticks_of(x_lo, x_hi)
    layout = _layout(_distinct_labels(y, y_ticks), [_label(x, t) for t in x_ticks], _fractions(xs, x.log, x_ticks))
    x_px, _, _ = _scale(xs, x.log, layout.left, layout.right)
    return layout, x_px, y_px, x_ticks, y_ticks


def line_chart(*, title: str, desc: str, series: list[Series], x: Axis, y: Axis) -> str:
    """A line chart with markers at every point; ``series`` must hold at least one point."""
    xs = [p[0] for s in series for p in s.points]
    ys = [p[1] for s in series for p in s.points]
    if not xs:
        raise ValueError("a chart needs at least one point")
    distinct_x = sorted(set(xs))

    def x_ticks_of(x_lo: float, x_hi: float) -> list[float]:
        x_ticks = _ticks(x_lo, x_hi, x.log, None if x.dates else distinct_x)
        if x.dates:
            # One tick per day: at the first point of each day when there are few, else spread.
            ticks = distinct_x if len(distinct_x) <= 4 else x_ticks
            by_day: dict[str, float] = {}
            for t in ticks:
                by_day.setdefault(_label(x, t), t)
            x_ticks = list(by_day.values())
        return x_ticks

    layout, x_px, y_px, x_ticks, y_ticks = _plot(x, y, xs, ys, lambda lo, hi: _ticks(lo, hi, y.log), x_ticks_of)
    body = _axes(x, y, x_px, y_px, x_ticks, y_ticks, layout)
    legend = []
    colour_index = 0
    for i, s in enumerate(series):
        if s.floor:
            colour, dash, width = "#8c959f", "3 3", "1.5"
        else:
            slot = colour_index if s.slot is None else s.slot
            colour, dash, width = COLOURS[slot % len(COLOURS)], DASHES[slot % len(DASHES)], "2"
            colour_index += 1
        points = [(_num(x_px(px)), _num(y_px(py))) for px, py in s.points]
        path = "M" + "L".join(f"{a} {b}" for a, b in points)
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        body.append(f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="{width}"{dash_attr}/>')
        if not s.floor:
            body.append(f'<g fill="{colour}">' + "".join(f'<circle cx="{a}" cy="{b}" r="3"/>' for a, b in points) + "</g>")
        legend.append((s.name, colour, dash))
    return _frame(title, desc, body, legend, layout)


def histogram(*, title: str, desc: str, values: list[float], marks: dict[str, float], band: tuple[float, float] | None,
              x: Axis, bins: int = 40) -> str:
    """Counts of ``values`` in equal bins; ``marks`` are labelled vertical lines, ``band`` a shaded interval."""
    if not values:
        raise ValueError("a histogram needs at least one value")
    lo, hi = min(values), max(values)
    if hi == lo:
        lo, hi = lo - 0.5, hi + 0.5
    width = (hi - lo) / bins
    counts = [0] * bins
    for v in values:
        counts[min(int((v - lo) / width), bins - 1)] += 1
    y_axis = Axis("samples")
    layout, x_px, y_px, x_ticks, y_ticks = _plot(
        x, y_axis, [lo, hi], [0, max(counts)],
        lambda _lo, _hi: [t for t in _ticks(0, max(counts), False) if t == int(t)],
        lambda x_lo, x_hi: _ticks(x_lo, x_hi, False))
    body = _axes(x, y_axis, x_px, y_px, x_ticks, y_ticks, layout)
    if band is not None:
        a, b = x_px(band[0]), x_px(band[1])
        body.append(f'<rect x="{_num(a)}" y="{TOP}" width="{_num(max(b - a, 1.0))}" height="{_num(layout.bottom - TOP)}" fill="#d55e00" opacity="0.2"/>')
    bars = []
    base = y_px(0)
    for i, count in enumerate(counts):
        if count:
            left, right = x_px(lo + i * width), x_px(lo + (i + 1) * width)
            top = y_px(count)
            bars.append(f'<rect x="{_num(left)}" y="{_num(top)}" width="{_num(max(right - left - 1, 0.5))}" height="{_num(base - top)}"/>')
    body.append('<g fill="#0072b2">' + "".join(bars) + "</g>")
    legend = []
    for i, (name, value) in enumerate(marks.items()):
        px = _num(x_px(value))
        # The text colour, not black: a black median line vanished on the dark theme's background.
        body.append(f'<path d="M{px} {TOP}V{_num(layout.bottom)}" stroke="currentColor" stroke-width="2" stroke-dasharray="{DASHES[i + 1]}"/>')
        legend.append((name, "currentColor", DASHES[i + 1]))
    if band is not None:
        legend.append(("95% interval", "#d55e00", ""))
    return _frame(title, desc, body, legend, layout)


@dataclass(frozen=True)
class TrendPoint:
    """One run on a trend chart: where it is, its interval, the page it links to, and whether a change is marked at it."""

    x: float
    y: float
    low: float | None
    high: float | None
    href: str
    label: str
    """The point's tooltip: what run it is and its value."""
    step: str | None = None
    """``up`` or ``down`` when the rule marks a change at this point (trends.py), else None."""


STEP_COLOUR = "#d55e00"


def trend_chart(*, title: str, desc: str, points: list[TrendPoint], x: Axis, y: Axis) -> str:
    """Points joined in x order, each with its 95% interval as a bar and linked to its run; a marked
    change gets a triangle (pointing up: slower) and a dashed line from the point before it."""
    if not points:
        raise ValueError("a chart needs at least one point")
    ys = [p.y for p in points] + [v for p in points for v in (p.low, p.high) if v is not None]
    distinct_x = sorted({p.x for p in points})

    def x_ticks_of(x_lo: float, x_hi: float) -> list[float]:
        x_ticks = _ticks(x_lo, x_hi, x.log, None if x.dates else distinct_x)
        if x.dates:
            by_day: dict[str, float] = {}
            for t in (distinct_x if len(distinct_x) <= 4 else x_ticks):
                by_day.setdefault(_label(x, t), t)
            x_ticks = list(by_day.values())
        return x_ticks

    layout, x_px, y_px, x_ticks, y_ticks = _plot(x, y, [p.x for p in points], ys, lambda lo, hi: _ticks(lo, hi, y.log), x_ticks_of)
    body = _axes(x, y, x_px, y_px, x_ticks, y_ticks, layout)
    colour = COLOURS[0]
    placed = [(_num(x_px(p.x)), _num(y_px(p.y)), p) for p in points]
    body.append(f'<path d="M{"L".join(f"{a} {b}" for a, b, _ in placed)}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
    for i, (a, b, p) in enumerate(placed):
        marks = []
        if p.low is not None and p.high is not None:
            marks.append(f'<path d="M{a} {_num(y_px(p.low))}V{_num(y_px(p.high))}" stroke="{colour}" stroke-width="1"/>')
        if p.step:
            if i:
                before = placed[i - 1]
                marks.append(f'<path d="M{before[0]} {before[1]}L{a} {b}" stroke="{STEP_COLOUR}" stroke-width="2.5" stroke-dasharray="5 3"/>')
            # Above the point pointing up for a slower run, below it pointing down for a faster one.
            sign = -1 if p.step == "up" else 1
            marks.append(f'<path class="step" d="M{a} {_num(y_px(p.y) + sign * 15)}l-6 {-sign * 8}h12z" fill="{STEP_COLOUR}"/>')
        marks.append(f'<circle cx="{a}" cy="{b}" r="4" fill="{colour}"/>')
        body.append(f'<a href={xmltext.attr(p.href)}><title>{_escape(p.label)}</title>{"".join(marks)}</a>')
    legend = [("run (bar: its 95% interval)", colour, "")]
    if any(p.step for p in points):
        legend.append(("change marked", STEP_COLOUR, "5 3"))
    return _frame(title, desc, body, legend, layout)
