"""What docs/registries.md promises about registry transactions and the writer lock, in process.

- A transaction lands completely or not at all: an exception inside it, a file that cannot be
  put in place, or a `new` file that exists by the commit leaves the registry as it was, and
  names the file.
- A journal without COMMITTED is rolled back, one with it is rolled forward, by the next
  command on the registry; a COMMITTED list that is not a list of relative paths is no
  journal this registry wrote, and nothing of it lands.
- One writer at a time: a second writer says once that it is waiting, and gives up with one
  line after SITEGEN_LOCK_TIMEOUT seconds (default 120; an unreadable value is the default).
- Registry files are read as every input: bounded, and never through a link out of the registry.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import threading
import time

import pytest

from sitegen.registry import transaction
from sitegen.core.problems import InputError
from sitegen.registry.transaction import COMMITTED, JOURNAL, STAGED, Transaction, recover, registry_transaction, writer_lock


def _problems(caught) -> list[tuple[str, str]]:
    # Each problem is about a whole file: its JSON path is "$" (the line reads "FILE: $: MESSAGE").
    assert all(p.path == "$" for p in caught.value.problems), caught.value.problems
    return [(p.file, p.message) for p in caught.value.problems]


def _plant_journal(root, files: dict[str, bytes], committed: list[str] | None):
    for relative, data in files.items():
        path = root / JOURNAL / STAGED / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    if committed is not None:
        (root / JOURNAL / COMMITTED).write_text(json.dumps(committed))


def _tree(root) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# --- landing completely or not at all ---------------------------------------------------------

def test_a_transaction_lands_every_file_and_leaves_no_journal(tmp_path):
    root = tmp_path / "records"
    with registry_transaction(root) as txn:
        txn.write("runs/deep/a.json", b"a")
        txn.write("b.json", b"b")
        assert not (root / "b.json").exists()  # nothing lands before the commit
    assert _tree(root) == {"b.json": b"b", "runs/deep/a.json": b"a"}


def test_an_exception_inside_lands_nothing(tmp_path):
    root = tmp_path / "records"
    with pytest.raises(RuntimeError):
        with registry_transaction(root) as txn:
            txn.write("runs/a.json", b"a")
            raise RuntimeError("stop")
    assert list(root.iterdir()) == []


def test_an_exception_inside_an_existing_registry_leaves_it_byte_identical(tmp_path):
    root = tmp_path / "records"
    (root / "runs").mkdir(parents=True)
    (root / "runs" / "a.json").write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with registry_transaction(root) as txn:
            txn.write("runs/a.json", b"new")
            raise RuntimeError("stop")
    assert _tree(root) == {"runs/a.json": b"old"} and not (root / JOURNAL).exists()


def test_a_transaction_that_writes_nothing_makes_no_folder(tmp_path):
    root = tmp_path / "records"
    with registry_transaction(root):
        pass
    assert not root.exists()


def test_a_registry_folder_that_cannot_be_made_is_one_line(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(InputError) as caught:
        with registry_transaction(tmp_path / "file" / "records"):
            pass
    [(file, message)] = _problems(caught)
    assert file == str(tmp_path / "file" / "records") and message.startswith("cannot create the registry folder: ")


def test_a_new_file_is_written_when_nothing_is_there(tmp_path):
    root = tmp_path / "records"
    with registry_transaction(root) as txn:
        txn.write("runs/a.json", b"a", new=True)
    assert (root / "runs" / "a.json").read_bytes() == b"a"


def test_an_existing_file_is_overwritten_unless_written_as_new(tmp_path):
    root = tmp_path / "records"
    root.mkdir()
    (root / "a.json").write_bytes(b"old")
    with registry_transaction(root) as txn:
        txn.write("a.json", b"new")
    assert (root / "a.json").read_bytes() == b"new"


def test_every_existing_new_file_is_named(tmp_path):
    root = tmp_path / "records"
    root.mkdir()
    for name in ("b.json", "a.json"):
        (root / name).write_bytes(b"old")
    with pytest.raises(InputError) as caught:
        with registry_transaction(root) as txn:
            txn.write("b.json", b"new", new=True)
            txn.write("a.json", b"new", new=True)
            txn.write("c.json", b"new", new=True)
    assert _problems(caught) == [(str(root / "a.json"), "file exists; not overwritten"),
                                 (str(root / "b.json"), "file exists; not overwritten")]
    assert _tree(root) == {"a.json": b"old", "b.json": b"old"}


def test_a_file_that_cannot_be_put_in_place_is_refused_before_the_commit(tmp_path):
    root = tmp_path / "records"
    (root / "runs" / "x.json").mkdir(parents=True)  # a folder where a file would go
    (root / "notes").write_bytes(b"a file where a folder would go")
    with pytest.raises(InputError) as caught:
        with registry_transaction(root) as txn:
            txn.write("ok.json", b"ok")
            txn.write("runs/x.json", b"x")
            txn.write("notes/deep/n.json", b"n")
    assert _problems(caught) == [
        (str(root / "notes" / "deep" / "n.json"), f"cannot write: {root / 'notes'} is a file, not a folder"),
        (str(root / "runs" / "x.json"), "cannot write: Is a directory"),
    ]
    assert not (root / "ok.json").exists() and not (root / JOURNAL).exists()


def test_a_link_to_a_folder_is_no_folder_in_the_way(tmp_path):
    root = tmp_path / "records"
    root.mkdir()
    (tmp_path / "elsewhere").mkdir()
    (root / "a.json").symlink_to(tmp_path / "elsewhere")
    with registry_transaction(root) as txn:
        txn.write("a.json", b"a")
    assert (root / "a.json").read_bytes() == b"a" and not (root / "a.json").is_symlink()


def test_a_full_disk_while_staging_names_the_file_and_lands_nothing(tmp_path, monkeypatch):
    root = tmp_path / "records"
    root.mkdir()
    real_fsync = os.fsync

    def full(fd):
        raise OSError(28, "No space left on device")

    with pytest.raises(InputError) as caught:
        with registry_transaction(root) as txn:
            txn.write("a.json", b"a")
            monkeypatch.setattr(os, "fsync", full)
            txn.write("b.json", b"b")
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert _problems(caught) == [(str(root / "b.json"), "cannot write: No space left on device")]
    assert _tree(root) == {}


def test_a_commit_that_cannot_be_written_lands_nothing(tmp_path, monkeypatch):
    root = tmp_path / "records"
    root.mkdir()

    def refuse(path, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(transaction, "write_atomic", refuse)
    with pytest.raises(InputError) as caught:
        with registry_transaction(root) as txn:
            txn.write("a.json", b"a")
    assert _problems(caught) == [(str(root), "cannot write: No space left on device")]
    assert _tree(root) == {}


def test_the_committed_list_names_every_staged_path_in_order(tmp_path, monkeypatch):
    root = tmp_path / "records"
    seen = []
    real = transaction._finish

    def finish(where):
        seen.append(json.loads((where / JOURNAL / COMMITTED).read_text()))
        real(where)

    monkeypatch.setattr(transaction, "_finish", finish)
    with registry_transaction(root) as txn:
        txn.write("runs/b.json", b"b")
        txn.write("a.json", b"a", new=True)
    assert seen[-1] == ["a.json", "runs/b.json"]


# --- journals left by a killed writer ------------------------------------------------------------

def test_a_committed_journal_is_rolled_forward_by_the_next_command(tmp_path):
    root = tmp_path / "records"
    root.mkdir()
    (root / "a.json").write_bytes(b"old")
    _plant_journal(root, {"a.json": b"new", "runs/deep/b.json": b"b"}, ["a.json", "runs/deep/b.json", "gone.json"])
    recover(root)
    assert _tree(root) == {"a.json": b"new", "runs/deep/b.json": b"b"}


def test_a_journal_without_commit_is_rolled_back(tmp_path):
    root = tmp_path / "records"
    root.mkdir()
    (root / "a.json").write_bytes(b"old")
    _plant_journal(root, {"a.json": b"new"}, None)
    recover(root)
    assert _tree(root) == {"a.json": b"old"}


def test_a_journal_is_finished_before_a_new_transaction_begins(tmp_path):
    root = tmp_path / "records"
    root.mkdir()
    _plant_journal(root, {"a.json": b"committed"}, ["a.json"])
    with registry_transaction(root) as txn:
        assert (root / "a.json").read_bytes() == b"committed" and not (root / JOURNAL).exists()
        txn.write("b.json", b"b")
    assert _tree(root) == {"a.json": b"committed", "b.json": b"b"}


@pytest.mark.parametrize("listing", ['{"a.json": 1}', '["a.json", 3]', '["a.json", ""]', "not json", '["a.json"'])
def test_a_committed_list_that_is_not_a_list_of_paths_lands_nothing(tmp_path, listing):
    root = tmp_path / "records"
    root.mkdir()
    _plant_journal(root, {"a.json": b"a"}, None)
    (root / JOURNAL / COMMITTED).write_text(listing)
    recover(root)
    assert _tree(root) == {}


def test_a_committed_marker_that_is_a_folder_is_no_commit(tmp_path):
    root = tmp_path / "records"
    root.mkdir()
    _plant_journal(root, {"a.json": b"a"}, None)
    (root / JOURNAL / COMMITTED).mkdir()
    recover(root)
    assert _tree(root) == {}


def test_a_path_that_cannot_be_finished_is_one_line_and_the_journal_stays(tmp_path):
    root = tmp_path / "records"
    root.mkdir()
    (root / "runs").write_bytes(b"a file where a folder would go")
    _plant_journal(root, {"runs/a.json": b"a"}, ["runs/a.json"])
    with pytest.raises(InputError) as caught:
        recover(root)
    [(file, message)] = _problems(caught)
    assert file == str(root / "runs" / "a.json")
    assert message == f"cannot finish an interrupted write: {os.strerror(errno.EEXIST)}; fix this path and run the command again"
    assert (root / JOURNAL / COMMITTED).exists()
    (root / "runs").unlink()
    recover(root)
    assert _tree(root) == {"runs/a.json": b"a"}


def test_recover_without_a_journal_takes_no_lock(tmp_path, monkeypatch):
    root = tmp_path / "records"
    root.mkdir()
    monkeypatch.setattr(transaction, "writer_lock", lambda _: pytest.fail("locked"))
    recover(root)


def test_recover_inside_the_process_own_transaction_leaves_its_journal(tmp_path):
    root = tmp_path / "records"
    with registry_transaction(root) as txn:
        txn.write("a.json", b"a")
        recover(root)  # as open_registry does inside a transaction
        assert (root / JOURNAL / STAGED / "a.json").exists()
    assert _tree(root) == {"a.json": b"a"}


# --- one writer at a time ---------------------------------------------------------------------

def _held_elsewhere(root):
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def test_a_second_writer_says_once_it_waits_and_gives_up_after_the_timeout(tmp_path, monkeypatch, capsys):
    root = tmp_path / "records"
    root.mkdir()
    monkeypatch.setenv("SITEGEN_LOCK_TIMEOUT", "0.3")
    fd = _held_elsewhere(root)
    try:
        started = time.monotonic()
        with pytest.raises(InputError) as caught:
            with writer_lock(root):
                pass
        waited = time.monotonic() - started
    finally:
        os.close(fd)
    assert 0.3 <= waited < 5
    assert _problems(caught) == [(str(root), "another sitegen command is still writing to this registry after 0.3 s; "
                                             "try again when it has finished")]
    assert capsys.readouterr().err == f"{root}: waiting for another sitegen command writing to this registry…\n"


def test_a_second_writer_goes_on_when_the_first_lets_go(tmp_path, monkeypatch, capsys):
    root = tmp_path / "records"
    root.mkdir()
    monkeypatch.setenv("SITEGEN_LOCK_TIMEOUT", "30")
    fd = _held_elsewhere(root)
    threading.Timer(0.3, os.close, [fd]).start()
    started = time.monotonic()
    with writer_lock(root):
        got = time.monotonic() - started
    assert 0.25 <= got < 5
    assert capsys.readouterr().err.count("waiting") == 1


def test_the_lock_is_let_go_after_the_transaction(tmp_path, monkeypatch):
    root = tmp_path / "records"
    monkeypatch.setenv("SITEGEN_LOCK_TIMEOUT", "0")
    with registry_transaction(root) as txn:
        txn.write("a.json", b"a")
    os.close(_held_elsewhere(root))  # would raise BlockingIOError if still held
    assert transaction._held == {}


def test_the_same_process_may_take_its_own_lock_again(tmp_path, monkeypatch):
    root = tmp_path / "records"
    root.mkdir()
    monkeypatch.setenv("SITEGEN_LOCK_TIMEOUT", "0")
    with writer_lock(root):
        with writer_lock(tmp_path / "records" / ".." / "records"):
            pass
        # Still held after the inner block.
        with pytest.raises(BlockingIOError):
            _held_elsewhere(root)


def test_a_registry_folder_that_cannot_be_opened_is_one_line(tmp_path):
    with pytest.raises(InputError) as caught:
        with writer_lock(tmp_path / "missing"):
            pass
    [(file, message)] = _problems(caught)
    assert file == str(tmp_path / "missing") and message == "cannot open the registry folder: No such file or directory"


@pytest.mark.parametrize("value, seconds", [(None, 120.0), ("7.5", 7.5), ("soon", 120.0)])
def test_the_lock_timeout_is_read_from_the_environment(monkeypatch, value, seconds):
    if value is None:
        monkeypatch.delenv("SITEGEN_LOCK_TIMEOUT", raising=False)
    else:
        monkeypatch.setenv("SITEGEN_LOCK_TIMEOUT", value)
    assert transaction._timeout() == seconds


def test_the_lock_is_taken_on_the_registry_folder_without_inheritance(tmp_path, monkeypatch):
    root = tmp_path / "records"
    root.mkdir()
    calls, real_open = [], os.open

    def recording_open(path, flags, *args, **kwargs):
        calls.append((os.fspath(path), flags))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", recording_open)
    with writer_lock(root):
        pass
    [(path, flags)] = calls
    assert path == str(root.resolve()) and flags & os.O_DIRECTORY and flags & os.O_CLOEXEC


# --- reading the registry as every input -------------------------------------------------------

def test_read_gives_a_files_bytes_or_none(tmp_path):
    root = tmp_path / "records"
    (root / "runs").mkdir(parents=True)
    (root / "a.json").write_bytes(b"a")
    txn = Transaction(root)
    assert txn.read("a.json") == b"a"
    assert txn.read("missing.json") is None and txn.read("runs") is None


def test_read_refuses_a_link_out_of_the_registry(tmp_path):
    root = tmp_path / "records"
    root.mkdir()
    (tmp_path / "secret").write_bytes(b"s")
    (root / "a.json").symlink_to(tmp_path / "secret")
    with pytest.raises(InputError):
        Transaction(root).read("a.json")


def test_a_journal_that_cannot_be_removed_does_not_fail_a_write_that_landed(tmp_path, monkeypatch):
    # Reported as failed, the write would be run again, and a file written as new refused.
    root = tmp_path / "records"
    real_rmdir = os.rmdir

    def rmdir(path, *args, **kwargs):
        if os.fspath(path).endswith(JOURNAL):
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_rmdir(path, *args, **kwargs)

    monkeypatch.setattr(os, "rmdir", rmdir)
    with registry_transaction(root) as txn:
        txn.write("a.json", b"a", new=True)
    assert (root / "a.json").read_bytes() == b"a"
    monkeypatch.undo()
    recover(root)
    assert _tree(root) == {"a.json": b"a"} and not (root / JOURNAL).exists()
