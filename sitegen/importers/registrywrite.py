"""Put an import's files into a registry folder: only changed bytes, atomically, then the lock.

Writing the same import twice changes no byte: a file whose bytes already match is not
rewritten, so its modification time stays too.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from sitegen.atomicwrite import write_atomic
from sitegen.config import SOURCES_DIR, Source
from sitegen.loader import LOCK_NAME
from sitegen.problems import InputError, Problem


@dataclass
class WriteResult:
    written: list[str] = field(default_factory=list)
    unchanged: int = 0


def write_files(root: Path, files: dict[str, bytes]) -> WriteResult:
    """Write every file whose bytes differ from what is on disk, in sorted order."""
    result = WriteResult()
    for relative in sorted(files):
        path = root / relative
        data = files[relative]
        if path.is_file() and path.read_bytes() == data:
            result.unchanged += 1
            continue
        write_atomic(path, data)
        result.written.append(relative)
    return result


def existing_published(path: Path) -> str | None:
    """The ``published`` date of an existing source file, if it has a readable one."""
    if not path.is_file():
        return None
    try:
        value = tomllib.loads(path.read_text(encoding="utf-8")).get("published")
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None
    return value if isinstance(value, str) else None


def source_toml(source: Source) -> bytes:
    """A source file's bytes; strings as TOML basic strings (JSON escapes are valid TOML)."""
    lines = [f"{key} = {json.dumps(value, ensure_ascii=False)}" for key, value in source.model_dump().items() if value is not None]
    return ("\n".join(lines) + "\n").encode("utf-8")


def source_file(root: Path, source_id: str, fields: dict, published: str | None, fallback_day: str | None) -> tuple[str, bytes]:
    """Registry-relative path and bytes of ``sources/<id>.toml``.

    ``published`` is the date given on the command line, else the existing file's, else
    ``fallback_day`` (the newest observation in the data): never the clock.
    """
    relative = f"{SOURCES_DIR}/{source_id}.toml"
    day = published or existing_published(root / relative) or fallback_day
    if day is None:
        raise InputError([Problem(relative, "$.published", "no date: pass --published YYYY-MM-DD")])
    return relative, source_toml(Source.model_validate({**fields, "published": day}))


def refresh_lock(root: Path) -> bool:
    """Rewrite ``digests.lock`` from the registry as it now is; True if its bytes changed."""
    from sitegen.registry import lock_contents, open_registry

    data = lock_contents(open_registry(root, check_lock_file=False))
    path = root / LOCK_NAME
    if path.is_file() and path.read_bytes() == data:
        return False
    write_atomic(path, data)
    return True
