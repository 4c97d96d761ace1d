"""What every importer shares: the plan of documents, their validation, GPUs, the write, the report.

An importer reads its source into a Plan (documents and their bytes, problems, warnings),
one unit at a time (a CSV row, a timing), each all or nothing; then ``write_plan`` checks
the registry and writes the plan through one registry transaction, so a re-import of the
same data changes no byte; ``finish`` prints the report. A new source is a module that
fills a Plan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
from sitegen.core.documents import document
from sitegen.core.identity import name_slug
from sitegen.registry.layout import path_of, render
from sitegen.core.problems import InputError, Problem


class RowError(ValueError):
    """A unit (row, timing) that cannot be imported; the message names the field or document at fault."""


@dataclass
class Plan:
    """What an import would write and what went wrong.

    ``documents`` and ``files`` map the same registry-relative paths to a document and its bytes.
    """

    documents: dict[str, dict[str, Any]] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    rows: int = 0
    imported: int = 0
    newest_day: str | None = None
    _origin: dict[str, str] = field(default_factory=dict)

    def seen_day(self, day: str) -> None:
        if self.newest_day is None or day > self.newest_day:
            self.newest_day = day


def _read_back(rendered: bytes, name: str) -> Problem | None:
    """The first problem ``sitegen validate`` would find in these bytes: parsed strictly (integers
    within ±(2**53 - 1), no number past a double), then the kind's model and a run's figures."""
    from sitegen.format.loader import load_bytes

    try:
        load_bytes(rendered, name)
    except InputError as exc:
        return exc.problems[0]
    return None


def validate(document: dict[str, Any], role: str, rendered: bytes | None = None) -> None:
    """Validate one document as the registry reads it back; RowError names the role and JSON path."""
    problem = _read_back(render(document) if rendered is None else rendered, role)
    if problem is not None:
        raise RowError(f"{role} {problem.path}: {problem.message}")


def unvalidated(root: Path, plan: Plan) -> list[Problem]:
    """The problems of every document in ``plan.files`` that ``accept`` did not validate."""
    found = (_read_back(data, str(root / path)) for path, data in sorted(plan.files.items())
             if path not in plan._origin and path.endswith(".json"))
    return [problem for problem in found if problem is not None]


def accept(plan: Plan, origin: str, docs: dict[str, dict[str, Any]], group: str) -> None:
    """Add one unit's documents (role → document, "run" last) to ``plan``, all or none.

    ``origin`` names the unit in messages ("line 12"); ``group`` is the operation folder of
    workloads and runs. A document another unit already produced must have the same bytes.
    """
    staged: dict[str, tuple[dict[str, Any], bytes]] = {}
    for role, doc in docs.items():
        path = path_of(doc, group)
        rendered = render(doc)
        before = plan.files.get(path)
        if before is not None and before != rendered:
            raise RowError(f"{role} {path} differs from the one {plan._origin[path]} produced")
        if before is not None and role == "run":
            raise RowError(f"same run as {plan._origin[path]} ({doc['metadata']['name']})")
        # A path already accepted holds these very bytes, validated then.
        if before is None:
            validate(doc, role, rendered)
        staged[path] = (doc, rendered)
    for path, (doc, rendered) in staged.items():
        plan.files.setdefault(path, rendered)
        plan.documents.setdefault(path, doc)
        plan._origin.setdefault(path, origin)


# (pattern, vendor, architecture), first match wins; word boundaries keep A10 from A100.
GPUS: list[tuple[str, str, str]] = [
    (r"\bG?B[12]00\b", "nvidia", "sm_100"),
    (r"\bG?H[128]00\b", "nvidia", "sm_90"),
    (r"\bA[18]00\b", "nvidia", "sm_80"),
    (r"\bRTX 40[6-9]0\b|\bL40S?\b|\bL4\b|\bRTX 6000 Ada\b", "nvidia", "sm_89"),
    (r"\bRTX 30[5-9]0\b|\bA10G?\b|\bA40\b|\bRTX A[456]000\b", "nvidia", "sm_86"),
    (r"\bRTX 50[6-9]0\b", "nvidia", "sm_120"),
    (r"\bV100\b", "nvidia", "sm_70"),
    (r"\bT4\b", "nvidia", "sm_75"),
    (r"\bMI3[02]5?X\b|\bMI300A\b", "amd", "gfx942"),
    (r"\bMI250X?\b|\bMI210\b", "amd", "gfx90a"),
]
_VENDOR_HINTS = [
    (r"nvidia|geforce|tesla|quadro|\brtx\b|\bgtx\b", "nvidia"),
    (r"\bamd\b|radeon|instinct|\bmi\d", "amd"),
    (r"intel|gaudi|\barc\b", "intel"),
]


def gpu_hardware(gpu_name: str) -> tuple[dict[str, str], bool]:
    """Hardware of a GPU name, and whether the name was known (else a guessed vendor)."""
    for pattern, vendor, architecture in GPUS:
        if re.search(pattern, gpu_name, re.IGNORECASE):
            return {"vendor": vendor, "product": gpu_name, "architecture": architecture}, True
    vendor = next((v for p, v in _VENDOR_HINTS if re.search(p, gpu_name, re.IGNORECASE)), "unknown")
    return {"vendor": vendor, "product": gpu_name, "architecture": "unknown"}, False


def gpu_slug(gpu_name: str) -> str:
    """The GPU in names and ids: "NVIDIA B200" → "nvidia-b200"."""
    return name_slug(gpu_name)


def environment_document(name: str, title: str, gpu_name: str, software: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """An ExecutionEnvironment on ``gpu_name`` (the driver's product string), and whether the GPU was known."""
    hardware, known = gpu_hardware(gpu_name)
    doc = document("ExecutionEnvironment", {"name": name, "title": title},
                   {"hardware": hardware, "software": software})
    return doc, known


def write_plan(out: Path, plan: Plan, source: tuple[str, dict[str, Any]], published: str | None,
               fallback_day: str | None, *, newest_wins: bool = False) -> tuple[dict[str, Any], list[Problem]]:
    """Check ``out`` and write the plan and ``sources/<id>.toml`` in one transaction.

    Returns the summary (files written and unchanged, whether the lock changed) and the
    problems of a registry that is already wrong or would be; then nothing is written.
    ``newest_wins``: the source's date is the later of the existing file's and
    ``fallback_day``, so importing several snapshots in any order gives the same file.
    """
    from sitegen.registry.write import check_target, existing_published, source_file, write_files, write_lock
    from sitegen.registry.lockfile import LOCK_NAME
    from sitegen.registry.transaction import registry_transaction

    source_id, fields = source
    summary: dict[str, Any] = {}
    problems: list[Problem] = []
    target = None
    # One transaction under the registry's writer lock: the check, the documents and the
    # lock land together or not at all, and no other writer slips in between.
    # What the importer built by other means than accept is held to the same reading.
    problems += unvalidated(out, plan)
    if problems:
        return summary, problems
    with registry_transaction(out) as txn:
        try:
            # Before any write: a registry that is already wrong (or would be, with these
            # documents) is reported and left exactly as it was.
            target = check_target(out, plan.documents)
        except InputError as exc:
            problems += exc.problems
        if target is not None:
            if newest_wins and published is None and fallback_day is not None:
                existing = existing_published(out / f"sources/{source_id}.toml", out)
                published = max(fallback_day, existing) if existing else fallback_day
            source_path, source_bytes = source_file(out, source_id, fields, published, fallback_day)
            files = {path: data for path, data in plan.files.items() if path not in target.reused}
            result = write_files(txn, {**files, source_path: source_bytes})
            lock_changed = write_lock(txn, target.lock)
            summary.update(written=len(result.written), unchanged=result.unchanged, lockChanged=lock_changed)
    if target is not None and target.unlocked:
        click.echo(f"{out}: warning: {target.unlocked} document(s) this import did not write are not in "
                   f"{LOCK_NAME}; review them, then run `sitegen lock {out}`", err=True)
    return summary, problems
