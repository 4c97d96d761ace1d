"""Signatures written into an existing registry: `sitegen sign`, by the holder of a trusted key."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from sitegen.core.problems import InputError, Problem


@dataclass
class Signed:
    """What `sitegen sign` did: the runs it signed, the files it changed, and what it would not sign."""

    runs: list = field(default_factory=list)
    files: int = 0
    refused: list[str] = field(default_factory=list)
    """One line per journal entry whose bytes changed since the rerun wrote them, or that is gone."""
    left: list[str] = field(default_factory=list)
    """Unsigned controlled reruns no rerun journalled here: never signed unless named."""


def sign_registry(records: Path, key: Path, runs: tuple[str, ...] = ()) -> Signed:
    """Sign ``runs`` of ``records`` with ``key`` in one registry transaction; by default the unsigned
    controlled runs of the files the rerun journal lists whose bytes are unchanged (a signature says
    "this machine ran it": a file no rerun wrote here, or one edited since, is signed only by name)."""
    from sitegen.registry.layout import render
    from sitegen.registry.folder import open_registry
    from sitegen.registry import journal
    from sitegen.core.signing import load_private_key, sign_run
    from sitegen.registry.transaction import registry_transaction

    private = load_private_key(key)
    if not records.is_dir():
        raise InputError([Problem(str(records), "$", "no such registry folder")])
    done = Signed()
    with registry_transaction(records) as txn:
        registry = open_registry(records)
        if runs:
            chosen = _named(registry, runs, records)
        else:
            entries = journal.parse(txn.read(journal.JOURNAL))
            chosen = _journalled(registry, records, entries, txn, done)
            if entries:
                txn.write(journal.JOURNAL, journal.render({}))
        files: dict[str, dict] = {}
        for record in chosen:
            relative = Path(record.file).relative_to(records).as_posix()
            doc = files.setdefault(relative, json.loads(txn.read(relative)))
            target = doc["run"] if record.pointer == "$.run" else doc
            target["metadata"]["signature"] = sign_run(record, registry.by_digest, private)
        for relative, doc in sorted(files.items()):
            # A bundle keeps the shape it was written in; a single document the registry's layout.
            data = (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode() if "kind" not in doc else render(doc)
            if txn.read(relative) != data:
                txn.write(relative, data)
                done.files += 1
    done.runs = chosen
    return done


def _named(registry, runs: tuple[str, ...], records: Path) -> list:
    by_name = {r.name: r for r in registry.of_kind("BenchmarkRun")}
    missing = [name for name in runs if name not in by_name]
    if missing:
        raise InputError([Problem(str(records), "$", f"no BenchmarkRun named {name!r}") for name in missing])
    return [by_name[name] for name in runs]


def _journalled(registry, records: Path, entries: dict[str, str], txn, done: Signed) -> list:
    from sitegen.registry import journal

    unchanged = set()
    for relative, wrote in sorted(entries.items()):
        data = txn.read(relative)
        if data is None:
            done.refused.append(f"{records / relative}: gone since the rerun wrote it; nothing to sign")
        elif journal.digest(data) != wrote:
            done.refused.append(f"{records / relative}: changed since the rerun wrote it; not signed (name its runs to sign them)")
        else:
            unchanged.add(relative)
    chosen = []
    for run in registry.of_kind("BenchmarkRun"):
        # Unsigned ones only: a signature already there may be by another key, valid for when
        # that run ran (a new key's window starts later, so re-signing would void it).
        if not _controlled(run.model.spec) or run.model.metadata.signature:
            continue
        if Path(run.file).relative_to(records).as_posix() in unchanged:
            chosen.append(run)
        else:
            done.left.append(run.name)
    return chosen


def _controlled(spec) -> bool:
    """A rerun that is no rehearsal: integrity checks are recorded by `sitegen rerun` alone, so a run that
    carries them is one whatever its command says (the site holds such a run to Verified the same way)."""
    evidence = spec.evidence
    return bool(evidence and evidence.integrity and not evidence.dryRun)


def unsigned_reruns(registry) -> list[Problem]:
    """One Problem per controlled rerun of a fully loaded ``registry`` that carries no signature
    (``verify --strict``): such a run claims `sitegen rerun` measured it, and nothing shows who did."""
    return [Problem(run.file, f"{run.pointer}.metadata.signature",
                    "a controlled rerun without a signature: it holds no place until a trusted key signs it")
            for run in registry.of_kind("BenchmarkRun")
            if _controlled(run.model.spec) and not run.model.metadata.signature]
