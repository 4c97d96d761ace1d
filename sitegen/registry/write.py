"""Put an import's files into a registry folder: checked first, only changed bytes, then the lock.

Writing the same import twice changes no byte: a file whose bytes already match is not
rewritten, so its modification time stays too.
"""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sitegen.registry.config import MAX_TOML_BYTES, SOURCES_DIR, Source
from sitegen.core.inputfile import read_regular
from sitegen.registry.lockfile import LOCK_NAME
from sitegen.core.problems import InputError, Problem
from sitegen.registry.transaction import Transaction


@dataclass
class WriteResult:
    written: list[str] = field(default_factory=list)
    unchanged: int = 0


def write_files(txn: Transaction, files: dict[str, bytes]) -> WriteResult:
    """Stage every file whose bytes differ from what is on disk; they land when ``txn`` commits."""
    result = WriteResult()
    for relative in sorted(files):
        data = files[relative]
        if txn.read(relative) == data:
            result.unchanged += 1
            continue
        txn.write(relative, data)
        result.written.append(relative)
    return result


def existing_published(path: Path, root: Path) -> str | None:
    """The ``published`` date of an existing source file, if it has a readable one.

    Read through the registry's one reader, as every other input: a link out of ``root`` or a
    special file there is one problem line, never read (unless --allow-outside-links)."""
    if not (path.exists() or path.is_symlink()):
        return None
    data = read_regular(path, MAX_TOML_BYTES, registry=root)
    try:
        value = tomllib.loads(data.decode("utf-8")).get("published")
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
    day = published or existing_published(root / relative, root) or fallback_day
    if day is None:
        raise InputError([Problem(relative, "$.published", "no date: pass --published YYYY-MM-DD")])
    return relative, source_toml(Source.model_validate({**fields, "published": day}))


@dataclass
class Target:
    """A registry folder checked before an import writes into it.

    ``lock`` is what ``digests.lock`` must hold once the import's documents are written:
    the existing lock's entries (which the check just matched against every document on
    disk) with the import's own documents merged in. ``unlocked`` counts documents already
    in a folder that had no lock: the import vouches only for what it wrote.
    """

    lock: dict[str, str]
    unlocked: int = 0
    reused: frozenset[str] = frozenset()
    """Paths of the import's documents the registry already holds under another name (not written)."""


def check_target(root: Path, documents: dict[str, dict[str, Any]]) -> Target:
    """Check ``root`` as it is and as it would be with ``documents`` written; write nothing.

    ``documents`` maps registry-relative paths to documents. Raises InputError with every
    problem: a document that no longer matches the lock (an edit the import must not
    bless by re-locking it), an unreadable file, a name or digest the import's documents
    would collide with, or a reference the import's documents would break.
    """
    from sitegen.format.loader import validate_document
    from sitegen.registry.folder import check_references, index, lock_key, open_registry

    existing = open_registry(root).records if root.exists() else []
    # open_registry matched every document against the lock, so kept records' digests are
    # the lock's entries.
    locked = (root / LOCK_NAME).exists()
    replaced = {str(root / path) for path in documents}
    kept = [record for record in existing if record.file not in replaced]
    # Runs reference documents by digest: one the registry holds under another name (the same
    # GPU's environment, the same benchmark, imported under another source) serves as it is.
    held = {record.digest for record in kept if record.kind != "BenchmarkRun"}
    incoming = [validate_document(document, str(root / path)) for path, document in sorted(documents.items())]
    reused = frozenset(str(Path(r.file).relative_to(root)) for r in incoming
                       if r.kind != "BenchmarkRun" and r.digest in held)
    incoming = [r for r in incoming if str(Path(r.file).relative_to(root)) not in reused]
    after, problems = index(kept + incoming)
    problems += check_references(after)
    if problems:
        raise InputError(sorted(problems))
    merged = {lock_key(r): r.digest for r in (kept if locked else []) + incoming}
    return Target(merged, unlocked=0 if locked else len(kept), reused=reused)


def write_lock(txn: Transaction, documents: dict[str, str]) -> bool:
    """Stage ``digests.lock`` unless it already holds these bytes; True if it changed.

    A lock that build and verify would refuse (over the size bound) is refused here.
    """
    from sitegen.registry.folder import checked_lock_bytes

    return bool(write_files(txn, {LOCK_NAME: checked_lock_bytes(txn.root, documents)}).written)
