"""Cohort rankings kept between builds (sitegen.site.rankcache): a rebuild ranks again only the
cohorts whose members changed, and gives the bytes of a full build whatever the cache holds;
`build --full` uses neither the rankings nor the row tokens."""

from __future__ import annotations

import json

import pytest

from sitegen.site import rankcache, rowtokens

from test_incremental_build import _files
from test_row_tokens import _build, _edit, _lock, _runs, _scale, _timed, _token_files, records  # noqa: F401 (records: the fixture)


def _rank_files(root) -> list:
    return sorted(rankcache.rankings_folder(root).glob("*.ranks.json"))


def _cohorts(root) -> int:
    return sum(len(json.loads(path.read_text())["cohorts"]) for path in _rank_files(root))


def test_an_edit_ranks_again_only_the_cohorts_it_changed(records, tmp_path, monkeypatch):
    out = tmp_path / "site"
    _build(records, out)
    cohorts, files = _cohorts(records), len(_rank_files(records))
    assert files > 1
    # A small change, which leaves the cohort's order as it was: only the run's document tells.
    _scale(_timed(records, "cross-entropy"), 1.001)
    _lock(records)
    ranked = []
    rank = rankcache.rank_cohort
    monkeypatch.setattr(rankcache, "rank_cohort", lambda members: ranked.append([f.name for f in members]) or rank(members))
    _build(records, out)
    same_operation = {json.loads(p.read_text())["metadata"]["name"] for p in _runs(records, "cross-entropy")}
    assert len(ranked) == 1 and set(ranked[0]) <= same_operation
    # The cohort's new key replaced its old one.
    assert (_cohorts(records), len(_rank_files(records))) == (cohorts, files)
    monkeypatch.undo()
    _build(records, tmp_path / "fresh", "--full")
    assert _files(out) == _files(tmp_path / "fresh")


def test_damaged_files_and_entries_of_other_members_are_no_cache(records, tmp_path):
    out = tmp_path / "site"
    _build(records, out)
    damaged, swapped = _rank_files(records)[:2]
    damaged.write_text(damaged.read_text()[:-20])
    # Each cohort's key now names another cohort's outcome: other runs, so ranked again.
    data = json.loads(swapped.read_text())
    keys = list(data["cohorts"])
    assert len(keys) > 1
    data["cohorts"] = dict(zip(keys, [data["cohorts"][k] for k in keys[1:] + keys[:1]]))
    swapped.write_text(json.dumps(data))
    _edit(records)
    _lock(records)
    _build(records, out)
    _build(records, tmp_path / "fresh", "--full")
    assert _files(out) == _files(tmp_path / "fresh")


@pytest.mark.parametrize("cache", ["rankings", "row tokens"])
def test_full_neither_reads_nor_writes_the_build_caches(records, tmp_path, monkeypatch, cache):
    module, reader, files = {
        "rankings": (rankcache, "read_json", _rank_files),
        "row tokens": (rowtokens, "_read", _token_files),
    }[cache]
    out = tmp_path / "site"
    _build(records, out)
    _edit(records)
    _lock(records)
    kept = {path: path.read_bytes() for path in files(records)}
    assert kept

    def read(*args):
        raise AssertionError(f"--full read the {cache}")

    monkeypatch.setattr(module, reader, read)
    _build(records, out, "--full")
    assert {path: path.read_bytes() for path in files(records)} == kept
    monkeypatch.undo()
    _build(records, tmp_path / "fresh", "--full")
    assert _files(out) == _files(tmp_path / "fresh")
