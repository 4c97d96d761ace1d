"""Where a registry's caches live on this machine, and how their JSON files are read, written and pruned.

Every cache (digests, documents, rankings, rows) stands only for work already done here,
so it lives in the user's cache folder (SITEGEN_CACHE_DIR, else $XDG_CACHE_HOME/sitegen,
else ~/.cache/sitegen), never in the registry, and no checkout or pull request can bring
entries of its own. A cache file that cannot be read, or is of another format, is no
cache; one that cannot be written only costs the next run its speed.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from sitegen.atomicwrite import write_atomic
from sitegen.buildstate import cache_base


def cache_dir(root: Path, kind: str) -> Path:
    """The folder of the ``kind`` cache of the registry folder ``root``, named from its resolved path,
    so entries of other registries are never kept alive here."""
    return cache_base() / kind / hashlib.sha256(os.fsencode(root.resolve())).hexdigest()[:24]


def read_json(path: Path, version: int, field: str, **expected) -> dict:
    """``field`` of the JSON cache file at ``path``, {} unless its format is ``version`` and its other keys are ``expected``."""
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != version or any(data.get(k) != v for k, v in expected.items()):
        return {}
    value = data.get(field)
    return value if isinstance(value, dict) else {}


def write_json(path: Path, document: dict) -> None:
    try:
        write_atomic(path, json.dumps(document).encode())
    except OSError:
        pass


def prune(folder: Path, suffix: str, keep) -> None:
    """Delete the files of ``folder`` named ``*suffix`` that are not in ``keep``."""
    try:
        for entry in os.scandir(folder):
            if entry.name.endswith(suffix) and entry.name not in keep:
                os.unlink(entry.path)
    except OSError:
        pass
