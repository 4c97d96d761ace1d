"""Numbers as readers see them: durations in ns/µs/ms/s, other values with their unit.

Three significant digits is what the seed page shows (9.11 ms) and what a timing's
run-to-run noise supports; larger magnitudes keep every integer digit instead.
"""

from __future__ import annotations

import math

_DURATIONS = (("s", 1e9), ("ms", 1e6), ("µs", 1e3), ("ns", 1.0))


def significant(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits; integers ≥ 10**digits keep all digits."""
    if value == 0:
        return "0"
    if not math.isfinite(value):
        return str(value)
    magnitude = math.floor(math.log10(abs(value)))
    if magnitude >= digits - 1:
        return f"{round(value):,}"
    decimals = digits - 1 - magnitude
    text = f"{value:.{decimals}f}"
    return text


def duration_ns(value: float) -> tuple[str, str]:
    """(number, unit) of a nanosecond duration in the largest unit that is ≥ 1."""
    for unit, scale in _DURATIONS:
        if abs(value) >= scale:
            return significant(value / scale), unit
    return significant(value), "ns"


def quantity(value: float, unit: str) -> tuple[str, str]:
    """(number, unit) for display; nanoseconds are rescaled, other units kept."""
    if unit == "ns":
        return duration_ns(value)
    return significant(value), unit


def show(value: float, unit: str) -> str:
    """``9.11 ms``."""
    number, shown_unit = quantity(value, unit)
    return f"{number} {shown_unit}"


def spread(low: float, high: float, unit: str) -> str:
    """A range in one unit, chosen by the larger end: ``9.08–9.15 ms``; with more digits (up
    to 6) where 3 would print two different ends alike (``3.115–3.124 ms``, not ``3.12–3.12``)."""
    _, shown_unit = quantity(high, unit)
    scale = dict(_DURATIONS).get(shown_unit, 1.0) if unit == "ns" else 1.0
    digits = distinct_digits(low / scale, high / scale)
    return f"{significant(low / scale, digits)}–{significant(high / scale, digits)} {shown_unit}"


def distinct_digits(low: float, high: float) -> int:
    """Significant digits, 3 to 6, that print two different numbers differently."""
    digits = 3
    while digits < 6 and low != high and significant(low, digits) == significant(high, digits):
        digits += 1
    return digits


def raw_number(value: float) -> str:
    """A source's own number, to six significant digits (9.110560417 → 9.11056)."""
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    return f"{value:.6g}"


def ratio(value: float, leader: float) -> str:
    """How many times the leader's value: ``1.83×``."""
    if leader == 0:
        return "—"
    return f"{value / leader:.2f}×"


def times(ratio: float) -> str:
    """``3.79×``; three decimals under 1.1×, so a gap of half a percent still shows (``1.005×``)."""
    return f"{ratio:.3f}×" if ratio < 1.1 else f"{ratio:.2f}×"


def slower(value: float, leader: float, unit: str = "ns") -> str:
    """How a value compares with a lower one, as readers say it: a time ``1.83× slower``, never
    ``83.3% behind``; anything else (memory) ``1.20× more``; equal ones ``as fast`` / ``the same``."""
    if leader == 0:
        return "—"
    timed = unit == "ns"
    if value == leader:
        return "as fast" if timed else "the same"
    if value < leader:
        return f"{times(leader / value)} {'faster' if timed else 'less'}"
    return f"{times(value / leader)} {'slower' if timed else 'more'}"


def slower_than(value: float, leader: float, unit: str, name: str) -> str:
    """``1.83× slower than torch``, ``as fast as torch``, ``1.20× more than torch``."""
    said = slower(value, leader, unit)
    return f"{said} as {name}" if said in ("as fast", "the same") else f"{said} than {name}"


def times_span(low: float, high: float) -> str:
    """A ratio's interval: ``3.74–3.84×``, with the digits ``times`` gives its lower end, or more
    (up to 4) where those would print two different ends alike."""
    digits = 3 if low < 1.1 else 2
    while digits < 4 and low != high and f"{low:.{digits}f}" == f"{high:.{digits}f}":
        digits += 1
    return f"{low:.{digits}f}–{high:.{digits}f}×"


def percent(fraction: float) -> str:
    """0.0123 → ``1.2%``; 0.05 → ``5%``."""
    return f"{abs(fraction) * 100:.1f}".removesuffix(".0") + "%"


def byte_size(value: int) -> str:
    """Device memory: 150 GB, in decimal units as vendors state it."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if value >= scale:
            return f"{significant(value / scale)} {unit}"
    return f"{value:,} B"
