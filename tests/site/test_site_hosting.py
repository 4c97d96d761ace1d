"""What a static host is asked to take (issue 49): no file over 2 MB, the catalog's document shards
split into parts under a byte cap with a stable naming scheme (docs/hosting.md), and the per-cohort
CSVs that were grouped away stay away (record pages out of search: test_site_search_browser.py)."""

from __future__ import annotations

import json

import pytest

from conftest import FIXTURE

HOST_FILE_CAP = 2_000_000  # issue 49: no single file over 2 MB


def test_no_file_of_the_built_fixture_site_is_over_2_mb(site):
    sizes = {p.relative_to(site).as_posix(): p.stat().st_size for p in site.rglob("*") if p.is_file()}
    over = {name: size for name, size in sizes.items() if size > HOST_FILE_CAP and not name.startswith(".sitegen")}
    assert over == {}


def test_no_cohort_csv_beside_the_operation_pages(site):
    """A cohort's rows are the operation CSV's rows with its comparison_key: one CSV per operation."""
    csvs = sorted(p.relative_to(site).as_posix() for p in (site / "operations").rglob("*.csv"))
    assert csvs and all(name.endswith("/runs.csv") and name.count("/") == 2 for name in csvs), csvs


@pytest.fixture(scope="module")
def index():
    from sitegen.facts.index import build_index
    from sitegen.registry.config import load_config
    from sitegen.registry.folder import open_registry

    return build_index(open_registry(FIXTURE), load_config(FIXTURE))


def test_a_kinds_documents_split_into_parts_under_the_cap_named_by_number(index, monkeypatch):
    from sitegen.site.outputs import catalog as catalog_module

    whole = dict(catalog_module.catalog(index))
    runs_whole = whole["catalog/documents/BenchmarkRun.jsonl"]
    cap = len(runs_whole) // 3 + 1  # at least three parts
    monkeypatch.setattr(catalog_module, "PART_BYTES", cap)
    files = dict(catalog_module.catalog(index))
    entry = next(k for k in json.loads(files["catalog.json"])["documentShards"] if k["kind"] == "BenchmarkRun")
    parts = entry["shards"]
    assert len(parts) >= 3 and entry["shard"] == parts[0]
    assert parts == ["catalog/documents/BenchmarkRun.jsonl"] + [f"catalog/documents/BenchmarkRun.{n}.jsonl" for n in range(2, len(parts) + 1)]
    assert all(len(files[p]) <= cap for p in parts)
    # Every document once, in the same order as the unsplit shard: a reader concatenates the parts.
    assert b"".join(files[p] for p in parts) == runs_whole
    assert sum(len(files[p].splitlines()) for p in parts) == entry["documents"]
    listed = {p for k in json.loads(files["catalog.json"])["documentShards"] for p in k["shards"]}
    assert listed == {name for name in files if name.startswith("catalog/documents/")}


def test_an_operations_runs_split_into_parts_of_at_most_the_row_cap_named_by_number(index, monkeypatch):
    """catalog.json names each operation's parts from its run count; the parts written with the
    operation's pages are exactly those, in order, and join back to the unsplit shard."""
    from sitegen.site.outputs import catalog as catalog_module

    operation = "jensen-shannon-divergence"
    runs = index.runs_of_operation[operation]
    [(_, whole)] = catalog_module.run_shards(operation, runs)
    monkeypatch.setattr(catalog_module, "RUN_PART_ROWS", 2)
    parts = dict(catalog_module.run_shards(operation, runs))
    entry = next(e for e in json.loads(dict(catalog_module.catalog(index))["catalog.json"])["runShards"] if e["operation"] == operation)
    assert len(runs) > 4 and entry["runs"] == len(runs)
    assert entry["shards"] == list(parts) == [f"catalog/runs/{operation}.jsonl"] + [
        f"catalog/runs/{operation}.{n}.jsonl" for n in range(2, -(-len(runs) // 2) + 1)]
    assert entry["shard"] == entry["shards"][0]
    assert all(len(data.splitlines()) <= 2 for data in parts.values())
    assert b"".join(parts.values()) == whole
