"""Each manifest file's documents as `lock` and `verify` need them, cached by the file's bytes.

After a one-run edit, `sitegen lock` would otherwise parse, validate and digest every
document again (4 s at 10,000 runs, as long as a cold build's loading); with the cache only
files whose bytes changed are. An entry is keyed by sha256 over sitegen's own code and the
file's exact bytes, so one changed byte, or a changed validator, misses.

The cache lives in the user's cache folder (sitegen.cachefiles), one JSON shard per
registry folder, so an edit rewrites one shard, not the cache of every file (50 MB at
60,000 runs). It only ever stands for work already done on this machine: `sitegen verify
--full` and `sitegen build` never read it (a build has a
cache of its own, sitegen.documentcache, which `build --full` ignores too), and a build
refuses a lock that a poisoned digest cache got wrong.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from sitegen.cachefiles import cache_dir, read_json, write_json
from sitegen.digest import canonical
from sitegen.forkpool import forked_map
from sitegen.inputfile import read_regular
from sitegen.loader import Record, load_bytes, manifest_names
from sitegen.problems import InputError, Problem
from sitegen.strictjson import MAX_FILE_BYTES

CACHE_FORMAT = 3


@dataclass(frozen=True)
class Summary:
    """A document as lock and verify see it: a loader.Record without its parsed and validated content."""

    file: str
    pointer: str
    kind: str
    name: str
    digest: str
    content: str
    """sha256 of the canonical JSON of the whole document, metadata included: equal iff the documents are."""
    references: dict[str, str]
    """Each digest reference of the spec, by its dotted field path."""
    signature: str | None = None
    """A run's metadata.signature, which verify checks (sitegen.signing)."""
    observed: str | None = None
    """A run's spec.observedAt: a signing key must be trusted at that time."""

    def reference(self, fields: tuple[str, ...]) -> str:
        return self.references[".".join(fields)]

    def same_document(self, other: Summary) -> bool:
        return self.content == other.content


def summarize(record: Record, reference_fields) -> dict:
    """The cache entry of one validated document."""
    return {
        "pointer": record.pointer, "kind": record.kind, "name": record.name, "digest": record.digest,
        "content": hashlib.sha256(canonical(record.raw)).hexdigest(),
        "references": {".".join(f): record.reference(f) for f in reference_fields.get(record.kind, {})},
        "signature": record.signature, "observed": record.observed,
    }


def cache_shards(root: Path) -> Path:
    """The folder of the registry's cache shards."""
    return cache_dir(root, "digests")


@lru_cache(maxsize=1)
def code_version() -> bytes:
    """sitegen's code digest, which every cache entry is made under (once per process)."""
    from sitegen.site.fingerprint import code_digest

    return code_digest().encode()


def shard_name(key: str, suffix: str) -> str:
    """The file name of the cache shard for `key`: no key's characters reach the file system."""
    return hashlib.sha256(key.encode()).hexdigest()[:24] + suffix


def shards(root: Path, folder: Path, suffix: str) -> list[tuple[Path, list[tuple[str, str]]]]:
    """Each registry folder's manifests, (name, relative), with the file in ``folder`` of the
    cache shard that holds their entries: one shard per folder, so an edit rewrites one."""
    by_folder: dict[str, list[tuple[str, str]]] = {}
    for name, relative in manifest_names(root):
        by_folder.setdefault(relative.rpartition("/")[0], []).append((name, relative))
    return [(folder / shard_name(shard, suffix), files) for shard, files in by_folder.items()]


def load_summaries(root: Path, reference_fields, jobs: int = 1) -> tuple[list[Summary], list[Problem]]:
    """What loader.load_paths([root]) finds, as Summaries, computing only what the cache lacks.

    A file that fails to load is reported exactly as load_paths reports it, and never
    cached. The folders are shared out among ``jobs`` forked processes, each reading and
    hashing its files and summarizing those its shard lacks: on a first lock that is
    loading every document, after an edit it is still reading every file.
    """
    work = shards(root, cache_shards(root), ".json")
    code_version()  # made once, before the processes fork
    # Largest folders first, so that no process is left with a large one at the end.
    order = sorted(range(len(work)), key=lambda i: -len(work[i][1]))
    done = dict(zip(order, forked_map(lambda i: _summarize_shard(*work[i], reference_fields, root), order, jobs,
                                      where=str(root), doing="loading records"), strict=True))
    summaries: list[Summary] = []
    problems: list[Problem] = []
    for i in range(len(work)):
        entries, more = done.pop(i)
        problems += more
        summaries.extend(Summary(file=name, **entry) for name, entry in entries)
    return summaries, sorted(problems)


def _summarize_shard(path: Path, files: list[tuple[str, str]], reference_fields, root: Path) -> tuple[list[tuple[str, dict]], list[Problem]]:
    """(file, cache entry) of each document of one folder, taken from its shard where the bytes match, and its
    problems; the shard is written again when its entries change."""
    cached = read_json(path, CACHE_FORMAT, "files")
    code = code_version()
    used: dict[str, list[dict]] = {}
    entries: list[tuple[str, dict]] = []
    problems: list[Problem] = []
    for name, _ in files:
        try:
            data = read_regular(name, MAX_FILE_BYTES, registry=root)
        except InputError as exc:
            problems.extend(exc.problems)
            continue
        key = hashlib.sha256(code + b"\0" + data).hexdigest()
        found = cached.get(key)
        if not _well_formed(found):
            try:
                found = [summarize(r, reference_fields) for r in load_bytes(data, name)]
            except InputError as exc:
                problems.extend(exc.problems)
                continue
        used[key] = found
        entries.extend((name, entry) for entry in found)
    if used.keys() != cached.keys():
        write_json(path, {"format": CACHE_FORMAT, "files": used})
    return entries, problems


_FIELDS = {"pointer", "kind", "name", "digest", "content", "references", "signature", "observed"}


def _well_formed(entries) -> bool:
    # One plain loop: checked for each of a 60,000-run registry's files on every lock, the
    # nested generators (and a set made per entry) were a quarter of a cached lock.
    if not isinstance(entries, list):
        return False
    for e in entries:
        if not (isinstance(e, dict) and e.keys() == _FIELDS and isinstance(e["references"], dict)
                and isinstance(e["pointer"], str) and isinstance(e["kind"], str) and isinstance(e["name"], str)
                and isinstance(e["digest"], str) and isinstance(e["content"], str)
                and isinstance(e["signature"], (str, type(None))) and isinstance(e["observed"], (str, type(None)))):
            return False
    return True
