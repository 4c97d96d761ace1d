"""Cohort rankings kept between builds (sitegen.site.engine.rankcache): a rebuild ranks again only the
cohorts whose members changed, and gives the bytes of a full build whatever the build state
holds; `build --full` neither opens nor changes the build state."""

from __future__ import annotations

import json
import sqlite3

from sitegen.state import store
from sitegen.state.store import open_state, state_path
from sitegen.site.engine import rankcache

from test_incremental_build import _files
from test_row_tokens import _build, _edit, _lock, _runs, _scale, _timed, records  # noqa: F401 (records: the fixture)


def _rankings(root) -> dict[str, str]:
    with open_state(root) as state:
        return state.rankings()


def test_an_edit_ranks_again_only_the_cohorts_it_changed(records, tmp_path, monkeypatch):
    out = tmp_path / "site"
    _build(records, out)
    cohorts = len(_rankings(records))
    assert cohorts > 1
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
    assert len(_rankings(records)) == cohorts
    monkeypatch.undo()
    _build(records, tmp_path / "fresh", "--full")
    assert _files(out) == _files(tmp_path / "fresh")


def test_damaged_entries_and_entries_of_other_members_are_no_cache(records, tmp_path, monkeypatch):
    out = tmp_path / "site"
    _build(records, out)
    stored = _rankings(records)
    keys = sorted(stored)
    damaged, swapped = keys[0], keys[1:]
    with sqlite3.connect(state_path(records)) as db:
        db.execute("UPDATE rankings SET outcome = ? WHERE cohort = ?", (stored[damaged][:-20], damaged))
        # Each cohort's key now names another cohort's outcome: other runs, so ranked again.
        for key, other in zip(swapped, swapped[1:] + swapped[:1]):
            db.execute("UPDATE rankings SET outcome = ? WHERE cohort = ?", (stored[other], key))
    db.close()
    ranked = []
    rank = rankcache.rank_cohort
    monkeypatch.setattr(rankcache, "rank_cohort", lambda members: ranked.append(members) or rank(members))
    _build(records, tmp_path / "again")
    assert len(ranked) == len(keys)
    # Ranked again under the keys they had, and stored: the next build ranks nothing.
    assert _rankings(records) == stored
    ranked.clear()
    _edit(records)
    _lock(records)
    _build(records, out)
    assert 0 < len(ranked) < len(keys)
    monkeypatch.undo()
    _build(records, tmp_path / "fresh", "--full")
    assert _files(out) == _files(tmp_path / "fresh")


def test_full_neither_opens_nor_changes_the_build_state(records, tmp_path, monkeypatch):
    out = tmp_path / "site"
    _build(records, out)
    _edit(records)
    _lock(records)
    kept = {path: path.read_bytes() for path in state_path(records).parent.iterdir()}
    assert kept

    def connect(*args, **kwargs):
        raise AssertionError("--full opened the build state")

    monkeypatch.setattr(store.sqlite3, "connect", connect)
    _build(records, out, "--full")
    assert {path: path.read_bytes() for path in state_path(records).parent.iterdir()} == kept
    monkeypatch.undo()
    _build(records, tmp_path / "fresh", "--full")
    assert _files(out) == _files(tmp_path / "fresh")
