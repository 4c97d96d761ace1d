"""Every built page parses as strict HTML5, links resolve, and nothing is loaded from elsewhere."""

from __future__ import annotations

import json

import yaml

from conftest import OPERATION, SEED_RUN
from sitecheck import catalog_runs, pages, resolve


def test_every_page_parses_strictly_and_every_internal_link_resolves(site):
    built = pages(site)
    assert len(built) >= 15
    broken = []
    for path, page in built.items():
        for tag, attribute, value in page.refs:
            if value.startswith(("http://", "https://", "mailto:")):
                continue
            target, fragment = resolve(path, value)
            if not (site / target).is_file():
                broken.append(f"{path}: {value} (no file {target})")
            elif fragment and fragment not in built[target].ids:
                broken.append(f"{path}: {value} (no id {fragment} in {target})")
    assert broken == []


def test_no_page_loads_anything_from_another_host(site):
    external = []
    for path, page in pages(site).items():
        for tag, attribute, value in page.refs:
            if value.startswith(("http://", "https://", "//")) and tag != "a":
                external.append(f"{path}: <{tag} {attribute}={value}>")
    assert external == []
    css = (site / "style.css").read_text()
    assert "url(" not in css and "@import" not in css


def test_every_page_has_a_json_twin_with_its_data(site):
    for html in site.rglob("index.html"):
        twin = html.with_name("index.json")
        assert twin.is_file(), html
        json.loads(twin.read_text())
    record = json.loads((site / "runs" / SEED_RUN / "index.json").read_text())
    assert sorted(record) == ["environment", "protocol", "run"]
    assert record["run"]["metadata"]["name"] == SEED_RUN
    operation = json.loads((site / "operations" / OPERATION / "index.json").read_text())
    assert operation["title"] == "All results for Jensen-Shannon divergence loss"


def test_headings_do_not_skip_levels(site):
    for path, page in pages(site).items():
        levels = [int(el.tag[-1]) for el in page.tree.iter() if isinstance(el.tag, str) and el.tag.split("}")[-1] in {"h1", "h2", "h3", "h4", "h5", "h6"}]
        assert levels[0] == 1, path
        for before, after in zip(levels, levels[1:]):
            assert after <= before + 1, f"{path}: h{before} then h{after}"


def test_tables_have_scoped_headers(site):
    for path, page in pages(site).items():
        for th in page.find_all("th"):
            assert th.get("scope") in {"col", "row"}, path


def test_machine_readable_files(site):
    runs = catalog_runs(site)
    assert len(runs) == 8 == json.loads((site / "catalog.json").read_text())["runs"]
    seed = next(r for r in runs if r["name"] == SEED_RUN)
    assert seed["rank"] == 2 and seed["evidenceLevel"] == "Reported"
    assert seed["primary"] == {"metric": "latency", "statistic": "median", "value": 9110560.0, "unit": "ns"}
    schema = json.loads((site / "schemas" / "v1alpha1" / "BenchmarkRun.schema.json").read_text())
    assert schema["$id"].endswith("BenchmarkRun.schema.json")
    cff = (site / "CITATION.cff").read_text()
    assert yaml.safe_load(cff)["cff-version"] == "1.2.0" and yaml.safe_load(cff)["title"] == "sitegen registry"


def test_document_shard_lines_are_to_json_spelled_out():
    # catalog._document_line writes each line without json.dumps' pass over a dict: the
    # bytes must stay those of to_json, whatever a name holds.
    from types import SimpleNamespace

    from sitegen.site.outputs.catalog import _document_line
    from sitegen.site.text.jsonout import to_json

    for name in ["plain", 'quo"te', "back\\slash", "ctl\x01\x1f\x7f", "uni\u00e9\u2028\U0001F600", "tab\tnl\n"]:
        record = SimpleNamespace(kind="BenchmarkRun", name=name, digest="sha256:" + "a" * 64)
        assert _document_line(record).encode() == to_json({"kind": record.kind, "name": record.name, "digest": record.digest})
