"""`sitegen lock` and `verify` take unchanged files from the digest cache; `verify --full` and `build` never trust it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from manifest_edits import cli, problem_lines

from sitegen.digestcache import CACHE_FORMAT, cache_shards
from sitegen.loader import LOCK_NAME
from sitegen.registry import lock_contents, open_registry

SMALL = Path(__file__).resolve().parents[1] / "fixtures" / "registry-small"


@pytest.fixture
def registry(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("SITEGEN_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "registry"
    shutil.copytree(SMALL, root)
    return root


def _shards(root: Path) -> list[Path]:
    return sorted(cache_shards(root).glob("*.json"))


def _a_run(root: Path) -> Path:
    return sorted((root / "runs").rglob("*.json"))[0]


def _edit_latency(path: Path) -> None:
    run = json.loads(path.read_text())
    timing = run["spec"]["timing"]["latencyNs"]
    timing.update({k: v + 1 for k, v in timing.items()})
    path.write_text(json.dumps(run, indent=2))


def test_lock_after_an_edit_equals_a_lock_computed_from_scratch(registry):
    assert cli("lock", registry).exit_code == 0
    assert _shards(registry)
    _edit_latency(_a_run(registry))
    assert cli("verify", registry).exit_code == 1  # the cache never hides an edit
    assert cli("lock", registry).exit_code == 0
    assert (registry / LOCK_NAME).read_bytes() == lock_contents(open_registry(registry, check_lock_file=False))
    assert cli("verify", registry).exit_code == 0
    assert cli("verify", "--full", registry).exit_code == 0


def test_a_bad_file_is_reported_the_same_with_or_without_the_cache(registry):
    assert cli("lock", registry).exit_code == 0
    _a_run(registry).write_text('{"apiVersion": 1}')
    cached, full = cli("verify", registry), cli("verify", "--full", registry)
    assert cached.exit_code == full.exit_code == 1
    assert problem_lines(cached) == problem_lines(full) != []


def test_a_tampered_cache_cannot_make_verify_full_or_build_pass(registry, tmp_path):
    assert cli("verify", registry).exit_code == 0
    run = _a_run(registry)
    _edit_latency(run)
    # Forge the cache: the edited file's bytes keyed to the entries of the file as locked.
    cli("lock", registry)
    (registry / LOCK_NAME).write_bytes(lock_contents(open_registry(SMALL, check_lock_file=False)))
    locked_digest = json.loads((registry / LOCK_NAME).read_text())["documents"]
    for shard in _shards(registry):
        poisoned = json.loads(shard.read_bytes())
        for entries in poisoned["files"].values():
            for entry in entries:
                entry["digest"] = locked_digest[f"{entry['kind']}/{entry['name']}"]
        shard.write_text(json.dumps(poisoned))
    # The forgery fools the cached check, which is what it is for ...
    assert cli("verify", registry).exit_code == 0
    # ... but never the full one, nor a build.
    full = cli("verify", "--full", registry)
    assert full.exit_code == 1
    assert any(line.startswith(f"{run}: ") and "differs from" in line for line in problem_lines(full))
    build = cli("build", "--records", registry, "--out", tmp_path / "site", "--no-search", "--quiet")
    assert build.exit_code == 1
    assert not (tmp_path / "site").exists()


def test_an_unreadable_cache_is_recomputed(registry):
    assert cli("lock", registry).exit_code == 0
    expected = (registry / LOCK_NAME).read_bytes()
    for shard in _shards(registry):
        shard.write_text("not json")
    assert cli("lock", registry).exit_code == 0
    assert (registry / LOCK_NAME).read_bytes() == expected
    assert all(json.loads(shard.read_bytes())["format"] == CACHE_FORMAT for shard in _shards(registry))


@pytest.fixture(params=[1, 3], ids=["one-process", "three-processes"])
def jobs(request, monkeypatch) -> int:
    """`lock` and `verify` on as many cores as this: a first lock loads each folder in a forked process."""
    from sitegen import forkpool

    monkeypatch.setattr(forkpool, "default_jobs", lambda: request.param)
    return request.param


def test_a_first_lock_on_any_number_of_processes_equals_a_lock_from_scratch(registry, jobs):
    (registry / LOCK_NAME).unlink()
    assert cli("lock", registry).exit_code == 0
    assert len(_shards(registry)) == len({p.parent for p in registry.rglob("*.json") if p.name != LOCK_NAME}) > 1
    assert (registry / LOCK_NAME).read_bytes() == lock_contents(open_registry(registry, check_lock_file=False))
    assert cli("verify", registry).exit_code == 0


def test_a_bad_file_on_a_first_verify_is_reported_as_by_verify_full(registry, jobs):
    _a_run(registry).write_text('{"apiVersion": 1}')
    cached, full = cli("verify", registry), cli("verify", "--full", registry)
    assert cached.exit_code == full.exit_code == 1
    assert problem_lines(cached) == problem_lines(full) != []
