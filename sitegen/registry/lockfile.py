"""digests.lock: the recorded digest of every document of a registry, read and written.

Read before any document is loaded, so an oversized, malformed or newer-format lock is
refused at once with one line. No pydantic: the rerun harness extends the lock too.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from sitegen.core.problems import InputError, Problem, json_path
from sitegen.core.strictjson import read_file

LOCK_NAME = "digests.lock"

LOCK_FORMAT = 1
# The lock holds one line per document (about 130 bytes at typical name lengths), so the
# 4 MiB bound on manifests would stop a registry near 30,000 documents. Its own bound
# leaves room for about a million; `sitegen lock` refuses to write a bigger one.
MAX_LOCK_BYTES = 128 * 1024 * 1024
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def read_lock(root: Path) -> dict[str, str] | None:
    """``kind/name -> digest`` from digests.lock, or None if there is none.

    Read before any document is loaded: an oversized, malformed or newer-format lock is
    refused at once with one line, not after the whole registry was parsed.
    """
    path = root / LOCK_NAME
    if not path.exists() and not path.is_symlink():
        return None
    data = read_file(path, MAX_LOCK_BYTES, registry=root)
    name = str(path)
    if not isinstance(data, dict):
        raise InputError([Problem(name, "$", "lock file must be a JSON object")])
    version = data.get("formatVersion")
    if version != LOCK_FORMAT:
        if isinstance(version, int) and not isinstance(version, bool) and version > LOCK_FORMAT:
            raise InputError([Problem(name, "$.formatVersion", f"lock format {version} was written by a newer sitegen (this one reads format {LOCK_FORMAT}); upgrade sitegen")])
        raise InputError([Problem(name, "$.formatVersion", f"must be {LOCK_FORMAT}")])
    unknown = sorted(set(data) - {"formatVersion", "documents"})
    if unknown:
        raise InputError([Problem(name, json_path([unknown[0]]), "unknown field")])
    documents = data.get("documents")
    if not isinstance(documents, dict):
        raise InputError([Problem(name, "$.documents", "lock file must map kind/name to digest")])
    for key, digest in documents.items():
        if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
            raise InputError([Problem(name, json_path(["documents", key]), "must be a digest: 'sha256:' and 64 lowercase hex digits")])
    return documents


def lock_bytes(documents: dict[str, str]) -> bytes:
    """digests.lock for ``kind/name -> digest``: keys sorted, one-space indent."""
    ordered = {key: documents[key] for key in sorted(documents)}
    return (json.dumps({"formatVersion": LOCK_FORMAT, "documents": ordered}, indent=1) + "\n").encode()


def checked_lock_bytes(root: Path, documents: dict[str, str]) -> bytes:
    """lock_bytes, refused (one Problem) when build and verify could not read it back."""
    data = lock_bytes(documents)
    if len(data) > MAX_LOCK_BYTES:
        raise InputError([Problem(str(root / LOCK_NAME), "$", f"the lock of {len(documents)} documents would be {len(data)} bytes, over the {MAX_LOCK_BYTES}-byte limit; split the registry")])
    return data


# Above this many documents of one kind of change, `lock` prints their count instead of a line each.
LISTED_CHANGES = 20


def lock_changes(previous: dict[str, str], current: dict[str, str]) -> dict[str, list[str]]:
    """``kind/name`` of the documents added, changed (another digest) and removed since ``previous``, sorted."""
    return {
        "added": sorted(set(current) - set(previous)),
        "changed": sorted(k for k in set(current) & set(previous) if current[k] != previous[k]),
        "removed": sorted(set(previous) - set(current)),
    }


def change_lines(changes: dict[str, list[str]]) -> list[str]:
    """One line per document, or one count line for a kind of change with more than LISTED_CHANGES."""
    lines = []
    for what, keys in changes.items():
        if len(keys) > LISTED_CHANGES:
            lines.append(f"{what}: {len(keys)} documents")
        else:
            lines += [f"{what}: {key}" for key in keys]
    return lines
