"""Each manifest file's documents as `lock`, `verify` and `attest` need them, kept by the file's bytes.

After a one-run edit, `sitegen lock` would otherwise parse, validate and digest every
document again (4 s at 10,000 runs, as long as a cold build's loading); with the build
state's summaries (sitegen.state.store) only files whose bytes changed are. An entry is
keyed by sha256 over sitegen's own code and the file's exact bytes, so one changed byte,
or a changed validator, misses. Those bytes are known without reading the file where its
stat vouches for them (sitegen.state.filestats); `verify --full` reads every file.

Entries are kept per registry folder, so an edit rewrites one folder's row, not those of
every file (50 MB at 60,000 runs). They only ever stand for work already done on this
machine: `sitegen verify --full` and `sitegen build` never read them (a build keeps
documents of its own, sitegen.state.cachedload, which `build --full` ignores too), and a build
refuses a lock that poisoned summaries got wrong. A folder with no summaries yet but with a
build's documents (the first lock after a build) is summarized from those where a file's
bytes are the ones they were made from, so its files are read and hashed, not validated again.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sitegen.state.store import BuildState
from sitegen.state.codeversion import code_version
from sitegen.state.filestats import FileStats, stat_key
from sitegen.core.digest import canonical
from sitegen.core.forkpool import forked_map
from sitegen.core.inputfile import read_regular
from sitegen.format.loader import Record, load_bytes, manifest_names
from sitegen.core.problems import InputError, Problem
from sitegen.core.strictjson import MAX_FILE_BYTES

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
    """A run's metadata.signature, which verify checks (sitegen.core.signing)."""
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


def by_folder(root: Path) -> list[tuple[str, list[tuple[str, str]]]]:
    """Each registry folder (relative, "/"-separated) with its manifests, (name, relative): the unit
    of the build state's entries, so an edit rewrites one folder's."""
    folders: dict[str, list[tuple[str, str]]] = {}
    for name, relative in manifest_names(root):
        folders.setdefault(relative.rpartition("/")[0], []).append((name, relative))
    return list(folders.items())


def load_summaries(root: Path, reference_fields, state: BuildState, jobs: int = 1) -> tuple[list[Summary], list[Problem]]:
    """What loader.load_paths([root]) finds, as Summaries, computing only what ``state`` lacks.

    A file that fails to load is reported exactly as load_paths reports it, and never
    kept. The folders with a file to read (one whose stat does not vouch for bytes already
    summarized) are shared out among ``jobs`` forked processes, each reading and hashing its
    files and summarizing those its folder's entries lack: on a first lock that is loading
    every document. The other folders are looked up here, so after a one-run edit one folder
    is read and no process forked. The workers send back what changed; this process alone
    writes it.
    """
    work = by_folder(root)
    stored = {folder: _stored(text) for folder, text in state.summaries().items()}
    stats = FileStats(state)
    known = _known_by_stat(work, stats)
    code_version()  # made once, before the processes fork
    # A folder a build loaded but no lock or verify summarized yet (the first lock or attest after
    # a build): its documents, validated by this very code from bytes of a known sha256, are in the
    # state already (sitegen.state.cachedload), so its files are read and hashed but not validated again.
    # Each worker reads those of its folder itself: at 60,000 runs all of them are 640 MB of models,
    # which the parent would otherwise unpickle at once before forking.
    documented = state.document_folders() - stored.keys()
    reader = state.documents_reader()

    def summarize_folder(i: int):
        folder, files = work[i]
        built = (lambda: reader(folder)) if folder in documented else dict
        return _summarize_folder(files, stored.get(folder, {}), reference_fields, root, known, built)

    # Only folders with a file to read go to the processes: one whose every file's stat vouches for
    # bytes it has summaries of takes this process a lookup per file, and forking, with the
    # results pickled back, would cost more than that (after a one-run edit, most of the lock).
    # Largest folders first, so that no process is left with a large one at the end.
    code = code_version().encode()
    order = sorted((i for i, (folder, files) in enumerate(work) if not _vouched(files, stored.get(folder, {}), known, code)),
                   key=lambda i: -len(work[i][1]))
    done = dict(zip(order, forked_map(summarize_folder, order, jobs, where=str(root), doing="loading records"), strict=True))
    done.update((i, summarize_folder(i)) for i in range(len(work)) if i not in done)
    summaries: list[Summary] = []
    problems: list[Problem] = []
    changed: dict[str, str] = {}
    for i, (folder, _) in enumerate(work):
        entries, more, written, learned = done.pop(i)
        problems += more
        if written is not None:
            changed[folder] = written
        for relative, info, sha256 in learned:
            stats.learn(relative, info, sha256)
        summaries.extend(Summary(file=name, **entry) for name, entry in entries)
    state.put_summaries(changed, [folder for folder, _ in work])
    # Only manifests were walked: the build's fingerprint keeps the other files' entries.
    stats.save(forget_unseen=False)
    return summaries, sorted(problems)


