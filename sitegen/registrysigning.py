"""Signatures written into an existing registry: `sitegen sign`, by the holder of a trusted key."""

from __future__ import annotations

import json
from pathlib import Path

from sitegen.problems import InputError, Problem


def sign_registry(records: Path, key: Path, runs: tuple[str, ...] = ()) -> tuple[list, int]:
    """Sign ``runs`` of ``records`` (default: every controlled non-dry rerun not yet signed) with ``key``, in one registry
    transaction; (the runs signed, the number of files changed)."""
    from sitegen.layout import render
    from sitegen.registry import open_registry
    from sitegen.signing import load_private_key, sign_run
    from sitegen.transaction import registry_transaction

    private = load_private_key(key)
    if not records.is_dir():
        raise InputError([Problem(str(records), "$", "no such registry folder")])
    with registry_transaction(records) as txn:
        registry = open_registry(records)
        chosen = _chosen(registry, runs, records)
        files: dict[str, dict] = {}
        for record in chosen:
            relative = Path(record.file).relative_to(records).as_posix()
            doc = files.setdefault(relative, json.loads(txn.read(relative)))
            target = doc["run"] if record.pointer == "$.run" else doc
            target["metadata"]["signature"] = sign_run(record, registry.by_digest, private)
        changed = 0
        for relative, doc in sorted(files.items()):
            # A bundle keeps the shape it was written in; a single document the registry's layout.
            data = (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode() if "kind" not in doc else render(doc)
            if txn.read(relative) != data:
                txn.write(relative, data)
                changed += 1
    return chosen, changed


def _chosen(registry, runs: tuple[str, ...], records: Path) -> list:
    all_runs = registry.of_kind("BenchmarkRun")
    if runs:
        by_name = {r.name: r for r in all_runs}
        missing = [name for name in runs if name not in by_name]
        if missing:
            raise InputError([Problem(str(records), "$", f"no BenchmarkRun named {name!r}") for name in missing])
        return [by_name[name] for name in runs]
    # Unsigned ones only: a signature already there may be by another key, valid for when
    # that run ran (a new key's window starts later, so re-signing would void it).
    return [r for r in all_runs if _controlled(r.model.spec) and not r.model.metadata.signature]


def _controlled(spec) -> bool:
    evidence = spec.evidence
    return bool(evidence and evidence.integrity and not evidence.dryRun
                and (evidence.command or "").startswith("sitegen rerun"))


def unsigned_reruns(registry) -> list[Problem]:
    """One Problem per controlled rerun of a fully loaded ``registry`` that carries no signature
    (``verify --strict``): such a run claims `sitegen rerun` measured it, and nothing shows who did."""
    return [Problem(run.file, f"{run.pointer}.metadata.signature",
                    "a controlled rerun without a signature: it holds no place until a trusted key signs it")
            for run in registry.of_kind("BenchmarkRun")
            if _controlled(run.model.spec) and not run.model.metadata.signature]
