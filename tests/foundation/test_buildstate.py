"""The build state (sitegen.state.store) is a cache: a damaged, foreign, unwritable or half-written
database is no cache and never an error, and a command killed mid-write leaves it usable."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from manifest_edits import SMALL, cli, loads, registry  # noqa: F401 (loads, registry: fixtures)

from sitegen.state.store import FORMAT, open_state, state_path
from sitegen.registry.lockfile import LOCK_NAME
from sitegen.registry.folder import lock_contents, open_registry

RUN = "runs/liger-jsd-forward-torch-nvidia-b200-tokens4096-vocab128256-fp32-2026-05-27-17-14-35.json"


def _locks_from_scratch(root: Path) -> None:
    assert cli("lock", root).exit_code == 0
    assert (root / LOCK_NAME).read_bytes() == lock_contents(open_registry(root, check_lock_file=False))


def _edit(root: Path) -> None:
    run = root / RUN
    run.write_text(run.read_text().replace('"median": ', '"median": 1', 1))


def test_the_state_lives_in_the_cache_folder_never_in_the_registry(registry, tmp_path, monkeypatch):
    before = sorted(p.relative_to(registry) for p in registry.rglob("*"))
    assert cli("lock", registry).exit_code == 0
    assert sorted(p.relative_to(registry) for p in registry.rglob("*")) == before
    assert state_path(registry).is_relative_to(tmp_path / "cache") and state_path(registry).is_file()
    monkeypatch.delenv("SITEGEN_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert state_path(registry).is_relative_to(tmp_path / "xdg" / "sitegen")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert state_path(registry).is_relative_to(tmp_path / "home" / ".cache" / "sitegen")


def test_two_registries_have_a_state_each(registry, tmp_path):
    other = tmp_path / "other"
    shutil.copytree(SMALL, other)
    assert state_path(registry) != state_path(other)


@pytest.mark.parametrize("damage", ["not a database", "damaged pages"])
def test_a_damaged_database_is_made_again(registry, loads, damage):
    assert cli("lock", registry).exit_code == 0
    files = len(loads)
    path = state_path(registry)
    if damage == "not a database":
        path.write_bytes(b"not a database " * 1000)
    else:
        data = bytearray(path.read_bytes())
        assert len(data) > 8192
        for i in range(4096, len(data), 7):
            data[i] ^= 0x5A
        path.write_bytes(bytes(data))
    loads.clear()
    _edit(registry)
    _locks_from_scratch(registry)
    assert len(loads) >= 1
    # Made again, and whole: the next lock takes every file from it.
    loads.clear()
    _locks_from_scratch(registry)
    assert loads == []
    assert files > 1


def test_a_database_of_another_format_is_made_again(registry, loads):
    assert cli("lock", registry).exit_code == 0
    files = len(loads)
    with sqlite3.connect(state_path(registry)) as db:
        db.execute(f"PRAGMA user_version={FORMAT + 1}")
    db.close()
    loads.clear()
    _locks_from_scratch(registry)
    assert len(loads) == files
    loads.clear()
    _locks_from_scratch(registry)
    assert loads == []


def test_an_unwritable_cache_folder_is_no_error(registry, tmp_path, monkeypatch, loads):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("SITEGEN_CACHE_DIR", str(blocker))
    result = cli("lock", registry)
    assert result.exit_code == 0 and "Traceback" not in result.output
    files = len(loads)
    loads.clear()
    _locks_from_scratch(registry)
    assert len(loads) == files > 1


def test_a_state_opened_without_a_database_misses_and_drops_writes(registry):
    with open_state(None) as state:
        state.put_summaries({"runs": "{}"}, ["runs"])
        assert state.summaries() == {} and state.document_folders() == set()
    assert not state_path(registry).exists()


_KILLED_MID_WRITE = """
import os, signal, sys
from sitegen.state import store

execute = store.sqlite3.Connection.execute

class Dying(store.sqlite3.Connection):
    def execute(self, sql, *args):
        # Killed with the transaction's statements run but not committed.
        if sql == "COMMIT" and os.environ.get("DIE") == "1":
            os.kill(os.getpid(), signal.SIGKILL)
        return execute(self, sql, *args)

connect = store.sqlite3.connect
store.sqlite3.connect = lambda *a, **k: connect(*a, factory=Dying, **k)
from sitegen.cli.main import main
sys.argv = ["sitegen", "lock", sys.argv[1]]
main()
"""


def _lock_in_a_process(root: Path, *, die: bool) -> subprocess.CompletedProcess:
    env = {**os.environ, "DIE": "1" if die else "0"}
    return subprocess.run([sys.executable, "-c", _KILLED_MID_WRITE, str(root)], env=env, capture_output=True, timeout=120)


def test_a_lock_killed_mid_write_leaves_the_last_state(registry, loads):
    assert _lock_in_a_process(registry, die=False).returncode == 0
    with open_state(registry) as state:
        before = state.summaries()
    _edit(registry)
    killed = _lock_in_a_process(registry, die=True)
    assert killed.returncode == -9
    with sqlite3.connect(state_path(registry)) as db:
        assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.close()
    # The killed transaction is not there: the state is the one the last finished lock left.
    with open_state(registry) as state:
        assert state.summaries() == before
    _locks_from_scratch(registry)
    assert loads == [str(registry / RUN)]
    loads.clear()
    _locks_from_scratch(registry)
    assert loads == []


def test_a_database_another_command_is_writing_is_used_and_kept(registry, loads):
    assert cli("lock", registry).exit_code == 0
    with open_state(registry) as state:
        before = state.summaries()
    _edit(registry)
    holder = sqlite3.connect(state_path(registry), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another command mid-write, for longer than a lock waits
    try:
        loads.clear()
        _locks_from_scratch(registry)
        assert loads == [str(registry / RUN)]  # read while the other writes
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    # Not taken for damage: what it held is still there (this lock's write was dropped).
    with open_state(registry) as state:
        assert state.summaries() == before


def test_the_cache_files_it_replaced_are_deleted_for_this_registry_alone(registry, tmp_path):
    import hashlib

    def folders(root: Path) -> list[Path]:
        name = hashlib.sha256(os.fsencode(root.resolve())).hexdigest()[:24]
        return [tmp_path / "cache" / kind / name for kind in ("digests", "documents", "rankings", "rows", "explain")]

    other = tmp_path / "other"
    for folder in folders(registry) + folders(other):
        folder.mkdir(parents=True)
        (folder / "shard.json").write_text("{}")
    assert cli("lock", registry).exit_code == 0
    assert not any(folder.exists() for folder in folders(registry))
    assert all((folder / "shard.json").exists() for folder in folders(other))
