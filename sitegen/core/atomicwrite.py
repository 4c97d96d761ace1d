"""Writes that never leave a half-written file: write beside, fsync, then rename."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def _temp_beside(path: Path, data: bytes) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one step."""
    tmp = _temp_beside(path, data)
    try:
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
