"""A build fingerprints registry files by their stat where it can (sitegen.state.filestats), and never
misses an edit for it: an edit that keeps the size and puts the mtime back is still seen, a
file written within the clock's tick of its hashing is read again, and nothing reached
through a link is taken on trust."""

from __future__ import annotations

import os
import time
from pathlib import Path

from manifest_edits import cli, loads, registry  # noqa: F401 (loads, registry: fixtures)

from sitegen.state import filestats

from sitegen.state import summaries
from sitegen.state.store import open_state
from sitegen.state.filestats import RACY_NS, FileStats, stat_key
from sitegen.site.engine.fingerprint import build_inputs

RUN = "runs/liger-jsd-forward-torch-nvidia-b200-tokens4096-vocab128256-fp32-2026-05-27-17-14-35.json"
LATER = lambda: time.time_ns() + 60 * 10**9  # noqa: E731 -- a clock a minute ahead: every file is old enough


def _inputs(root: Path, now=LATER):
    with open_state(root) as state:
        return build_inputs(root, stats=FileStats(state, now_ns=now))


def _same_size_same_mtime_edit(path: Path) -> None:
    before = path.stat()
    text = path.read_text()
    edited = text.replace('"median": 9', '"median": 8', 1)
    assert edited != text and len(edited) == len(text)
    path.write_text(edited)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


def test_an_edit_that_keeps_size_and_mtime_is_still_seen(registry):
    first = _inputs(registry)
    _same_size_same_mtime_edit(registry / RUN)
    second = _inputs(registry)
    assert second.files[RUN] != first.files[RUN]
    assert second.digest != first.digest
    assert second.digest == build_inputs(registry).digest  # what reading every file gives


def test_a_file_whose_stat_is_unchanged_is_not_read_again(registry):
    _inputs(registry)
    # Stand in for the bytes last hashed under this very stat: the walk must take them on trust.
    with open_state(registry) as state:
        state.put_file_stats({RUN: (stat_key(os.stat(registry / RUN)), "0" * 64)}, [])
    assert _inputs(registry).files[RUN] == "0" * 64
    assert build_inputs(registry).files[RUN] != "0" * 64  # --full: no stats, every file read


