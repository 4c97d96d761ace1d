"""`sitegen lock` says what it accepts: documents added, changed and removed since the previous lock."""

from __future__ import annotations

import json

from helpers import lock as _lock
from trust_registry import OTHER_RUN, RUN, edit_run, mini_registry


def test_lock_lists_each_document_added_changed_and_removed(tmp_path):
    root = mini_registry(tmp_path / "registry")
    first = _lock(root)
    # The first lock adds every document: one line each (6 of them here).
    added = [line for line in first.stderr.splitlines() if line.startswith("added: ")]
    assert len(added) == 6 and f"added: BenchmarkRun/{RUN.stem}" in added
    assert "changed: " not in first.stderr and "removed: " not in first.stderr

    assert [line for line in _lock(root).stderr.splitlines() if ": " in line] == []  # nothing changed

    edit_run(root, lambda spec: spec["correctness"].update(notes="reviewed"))
    mini_registry(root, OTHER_RUN)  # adds the other run and its bf16 workload
    (root / "runs" / RUN.name).rename(root / "runs" / "renamed.json")
    moved = json.loads((root / "runs" / "renamed.json").read_text())
    moved["metadata"]["name"] = "renamed-run"
    (root / "runs" / "renamed.json").write_text(json.dumps(moved))
    result = _lock(root, "--json")
    lines = [line for line in result.stderr.splitlines() if line.split(": ")[0] in ("added", "changed", "removed")]
    assert "removed: BenchmarkRun/" + RUN.stem in lines
    assert "added: BenchmarkRun/renamed-run" in lines and f"added: BenchmarkRun/{OTHER_RUN.stem}" in lines
    listed = json.loads(result.stdout)
    assert listed["removed"] == [f"BenchmarkRun/{RUN.stem}"]
    assert f"BenchmarkRun/{OTHER_RUN.stem}" in listed["added"] and "BenchmarkRun/renamed-run" in listed["added"]
    assert len(lines) == len(listed["added"]) + len(listed["changed"]) + len(listed["removed"])


def test_a_changed_spec_is_listed_as_changed(tmp_path):
    root = mini_registry(tmp_path / "registry")
    _lock(root)
    edit_run(root, lambda spec: spec["correctness"].update(notes="reviewed"))
    result = _lock(root, "--json")
    assert [line for line in result.stderr.splitlines() if ": " in line] == [f"changed: BenchmarkRun/{RUN.stem}"]
    assert json.loads(result.stdout)["changed"] == [f"BenchmarkRun/{RUN.stem}"]


def test_more_than_twenty_are_counted_and_json_lists_them_all(tmp_path):
    root = mini_registry(tmp_path / "registry")
    _lock(root)
    for i in range(21):
        doc = json.loads((root / "runs" / RUN.name).read_text())
        doc["metadata"]["name"] = f"copy-{i:02d}"
        doc["spec"]["correctness"]["notes"] = f"copy {i}"
        (root / "runs" / f"copy-{i:02d}.json").write_text(json.dumps(doc))
    result = _lock(root, "--json")
    assert [line for line in result.stderr.splitlines() if line.startswith("added")] == ["added: 21 documents"]
    assert json.loads(result.stdout)["added"] == [f"BenchmarkRun/copy-{i:02d}" for i in range(21)]
