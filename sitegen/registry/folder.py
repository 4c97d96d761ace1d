"""A whole registry: documents indexed by digest and name, references and lock checked.

``validate`` looks at documents one by one; a Registry also answers whether every digest
a document references resolves, whether names are unique, and whether each document
still has the digest recorded in the registry's lock file (so a one-byte edit of any
``spec`` is caught even where nothing references that document).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from sitegen.format.loader import Record, load_paths
from sitegen.registry.lockfile import LOCK_NAME
from sitegen.registry.lockfile import LOCK_FORMAT, MAX_LOCK_BYTES, checked_lock_bytes, lock_bytes, read_lock  # noqa: F401
from sitegen.core.problems import InputError, Problem, json_path
from sitegen.registry.transaction import recover

# Which digest fields point at which kind.
REFERENCES: dict[str, dict[tuple[str, ...], str]] = {
    "WorkloadCase": {("operationSpecDigest",): "OperationSpec"},
    "ImplementationRevision": {("operation", "specDigest"): "OperationSpec"},
    "BenchmarkRun": {
        ("implementationDigest",): "ImplementationRevision",
        ("workloadDigest",): "WorkloadCase",
        ("protocolDigest",): "BenchmarkProtocol",
        ("environmentDigest",): "ExecutionEnvironment",
    },
    "Attestation": {("run",): "BenchmarkRun"},
}


def lock_key(record: Record) -> str:
    return f"{record.kind}/{record.name}"


@dataclass
class Registry:
    records: list[Record]
    by_digest: dict[str, Record] = field(default_factory=dict)
    by_name: dict[str, Record] = field(default_factory=dict)

    _kinds: tuple[int, int, dict[str, list[Record]]] | None = field(default=None, repr=False, compare=False)

    def named(self, kind: str, name: str) -> Record | None:
        """The record of ``kind`` named ``name`` (by its lock key), if there is one."""
        return self.by_name.get(f"{kind}/{name}")

    def of_kind(self, kind: str) -> list[Record]:
        """The records of ``kind``, in the order of ``records`` (a new list on every call)."""
        # Grouped once: a build asks for each kind several times, and a scan of 60,000
        # records each time cost more than the index itself. The grouping is made again
        # whenever ``records`` is another list or has another length.
        if self._kinds is None or self._kinds[:2] != (id(self.records), len(self.records)):
            kinds: dict[str, list[Record]] = {}
            for record in self.records:
                kinds.setdefault(record.kind, []).append(record)
            self._kinds = (id(self.records), len(self.records), kinds)
        return list(self._kinds[2].get(kind, ()))


def index(records: list[Record]) -> tuple[Registry, list[Problem]]:
    """Index documents; the same document in two files is kept once."""
    registry = Registry([])
    problems: list[Problem] = []
    for record in records:
        same = registry.by_digest.get(record.digest)
        named = registry.by_name.get(lock_key(record))
        if same is not None and same.same_document(record):
            continue
        if named is not None:
            problems.append(Problem(record.file, f"{record.pointer}.metadata.name", f"{record.kind} name {record.name!r} is already used in {named.file}"))
            continue
        if same is not None:
            problems.append(Problem(record.file, f"{record.pointer}.spec", f"same identity (digest) as {same.kind} {same.name!r} in {same.file}"))
            continue
        registry.records.append(record)
        registry.by_digest[record.digest] = record
        registry.by_name[lock_key(record)] = record
    return registry, problems


def check_references(registry: Registry) -> list[Problem]:
    problems = []
    by_digest = registry.by_digest
    for record in registry.records:
        for fields, target in REFERENCES.get(record.kind, {}).items():
            value = record.reference(fields)
            hit = by_digest.get(value)
            if hit is not None and hit.kind == target:
                continue
            # The path only for a problem: 250,000 references at 60,000 runs, nearly all fine.
            path = f"{record.pointer}.spec." + ".".join(fields)
            if hit is None:
                problems.append(Problem(record.file, path, f"references {value}, which resolves to no {target} in the registry"))
            else:
                problems.append(Problem(record.file, path, f"references a {hit.kind}, expected a {target}"))
    return problems


def lock_contents(registry: Registry) -> bytes:
    return lock_bytes({lock_key(r): r.digest for r in registry.records})


def check_lock(registry: Registry, root: Path, locked: dict[str, str] | None) -> list[Problem]:
    if locked is None:
        return []
    lock_file = str(root / LOCK_NAME)
    problems = []
    for record in registry.records:
        expected = locked.get(lock_key(record))
        if expected is None:
            problems.append(Problem(record.file, f"{record.pointer}.metadata.name", f"{lock_key(record)} is not in {LOCK_NAME}; run `sitegen lock` after reviewing it"))
        elif expected != record.digest:
            problems.append(Problem(record.file, f"{record.pointer}.spec", f"digest {record.digest} differs from {expected} in {LOCK_NAME}: the spec changed"))
    for key in sorted(set(locked) - set(registry.by_name)):
        problems.append(Problem(lock_file, json_path(["documents", key]), "locked document is missing from the registry"))
    return problems


def open_registry(root: Path, *, check_lock_file: bool = True, require_lock: bool = False,
                  load: Callable[[Path], tuple[list[Record], list[Problem]]] | None = None) -> Registry:
    """Load, validate and cross-check a registry folder; raise InputError with everything wrong.

    ``require_lock`` makes a folder without digests.lock an error: verify and build promise
    that an edit to any spec is caught, which only a recorded digest can show. Any
    interrupted write (sitegen.registry.transaction) is finished or undone first.

    ``load`` reads the folder's documents (default: every file, validated); the build state
    passes one that takes unchanged files from its store (sitegen.state.opening). Every check
    below still runs on all of them.
    """
    if root.is_dir():
        recover(root)
    locked = read_lock(root) if check_lock_file and root.is_dir() else None
    if require_lock and check_lock_file and root.is_dir() and locked is None:
        raise InputError([Problem(str(root / LOCK_NAME), "$", "no lock file, so edits cannot be detected; review the registry, then run `sitegen lock` (or pass --unlocked)")])
    if load is not None and root.is_dir():
        records, problems = load(root)
    else:
        records, problems = load_paths([root])
    registry, more = index(records)
    problems += more
    if not problems:
        problems += check_references(registry)
        if check_lock_file:
            problems += check_lock(registry, root, locked)
    if problems:
        raise InputError(problems)
    registry.records.sort(key=lambda r: (r.kind, r.name))
    registry._kinds = None  # same list, same length, new order
    return registry
