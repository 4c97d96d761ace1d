"""Reading an input file: regular files only, never more than a bound.

A FIFO named like a record would block ``open`` forever, and /dev/zero would be read
until memory runs out. So the file is opened with O_NONBLOCK (which makes opening a FIFO
return at once), checked with fstat on the open descriptor (no window between the check
and the read), and read up to ``limit`` + 1 bytes. No pydantic: the rerun harness uses it.

A file read from a registry (``registry`` given) must also be in it once links are
resolved: a pull request to a registry that CI builds could otherwise add ``pages/x.md``
linked to a key file of the build machine and have it published. Where the file really is
is read from the open descriptor, so a link swapped in after a check cannot slip past.
``--allow-outside-links`` (outside_links_allowed) lifts that rule for the whole command.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from sitegen.core.problems import InputError, Problem

_KINDS = {
    stat.S_ISDIR: "a folder", stat.S_ISFIFO: "a FIFO (named pipe)", stat.S_ISCHR: "a character device",
    stat.S_ISBLK: "a block device", stat.S_ISSOCK: "a socket",
}


# One setting per command, set by --allow-outside-links before anything is read; a global
# rather than a parameter of every reader because the build's forked workers read files
# too, and they inherit it.
_outside_links_allowed = False


def allow_outside_links(allowed: bool = True) -> None:
    global _outside_links_allowed
    _outside_links_allowed = allowed


def outside_links_allowed() -> bool:
    return _outside_links_allowed


def real_root(registry: Path | str) -> str:
    return os.path.realpath(registry)


def opened_path(fd: int, path: Path | str) -> str:
    """Where the file open as ``fd`` really is (Linux knows it; elsewhere the path resolved now)."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(path)


def outside(fd: int, path: Path | str, root: str) -> str | None:
    """The real path of the file open as ``fd`` if it lies outside the real folder ``root`` and that is not allowed."""
    if _outside_links_allowed:
        return None
    real = opened_path(fd, path)
    return None if real == root or real.startswith(root.rstrip(os.sep) + os.sep) else real


def outside_message(real: str) -> str:
    return f"is a link to {real}, outside the registry; pass --allow-outside-links to read it"


def kind_of(mode: int) -> str:
    for test, name in _KINDS.items():
        if test(mode):
            return name
    return "not a regular file"


def read_regular(path: Path | str, limit: int, display: str | None = None, *, registry: Path | str | None = None) -> bytes:
    """The bytes of ``path``; InputError (one Problem) if it is not a regular file, is over ``limit``,
    or (``registry`` given) lies outside the folder ``registry``."""
    name = display or str(path)

    def fail(message: str) -> InputError:
        return InputError([Problem(name, "$", message)])

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise fail(f"cannot read file: {exc.strerror}") from None
    try:
        info = os.fstat(fd)
        mode = info.st_mode
        if not stat.S_ISREG(mode):
            raise fail(f"is {kind_of(mode)}, not a regular file")
        if registry is not None and (real := outside(fd, path, real_root(registry))) is not None:
            raise fail(outside_message(real))
        size = info.st_size
        if size > limit:
            raise fail(f"file is {size} bytes, over the {limit}-byte limit")
        chunks, total = [], 0
        while total <= limit:
            # Whole chunks, never a remainder: some files (/proc/self/pagemap) read only in multiples of 8.
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit:
            raise fail(f"file is over the {limit}-byte limit")
        return b"".join(chunks)
    except OSError as exc:
        raise fail(f"cannot read file: {exc.strerror}") from None
    finally:
        os.close(fd)


