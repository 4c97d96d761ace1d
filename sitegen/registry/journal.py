"""The rerun journal: which files a rerun wrote into a registry, by path and digest, so that
`sitegen sign` signs by default exactly what a rerun measured and nothing planted beside it.

A hidden file of the registry folder (the loader never reads it): ``.sitegen-rerun-journal``,
``{"version": 1, "files": {relative path: "sha256:…" of its bytes}}``. A rerun reads the journal
before any measuring process starts and writes, with its records and in the same transaction,
what it read plus what it wrote: an entry that measured code added while the rerun ran is
overwritten, not kept. `sign` signs the runs of entries whose bytes are unchanged, reports the
others, and empties the journal. Code that keeps running as your user after the rerun can write anything you can,
the journal included; the journal stops a record planted during a rerun, not a compromised account.
No pydantic: the rerun harness uses this.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

JOURNAL = ".sitegen-rerun-journal"
VERSION = 1


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def parse(data: bytes | None) -> dict[str, str]:
    """The entries of a journal's bytes; an unreadable or foreign journal holds none (nothing is signed by default)."""
    if not data:
        return {}
    try:
        doc = json.loads(data)
    except ValueError:
        return {}
    files = doc.get("files") if isinstance(doc, dict) and doc.get("version") == VERSION else None
    if not isinstance(files, dict):
        return {}
    return {k: v for k, v in files.items() if isinstance(k, str) and isinstance(v, str)}


def read(root: Path) -> dict[str, str]:
    """The journal's entries as they are now: what a rerun keeps, read before it measures anything."""
    try:
        return parse((root / JOURNAL).read_bytes())
    except OSError:
        return {}


def render(entries: dict[str, str]) -> bytes:
    return (json.dumps({"version": VERSION, "files": dict(sorted(entries.items()))}, indent=1) + "\n").encode()
