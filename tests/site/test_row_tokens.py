"""Listing pages keyed by row tokens (sitegen.site.engine.rowtokens): a rebuild makes only the rows of
the groups that changed, takes the others from the previous build, and still gives the
bytes of a full build after edits, deletions and additions."""

from __future__ import annotations

import json
import shutil
import sqlite3
from functools import partial
from pathlib import Path

import pytest

from helpers import build, lock as _lock
from sitegen.state.store import open_state, state_path
from sitegen.site.engine import rowtokens

from test_incremental_build import _files


@pytest.fixture
def records(tmp_path, monkeypatch, bundled_without_kernelbench) -> Path:
    """The bundled registry (many operations, so many groups), with a cache folder of its own."""
    monkeypatch.setenv("SITEGEN_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "records"
    shutil.copytree(bundled_without_kernelbench, root, ignore=shutil.ignore_patterns(".*"))
    return root


# Every build here must exit 0 (helpers.build's check), in one process, without the search index.
_build = partial(build, flags=("--no-search", "--jobs", "1"))


def _runs(records: Path, operation: str) -> list[Path]:
    return sorted((records / "runs" / operation).glob("*.json"))


def _scale(path: Path, factor: float) -> None:
    document = json.loads(path.read_text())
    latency = document["spec"]["timing"]["latencyNs"]
    latency.update({k: max(1, round(v * factor)) for k, v in latency.items()})
    path.write_text(json.dumps(document, indent=2))


def _timed(records: Path, operation: str) -> Path:
    return next(p for p in _runs(records, operation) if "latencyNs" in (json.loads(p.read_text())["spec"].get("timing") or {}))


def _token_groups(records: Path) -> dict[str, dict[str, str]]:
    """Group key → {run: token}, as the build state holds them."""
    with open_state(records) as state:
        return state.row_tokens()


def test_an_edit_makes_only_its_groups_rows(records, tmp_path, monkeypatch):
    out = tmp_path / "site"
    _build(records, out)
    groups = len(_token_groups(records))
    assert groups > 1
    run = _timed(records, "cross-entropy")
    _scale(run, 2)
    _lock(records)
    made = []
    token = rowtokens.row_token
    monkeypatch.setattr(rowtokens, "row_token", lambda facts, row: made.append(facts.name) or token(facts, row))
    _build(records, out)
    same_operation = {json.loads(p.read_text())["metadata"]["name"] for p in _runs(records, "cross-entropy")}
    assert json.loads(run.read_text())["metadata"]["name"] in made
    assert set(made) <= same_operation
    # The edited group's new key replaced its old one; no tokens of a key no build has stay.
    assert len(_token_groups(records)) == groups
    monkeypatch.undo()
    _build(records, tmp_path / "fresh", "--full")
    assert _files(out) == _files(tmp_path / "fresh")


def _edit(records: Path) -> None:
    # Far ahead of its cohort: the rank of every other run in it changes, not only its own.
    _scale(_timed(records, "cross-entropy"), 0.01)


def _delete(records: Path) -> None:
    _runs(records, "embedding")[0].unlink()


def _add(records: Path) -> None:
    # A new run, newest of all: every GPU and implementation listing it is on shifts by a row.
    source = _timed(records, "jsd")
    document = json.loads(source.read_text())
    document["metadata"]["name"] += "-again"
    document["spec"]["observedAt"] = "2030-01-01T00:00:00.000Z"
    (source.parent / (document["metadata"]["name"] + ".json")).write_text(json.dumps(document, indent=2))


def test_edits_deletions_and_additions_build_what_a_full_build_does(records, tmp_path):
    out = tmp_path / "site"
    _build(records, out)
    for step, change in enumerate((_edit, _delete, _add, _edit)):
        before = _files(out)
        change(records)
        _lock(records)
        _build(records, out)
        fresh = tmp_path / f"fresh-{step}"
        _build(records, fresh, "--full")
        assert _files(out) == _files(fresh) != before, change.__name__


def test_wrong_tokens_cost_renders_never_wrong_pages(records, tmp_path):
    # A listing page is keyed by its rows' tokens: a stored token that is not its row's
    # gives the page a key no build recorded, so it is rendered, from its real rows. Only
    # the keys the marker records differ from a full build's.
    out = tmp_path / "site"
    _build(records, out)
    with sqlite3.connect(state_path(records)) as db:
        assert db.execute("UPDATE row_tokens SET token = 'damaged'").rowcount > 1
    db.close()
    _edit(records)
    _lock(records)
    _build(records, out)
    _build(records, tmp_path / "fresh", "--full")
    built, fresh = _files(out), _files(tmp_path / "fresh")
    markers = [json.loads(files.pop(".sitegen-site")) for files in (built, fresh)]
    assert built == fresh
    assert markers[0].pop("pageKeys") != markers[1].pop("pageKeys") and markers[0] == markers[1]
