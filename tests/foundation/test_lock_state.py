"""`sitegen lock` and `verify` take unchanged files' summaries from the build state; `verify --full` and `build` never trust them."""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from manifest_edits import SMALL, cli, loads, problem_lines, registry  # noqa: F401 (loads, registry: fixtures)

from sitegen.state import summaries
from sitegen.state.store import open_state, state_path
from sitegen.registry.lockfile import LOCK_NAME
from sitegen.registry.folder import lock_contents, open_registry



def _stored(root: Path) -> dict[str, str]:
    """Each folder's summaries as the build state holds them."""
    with open_state(root) as state:
        return state.summaries()


def _rewrite(root: Path, change) -> None:
    """Store ``change(folder's summaries)`` for every folder, as one who can write the cache could."""
    with sqlite3.connect(state_path(root)) as db:
        for folder, files in db.execute("SELECT folder, files FROM summaries").fetchall():
            db.execute("UPDATE summaries SET files = ? WHERE folder = ?", (change(files), folder))
    db.close()


def _a_run(root: Path) -> Path:
    # Nothing references it, and it has no raw samples: a latency edited under its samples
    # is refused by validation itself (sitegen.rules.recompute), before any digest is compared.
    return root / "runs" / "liger-jsd-forward-torch-nvidia-b200-tokens4096-vocab128256-fp32-2026-05-27-17-14-35.json"


def _edit_latency(path: Path) -> None:
    run = json.loads(path.read_text())
    timing = run["spec"]["timing"]["latencyNs"]
    timing.update({k: v + 1 for k, v in timing.items()})
    path.write_text(json.dumps(run, indent=2))


def test_lock_after_an_edit_equals_a_lock_computed_from_scratch(registry):
    assert cli("lock", registry).exit_code == 0
    assert _stored(registry)
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

    def poison(files: str) -> str:
        poisoned = json.loads(files)
        for entries in poisoned.values():
            for entry in entries:
                entry["digest"] = locked_digest[f"{entry['kind']}/{entry['name']}"]
        return json.dumps(poisoned)

    _rewrite(registry, poison)
    # The forgery fools the cached check, which is what it is for ...
    assert cli("verify", registry).exit_code == 0
    # ... but never the full one, nor a build.
    full = cli("verify", "--full", registry)
    assert full.exit_code == 1
    assert any(line.startswith(f"{run}: ") and "differs from" in line for line in problem_lines(full))
    build = cli("build", "--records", registry, "--out", tmp_path / "site", "--no-search", "--quiet")
    assert build.exit_code == 1
    assert not (tmp_path / "site").exists()


def test_unreadable_entries_are_made_again_and_stored(registry, loads):
    assert cli("lock", registry).exit_code == 0
    expected, files = (registry / LOCK_NAME).read_bytes(), len(loads)
    _rewrite(registry, lambda files: "not json")
    loads.clear()
    assert cli("lock", registry).exit_code == 0
    assert (registry / LOCK_NAME).read_bytes() == expected
    assert len(loads) == files
    # Stored again whole: the next lock loads nothing.
    loads.clear()
    assert cli("lock", registry).exit_code == 0
    assert loads == [] and all(isinstance(json.loads(files), dict) for files in _stored(registry).values())


def test_one_changed_byte_is_loaded_again_alone(registry, loads):
    assert cli("lock", registry).exit_code == 0
    assert len(loads) > 1
    run = _a_run(registry)
    # One digit more: the rest of the registry is byte for byte the same.
    before = run.read_text()
    after = before.replace('"median": ', '"median": 1', 1)
    run.write_text(after)
    loads.clear()
    assert cli("lock", registry).exit_code == 0
    assert loads == [str(run)]


def test_another_sitegen_uses_none_of_the_entries(registry, loads, monkeypatch):
    assert cli("lock", registry).exit_code == 0
    files = len(loads)
    loads.clear()
    monkeypatch.setattr(summaries, "code_version", lambda: "another sitegen")
    assert cli("lock", registry).exit_code == 0
    assert len(loads) == files


def test_folders_gone_from_the_registry_are_forgotten(registry):
    assert cli("lock", registry).exit_code == 0
    folders = set(_stored(registry))
    gone = next(f for f in sorted(folders) if f)
    shutil.rmtree(registry / gone)
    cli("lock", registry)  # may fail on references into the folder: the state is kept all the same
    assert set(_stored(registry)) == folders - {gone}


@pytest.fixture(params=[1, 3], ids=["one-process", "three-processes"])
def forks(request, monkeypatch) -> tuple[int, list[int]]:
    """`lock` and `verify` on as many cores as the parameter; it, and the size of each pool they fork."""
    from sitegen.core import forkpool

    pools, pool = [], forkpool.forked_pool

    def counted(task, jobs, **kwargs):
        pools.append(jobs)
        return pool(task, jobs, **kwargs)

    monkeypatch.setattr(forkpool, "default_jobs", lambda: request.param)
    monkeypatch.setattr(forkpool, "forked_pool", counted)
    return request.param, pools


