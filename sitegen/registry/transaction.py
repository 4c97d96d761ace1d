"""Registry writes that land completely or not at all, one writer at a time.

Design: a redo journal inside the registry. A transaction stages every new file under
``.sitegen-txn/files/`` (a hidden folder, which the loader never reads), then writes
``.sitegen-txn/COMMITTED`` (the list of staged paths) in one atomic rename: that rename
is the commit point. Only then are the staged files renamed into place, and the journal
removed. A process killed before the commit point leaves the registry untouched; one
killed after it leaves a journal that the next sitegen command on the registry (of any
kind: verify, build, lock, import, attest, rerun) finishes by renaming the remaining
staged files. Without COMMITTED, the next command deletes the staging folder.

Writers serialize through flock(2) on the registry folder itself (no lock file to leave
behind). A second writer says it is waiting, and gives up with one line after
SITEGEN_LOCK_TIMEOUT seconds (default 120). No pydantic: the rerun harness uses this.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from sitegen.core.atomicwrite import write_atomic
from sitegen.core.inputfile import read_regular
from sitegen.registry.lockfile import MAX_LOCK_BYTES
from sitegen.core.problems import InputError, Problem

JOURNAL = ".sitegen-txn"
COMMITTED = "COMMITTED"
STAGED = "files"

# Registries this process holds the writer lock of: flock is per open file, so taking it a
# second time from the same process (open_registry inside a transaction) would deadlock.
_held: dict[Path, int] = {}


def _timeout() -> float:
    try:
        return float(os.environ.get("SITEGEN_LOCK_TIMEOUT", "120"))
    except ValueError:
        return 120.0


@contextmanager
def writer_lock(root: Path) -> Iterator[None]:
    """Hold the registry's writer lock; wait for another writer, or refuse after the timeout."""
    key = root.resolve()
    if key in _held:
        yield
        return
    try:
        fd = os.open(key, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise InputError([Problem(str(root), "$", f"cannot open the registry folder: {exc.strerror}")]) from None
    try:
        deadline, told = time.monotonic() + _timeout(), False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise InputError([Problem(str(root), "$", f"another sitegen command is still writing to this registry after {_timeout():g} s; try again when it has finished")]) from None
                if not told:
                    print(f"{root}: waiting for another sitegen command writing to this registry…", file=sys.stderr, flush=True)
                    told = True
                time.sleep(0.05)
        _held[key] = fd
        try:
            yield
        finally:
            del _held[key]
    finally:
        os.close(fd)


def _committed_paths(journal: Path) -> list[str] | None:
    marker = journal / COMMITTED
    if not marker.is_file():
        return None
    try:
        paths = json.loads(read_regular(marker, 64 * 1024 * 1024))
    except (InputError, ValueError):
        return None
    if not isinstance(paths, list) or not all(isinstance(p, str) and _inside(p) for p in paths):
        return None
    return paths


def _inside(relative: str) -> bool:
    path = PurePosixPath(relative)
    return bool(relative) and not path.is_absolute() and ".." not in path.parts


def _finish(root: Path) -> None:
    """Roll a journal forward (committed) or back (not committed); then remove it."""
    journal = root / JOURNAL
    paths = _committed_paths(journal)
    for relative in paths or []:
        staged = journal / STAGED / relative
        if staged.is_file():
            target = root / relative
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(staged, target)
            except OSError as exc:
                raise InputError([Problem(str(target), "$", f"cannot finish an interrupted write: {exc.strerror or exc}; fix this path and run the command again")]) from None
    shutil.rmtree(journal, ignore_errors=True)


def _blocked(root: Path, relative: str) -> str | None:
    """Why ``relative`` cannot be renamed into place, checked before the commit point."""
    target = root / relative
    if target.is_dir() and not target.is_symlink():
        return "Is a directory"
    for parent in PurePosixPath(relative).parents:
        folder = root / parent
        if folder.exists() and not folder.is_dir():
            return f"{folder} is a file, not a folder"
    return None


def recover(root: Path) -> None:
    """Finish or undo an interrupted transaction, if any; cheap when there is none."""
    # Inside this process's own transaction the journal is the one being written.
    if not (root / JOURNAL).exists() or root.resolve() in _held:
        return
    with writer_lock(root):
        if (root / JOURNAL).exists():
            _finish(root)


class Transaction:
    """Files to put into a registry; see the module docstring for how they land."""

    def __init__(self, root: Path):
        self.root = root
        self.staged: dict[str, bool] = {}

    def read(self, relative: str) -> bytes | None:
        """The bytes ``relative`` holds in the registry now, or None if it is no file."""
        path = self.root / relative
        if not path.is_file():
            return None
        # As every input (sitegen.core.inputfile): bounded (a link to /proc/self/pagemap is a "file"), never a file outside.
        return read_regular(path, MAX_LOCK_BYTES, registry=self.root)

    def write(self, relative: str, data: bytes, *, new: bool = False) -> None:
        """Stage ``data`` for ``relative``; ``new``: refuse at commit if the file exists by then."""
        staged = self.root / JOURNAL / STAGED / relative
        try:
            staged.parent.mkdir(parents=True, exist_ok=True)
            with open(staged, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        except OSError as exc:
            raise InputError([Problem(str(self.root / relative), "$", f"cannot write: {exc.strerror or exc}")]) from None
        self.staged[relative] = new

    def _commit(self) -> None:
        if not self.staged:
            return
        exists = sorted(r for r, new in self.staged.items() if new and (self.root / r).exists())
        if exists:
            raise InputError([Problem(str(self.root / r), "$", "file exists; not overwritten") for r in exists])
        blocked = {r: why for r in sorted(self.staged) if (why := _blocked(self.root, r))}
        if blocked:
            raise InputError([Problem(str(self.root / r), "$", f"cannot write: {why}") for r, why in blocked.items()])
        journal = self.root / JOURNAL
        try:
            write_atomic(journal / COMMITTED, (json.dumps(sorted(self.staged)) + "\n").encode())
        except OSError as exc:
            raise InputError([Problem(str(self.root), "$", f"cannot write: {exc.strerror or exc}")]) from None
        _finish(self.root)


@contextmanager
def registry_transaction(root: Path) -> Iterator[Transaction]:
    """Lock ``root``, finish any interrupted transaction, and yield a new one.

    It commits when the block ends normally; on any exception nothing staged lands.
    """
    created = not root.exists()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError([Problem(str(root), "$", f"cannot create the registry folder: {exc.strerror or exc}")]) from None
    with writer_lock(root):
        if (root / JOURNAL).exists():
            _finish(root)
        txn = Transaction(root)
        try:
            yield txn
            txn._commit()
        finally:
            # After a commit the journal is already gone; otherwise this is the rollback.
            if not (root / JOURNAL / COMMITTED).exists():
                shutil.rmtree(root / JOURNAL, ignore_errors=True)
    if created and not any(root.iterdir()):
        root.rmdir()  # nothing landed: leave no empty registry folder behind
