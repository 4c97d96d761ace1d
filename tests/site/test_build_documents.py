"""`build` takes a file's documents from the build state only for the very bytes they were made from."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import sqlite3
import zlib
from functools import partial
from pathlib import Path

import pytest

from conftest import TORCH_RUN, relock
from helpers import build
from sitegen.state import cachedload
from sitegen.state.store import open_state, state_path, unpickle_models

from test_incremental_build import _files


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("SITEGEN_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


# Without the search index or the progress display; each test reads the exit code itself.
_build = partial(build, flags=("--no-search", "--quiet"), check=False)


def _run_file(root: Path) -> Path:
    return root / "runs" / f"{TORCH_RUN}.json"


def _scale_latency(path: Path, factor: int) -> None:
    document = json.loads(path.read_text())
    latency = document["spec"]["timing"]["latencyNs"]
    latency.update({k: v * factor for k, v in latency.items()})
    path.write_text(json.dumps(document, indent=2))


def _folders(registry: Path) -> set[str]:
    """The folders whose documents the build state holds."""
    with open_state(registry) as state:
        return state.document_folders()


def _payloads(registry: Path) -> dict[str, bytes]:
    with sqlite3.connect(state_path(registry)) as db:
        found = dict(db.execute("SELECT folder, payload FROM documents").fetchall())
    db.close()
    return found


def _forge(registry: Path, folder: str, payload: bytes, checksum: str | None = None) -> None:
    """Store ``payload`` for ``folder`` under a checksum that matches (unless given), as one who can write the cache could."""
    with sqlite3.connect(state_path(registry)) as db:
        db.execute("UPDATE documents SET payload = ?, checksum = ? WHERE folder = ?",
                   (payload, checksum or hashlib.sha256(payload).hexdigest(), folder))
    db.close()


def test_a_cached_rebuild_equals_a_full_cold_build(registry_copy, tmp_path, cache):
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    assert _build(registry_copy, out).exit_code == 0
    assert _folders(registry_copy)
    _scale_latency(_run_file(registry_copy), 3)
    relock(registry_copy)
    assert _build(registry_copy, out).exit_code == 0
    assert _build(registry_copy, fresh, "--full").exit_code == 0
    assert _files(out) == _files(fresh)


def test_an_edit_that_keeps_size_and_mtime_is_seen(registry_copy, tmp_path, cache):
    out = tmp_path / "site"
    assert _build(registry_copy, out).exit_code == 0
    run = _run_file(registry_copy)
    before, times = run.read_text(), os.stat(run)
    # One digit for another: same size, same times, different bytes.
    after = before.replace('"median": 4971584', '"median": 4971585', 1)
    assert after != before and len(after) == len(before)
    run.write_text(after)
    os.utime(run, ns=(times.st_atime_ns, times.st_mtime_ns))
    refused = _build(registry_copy, out)
    assert refused.exit_code == 1
    assert f"{run}: $.spec: digest" in refused.output and "differs from" in refused.output
    relock(registry_copy)
    assert _build(registry_copy, out).exit_code == 0
    assert "4971585" in (out / "runs" / TORCH_RUN / "index.json").read_text()


@pytest.fixture
def loads(monkeypatch) -> list[str]:
    """The files a build loads in full (in this process: one job)."""
    loaded, load = [], cachedload.load_bytes
    monkeypatch.setattr(cachedload, "load_bytes", lambda data, name: loaded.append(name) or load(data, name))
    return loaded


def _retitled(payload: bytes, relative: str) -> bytes | None:
    """``payload`` with the run in ``relative`` titled FORGED, or None if it does not hold it."""
    entries = unpickle_models(payload)
    if relative not in entries:
        return None
    digest, documents = entries[relative]
    pointer, source, model, run_digest = documents[0]
    raw = json.loads(zlib.decompress(source))
    raw["metadata"]["title"] = "FORGED"
    entries[relative] = (digest, [(pointer, zlib.compress(json.dumps(raw).encode()), model, run_digest)])
    return pickle.dumps(entries)


def test_a_payload_that_does_not_match_its_checksum_is_loaded_again(registry_copy, tmp_path, cache, loads):
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    assert _build(registry_copy, out, "--jobs", "1").exit_code == 0
    files = len(loads)
    for folder, payload in _payloads(registry_copy).items():
        # Changed after it was stored: unpickles well, but is not what the checksum was made of.
        changed = _retitled(payload, f"runs/{TORCH_RUN}.json")
        if changed is None:
            changed = bytearray(payload)
            changed[-10] ^= 0xFF
        _forge(registry_copy, folder, bytes(changed), checksum=hashlib.sha256(payload).hexdigest())
    _scale_latency(_run_file(registry_copy), 5)
    relock(registry_copy)
    loads.clear()
    assert _build(registry_copy, out, "--jobs", "1").exit_code == 0
    assert len(loads) == files
    assert _build(registry_copy, fresh, "--full").exit_code == 0
    assert _files(out) == _files(fresh)
    # And stored again whole: the next build loads nothing.
    loads.clear()
    assert _build(registry_copy, tmp_path / "again", "--jobs", "1").exit_code == 0
    assert loads == []


def test_a_payload_naming_anything_but_a_model_runs_nothing(registry_copy, tmp_path, cache, loads):
    out = tmp_path / "site"
    assert _build(registry_copy, out, "--jobs", "1").exit_code == 0
    files = len(loads)
    planted = tmp_path / "planted"

    class Plant:
        def __reduce__(self):
            return (os.mkdir, (str(planted),))

    for folder in _folders(registry_copy):
        _forge(registry_copy, folder, pickle.dumps({"x": Plant()}))
    assert unpickle_models(pickle.dumps({"x": Plant()})) == {} and not planted.exists()
    _scale_latency(_run_file(registry_copy), 7)
    relock(registry_copy)
    loads.clear()
    assert _build(registry_copy, out, "--jobs", "1").exit_code == 0
    assert not planted.exists()
    assert len(loads) == files


def test_another_sitegen_uses_none_of_the_documents(registry_copy, tmp_path, cache, loads, monkeypatch):
    from sitegen.state import store

    assert _build(registry_copy, tmp_path / "site", "--jobs", "1").exit_code == 0
    files = len(loads)
    loads.clear()
    monkeypatch.setattr(store, "code_version", lambda: "another sitegen")
    assert _build(registry_copy, tmp_path / "other", "--jobs", "1").exit_code == 0
    assert len(loads) == files


def test_full_ignores_a_forged_entry(registry_copy, tmp_path, cache):
    # A forged entry with a matching checksum is what the cache cannot tell from a real
    # one (as with lock's summaries): --full never reads it.
    out = tmp_path / "site"
    assert _build(registry_copy, out).exit_code == 0
    for folder, payload in _payloads(registry_copy).items():
        forged = _retitled(payload, f"runs/{TORCH_RUN}.json")
        if forged is not None:
            _forge(registry_copy, folder, forged)
            break
    else:
        raise AssertionError("no folder holds the run")
    cached, full = tmp_path / "cached", tmp_path / "full"
    assert _build(registry_copy, cached).exit_code == 0
    assert "FORGED" in (cached / "runs" / TORCH_RUN / "index.json").read_text()
    assert _build(registry_copy, full, "--full").exit_code == 0
    assert "FORGED" not in (full / "runs" / TORCH_RUN / "index.json").read_text()


def test_a_bad_file_is_reported_the_same_with_or_without_the_cache(registry_copy, tmp_path, cache):
    assert _build(registry_copy, tmp_path / "site").exit_code == 0
    _run_file(registry_copy).write_text('{"apiVersion": 1}')
    cached, full = _build(registry_copy, tmp_path / "a"), _build(registry_copy, tmp_path / "b", "--full")
    assert cached.exit_code == full.exit_code == 1
    assert cached.output == full.output != ""
    assert not (tmp_path / "a").exists()


def test_a_first_build_loaded_by_several_processes_equals_a_full_one_process_build(registry_copy, tmp_path, cache, monkeypatch):
    # Cold cache: every folder of the registry is loaded by a forked process, whose pickled
    # documents the parent takes in and stores; --full loads every file in the parent alone.
    many, one = tmp_path / "many", tmp_path / "one"
    assert _build(registry_copy, many, "--jobs", "3").exit_code == 0
    folders = {p.parent for p in registry_copy.rglob("*.json") if p.name != "digests.lock"}
    assert len(_folders(registry_copy)) == len(folders) > 1
    assert _build(registry_copy, one, "--full", "--jobs", "1").exit_code == 0
    assert _files(many) == _files(one)
    # What the processes loaded is the cache of the next build: it loads the edited file alone.
    _scale_latency(_run_file(registry_copy), 3)
    relock(registry_copy)
    loaded = []

    def load_bytes(data, name):
        loaded.append(name)
        return real_load_bytes(data, name)

    real_load_bytes = cachedload.load_bytes
    monkeypatch.setattr(cachedload, "load_bytes", load_bytes)
    again, fresh = tmp_path / "again", tmp_path / "fresh"
    assert _build(registry_copy, again, "--jobs", "1").exit_code == 0
    assert loaded == [str(_run_file(registry_copy))]
    assert _build(registry_copy, fresh, "--full", "--jobs", "1").exit_code == 0
    assert _files(again) == _files(fresh)


def test_a_bad_file_loaded_by_a_worker_is_reported_as_by_one_process(registry_copy, tmp_path, cache):
    _run_file(registry_copy).write_text('{"apiVersion": "kernelbench.dev/v1alpha1", "kind": "BenchmarkRun", "spec": {}}')
    many = _build(registry_copy, tmp_path / "many", "--jobs", "3")
    one = _build(registry_copy, tmp_path / "one", "--full", "--jobs", "1")
    assert many.exit_code == one.exit_code == 1
    assert many.output == one.output and str(_run_file(registry_copy)) in many.output
    assert "Traceback" not in many.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "records"]


def test_a_loading_process_killed_fails_the_build_with_one_line(registry_copy, tmp_path, cache, monkeypatch):
    import signal

    parent, load_folder = os.getpid(), cachedload._load_folder

    def dies_in_a_worker(*args):
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return load_folder(*args)

    monkeypatch.setattr(cachedload, "_load_folder", dies_in_a_worker)
    result = _build(registry_copy, tmp_path / "site", "--jobs", "2")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.output.splitlines()[0] == (f"{registry_copy}: $: a process loading records died (out of memory?); "
                                             "nothing was changed; try fewer --jobs")
    assert not (tmp_path / "site").exists()
