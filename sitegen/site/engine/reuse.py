"""Which pages a build may take unchanged from the site it replaces.

A record page shows its run, the documents the run references, its cohort (ranks,
leader, history, the page of the cohort table) and its reruns: all within one operation.
So the runs of an operation form a group, whose key is a digest over sitegen itself, the
options, every registry file that is not one operation's run file (documents, settings,
pages), and the bytes of that operation's run files and of the notes (attestations) on them. When the previous build
recorded the same key for a group, every file of its runs' pages has the same bytes as a
fresh render would give, and is taken as it is (sitegen.site.engine.write.SiteWriter.take_unit)
instead of rendered. The same holds for the
operation's own pages, its catalog shard and the pages of the implementations only it
has runs of. A link from a run to a run of another operation (a rerun of it) puts
everything in one group, so no dependency is ever missed;
tests/site/test_incremental_build.py compares such builds with cold ones.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from sitegen.registry.lockfile import LOCK_NAME
from sitegen.site.engine.fingerprint import Inputs
from sitegen.facts.index import Index

EVERYTHING = "*"


def group_keys(index: Index, records: Path, inputs: Inputs, impls: dict[str, list]) -> tuple[dict[str, str], str, dict[str, str]]:
    """Operation name → key of its runs' pages (one group EVERYTHING when runs of two operations are linked),
    the key of all but the run files (sitegen, the options, settings, shared documents and pages), and
    each registry file that belongs to one group → that group's operation (sitegen.site.engine.explain names them).
    ``impls``: the implementations whose pages go with each operation (listings.implementations_by_operation)."""
    own: dict[str, str] = {}
    groups: dict[str, list[str]] = {}
    split = True
    relative_of = _relative_to(records)
    for facts in index.runs:
        linked = [facts.rerun_of, *facts.reruns]
        if any(other is not None and other.operation.name != facts.operation.name for other in linked):
            split = False
        relative = relative_of(facts.record.file)
        if facts.record.pointer != "$" or relative not in inputs.files:
            # A run inside a bundle shares its file with a protocol and an environment that
            # runs of other operations may use: that file stays shared.
            continue
        # A file of its own holds exactly one run.
        own[relative] = facts.operation.name
        groups.setdefault(facts.operation.name, []).append(f"{relative}\0{inputs.files[relative]}")
    # A note on a run shows on that run's page and its operation's: a file holding one
    # attestation of an indexed run goes with the run's group, so `attest` re-renders one
    # operation's pages instead of the whole site. A note on a run not in the index (or a
    # bundle of notes) stays shared, where any change rebuilds everything.
    for attestation in index.registry.of_kind("Attestation"):
        target = index.by_digest.get(attestation.model.spec.run)
        relative = relative_of(attestation.file)
        if target is None or attestation.pointer != "$" or relative not in inputs.files:
            continue
        own[relative] = target.operation.name
        groups.setdefault(target.operation.name, []).append(f"{relative}\0{inputs.files[relative]}")
    shared = hashlib.sha256(inputs.sitegen.encode())
    # GPU path segments are chosen over every run's product at once (index.gpu_slugs).
    shared.update(repr(sorted({(f.product, f.gpu_slug) for f in index.runs})).encode())
    for relative, digest in sorted(inputs.files.items()):
        # The lock changes with every edit and shows on no page: it only decides whether
        # the build may run at all.
        if relative not in own and relative != LOCK_NAME and not _plain_folder(records, relative, digest):
            shared.update(f"\0{relative}\0{digest}".encode())
    if not split:
        everything = shared.copy()
        for relative in sorted(own):
            everything.update(f"\0{relative}\0{inputs.files[relative]}".encode())
        return {EVERYTHING: everything.hexdigest()}, shared.hexdigest(), own
    # An implementation's pages go with an operation's group only while all its runs are
    # of that operation, which runs of other operations can change.
    keys = {}
    for operation, members in groups.items():
        key = shared.copy()
        for member in sorted(members):
            key.update(b"\0" + member.encode())
        key.update(repr(sorted(r.name for r in impls.get(operation, []))).encode())
        keys[operation] = key.hexdigest()
    return keys, shared.hexdigest(), own


def _plain_folder(records: Path, relative: str, digest: str) -> bool:
    """A real folder (not a link to one): what shows on pages is its files', each counted on its own.

    The first `attest` makes attestations/, which must not rebuild every group. A linked
    folder stays in the key: a second link to a folder adds no file entry of its own."""
    return digest == "folder" and not os.path.islink(records / relative.rstrip("/"))


def _relative_to(records: Path):
    """file → its path relative to ``records``, "/"-separated; files are below it, as the loader found them."""
    prefix = os.path.join(str(records), "")

    def relative(file: str) -> str:
        # os.path.relpath resolves both paths on every call: most of group_keys' time.
        inside = file[len(prefix):] if file.startswith(prefix) else os.path.relpath(file, records)
        return inside.replace(os.sep, "/")

    return relative


def group_of(keys: dict[str, str], operation: str) -> str | None:
    """The group a run of ``operation`` belongs to, or None if its pages must be rendered."""
    if EVERYTHING in keys:
        return EVERYTHING
    return operation if operation in keys else None
