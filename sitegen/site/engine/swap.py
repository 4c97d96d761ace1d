"""Put a built site in place without ever losing the previous one or a file sitegen did not write.

The site is written into a fresh folder beside the output, then swapped in with one
renameat2(RENAME_EXCHANGE) on Linux: ``--out`` names the old site or the new one at every
instant, never nothing. Where the call is missing (other systems, some file systems) two
renames do it, with a gap of a few microseconds; a build killed inside that gap leaves the
old site as ``.X.previous-*``, which the next build puts back. The next build also removes
every ``.X.building-*``, ``.X.previous-*`` and ``.X.starting-*`` folder that no running
build holds (each build holds an flock on its own folder).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import shutil
import sys
import tempfile
from pathlib import Path

from sitegen.site.engine.marker import MARKER, marker_files, read_marker

# Every folder of a site is rwxr-xr-x whatever the umask. Under the usual umask (022) a
# folder made by anyone (this writer, a worker, Pagefind) already is, so only the
# staging folder (mkdtemp's 0700) needs changing; a walk over 60,000 run folders to
# chmod each was a second of a one-run edit's build.
FOLDER_MODE = 0o755
_USUAL_UMASK = 0o022


def _umask() -> int:
    mask = os.umask(_USUAL_UMASK)
    os.umask(mask)
    return mask


def open_folders(top: Path) -> None:
    if _umask() != _USUAL_UMASK:
        for folder, _, _ in os.walk(top):
            os.chmod(folder, FOLDER_MODE)
    os.chmod(top, FOLDER_MODE)


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _renameat2():
    if not sys.platform.startswith("linux"):
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).renameat2  # glibc 2.28+
    except (AttributeError, OSError):
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    function.restype = ctypes.c_int
    return function


_RENAMEAT2 = _renameat2()


def exchange(a: Path, b: Path) -> bool:
    """Swap two folders atomically; False (nothing changed) where the system cannot."""
    if _RENAMEAT2 is None:
        return False
    if _RENAMEAT2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(code, os.strerror(code), str(b))


def hold_output(out: Path) -> int | None:
    """The output lock: flock on the folder holding ``out``, so that builds into it run one at a time
    (a build brings the one standby up to date). None where that folder does not exist yet."""
    try:
        held = os.open(out.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
    except OSError:
        os.close(held)
        return None
    return held


def new_staging(out: Path) -> tuple[int, Path]:
    """A fresh, locked ``.X.building-*`` folder beside ``out``.

    Made as ``.X.starting-*``, locked, then renamed, so a .building- folder is always held
    while its build lives. Another build's clean_leftovers may remove a .starting- folder
    in the instant before it is locked; then this simply tries again.
    """
    for _ in range(10):
        starting = Path(tempfile.mkdtemp(prefix=f".{out.name}.starting-", dir=out.parent))
        try:
            held = _hold(starting)
        except FileNotFoundError:
            continue
        # Only the prefix changes: an --out named like "x.starting-1" has ".starting-" in it too.
        building = starting.with_name(f".{out.name}.building-" + starting.name.removeprefix(f".{out.name}.starting-"))
        try:
            os.rename(starting, building)
        except FileNotFoundError:
            os.close(held)
            continue
        return held, building
    raise OSError(errno.EAGAIN, "could not create a staging folder", str(out.parent))


def _hold(folder: Path) -> int:
    """Held until commit or abort: it tells another build that this folder is alive."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


def clean_leftovers(out: Path) -> None:
    """Remove the staging folders of killed builds of ``out``; put back a site lost in a gap."""
    prefixes = (f".{out.name}.building-", f".{out.name}.previous-", f".{out.name}.starting-")
    try:
        entries = sorted(out.parent.iterdir())
    except OSError:
        return
    for folder in entries:
        if not folder.name.startswith(prefixes) or folder.is_symlink() or not folder.is_dir():
            continue
        try:
            held = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a build that is running now
            if folder.name.startswith(prefixes[1]) and not out.exists() and not out.is_symlink() and read_marker(folder) is not None:
                os.rename(folder, out)
            elif read_marker(folder) is not None:
                remove_own(folder)
            else:
                # Killed before its marker was written: every file in it is this build's own.
                shutil.rmtree(folder, ignore_errors=True)
        finally:
            os.close(held)


def remove_own(folder: Path, own: set[str] | None = None) -> None:
    """Delete the previous site: only the files its marker lists (or ``own``, already read from it), then empty folders.

    One walk that never enters a linked folder, deciding by each entry's type as the
    folder listing gives it (no stat per file): a listed file reached through a link,
    or anything listed that is not a plain file, is left alone.
    """
    own = (marker_files(folder) or set()) if own is None else set(own)
    own.add(MARKER)
    folders, pending = [], [("", str(folder))]
    while pending:
        prefix, where = pending.pop()
        folders.append(where)
        try:
            with os.scandir(where) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        pending.append((prefix + entry.name + "/", entry.path))
                    elif prefix + entry.name in own and entry.is_file(follow_symlinks=False):
                        try:
                            os.unlink(entry.path)
                        except OSError:
                            pass
        except OSError:
            continue
    # Deepest first: each folder was listed after the one holding it.
    for where in reversed(folders):
        try:
            os.rmdir(where)
        except OSError:
            pass


def swap_in(staged: Path, out: Path) -> Path | None:
    """Put the site ``staged`` beside ``out`` in its place; returns the folder now holding the site it
    replaced (named as a staging folder, for the caller to keep as the standby or remove), or None."""
    open_folders(staged)
    if not out.exists():
        os.rename(staged, out)
        return None
    if not any(out.iterdir()):
        out.rmdir()
        os.rename(staged, out)
        return None
    return put_in_place(staged, out)


def put_in_place(new: Path, out: Path) -> Path:
    """Exchange the complete site ``new`` with the one in ``out``; returns ``new``, which now names the old one.

    Where the exchange is missing, two renames, with the old site parked as ``.X.previous-*``
    in between (clean_leftovers puts it back after a kill in that gap)."""
    os.chmod(new, FOLDER_MODE)
    if exchange(new, out):
        return new
    old = Path(tempfile.mkdtemp(prefix=f".{out.name}.previous-", dir=out.parent))
    old.rmdir()
    os.rename(out, old)
    os.rename(new, out)
    os.rename(old, new)
    return new
