"""Charts: every inline SVG parses and carries a title and a description; raw samples leave the HTML."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest

from sitecheck import catalog_runs
from sitegen.site.charts import svg as charts

SVG = "{http://www.w3.org/2000/svg}"
SAMPLED_RUN = "sitegen-h200-tokens2048-2026-08-20"


def _svgs(html: str) -> list[ET.Element]:
    return [ET.fromstring(block) for block in re.findall(r"<svg\b.*?</svg>", html, re.S)]


def test_every_chart_of_the_site_is_svg_with_title_and_description(site):
    found = 0
    for page in sorted(site.rglob("*.html")):
        for svg in _svgs(page.read_text(encoding="utf-8")):
            found += 1
            assert svg.tag == SVG + "svg" and svg.get("role") == "img", page
            title, desc = svg.find(SVG + "title"), svg.find(SVG + "desc")
            assert title is not None and title.text and desc is not None and desc.text, page
            assert svg.find(f".//{SVG}script") is None
    assert found >= 3  # sweep on the operation page, sample distributions on the rerun records


def test_sweep_chart_has_a_table_with_the_same_numbers(site):
    # With results on two GPUs, the sweeps sit on the per-GPU pages below the operation page.
    pages = sorted((site / "operations" / "jensen-shannon-divergence").glob("*/index.html"))
    blocks = [re.search(r'<figure class="chart-block".*?</figure>', p.read_text(encoding="utf-8"), re.S) for p in pages]
    block = next(b for b in blocks if b).group(0)
    svg = _svgs(block)[0]
    assert "Log–log" in svg.find(SVG + "desc").text
    assert "<table" in block and "(ms)" in block


def test_samples_are_a_download_not_inline(site):
    page = (site / "runs" / SAMPLED_RUN / "index.html").read_text(encoding="utf-8")
    data = json.loads((site / "runs" / SAMPLED_RUN / "samples.json").read_text())
    twin = json.loads((site / "runs" / SAMPLED_RUN / "index.json").read_text())
    timing = twin["run"]["spec"]["timing"]
    samples = timing.get("samplesNs") or [s for p in timing["processes"] for s in p["samplesNs"]]
    stored = data.get("samplesNs") or [s for p in data["processes"] for s in p["samplesNs"]]
    assert stored == samples and data["digest"].startswith("sha256:") and data["unit"] == "ns"
    assert f'href="../../runs/{SAMPLED_RUN}/samples.json" download' in page and "raw samples only" in page
    # The page prints no sample array (the manifest box links the JSON twin, which holds all of them).
    assert '"samplesNs": [' not in page and '"samplesNs":[' not in page
    assert {r["name"]: r["samples"] for r in catalog_runs(site)}[SAMPLED_RUN] == f"runs/{SAMPLED_RUN}/samples.json"


def test_line_chart_bytes_depend_only_on_the_data():
    def draw(order):
        series = [charts.Series(n, pts) for n, pts in order]
        return charts.line_chart(title="t <&>", desc="d", series=series,
                                 x=charts.Axis("tokens", log=True), y=charts.Axis("ms", log=True))

    data = [("a", [(1024, 1.0), (2048, 2.1)]), ("b", [(1024, 3.0), (2048, 5.9)])]
    first = draw(data)
    assert first == draw([(n, list(p)) for n, p in data])
    ET.fromstring(first)  # escaped title, well-formed
    assert "t &lt;&amp;&gt;" in first
    floor = charts.line_chart(title="t", desc="d", series=[charts.Series("a", [(1, 2.0), (2, 3.0)]),
                                                             charts.Series("roofline floor", [(1, 1.0), (2, 1.5)], floor=True)],
                              x=charts.Axis("x", log=True), y=charts.Axis("y", log=True))
    assert "roofline floor" in floor and 'stroke="#8c959f" stroke-width="1.5"' in floor


def test_empty_chart_is_refused():
    with pytest.raises(ValueError):
        charts.line_chart(title="t", desc="d", series=[], x=charts.Axis("x"), y=charts.Axis("y"))


def test_the_samples_chart_marks_the_interval_the_page_states(site):
    html = (site / "runs" / SAMPLED_RUN / "index.html").read_text(encoding="utf-8")
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))
    stated = re.search(r"median 95% interval (\S+)–(\S+) µs \(2,000 bootstrap", text)
    drawn = re.search(r"95% interval of the median (\S+)–(\S+) µs", text)
    assert stated and drawn and stated.groups() == drawn.groups(), (stated, drawn)


def test_history_chart_on_records_measured_twice(site):
    html = (site / "runs" / "sitegen-h200-tokens2048-2026-08-21" / "index.html").read_text(encoding="utf-8")
    block = re.search(r'<figure class="chart-block" id="history">.*?</figure>', html, re.S).group(0)
    assert "History of sitegen Triton JSD" in block
    assert block.count("<tr>") == 3  # header and the two H200 runs
    # A dry run (a CPU rehearsal) is no point of the GPU's history and gets no chart.
    dry = (site / "runs" / "sitegen-h200-tokens2048-dry-2026-08-19" / "index.html").read_text(encoding="utf-8")
    assert 'id="history"' not in dry


def test_close_ticks_get_distinct_labels():
    svg = charts.line_chart(title="t", desc="d", series=[charts.Series("a", [(0, 516.1), (1, 516.8)])],
                            x=charts.Axis("x"), y=charts.Axis("y", format=lambda v: f"{v:.3g}"))
    labels = re.findall(r'text-anchor="end">([^<]+)<', svg)
    assert len(labels) == len(set(labels)) > 1
