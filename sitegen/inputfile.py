"""Reading an input file: regular files only, never more than a bound.

A FIFO named like a record would block ``open`` forever, and /dev/zero would be read
until memory runs out. So the file is opened with O_NONBLOCK (which makes opening a FIFO
return at once), checked with fstat on the open descriptor (no window between the check
and the read), and read up to ``limit`` + 1 bytes. No pydantic: the rerun harness uses it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from sitegen.problems import InputError, Problem

_KINDS = {
    stat.S_ISDIR: "a folder", stat.S_ISFIFO: "a FIFO (named pipe)", stat.S_ISCHR: "a character device",
    stat.S_ISBLK: "a block device", stat.S_ISSOCK: "a socket",
}


def kind_of(mode: int) -> str:
    for test, name in _KINDS.items():
        if test(mode):
            return name
    return "not a regular file"


def read_regular(path: Path | str, limit: int, display: str | None = None) -> bytes:
    """The bytes of ``path``; InputError (one Problem) if it is not a regular file or is over ``limit``."""
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
        size = info.st_size
        if size > limit:
            raise fail(f"file is {size} bytes, over the {limit}-byte limit")
        chunks, total = [], 0
        while total <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - total))
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


