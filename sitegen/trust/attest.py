"""`sitegen attest`: a community note (an Attestation document) written into a registry.

A note never changes a run's evidence; its Markdown is shown through
sitegen.site.text.markdown like every other text people write.
"""

from __future__ import annotations

from datetime import date as Date
from pathlib import Path
from typing import get_args

from sitegen.format.model.run import AttestationBody
from sitegen.core.problems import InputError, Problem

ATTEST_KINDS: tuple[str, ...] = get_args(AttestationBody.model_fields["kind"].annotation)
"""The kinds of note, as the model's Literal defines them (the one list to edit)."""
ATTESTATIONS_DIR = "attestations"


def find_run(registry, ref: str):
    """A run by name or digest (full, or unique ``sha256:`` prefix of at least 12 hex digits)."""
    named = registry.by_name.get(f"BenchmarkRun/{ref}")
    if named is not None:
        return named
    runs = registry.of_kind("BenchmarkRun")
    digest = ref if ref.startswith("sha256:") else f"sha256:{ref}"
    matches = [r for r in runs if r.digest == digest]
    if not matches and len(digest) >= len("sha256:") + 12:
        matches = [r for r in runs if r.digest.startswith(digest)]
    if len(matches) == 1:
        return matches[0]
    reason = "matches several runs; give more digits" if matches else "is no run name or digest in the registry"
    raise InputError([Problem("RUN", "$", f"{ref!r} {reason}")])


def _note_name(run_name: str, kind: str, day: str, taken: set[str]) -> str:
    # Names are capped at 200 characters; the run name is cut so the suffix always fits.
    base = f"{run_name[:150].rstrip('-._')}-{kind.replace('_', '-')}-{day}"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return name


def attest(
    root: Path, ref: str, *, kind: str, value: str | None, note: str | None, link: str | None,
    author: str, day: str | None, full: bool = False,
) -> Path:
    """Write an Attestation on a run into ``root/attestations/`` and refresh the lock.

    The registry is read as `lock` reads it (sitegen.state.summaries): every document is checked, but
    files whose bytes this sitegen already validated come from the build state, so a note on the
    bundled registry costs about a fifth of a full load (benchmarks/results/attest.txt). The run noted (and, for
    ``--value``, its protocol) is read whole from its file; where the file no longer holds the
    bytes its summary was made from (an edit its stat did not show), every document is loaded
    again, as ``full`` asks from the start."""
    from sitegen.core.forkpool import default_jobs
    from sitegen.registry.folder import open_registry
    from sitegen.state.opening import open_cached
    from sitegen.registry.transaction import registry_transaction

    # Read, decide and write under the registry's writer lock: two attests at once would
    # otherwise both build their lock from the same old one, and one note would drop out.
    with registry_transaction(root) as txn:
        registry = open_registry(root) if full else open_cached(root, cached=True, jobs=default_jobs())
        registry, run, protocol = _run_and_protocol(root, registry, ref, with_protocol=value is not None)
        return _attest(txn, registry, run, protocol, kind=kind, value=value, note=note, link=link, author=author, day=day)


def _whole(root: Path, found):
    """The validated document a summary stands for, read again from its file, or None where the
    file no longer holds the bytes the summary was made from."""
    from sitegen.format.loader import Record, load_file

    if isinstance(found, Record):
        return found
    record = next((r for r in load_file(Path(found.file), registry=root) if r.pointer == found.pointer), None)
    return record if record is not None and record.digest == found.digest else None


def _run_and_protocol(root: Path, registry, ref: str, *, with_protocol: bool):
    """The registry, the run ``ref`` names and (``with_protocol``) its protocol, as validated documents."""
    from sitegen.registry.folder import open_registry

    run = _whole(root, find_run(registry, ref))
    protocol = _whole(root, registry.by_digest[run.model.spec.protocolDigest]) if run is not None and with_protocol else None
    if run is None or (with_protocol and protocol is None):
        # The build state vouched for bytes that are gone (FAT and exFAT copy ctime from mtime, NFS
        # may serve an old stat, a cache can be tampered with): check every document again, which
        # reports the edit (a spec that differs from the lock, a note's run that is no more).
        registry = open_registry(root)
        run = find_run(registry, ref)
        protocol = registry.by_digest[run.model.spec.protocolDigest] if with_protocol else None
    return registry, run, protocol


def _attest(txn, registry, run, protocol, *, kind: str, value: str | None, note: str | None, link: str | None,
            author: str, day: str | None) -> Path:
    from sitegen.registry.write import write_lock
    from sitegen.registry.layout import render
    from sitegen.format.loader import validate_document
    from sitegen.core.documents import document
    from sitegen.registry.folder import lock_key

    from sitegen.facts.index import primary
    from sitegen.format.observedvalue import normalize

    if value is None and not (note and note.strip()):
        raise InputError([Problem("--note", "$", "a note needs --value or --note: with neither it says nothing")])
    root = txn.root
    if value is not None:
        statistic = protocol.model.spec.measurement.primaryStatistic
        metric, _, _, unit = primary(run.model, statistic) or (None, None, None, None)
        value = normalize(value, metric, unit)
    day = day or Date.today().isoformat()
    taken = {r.name for r in registry.of_kind("Attestation")}
    name = _note_name(run.name, kind, day, taken)
    spec = {"run": run.digest, "kind": kind, "author": author, "date": day}
    for key, item in (("value", value), ("body", note), ("link", link)):
        if item is not None:
            spec[key] = item
    doc = document("Attestation", {"name": name, "title": f"{kind.replace('_', ' ')} · {run.name}"}, spec)
    path = root / ATTESTATIONS_DIR / f"{name}.json"
    record = validate_document(doc, str(path))
    same = registry.by_digest.get(record.digest)
    if same is not None:
        raise InputError([Problem(str(path), "$.spec", f"the same note already exists as {same.kind} {same.name!r} in {same.file}")])
    txn.write(f"{ATTESTATIONS_DIR}/{name}.json", render(doc), new=True)
    # open_registry matched every document against the lock (or there was none), so the new
    # lock is the registry's records plus this note: no second load of the whole registry.
    locked = {lock_key(r): r.digest for r in registry.records}
    write_lock(txn, {**locked, lock_key(record): record.digest})
    return path
