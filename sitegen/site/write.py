"""Put a built site in place without ever losing the previous one or a file sitegen did not write.

The site is written into a fresh folder beside the output, then swapped in with one
renameat2(RENAME_EXCHANGE) on Linux: ``--out`` names the old site or the new one at every
instant, never nothing. Where the call is missing (other systems, some file systems) two
renames do it, with a gap of a few microseconds; a build killed inside that gap leaves the
old site as ``.X.previous-*``, which the next build puts back. The next build also removes
every ``.X.building-*``, ``.X.previous-*`` and ``.X.starting-*`` folder that no running
build holds (each build holds an flock on its own folder).

The marker file lists every file sitegen wrote, so a later build knows which files are
its own: it refuses an output folder without a marker, and refuses to replace one holding
files the marker does not list (someone put them there).
"""

from __future__ import annotations

import ctypes
import gzip
import errno
import fcntl
import json
import os
import shutil
import stat
import sys
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from sitegen.inputfile import read_regular
from sitegen.problems import InputError, Problem

MARKER = ".sitegen-site"
MAX_MARKER_BYTES = 256 * 1024 * 1024
# The list of a site's files is kept beside the marker in gzip shards of FILES_PER_LIST
# names (about 100 KB each), so neither the marker nor any file grows with the registry.
FILE_LISTS = ".sitegen-files/"
FILES_PER_LIST = 20000
MAX_LIST_BYTES = 64 * 1024 * 1024


