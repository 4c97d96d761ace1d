"""Each manifest file's validated documents, cached by the file's exact bytes, for `build`.

After a one-run edit a build would otherwise parse, validate and digest every document of
the registry again (about a third of a 60,000-run rebuild); with the cache only files whose
bytes changed are. The rest of a document is taken as it was made when those very bytes
were last loaded: the parsed, migrated JSON, the validated model and the digest.

Entries are grouped by folder, one shard per folder, so an edit rewrites one shard and a
shard loads in one unpickling (per-file entries load several times slower). A shard
belongs to one registry folder, one sitegen (its code digest) and one cache format; every
entry names the sha256 of the bytes it was made from, and the build hashes each file's
bytes again (sitegen.site.fingerprint), never trusting times or sizes. A shard whose own
checksum does not match, that fails to unpickle, or that names anything but sitegen's
model classes is no cache: its files are loaded again. The cache lives beside the digest
cache, in the user's cache folder, never in the registry or the site; `build --full`
neither reads nor writes it.
"""

from __future__ import annotations

import hashlib
import io
import pickle
from pathlib import Path

from sitegen.atomicwrite import write_atomic
from sitegen.cachefiles import cache_dir
from sitegen.digestcache import code_version, shards
from sitegen.forkpool import forked_map
from sitegen.inputfile import read_regular
from sitegen.loader import Record, load_bytes
from sitegen.problems import InputError, Problem
from sitegen.strictjson import MAX_FILE_BYTES

CACHE_FORMAT = b"sitegen-documents 1\n"
_MODEL_MODULES = "sitegen.model."


def cache_folder(root: Path) -> Path:
    """One folder of shards per registry folder."""
    return cache_dir(root, "documents")


class _ModelsOnly(pickle.Unpickler):
    """Unpickles sitegen's model classes and plain data, nothing else: a shard is never code."""

    def find_class(self, module: str, name: str):
        if module.startswith(_MODEL_MODULES) and not name.startswith("_"):
            found = super().find_class(module, name)
            from pydantic import BaseModel

            if isinstance(found, type) and issubclass(found, BaseModel):
                return found
        raise pickle.UnpicklingError(f"{module}.{name} is not a sitegen model")


def _header(payload: bytes) -> bytes:
    return CACHE_FORMAT + code_version() + b"\n" + hashlib.sha256(payload).hexdigest().encode() + b"\n"


def _current(path: Path) -> bool:
    """Whether the shard at ``path`` was written in this format by this sitegen (its checksum is checked on reading)."""
    try:
        with open(path, "rb") as handle:
            return handle.readline(256) + handle.readline(256) == CACHE_FORMAT + code_version() + b"\n"
    except OSError:  # missing, or a cache folder this user cannot enter
        return False


def _read_shard(path: Path) -> dict:
    """{relative file: (sha256 of its bytes, [(pointer, source, model, digest), ...])}, or {} when unusable."""
    try:
        with open(path, "rb") as handle:
            # The header's three lines apart from the payload, so the payload (tens of MB
            # for a large operation's folder) is never copied.
            header = b"".join(handle.readline(256) for _ in range(3))
            payload = handle.read()
    except OSError:
        return {}
    if header != _header(payload):
        return {}
    try:
        entries = _ModelsOnly(io.BytesIO(payload)).load()
    except Exception:  # any damage at all means: no cache
        return {}
    return entries if isinstance(entries, dict) else {}


def _usable(entry, digest: str) -> bool:
    return (isinstance(entry, tuple) and len(entry) == 2 and entry[0] == digest and isinstance(entry[1], list)
            and all(isinstance(e, tuple) and len(e) == 4 for e in entry[1]))


def load_cached(root: Path, known: dict[str, str], jobs: int = 1) -> tuple[list[Record], list[Problem]]:
    """What loader.load_paths([root]) returns, loading only the files the cache lacks.

    ``known`` maps a file (relative to ``root``, "/"-separated) to the sha256 of the bytes
    the build has fingerprinted; a file not in it, or whose entry was made from other
    bytes, is read and loaded here. A file that fails to load is reported as load_paths
    reports it, and never cached.

    Folders without a shard of this sitegen (all of them on a first build, and after an
    upgrade) are loaded by ``jobs`` forked workers, each sending back the pickled shard it
    writes: parsing, validating and digesting are most of a first build's loading, and
    unpickling the result costs the parent an eighth of doing them itself. Folders with
    one are read here, as a worker would only add a pickling to them.
    """
    work = shards(root, cache_folder(root), ".pickle")
    # Largest folders first, so that no process is left with a large one at the end.
    fresh = sorted((i for i, (path, _) in enumerate(work) if not _current(path)), key=lambda i: -len(work[i][1]))
    loaded: dict[int, tuple[dict, list[Problem]]] = {}
    if jobs > 1 and len(fresh) > 1:
        def load_in_worker(i: int) -> tuple[bytes, list[Problem]]:
            kept, problems, changed = _load_shard(*work[i], known, {}, root)
            return _write_shard(work[i][0], kept) if changed else pickle.dumps(kept), problems

        done = forked_map(load_in_worker, fresh, jobs, where=str(root), doing="loading records", advice="; try fewer --jobs")
        # strict: the last result taken ends the workers (forked_map), before the loop below.
        loaded = {i: (pickle.loads(payload), problems) for i, (payload, problems) in zip(fresh, done, strict=True)}
    records: list[Record] = []
    problems: list[Problem] = []
    for i, (path, files) in enumerate(work):
        if i in loaded:
            kept, more = loaded.pop(i)
        else:
            kept, more, changed = _load_shard(path, files, known, _read_shard(path), root)
            if changed:
                _write_shard(path, kept)
        problems += more
        for name, relative in files:
            if relative in kept:
                records.extend(Record(name, *parts) for parts in kept[relative][1])
    return records, sorted(problems)


def _load_shard(path: Path, files: list[tuple[str, str]], known: dict[str, str], cached: dict, root: Path) -> tuple[dict, list[Problem], bool]:
    """One folder's entries, {relative file: (sha256, [(pointer, source, model, digest), ...])}, taken from
    ``cached`` where usable, else loaded; its problems; whether the entries differ from ``cached``."""
    kept: dict[str, tuple] = {}
    problems: list[Problem] = []
    for name, relative in files:
        entry = cached.get(relative)
        digest = known.get(relative)
        if digest is None or not _usable(entry, digest):
            try:
                data = read_regular(name, MAX_FILE_BYTES, registry=root)
                loaded = load_bytes(data, name)
            except InputError as exc:
                problems.extend(exc.problems)
                continue
            entry = (hashlib.sha256(data).hexdigest(), [(r.pointer, r.source, r.model, r.digest) for r in loaded])
        kept[relative] = entry
    return kept, problems, kept.keys() != cached.keys() or any(kept[k] is not cached[k] for k in kept)


def _write_shard(path: Path, entries: dict) -> bytes:
    """Pickles ``entries`` into the shard at ``path``; returns the pickle."""
    payload = pickle.dumps(entries, protocol=pickle.HIGHEST_PROTOCOL)
    try:
        write_atomic(path, _header(payload) + payload)
    except OSError:
        pass  # an unwritable cache folder only costs the next build its speed
    return payload
