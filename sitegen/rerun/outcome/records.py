"""Documents a rerun writes, and writing them into a registry folder without overwriting anything.

Layout as the importer's (sitegen.registry.layout): operations/, workloads/<operation>/, implementations/,
protocols/, environments/, runs/<operation>/<name>.json. Shared documents are written only when no
document of the same digest is there already; a run file is never replaced.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sitegen.registry import layout
from sitegen.core.digest import document_digest
from sitegen.core.documents import document, named
from sitegen.core import identity
from sitegen.registry.layout import render
from sitegen.core.problems import InputError, Problem
from sitegen.core.workload import Case
from sitegen.rerun.plan.registryscan import scan


def path_of(doc: dict[str, Any], operation: str) -> str:
    """Registry-relative file of a rerun document of ``operation``."""
    return layout.path_of(doc, operation)


def implementation_doc(ref, op: dict[str, Any], *, run_version: str | None, version: str | None,
                       repository: str | None) -> dict[str, Any]:
    """ImplementationRevision of one compared implementation (sitegen.rerun.plan.plugins.ImplRef).

    One shipped inside sitegen describes itself (Liger's exactly as imported, so that reruns
    share its pages); any other is described here from what was read without running it: its
    distribution and version, the commit of a clean checkout it lives in, its source digest.
    The version the running code reported (``run_version``) is trusted only for sitegen's own.
    """
    if ref.internal:
        from sitegen.operations import import_target
        from sitegen.core.revision import kernel_commit

        impl = import_target(ref.target, ref.name)()
        return impl.document(op, version=version, commit=kernel_commit(), repository=repository, run_version=run_version)
    module, _, cls = ref.target.partition(":")
    project = ref.distribution or module.split(".")[0]
    revision = {"project": project, **{k: v for k, v in (
        ("commit", ref.commit), ("version", ref.dist_version), ("sourceDigest", ref.source_digest)) if v}}
    title = f"{project} {ref.dist_version}" if ref.dist_version else project
    doc = document("ImplementationRevision",
                   {"name": "", "title": f"{title} · {op['metadata'].get('title') or op['metadata']['name']}"},
                   {"name": ref.name, "projectRevision": revision, "operation": {"specDigest": document_digest(op)},
                    "callable": {"module": module, "name": cls}})
    return named(doc, f"{identity.name_slug(ref.name)}-{op['metadata']['name']}")


def environment_doc(spec: dict[str, Any]) -> dict[str, Any]:
    hw = spec["hardware"]
    doc = document("ExecutionEnvironment", {"name": "", "title": f"sitegen rerun host · {hw['product']}"}, spec)
    return named(doc, "rerun-" + identity.name_slug(hw["product"]))


def run_doc(op, case: Case, result: dict[str, Any], *, digests: dict[str, str], product: str, stamp: str,
            observed_at: str, instance: dict[str, Any], dry_run: bool, command: str,
            rerun_of: dict[str, str] | None = None, instance_tag: str = "") -> dict[str, Any]:
    """The BenchmarkRun of one case from its assembled outcome."""
    w = case.workload
    spec: dict[str, Any] = {**digests, "timedPass": case.timed_pass, "status": result["status"]}
    if result.get("statusReason"):
        spec["statusReason"] = result["statusReason"]
    spec["correctness"] = result["correctness"]
    if "timing" in result:
        spec["timing"] = result["timing"]
    evidence: dict[str, Any] = {"command": command}
    if dry_run:
        evidence["dryRun"] = True
    if result.get("integrity"):
        evidence["integrity"] = result["integrity"]
    for key in ("gpuBefore", "gpuAfter"):
        if result.get(key):
            evidence[key] = result[key]
    if instance:
        evidence["instance"] = instance
    if rerun_of:
        evidence["rerunOf"] = rerun_of
    if result.get("details"):
        evidence["details"] = result["details"]
    spec["evidence"] = evidence
    spec["observedAt"] = observed_at
    parts = ["rerun", op.name, case.timed_pass, case.impl, identity.name_slug(product),
             identity.case_slug(w.sizes, w.dtype), stamp]
    if instance_tag:
        parts.append(instance_tag)
    metadata = {
        "name": "-".join(identity.name_slug(p) for p in parts),
        "title": f"{op.title or identity.kernel_title(op.name)} · {case.impl} · {case.timed_pass}",
        "labels": {"harness": "sitegen-rerun", **({"dry_run": "true"} if dry_run else {})},
    }
    return document("BenchmarkRun", metadata, spec)


def sign_runs(runs: list[dict[str, Any]], shared: list[dict[str, Any]], found, key_file: Path) -> None:
    """Put each run's signature (sitegen.core.signing) in its metadata: by the key in ``key_file``, over the digests
    of the run and of the documents it references, found among ``shared`` or already in the registry."""
    from sitegen.core import signing

    key = signing.load_private_key(key_file)
    by_digest = {**found.by_digest, **{document_digest(doc): doc for doc in shared}}
    for doc in runs:
        spec = doc["spec"]
        refs = {name: spec[field] for name, field in signing.REFERENCED.items()}
        refs["operation"] = by_digest[spec["workloadDigest"]]["spec"]["operationSpecDigest"]
        doc["metadata"]["signature"] = signing.sign(key, signing.payload(document_digest(doc), refs))


def plan_writes(out: Path, shared: list[dict[str, Any]], runs: list[dict[str, Any]], operation: str,
                key: Path | None = None) -> list[tuple[Path, bytes]]:
    """(path, bytes) to create, each run signed with ``key`` when given; InputError (nothing written) on any
    conflict with what is there."""
    found = scan(out)
    if key is not None:
        sign_runs(runs, shared, found, key)
    problems: list[Problem] = []
    writes: dict[Path, bytes] = {}
    for doc in shared:
        digest = document_digest(doc)
        if digest in found.by_digest:
            continue  # the same document is there already (under whatever metadata)
        path = out / path_of(doc, operation)
        held = found.by_name.get(f"{doc['kind']}/{doc['metadata']['name']}")
        if held is not None:
            problems.append(Problem(held[1], "$.spec", f"{doc['kind']} {doc['metadata']['name']!r} exists with other content ({held[0]}); not overwritten"))
        elif path.exists():
            problems.append(Problem(str(path), "$", "file exists; not overwritten"))
        else:
            writes.setdefault(path, render(doc))
    for doc in runs:
        path = out / path_of(doc, operation)
        if path.exists() or path in writes or f"BenchmarkRun/{doc['metadata']['name']}" in found.by_name:
            problems.append(Problem(str(path), "$.metadata.name", "a run of this name exists; never overwritten"))
        else:
            writes[path] = render(doc)
    if problems:
        raise InputError(problems)
    return sorted(writes.items())


def write_all(out: Path, writes: list[tuple[Path, bytes]], *, create_lock: bool = False,
              journal: dict[str, str] | None = None) -> list[str]:
    """Create every file, and add them to digests.lock, in one registry transaction.

    The lock is updated only where one exists, or made when ``create_lock`` (a dry run into a
    folder that held nothing: a rehearsal proves nothing, so there is nothing to review, and a
    registry holding it must still build and verify). The rerun journal becomes ``journal`` (the
    entries read before measuring began) and the files written here (sitegen.registry.journal).
    """
    import json

    from sitegen.registry.lockfile import LOCK_NAME, checked_lock_bytes, read_lock
    from sitegen.registry import journal as rerun_journal
    from sitegen.registry.transaction import registry_transaction

    with registry_transaction(out) as txn:
        if writes:
            entries = dict(rerun_journal.read(out) if journal is None else journal)
            entries.update({path.relative_to(out).as_posix(): rerun_journal.digest(data) for path, data in writes})
            txn.write(rerun_journal.JOURNAL, rerun_journal.render(entries))
        locked = read_lock(out)
        if locked is None and create_lock:
            locked = {}
        for path, data in writes:
            txn.write(path.relative_to(out).as_posix(), data, new=True)
            if locked is not None:
                doc = json.loads(data)
                locked[f"{doc['kind']}/{doc['metadata']['name']}"] = document_digest(doc)
        if locked is not None and writes:
            txn.write(LOCK_NAME, checked_lock_bytes(out, locked))
    return [str(path) for path, _ in writes]