def _known_by_stat(work, stats: FileStats) -> dict[str, str]:
    """Manifest (relative) → the sha256 its stat vouches for (sitegen.state.filestats); plain files only, as
    manifests() enters no linked folder."""
    known = {}
    for _, files in work:
        for name, relative in files:
            if (sha256 := stats.lookup(name, relative)[1]) is not None:
                known[relative] = sha256
    return known


def _vouched(files: list[tuple[str, str]], cached: dict, known: dict[str, str], code: bytes) -> bool:
    """Whether every file of a folder has a stat that vouches for its bytes and a stored entry under them, by
    key alone: _summarize_folder still reads any file whose entry is damaged."""
    return all((sha256 := known.get(relative)) is not None and _key(code, sha256) in cached for _, relative in files)


def _same_stat(name: str, before: os.stat_result) -> bool:
    try:
        return stat_key(os.lstat(name)) == stat_key(before)
    except OSError:
        return False


def _key(code: bytes, sha256: str) -> str:
    """An entry's key: sitegen's code version and the file's bytes (by their sha256)."""
    return hashlib.sha256(code + b"\0" + sha256.encode()).hexdigest()


def _stored(text: str | None) -> dict:
    try:
        found = json.loads(text) if text is not None else {}
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _built(entry, sha256: str, name: str) -> list[Record] | None:
    """The documents a build kept for a file (sitegen.state.cachedload's entry), if they were made from these bytes."""
    if not BuildState.usable_entry(entry, sha256):
        return None
    return BuildState.entry_records(entry, name)


def _summarize_folder(files: list[tuple[str, str]], cached: dict, reference_fields, root: Path,
                      known: dict[str, str], built: Callable[[], dict] = dict) -> tuple[list[tuple[str, dict]], list[Problem], str | None, list[tuple]]:
    """(file, entry) of each document of one folder, taken from its stored entries (``cached``, parsed) where the bytes
    match, and its problems; the folder's entries as JSON if they changed, else None; and
    (relative, stat, sha256) of each plain file read, for sitegen.state.filestats.

    A file whose stat vouches for its bytes (``known``) is not read when an entry for those
    bytes is stored. A file read is validated again unless ``built()`` (the folder's documents as a
    build kept them, read when first needed) holds its documents made from the same bytes."""
    code = code_version().encode()
    used: dict[str, list[dict]] = {}
    entries: list[tuple[str, dict]] = []
    problems: list[Problem] = []
    learned: list[tuple] = []
    remade = False  # a damaged entry is made again under the key it had, which the keys alone would not show
    documents = None
    for name, relative in files:
        sha256 = known.get(relative)
        key = _key(code, sha256) if sha256 is not None else None
        found = cached.get(key)
        if not _well_formed(found):
            try:
                info = os.lstat(name)  # before the read: a later write changes it
            except OSError:
                info = None
            try:
                data = read_regular(name, MAX_FILE_BYTES, registry=root)
            except InputError as exc:
                problems.extend(exc.problems)
                continue
            sha256 = hashlib.sha256(data).hexdigest()
            # Learned only if the file is the same one after the read as before it: a file
            # renamed over it in between would pair the old stat with the new bytes.
            if info is not None and stat.S_ISREG(info.st_mode) and _same_stat(name, info):
                learned.append((relative, info, sha256))
            key = _key(code, sha256)
            found = cached.get(key)
            if not _well_formed(found):
                try:
                    if documents is None:
                        documents = built()
                    records = _built(documents.get(relative), sha256, name) or load_bytes(data, name)
                    found = [summarize(r, reference_fields) for r in records]
                except InputError as exc:
                    problems.extend(exc.problems)
                    continue
                remade = True
        used[key] = found
        entries.extend((name, entry) for entry in found)
    return entries, problems, json.dumps(used) if remade or used.keys() != cached.keys() else None, learned


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
