"""The value of a note (``attest --value``): a number with a unit of the run's own metric.

"12.5 ms" on a latency run is stored as a reader would write it: a latency in the largest
of s, ms, µs and ns that keeps it at least 1 ("12500 us" becomes "12.5 ms"), digits as
given, never rounded. A run measured in another unit (memory in MB) takes that unit only.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from sitegen.core.problems import InputError, Problem

# Every spelling of a latency unit accepted, with its size in nanoseconds.
LATENCY_UNITS = {"s": 10**9, "ms": 10**6, "us": 10**3, "µs": 10**3, "μs": 10**3, "ns": 1}
SHOWN = (("s", 10**9), ("ms", 10**6), ("µs", 10**3), ("ns", 1))
# Thousands may be grouped with commas, as record pages print them ("2,048 MB").
_VALUE = re.compile(r"(?P<number>(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)"
                    r"\s*(?P<unit>\S+)")


def _plain(number: Decimal) -> str:
    text = format(number.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def normalize(text: str, metric: str | None, unit: str | None) -> str:
    """``text`` as stored, for a run whose primary metric is ``metric`` in ``unit`` (None: the
    run has none); InputError with one line saying what is expected."""
    if metric is None or unit is None:
        raise InputError([Problem("--value", "$", "this run has no measured value to compare with; describe what you saw with --note")])
    expected = "s, ms, µs or us, ns" if unit == "ns" else unit
    example = "12.5 ms" if unit == "ns" else f"12.5 {unit}"
    bad = Problem("--value", "$", f"{text!r} is not a number with a unit of the run's {metric} ({expected}), e.g. {example!r}")
    match = _VALUE.fullmatch(text.strip())
    if match is None:
        raise InputError([bad])
    try:
        number = Decimal(match["number"].replace(",", ""))
    except InvalidOperation:
        raise InputError([bad]) from None
    if not number.is_finite() or number <= 0 or not -12 <= number.adjusted() <= 15:
        raise InputError([Problem("--value", "$", f"{text!r}: the number must be positive and of a sensible size")])
    given = match["unit"]
    if unit != "ns":
        if given.lower() != unit.lower():
            raise InputError([bad])
        return f"{_plain(number)} {unit}"
    if given not in LATENCY_UNITS:
        raise InputError([bad])
    ns = number * LATENCY_UNITS[given]
    shown, size = next((u, size) for u, size in SHOWN if ns >= size or size == 1)
    return f"{_plain(ns / size)} {shown}"
