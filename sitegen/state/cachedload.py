"""A build's loading: each manifest file's validated documents, from the build state where its bytes are unchanged.

After a one-run edit a build would otherwise parse, validate and digest every document of
the registry again (about a third of a 60,000-run rebuild); with the documents kept in
the build state (sitegen.state.store) only files whose bytes changed are. The rest of a
document is taken as it was made when those very bytes were last loaded: the parsed,
migrated JSON, the validated model and the digest.

Entries are kept per folder, pickled whole, so an edit rewrites one folder's and a folder
loads in one unpickling (per-file entries load several times slower). Every entry names
the sha256 of the bytes it was made from, which the build's fingerprint knows by hashing
the file or from its unchanged stat (sitegen.site.engine.fingerprint, sitegen.state.filestats). What the state cannot vouch
for (another sitegen, a payload whose checksum does not match, one that fails to
unpickle or names anything but sitegen's model classes) is no cache: its files are
loaded again. `build --full` neither reads nor writes it.
"""

from __future__ import annotations

import hashlib
import pickle
from pathlib import Path

from sitegen.state.store import BuildState
from sitegen.state.codeversion import code_version
from sitegen.core.forkpool import forked_map
from sitegen.core.inputfile import read_regular
from sitegen.format.loader import Record, load_bytes
from sitegen.core.problems import InputError, Problem
from sitegen.core.strictjson import MAX_FILE_BYTES
from sitegen.state.summaries import by_folder


def load_cached(root: Path, known: dict[str, str], state: BuildState, jobs: int = 1) -> tuple[list[Record], list[Problem]]:
    """What loader.load_paths([root]) returns, loading only the files ``state`` lacks.

    ``known`` maps a file (relative to ``root``, "/"-separated) to the sha256 of the bytes
    the build has fingerprinted; a file not in it, or whose entry was made from other
    bytes, is read and loaded here. A file that fails to load is reported as load_paths
    reports it, and never kept.

    Folders without documents of this sitegen (all of them on a first build, and after an
    upgrade) are loaded by ``jobs`` forked workers, each sending back the pickle of its
    folder's entries, which this process stores: parsing, validating and digesting are most
    of a first build's loading, and unpickling the result costs the parent an eighth of
    doing them itself. Folders with documents are read here, as a worker would only add a
    pickling to them.
    """
    work = by_folder(root)
    stored = state.document_folders()
    code_version()  # made once, before the processes fork
    # Largest folders first, so that no process is left with a large one at the end.
    fresh = sorted((i for i, (folder, _) in enumerate(work) if folder not in stored), key=lambda i: -len(work[i][1]))
    loaded: dict[int, tuple[dict, list[Problem]]] = {}
    if jobs > 1 and len(fresh) > 1:
        def load_in_worker(i: int) -> tuple[bytes, list[Problem]]:
            kept, problems, _ = _load_folder(work[i][1], known, {}, root)
            return pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL), problems

        done = forked_map(load_in_worker, fresh, jobs, where=str(root), doing="loading records", advice="; try fewer --jobs")
        # Stored as each arrives, while the workers load the rest; strict: the last result
        # taken ends the workers (forked_map), before the loop below.
        for i, (payload, problems) in zip(fresh, done, strict=True):
            state.put_documents(work[i][0], payload)
            loaded[i] = pickle.loads(payload), problems
    records: list[Record] = []
    problems: list[Problem] = []
    for i, (folder, files) in enumerate(work):
        if i in loaded:
            kept, more = loaded.pop(i)
        else:
            kept, more, changed = _load_folder(files, known, state.documents(folder) if folder in stored else {}, root)
            if changed:
                state.put_documents(folder, pickle.dumps(kept, protocol=pickle.HIGHEST_PROTOCOL))
        problems += more
        for name, relative in files:
            if relative in kept:
                records.extend(BuildState.entry_records(kept[relative], name))
    state.keep_document_folders([folder for folder, _ in work])
    return records, sorted(problems)


def _load_folder(files: list[tuple[str, str]], known: dict[str, str], cached: dict, root: Path) -> tuple[dict, list[Problem], bool]:
    """One folder's entries, {relative file: (sha256, [(pointer, source, model, digest), ...])}, taken from
    ``cached`` where usable, else loaded; its problems; whether the entries differ from ``cached``."""
    kept: dict[str, tuple] = {}
    problems: list[Problem] = []
    for name, relative in files:
        entry = cached.get(relative)
        digest = known.get(relative)
        if digest is None or not BuildState.usable_entry(entry, digest):
            try:
                data = read_regular(name, MAX_FILE_BYTES, registry=root)
                loaded = load_bytes(data, name)
            except InputError as exc:
                problems.extend(exc.problems)
                continue
            entry = (hashlib.sha256(data).hexdigest(), [(r.pointer, r.source, r.model, r.digest) for r in loaded])
        kept[relative] = entry
    return kept, problems, kept.keys() != cached.keys() or any(kept[k] is not cached[k] for k in kept)
