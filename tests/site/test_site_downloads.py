"""Downloads (issue 31 item 7) and the badges page (item 6), as a reader finds them on the fixture site."""

from __future__ import annotations

import csv
import io
import json
import re
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

from conftest import FIXTURE, OPERATION, SEED_RUN, TORCH_RUN
from sitecheck import parse, resolve

ROOT = Path(__file__).resolve().parents[2]
X = "{http://www.w3.org/1999/xhtml}"


def _csv(site: Path, path: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO((site / path).read_text())))


def _documented_columns() -> list[str]:
    text = (ROOT / "docs" / "downloads.md").read_text()
    table = text.split("## Columns", 1)[1]
    return re.findall(r"^\| `([a-z_]+)` \|", table, re.M)


def _median(run: str) -> float:
    return json.loads((FIXTURE / "runs" / f"{run}.json").read_text())["spec"]["timing"]["latencyNs"]["median"]


def test_every_run_of_the_operation_is_one_csv_row_with_the_documented_columns(site):
    page = parse(site, f"operations/{OPERATION}/index.html")
    href = next(a.get("href") for a in page.find_all("a") if "".join(a.itertext()) == "every run as CSV")
    target, _ = resolve(page.path, href)
    header = (site / target).read_text().splitlines()[0].split(",")
    assert header == _documented_columns()
    rows = _csv(site, target)
    assert sorted(r["run"] for r in rows) == sorted(p.stem for p in (FIXTURE / "runs").glob("*.json"))
    failed = next(r for r in rows if r["run"].endswith("tokens4096-vocab128256-fp32-2026-05-27-17-14-33"))
    assert failed["value"] == "" and failed["rank"] == "" and "failed" in failed["not_eligible"]


def test_a_cohort_table_links_the_operation_csv_whose_key_column_gives_its_rows_leader_first(site):
    page = parse(site, f"operations/{OPERATION}/nvidia-b200/index.html")
    record = parse(site, f"runs/{SEED_RUN}/index.html")
    cohort_href = next(a.get("href") for a in record.find_all("a") if "".join(a.itertext()) == "its comparison group")
    _, fragment = resolve(record.path, cohort_href)
    cohort = page.tree.find(f".//*[@id='{fragment}']")
    href = next(a.get("href") for a in cohort.iter(f"{X}a") if "".join(a.itertext()) == "CSV")
    target, _ = resolve(page.path, href)
    # One CSV per operation, not one per cohort (issue 49: 4,038 files for the bundled registry).
    assert target == f"operations/{OPERATION}/runs.csv"
    shown = "".join(cohort.find(f".//{X}code").itertext()).rstrip("…")
    rows = [r for r in _csv(site, target) if r["comparison_key"].startswith(shown)]
    assert [r["run"] for r in rows] == [TORCH_RUN, SEED_RUN]  # leader first
    assert [float(r["value"]) for r in rows] == [_median(TORCH_RUN), _median(SEED_RUN)]
    assert [r["rank"] for r in rows] == ["1", "2"] and {r["unit"] for r in rows} == {"ns"}
    assert float(rows[1]["ratio_to_leader"]) == _median(SEED_RUN) / _median(TORCH_RUN)
    # The leader's ratio to itself is 1 by definition, not a measured interval: no interval ends.
    assert rows[0]["ratio_low"] == rows[0]["ratio_high"] == ""
    assert float(rows[1]["ratio_low"]) <= float(rows[1]["ratio_to_leader"]) <= float(rows[1]["ratio_high"])


def test_every_badge_is_shown_with_its_snippets_on_its_implementations_page(site):
    base = tomllib.loads((FIXTURE / "sitegen.toml").read_text())["site"]["base_url"]
    svgs = sorted(p.relative_to(site).as_posix() for p in (site / "badges").rglob("*.svg"))
    assert svgs
    index = parse(site, "badges/index.html")
    listed = {resolve(index.path, a.get("href"))[0] for a in index.find_all("a")}
    for svg in svgs:
        implementation = svg.split("/")[1]
        # The index lists the implementation's page, which shows its badge: no badges page of its own (issue 49).
        page = parse(site, f"implementations/{implementation}/index.html")
        assert page.path in listed and not (site / "badges" / implementation / "index.html").exists()
        assert [resolve(page.path, img.get("src"))[0] for img in page.find_all("img")] == [svg]
        snippets = [" ".join("".join(c.itertext()).split()) for c in page.find_all("code")]
        markdown = [s for s in snippets if s.startswith("[![") and f"]({base}{svg})]" in s]
        html = [s for s in snippets if s.startswith("<a href=") and f'<img src="{base}{svg}"' in s]
        assert len(markdown) == 1 and len(html) == 1, svg
        # Both link the implementation's page, which lists what each row ranks.
        own = f"{base}implementations/{implementation}/index.html"
        assert markdown[0].endswith(f"]({own})") and html[0].startswith(f'<a href="{own}">')
        # Each row of the SVG, as text with a link to the table that ranks it: a reader without images gets both.
        rows = {"".join(a.itertext()).removeprefix("sitegen"): a.get("href")
                for a in ET.fromstring((site / svg).read_bytes()).iter("{http://www.w3.org/2000/svg}a")}
        shown = {" ".join("".join(a.itertext()).split()): base + resolve(page.path, a.get("href"))[0] + "#" + a.get("href").split("#")[1]
                 for a in page.find_all("a") if "#cohort-" in (a.get("href") or "")}
        assert rows and set(rows.items()) <= set(shown.items()), (svg, shown, rows)


def test_text_a_spreadsheet_would_run_as_a_formula_is_defused(registry_copy, tmp_path):
    """An implementation named like a formula ("=1+2…", from an untrusted record) is text in the CSV, not a formula."""
    from conftest import relock
    from sitegen.core.digest import document_digest
    from sitegen.site.build import build_site

    path = registry_copy / "implementations" / "torch.json"
    document = json.loads(path.read_text())
    old = document_digest(document)
    document["spec"]["name"] = '=HYPERLINK("http://example.invalid","torch")'
    path.write_text(json.dumps(document, indent=2))
    new = document_digest(document)
    for run in (registry_copy / "runs").glob("*.json"):
        run.write_text(run.read_text().replace(old, new))
    relock(registry_copy)
    out = tmp_path / "site"
    build_site(registry_copy, out)
    rows = _csv(out, f"operations/{OPERATION}/runs.csv")
    names = {r["implementation"] for r in rows if r["implementation_id"] == "torch"}
    assert names == {'\'=HYPERLINK("http://example.invalid","torch")'}