def _marker(out: Path) -> dict | None:
    # Through read_regular: a marker that is a FIFO or a link to /dev/zero is no marker.
    try:
        data = json.loads(read_regular(out / MARKER, MAX_MARKER_BYTES).decode("utf-8"))
    except (InputError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _read_marker(out: Path) -> list[str] | None:
    """Every file the marker says sitegen wrote: those it lists itself, and those of its shards."""
    data = _marker(out)
    if data is None:
        return None
    files, lists = data.get("files", []), data.get("fileLists", [])
    if not isinstance(files, list) or not isinstance(lists, list) or "files" not in data and "fileLists" not in data:
        return None
    files = list(files)
    for name in lists:
        if not isinstance(name, str) or not name.startswith(FILE_LISTS) or _outside(name):
            return None
        try:
            # Bounded: a hand-made shard must not unpack into all of memory.
            unpack = zlib.decompressobj(16 + zlib.MAX_WBITS)
            listed = unpack.decompress(read_regular(out / name, MAX_LIST_BYTES), MAX_LIST_BYTES)
        except (InputError, zlib.error):
            return None
        if unpack.unconsumed_tail or not unpack.eof:
            return None
        try:
            files += [name, *listed.decode("utf-8").splitlines()]
        except UnicodeDecodeError:
            return None
    return files if all(isinstance(f, str) for f in files) else None


def _outside(relative: str) -> bool:
    # sitegen writes only plain relative paths below the output; an absolute path or a
    # ".." part in the marker can only have been put there by hand, and trusting it would
    # let a rebuild delete files outside --out.
    # The same test as PurePosixPath's is_absolute() and parts, without building a path
    # for each of a large site's files.
    return relative.startswith("/") or ".." in relative.split("/")


def _marker_files(out: Path) -> set[str] | None:
    """The files the marker says sitegen wrote, without any that would lie outside ``out``."""
    files = _read_marker(out)
    return None if files is None else {f for f in files if not _outside(f)}


def _present(out: Path) -> set[str]:
    """Every file below ``out``, relative and "/"-separated; a link counts as a file, never followed."""
    found, pending = set(), [("", str(out))]
    while pending:
        prefix, folder = pending.pop()
        with os.scandir(folder) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    pending.append((prefix + entry.name + "/", entry.path))
                else:
                    found.add(prefix + entry.name)
    return found


def _file_above(out: Path) -> Path | None:
    for parent in out.absolute().parents:
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def check_output(out: Path) -> set[str]:
    """Refuse an output path that is not a site sitegen built (an empty folder is fine).

    Returns the files present in it, the marker aside.
    """
    own = own_files(out)
    return set() if own is None else _none_foreign(out, own)


def own_files(out: Path) -> set[str] | None:
    """The files the marker of the site in ``out`` lists (None where there is no site yet).

    Refuses all that check_output refuses but foreign files, whose search walks every
    folder of the site (a second at 60,000 runs). A build needs that walk only where the
    site may be up to date (previous_build); otherwise the check before the swap
    (SiteWriter.commit) is the one walk. A build reads a large site's file list once for
    its up-to-date check and the files it may link.
    """
    blocker = _file_above(out)
    if blocker is not None:
        raise InputError([Problem(str(out), "$", f"cannot create the output folder: {blocker} is a file, not a folder; choose another --out")])
    if not out.exists() and not out.is_symlink():
        return None
    if out.is_symlink() or not out.is_dir():
        raise InputError([Problem(str(out), "$", "output exists and is not a folder; choose another --out")])
    if not any(out.iterdir()):
        return None
    listed = _read_marker(out)
    if listed is None:
        raise InputError([Problem(str(out), "$", f"output folder was not built by sitegen (no readable {MARKER}); choose another --out or empty it")])
    outside = sorted(f for f in listed if _outside(f))
    if outside:
        raise InputError([Problem(str(out / MARKER), "$.files", f"lists {outside[0]!r}, outside the folder, so sitegen did not write it; not a site sitegen built: choose another --out")])
    return set(listed)


def _none_foreign(out: Path, own: set[str]) -> set[str]:
    """The files present in ``out``, the marker aside, once sure that ``own`` lists them all."""
    # A link is never written by sitegen: count it as present (and so foreign unless
    # listed) instead of looking through it as rglob's is_dir() would.
    present = _present(out) - {MARKER}
    foreign = sorted(present - own)
    if foreign:
        raise InputError([Problem(str(out / foreign[0]), "$", f"not written by sitegen ({len(foreign)} such file(s)); move them out of {out} and build again")])
    return present


@dataclass(frozen=True)
class PreviousBuild:
    runs: int
    files: int


def previous_build(out: Path, inputs: str, listed: set[str] | None) -> PreviousBuild | None:
    """The site in ``out`` if it was built from ``inputs`` and still holds every file it wrote.

    ``listed``: what own_files found. Only then is the site walked, which also refuses
    files sitegen did not write, as check_output does. A file edited in place by hand is
    not noticed; deleting --out forces a full build.
    """
    marker = _marker(out) if listed is not None else None
    if marker is None or marker.get("inputs") != inputs or not isinstance(marker.get("runs"), int):
        return None
    if _none_foreign(out, listed) != listed:
        return None
    return PreviousBuild(marker["runs"], len(listed) + 1)


def _regular(path: Path) -> bool:
    # lstat: a link, a FIFO or a device is never lent, only a plain file.
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _same_bytes(path: Path, data: bytes) -> bool:
    try:
        # lstat: a link, a FIFO or a device is never lent, only a plain file.
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size != len(data):
            return False
        with open(path, "rb") as handle:
            return handle.read() == data
    except OSError:
        return False


class SiteWriter:
    """Collects files in a temporary folder; ``commit`` swaps it in, ``abort`` removes it.

    A file whose bytes equal those of the same file in the site being replaced is
    hard-linked from it instead of written again, so a rebuild writes only what changed
    (the old site's own names are removed at the swap; the links keep the data).
    """

    def __init__(self, out: Path, *, inputs: str | None = None, runs: int | None = None,
                 groups: dict[str, str] | None = None, listed: set[str] | None = None):
        self.out = out
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
            clean_leftovers(out)
            self._held, self.tmp = _new_staging(out)
        except OSError as exc:
            raise InputError([Problem(str(out), "$", f"cannot create the site beside it in {out.parent}: {exc.strerror or exc}")]) from None
        self.files: list[str] = []
        self._folders: set[str] = set()
        self.inputs, self.runs, self.groups = inputs, runs, groups
        # Only a site whose marker lists a file may lend it. ``listed``: the list own_files
        # read at the start of the build. A file someone put there since (a link in place
        # of a run's folder) is refused by check_output in commit, before the swap.
        self.previous = (listed if listed is not None else _marker_files(out)) if out.is_dir() else None
        before = (_marker(out) or {}) if self.previous else {}
        self.previous_groups: dict = before.get("groups") if isinstance(before.get("groups"), dict) else {}
        """The page-group keys of the site being replaced (sitegen.site.reuse)."""
        self.previous_group_files: dict = before.get("groupFiles") if isinstance(before.get("groupFiles"), dict) else {}
        self.group_files: dict[str, list[str]] = {}
        """The files of each operation's own pages (not its runs'), to be reused as a whole."""
        self.previous_page_keys = before.get("pageKeys")
        self.page_keys: dict[str, str] = {}
        """Listing page → the key it was rendered under (sitegen.site.rendermemo)."""

    def add(self, relative: str, data: bytes) -> None:
        path = os.path.join(self.tmp, relative)
        self._folder(relative)
        old = os.path.join(self.out, relative)
        if not (self.previous and relative in self.previous and _same_bytes(old, data) and _linked(old, path)):
            with open(path, "xb") as handle:
                handle.write(data)
        self.files.append(relative)

    def _folder(self, relative: str) -> None:
        # Each folder made once per process, not looked up again for each of its files.
        folder = relative.rpartition("/")[0]
        if folder and folder not in self._folders:
            where = os.path.join(self.tmp, folder)
            # Mostly a run's own folder inside one made before: one mkdir, not makedirs'
            # walk up the path (a tenth of a one-run edit's build at 60,000 runs).
            try:
                os.mkdir(where)
            except FileNotFoundError:
                os.makedirs(where, exist_ok=True)
            except FileExistsError:
                pass
            self._folders.add(folder)

    def reuse(self, relatives: list[str]) -> bool:
        """Hard-link files of the site being replaced, unread: the caller knows their bytes are current.

        All or nothing: False (and nothing added) when any of them cannot be linked.
        """
        done = []
        for relative in relatives:
            if not (self.previous and relative in self.previous):
                break
            self._folder(relative)
            path, old = os.path.join(self.tmp, relative), os.path.join(self.out, relative)
            if not _regular(old) or not _linked(old, path):
                break
            done.append(path)
        else:
            self.files.extend(relatives)
            return True
        for path in done:
            os.unlink(path)
        return False

    def adopt(self, relatives: list[str]) -> None:
        """Count files another process added to this writer's folder."""
        self.files.extend(relatives)

    def problem(self, exc: OSError) -> InputError:
        """A failed write (a full disk) as one line naming the file in ``out``, not the staging path."""
        where = str(exc.filename or self.out)
        if where.startswith(str(self.tmp)):
            where = str(self.out) + where[len(str(self.tmp)):]
        return InputError([Problem(where, "$", f"cannot write: {exc.strerror or exc}")])

    def abort(self) -> None:
        # The temporary folder and all in it are sitegen's own, created by this build.
        shutil.rmtree(self.tmp, ignore_errors=True)
        self._release()

    def _release(self) -> None:
        if self._held is not None:
            os.close(self._held)
            self._held = None

    def commit(self) -> None:
        files, lists = sorted(self.files), []
        for start in range(0, len(files), FILES_PER_LIST):
            name = f"{FILE_LISTS}{start // FILES_PER_LIST:04d}.txt.gz"
            text = "".join(f + "\n" for f in files[start:start + FILES_PER_LIST]).encode()
            # mtime 0: the same files give the same bytes.
            self.add(name, gzip.compress(text, mtime=0))
            lists.append(name)
        marker = {"generator": "sitegen", "fileLists": lists}
        if self.inputs is not None:
            marker.update(inputs=self.inputs, runs=self.runs)
        if self.groups:
            marker.update(groups=self.groups, groupFiles=self.group_files)
        if self.page_keys:
            marker.update(pageKeys=self.page_keys)
        self.add(MARKER, (json.dumps(marker, indent=1) + "\n").encode())
        _open_folders(self.tmp)
        check_output(self.out)
        if not self.out.exists():
            os.rename(self.tmp, self.out)
        elif not any(self.out.iterdir()):
            self.out.rmdir()
            os.rename(self.tmp, self.out)
        elif exchange(self.tmp, self.out):
            # self.tmp now names the previous site.
            _remove_own(self.tmp)
        else:
            old = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.previous-", dir=self.out.parent))
            old.rmdir()
            os.rename(self.out, old)
            os.rename(self.tmp, self.out)
            _remove_own(old)
        self._release()


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


def _open_folders(top: Path) -> None:
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


def _new_staging(out: Path) -> tuple[int, Path]:
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
        building = starting.with_name(starting.name.replace(".starting-", ".building-", 1))
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
            if folder.name.startswith(prefixes[1]) and not out.exists() and not out.is_symlink() and _read_marker(folder) is not None:
                os.rename(folder, out)
            elif _read_marker(folder) is not None:
                _remove_own(folder)
            else:
                # Killed before its marker was written: every file in it is this build's own.
                shutil.rmtree(folder, ignore_errors=True)
        finally:
            os.close(held)


def _linked(old: Path, new: Path) -> bool:
    try:
        os.link(old, new, follow_symlinks=False)
    except OSError:
        return False  # another file system, or links not supported: write it instead
    return True


def _remove_own(folder: Path) -> None:
    """Delete the previous site: only the files its marker lists, then empty folders.

    One walk that never enters a linked folder, deciding by each entry's type as the
    folder listing gives it (no stat per file): a listed file reached through a link,
    or anything listed that is not a plain file, is left alone.
    """
    own = _marker_files(folder) or set()
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
