"""What docs/registries.md promises about writes, one clause each.

- A transaction's staged files are on disk (fsynced) before its commit point, so a crash after
  the commit never lands an empty or torn file.
- A file written as new is never overwritten: if it exists by the commit, nothing lands.
- A journal never moves a file outside its registry, whatever its COMMITTED list says.
- On Linux, a build's new site is swapped in with one renameat2(RENAME_EXCHANGE): `--out`
  names the old site or the new one at every instant.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from sitegen.core.problems import InputError
from sitegen.site.engine import swap
from sitegen.registry.transaction import COMMITTED, JOURNAL, STAGED, recover, registry_transaction


def test_every_staged_file_is_synced_before_the_commit_point(tmp_path, monkeypatch):
    root = tmp_path / "records"
    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        return real_fsync(fd)

    def replace(src, dst, *args, **kwargs):
        events.append(("rename", os.fspath(dst)))
        return real_replace(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    with registry_transaction(root) as txn:
        txn.write("runs/a.json", b"{}\n")
        txn.write("runs/b.json", b"[]\n")
    commit = next(i for i, (kind, path) in enumerate(events) if kind == "rename" and path.endswith(f"{JOURNAL}/{COMMITTED}"))
    synced = {path for kind, path in events[:commit] if kind == "fsync"}
    for name in ("a.json", "b.json"):
        assert str(root / JOURNAL / STAGED / "runs" / name) in synced
    assert (root / "runs" / "a.json").read_bytes() == b"{}\n"


def test_a_file_written_as_new_is_never_overwritten_and_nothing_of_the_transaction_lands(tmp_path):
    root = tmp_path / "records"
    (root / "runs").mkdir(parents=True)
    (root / "runs" / "taken.json").write_text("original\n")
    with pytest.raises(InputError) as caught:
        with registry_transaction(root) as txn:
            txn.write("runs/other.json", b"{}\n")
            txn.write("runs/taken.json", b"replacement\n", new=True)
    [problem] = caught.value.problems
    assert problem.file == str(root / "runs" / "taken.json") and problem.message == "file exists; not overwritten"
    assert (root / "runs" / "taken.json").read_text() == "original\n"
    assert not (root / "runs" / "other.json").exists() and not (root / JOURNAL).exists()


@pytest.mark.parametrize("escape", ["../outside.json", "/tmp/sitegen-absolute-escape.json", "runs/../../outside.json"])
def test_a_journal_never_moves_a_file_outside_its_registry(tmp_path, escape):
    root = tmp_path / "records"
    staged = root / JOURNAL / STAGED
    (staged / "runs").mkdir(parents=True)
    (staged / "runs" / "fine.json").write_text("{}\n")
    # A planted staged file where the escaping path would find it inside the staging folder.
    (root / JOURNAL / "outside.json").write_text("planted\n")
    (root / JOURNAL / COMMITTED).write_text(json.dumps(["runs/fine.json", escape]))
    recover(root)
    assert not (tmp_path / "outside.json").exists()
    assert not os.path.exists("/tmp/sitegen-absolute-escape.json")
    # A list that names any path outside is not a journal this registry wrote: nothing of it lands.
    assert not (root / "runs" / "fine.json").exists()
    assert not (root / JOURNAL).exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux's")
def test_on_linux_the_new_site_is_exchanged_in_one_call(tmp_path):
    old, new = tmp_path / "site", tmp_path / ".site.building-x"
    old.mkdir()
    new.mkdir()
    (old / "index.html").write_text("old")
    (new / "index.html").write_text("new")
    assert swap.exchange(new, old) is True
    assert (old / "index.html").read_text() == "new" and (new / "index.html").read_text() == "old"
