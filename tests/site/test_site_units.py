"""Displayed numbers stay within rounding of the recorded ones."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sitegen.core import units

SCALE = {"ns": 1.0, "µs": 1e3, "ms": 1e6, "s": 1e9}


@given(st.integers(min_value=1, max_value=10**12))
def test_durations_read_back_within_half_a_percent(ns):
    number, unit = units.duration_ns(ns)
    shown = float(number.replace(",", "")) * SCALE[unit]
    assert abs(shown - ns) / ns <= 0.005 + 1e-12
    assert 1 <= float(number.replace(",", "")) or unit == "ns"


def test_seed_values():
    assert units.show(9110560, "ns") == "9.11 ms"
    assert units.show(4971584, "ns") == "4.97 ms"
    assert units.show(768.0029296875, "MB") == "768 MB"
    assert units.show(40960.05, "MB") == "40,960 MB"
    assert units.spread(9080000, 9150000, "ns") == "9.08–9.15 ms"
    # Two ends that 3 digits would print alike get the digits that tell them apart.
    assert units.spread(3115400, 3124100, "ns") == "3.115–3.124 ms"
    assert units.spread(3120000, 3120000, "ns") == "3.12–3.12 ms"
    assert units.ratio(9.11, 4.97) == "1.83×"
    assert units.percent(0.05) == "5%" and units.percent(-0.0123) == "1.2%"
    assert units.raw_number(9.110560417175293) == "9.11056"


def test_run_tables_get_one_metric_and_one_unit_per_column():
    from types import SimpleNamespace as Run

    from sitegen.site.pages.value_columns import value_columns

    rows = [Run(metric="latency", statistic="median", unit="ns", value=950_000.0),
            Run(metric="latency", statistic="median", unit="ns", value=9_110_000.0),
            Run(metric="memory", statistic="median", unit="MB", value=1234.5), None,
            Run(metric="latency", statistic="median", unit="ns", value=12_500_000.0)]
    latency, memory = value_columns(rows)
    assert latency.header == "Latency, median (ms)" and latency.cells == ["0.950", "9.11", "", "", "12.5"]
    assert memory.header == "Memory, median (MB)" and memory.cells == ["", "", "1,234", "", ""]


def test_home_table_has_no_mixed_unit_value_column(site):
    html = (site / "index.html").read_text()
    assert '<th scope="col" class="num">Latency, median (ms)</th>' in html
    assert '>Value</th>' not in html


def test_manifest_fields_read_as_words_with_units():
    from sitegen.site.text import field_labels as F

    assert (F.label("measurement.warmup.minMs"), F.value("measurement.warmup.minMs", 25.0)) == ("Warm-up · minimum time", "25 ms")
    assert (F.label("maxClocksMHz.memory"), F.value("maxClocksMHz.memory", 3201)) == ("Maximum memory clock", "3,201 MHz")
    assert F.value("devicePolicy.l2FlushBytes", 268435456) == "256 MiB"
    assert F.value("measurement.l2Flush", True) == "yes"
    # A field nobody labelled still reads as words, its unit suffix moved to the value.
    assert F.label("hardware.someNewLimitW") == "Hardware · some new limit"
    assert F.value("hardware.someNewLimitW", 350) == "350 W"
    assert F.label("instance.gpuUuid") == "Instance · GPU UUID"


def test_an_empty_reading_says_none_instead_of_a_blank():
    from sitegen.site.text import field_labels as F

    # NVML's throttle reasons before a run, read as an empty list: a blank cell reads as missing data.
    assert F.value("gpuBefore.throttleReasons", []) == "none"
    assert F.value("gpuBefore.throttleReasons", ["sw_power_cap"]) == "sw_power_cap"