def test_a_lock_on_any_number_of_processes_equals_a_lock_from_scratch(registry, forks):
    (registry / LOCK_NAME).unlink()
    assert cli("lock", registry).exit_code == 0
    assert len(_stored(registry)) == len({p.parent for p in registry.rglob("*.json") if p.name != LOCK_NAME}) > 1
    assert (registry / LOCK_NAME).read_bytes() == lock_contents(open_registry(registry, check_lock_file=False))
    # Again after an edit, from the summaries the processes sent back.
    _edit_latency(_a_run(registry))
    assert cli("lock", registry).exit_code == 0
    assert (registry / LOCK_NAME).read_bytes() == lock_contents(open_registry(registry, check_lock_file=False))
    assert cli("verify", registry).exit_code == 0
    jobs, pools = forks
    assert pools == ([] if jobs == 1 else [jobs] * 3)


def test_a_lock_forks_only_for_folders_with_a_file_to_read(registry, monkeypatch):
    # After a one-run edit every other folder's files are known by their stat: looked up in this
    # process, with no pool forked to send their summaries back.
    from sitegen.core import forkpool
    from sitegen.state import filestats

    pools, pool = [], forkpool.forked_pool
    monkeypatch.setattr(forkpool, "default_jobs", lambda: 3)
    monkeypatch.setattr(forkpool, "forked_pool", lambda task, jobs, **kw: pools.append(jobs) or pool(task, jobs, **kw))
    monkeypatch.setattr(filestats, "_clock", lambda: time.time_ns() + 60 * 10**9)  # every file is old enough to vouch
    reads, read = [], summaries.read_regular
    monkeypatch.setattr(summaries, "read_regular", lambda name, *a, **k: reads.append(name) or read(name, *a, **k))
    (registry / LOCK_NAME).unlink()
    assert cli("lock", registry).exit_code == 0
    assert pools == [3]
    pools.clear()
    assert cli("lock", registry).exit_code == 0
    assert pools == [] and reads == []
    _edit_latency(_a_run(registry))
    assert cli("lock", registry).exit_code == 0
    assert pools == [] and reads == [str(_a_run(registry))]
    assert (registry / LOCK_NAME).read_bytes() == lock_contents(open_registry(registry, check_lock_file=False))


_LOCK_IMPORTS = """
import sys
from sitegen.state import filestats
filestats._clock = lambda: filestats.time.time_ns() + 60 * 10**9
from sitegen.cli.main import main
main(["lock", sys.argv[1]], standalone_mode=False)
print(sorted(m for m in ("pydantic", "sitegen.format.model") if m in sys.modules))
"""


def test_a_lock_that_validates_nothing_imports_no_models(registry):
    # The models (pydantic) were a quarter of a lock that takes every document from the build state.
    import subprocess
    import sys

    def imported() -> str:
        done = subprocess.run([sys.executable, "-c", _LOCK_IMPORTS, str(registry)], capture_output=True, text=True, check=True)
        return done.stdout.strip()

    imported()  # the first lock validates every document
    assert imported() == "[]"


def test_a_bad_file_is_reported_as_by_verify_full_on_any_number_of_processes(registry, forks):
    _a_run(registry).write_text('{"apiVersion": 1}')
    cached, full = cli("verify", registry), cli("verify", "--full", registry)
    assert cached.exit_code == full.exit_code == 1
    assert problem_lines(cached) == problem_lines(full) != []


def test_a_loading_process_killed_fails_the_lock_with_one_line(registry, monkeypatch):
    import os
    import signal

    from sitegen.core import forkpool

    parent, summarize = os.getpid(), summaries._summarize_folder

    def dies_in_a_worker(*args):
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        return summarize(*args)

    monkeypatch.setattr(forkpool, "default_jobs", lambda: 2)
    monkeypatch.setattr(summaries, "_summarize_folder", dies_in_a_worker)
    before = (registry / LOCK_NAME).read_bytes()
    result = cli("lock", registry)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert problem_lines(result) == [f"{registry}: $: a process loading records died (out of memory?); nothing was changed"]
    assert (registry / LOCK_NAME).read_bytes() == before
    monkeypatch.setattr(summaries, "_summarize_folder", summarize)
    assert cli("lock", registry).exit_code == 0


_SLOW_LOCK = """
import os, sys, time
from pathlib import Path
from sitegen.core import forkpool

from sitegen.state import summaries
parent, summarize, seen = os.getpid(), summaries._summarize_folder, Path(sys.argv[2])

def slow(*args):
    if os.getpid() != parent:
        (seen / str(os.getpid())).touch()
        time.sleep(60)
    return summarize(*args)

forkpool.default_jobs = lambda: 2
summaries._summarize_folder = slow
from sitegen.cli.main import main
sys.argv = ["sitegen", "lock", sys.argv[1]]
main()
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has let go of everything


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
def test_workers_die_with_a_killed_lock_and_leave_the_registry_unlocked(registry, tmp_path):
    # As the OOM killer would kill the parent: workers left running would hold the
    # registry's write lock they inherited, and refuse every later write.
    import os
    import signal
    import subprocess
    import sys
    import time

    seen = tmp_path / "workers"
    seen.mkdir()
    lock = subprocess.Popen([sys.executable, "-c", _SLOW_LOCK, str(registry), str(seen)])
    deadline = time.monotonic() + 60
    while not any(seen.iterdir()) and time.monotonic() < deadline and lock.poll() is None:
        time.sleep(0.05)
    workers = [int(p.name) for p in seen.iterdir()]
    assert workers, "no worker started"
    os.kill(lock.pid, signal.SIGKILL)
    lock.wait()
    deadline = time.monotonic() + 10
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(pid) for pid in workers)
    assert cli("lock", registry).exit_code == 0
