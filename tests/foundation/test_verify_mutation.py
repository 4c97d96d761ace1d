"""`sitegen verify` catches a one-value change anywhere in any spec, and names the file."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from manifest_edits import REGISTRY, SEED, cli, leaves, problem_lines, with_leaf_changed

from sitegen.core.atomicwrite import write_atomic
from sitegen.format.loader import load_paths
from sitegen.registry.lockfile import LOCK_NAME
from sitegen.registry.folder import index, lock_contents

REGISTRY_FILES = sorted(p.name for p in REGISTRY.glob("*.json"))


def _write(path: Path, document: dict) -> None:
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False), encoding="utf-8")


def _mutations(document: dict, members: tuple[str, ...]):
    """(label, changed document) for every leaf under each member's spec."""
    for member in members:
        spec_at = (member, "spec") if member else ("spec",)
        node = document
        for key in spec_at:
            node = node[key]
        for leaf in leaves(node):
            yield ".".join(map(str, (*spec_at, *leaf))), with_leaf_changed(document, (*spec_at, *leaf))


@pytest.mark.parametrize("name", REGISTRY_FILES)
def test_every_leaf_change_in_the_registry_is_caught(name, tmp_path):
    root = tmp_path / "registry"
    shutil.copytree(REGISTRY, root)
    assert cli("verify", root).exit_code == 0
    file = root / name
    original = json.loads(file.read_text(encoding="utf-8"))
    missed = []
    count = 0
    for label, document in _mutations(original, ("",)):
        count += 1
        _write(file, document)
        result = cli("verify", root)
        if result.exit_code != 1 or not any(line.startswith(f"{file}: ") for line in problem_lines(result)):
            missed.append((label, result.exit_code, result.stderr))
    assert count > 5
    assert missed == []


def test_every_leaf_change_in_the_seed_bundle_is_caught(tmp_path):
    # The seed run cites a workload and an implementation that are not published with it,
    # so its registry is never clean: every change must add a problem naming the file.
    root = tmp_path / "seed"
    root.mkdir()
    file = root / "seed-manifest.json"
    shutil.copy(SEED, file)
    records, problems = load_paths([root])
    registry, more = index(records)
    assert problems == more == []
    write_atomic(root / LOCK_NAME, lock_contents(registry))
    baseline = cli("verify", root)
    assert baseline.exit_code == 1
    known = set(problem_lines(baseline))
    assert len(known) == 2 and all("resolves to no" in line for line in known)

    original = json.loads(SEED.read_text(encoding="utf-8"))
    missed = []
    count = 0
    for label, document in _mutations(original, ("run", "protocol", "environment")):
        count += 1
        _write(file, document)
        result = cli("verify", root)
        new = set(problem_lines(result)) - known
        if result.exit_code != 1 or not any(line.startswith(f"{file}: ") for line in new):
            missed.append((label, result.exit_code, result.stderr))
    assert count > 20
    assert missed == []