def test_a_file_written_within_the_racy_window_is_hashed_again(registry):
    info = os.stat(registry / RUN)
    written = max(info.st_mtime_ns, info.st_ctime_ns)
    # The walk begins within RACY_NS of the file's last write: its stat vouches for nothing.
    _inputs(registry, now=lambda: written + RACY_NS // 2)
    with open_state(registry) as state:
        assert RUN not in state.file_stats()
    # Begun exactly RACY_NS after it, still not.
    _inputs(registry, now=lambda: written + RACY_NS)
    with open_state(registry) as state:
        assert RUN not in state.file_stats()
    # Begun RACY_NS after it, the stat is kept.
    _inputs(registry, now=lambda: written + RACY_NS + 1)
    with open_state(registry) as state:
        assert state.file_stats()[RUN][0] == stat_key(info)


def test_nothing_reached_through_a_linked_folder_is_taken_on_trust(registry, tmp_path):
    (registry / "runs").rename(registry / "runs-real")
    (registry / "runs").symlink_to("runs-real", target_is_directory=True)
    _inputs(registry)
    with open_state(registry) as state:
        assert not any(path.startswith("runs/") for path in state.file_stats())
        state.put_file_stats({RUN: (stat_key(os.stat(registry / RUN)), "0" * 64)}, [])
    assert _inputs(registry).files[RUN] != "0" * 64


def test_a_build_sees_an_edit_that_keeps_size_and_mtime(registry, tmp_path):
    site = tmp_path / "site"
    assert cli("build", "--records", registry, "--out", site, "--no-search").exit_code == 0
    time.sleep(RACY_NS / 1e9)  # the files' stats now vouch for their bytes
    assert cli("build", "--records", registry, "--out", site, "--no-search").exit_code == 0
    _same_size_same_mtime_edit(registry / RUN)
    assert cli("lock", registry).exit_code == 0
    result = cli("build", "--records", registry, "--out", site, "--no-search")
    assert result.exit_code == 0 and "up to date" not in result.output, result.output


def test_lock_reads_only_the_files_whose_stat_changed(registry, loads, monkeypatch):
    monkeypatch.setattr(filestats, "_clock", LATER)
    reads, read = [], summaries.read_regular
    monkeypatch.setattr(summaries, "read_regular", lambda name, *a, **k: reads.append(name) or read(name, *a, **k))
    assert cli("lock", registry).exit_code == 0
    assert len(reads) > 1
    reads.clear()
    loads.clear()
    assert cli("lock", registry).exit_code == 0
    assert reads == [] and loads == []
    lock = (registry / "digests.lock").read_bytes()
    _same_size_same_mtime_edit(registry / RUN)
    assert cli("lock", registry).exit_code == 0
    assert reads == [str(registry / RUN)] and loads == [str(registry / RUN)]
    assert (registry / "digests.lock").read_bytes() != lock
    # What that lock learned of the edited file holds for the next.
    reads.clear()
    assert cli("lock", registry).exit_code == 0
    assert reads == []


def test_attest_reads_only_the_files_whose_stat_changed_and_its_note_is_locked(registry, monkeypatch):
    # `attest` checks the whole registry before it writes, as `lock` does, through the same
    # summaries: after a lock, a note reads only the run it is on (whose digest it records; a
    # --value reads the run's protocol too), and the lock it writes holds every document.
    from sitegen.core import forkpool

    from sitegen.format import loader
    monkeypatch.setattr(filestats, "_clock", LATER)
    monkeypatch.setattr(forkpool, "default_jobs", lambda: 1)
    reads = []
    for module in (summaries, loader):
        monkeypatch.setattr(module, "read_regular", lambda name, *a, _read=module.read_regular, **k: reads.append(Path(name).name) or _read(name, *a, **k))
    run = Path(RUN).stem
    assert cli("lock", registry).exit_code == 0
    notes = set((registry / "attestations").glob("*.json"))
    reads.clear()
    result = cli("attest", run, "--kind", "reproduced", "--note", "Same median here.", "--records", registry)
    assert result.exit_code == 0, result.output
    assert reads == [Path(RUN).name]
    reads.clear()
    (note,) = set((registry / "attestations").glob("*.json")) - notes
    result = cli("attest", run, "--kind", "reproduced", "--value", "9.5 ms", "--records", registry)
    assert result.exit_code == 0, result.output
    # New since the lock: the first note, read once; then the run and its protocol (Liger's), read whole.
    assert reads == [note.name, Path(RUN).name, "liger-bench-do-bench-forward.json"], reads
    assert cli("verify", registry, "--full").exit_code == 0
    assert len(set((registry / "attestations").glob("*.json")) - notes) == 2


def test_attest_checks_every_document_again_where_a_stat_vouched_for_bytes_that_are_gone(registry, monkeypatch):
    # A stat that vouches for bytes the file no longer holds (FAT, exFAT and NFS can keep one
    # across an edit; a cache can be tampered with): the run's file is read whole before its
    # digest goes into the note, so the edit is found, reported as a full load reports it, and
    # nothing is written. With the stale digest the note would name a run that is no more.
    monkeypatch.setattr(filestats, "_clock", LATER)
    assert cli("lock", registry).exit_code == 0
    with open_state(registry) as state:
        old = state.file_stats()[RUN][1]
    _same_size_same_mtime_edit(registry / RUN)
    with open_state(registry) as state:
        state.put_file_stats({RUN: (stat_key(os.stat(registry / RUN)), old)}, [])
    lock = (registry / "digests.lock").read_bytes()
    notes = sorted((registry / "attestations").glob("*.json"))
    result = cli("attest", Path(RUN).stem, "--kind", "reproduced", "--note", "Same here.", "--records", registry)
    assert result.exit_code == 1
    assert f"{registry / RUN}: $.spec: digest" in result.stderr and "digests.lock" in result.stderr, result.stderr
    assert sorted((registry / "attestations").glob("*.json")) == notes
    assert (registry / "digests.lock").read_bytes() == lock


def test_the_first_lock_after_a_build_validates_nothing_again(registry, loads, tmp_path):
    # A build keeps each file's validated documents (sitegen.state.cachedload); the first lock (or
    # attest, or verify) after it reads and hashes the files but takes their documents from there
    # instead of validating every one again, and locks exactly what a full load would.
    lock = (registry / "digests.lock").read_bytes()
    assert cli("build", "--records", registry, "--out", tmp_path / "site", "--no-search").exit_code == 0
    loads.clear()
    assert cli("lock", registry).exit_code == 0
    assert loads == []
    assert (registry / "digests.lock").read_bytes() == lock
    # A file edited since the build is validated again, and its edit locked.
    _same_size_same_mtime_edit(registry / RUN)
    assert cli("lock", registry).exit_code == 0
    assert loads == [str(registry / RUN)]
    assert (registry / "digests.lock").read_bytes() != lock
    assert cli("verify", registry, "--full").exit_code == 0


def test_the_first_lock_after_a_build_on_several_processes_validates_nothing_again(registry, tmp_path, monkeypatch):
    # Each forked worker reads its own folders' build documents from the build state (a
    # connection never crosses a fork): a load in a worker is written to a file, since the
    # parent's memory is not the worker's.
    from sitegen.core import forkpool

    lock = (registry / "digests.lock").read_bytes()
    assert cli("build", "--records", registry, "--out", tmp_path / "site", "--no-search").exit_code == 0
    seen, load = tmp_path / "loaded.txt", summaries.load_bytes
    monkeypatch.setattr(forkpool, "default_jobs", lambda: 2)
    monkeypatch.setattr(summaries, "load_bytes",
                        lambda data, name: seen.open("a").write(f"{os.getpid()} {name}\n") and load(data, name))
    assert cli("lock", registry).exit_code == 0
    assert not seen.exists(), seen.read_text()
    assert (registry / "digests.lock").read_bytes() == lock


def test_the_first_lock_after_a_build_works_with_a_relative_cache_folder(registry, tmp_path, monkeypatch, loads):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SITEGEN_CACHE_DIR", "relative-cache")
    assert cli("build", "--records", registry, "--out", tmp_path / "site", "--no-search").exit_code == 0
    loads.clear()
    result = cli("lock", registry)
    assert result.exit_code == 0, result.output
    assert loads == []
