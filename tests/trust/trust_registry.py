"""Shared by the trust tests: a small registry cut from the bundled one around one H200 rerun."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from click.testing import CliRunner, Result

from sitegen.cli.main import main

REPO = Path(__file__).resolve().parents[2]
RECORDS = REPO / "records"
# A bundled H200 rerun of sitegen's kernel, as `sitegen rerun` wrote it.
# Found by pattern: a re-measure replaces the runs and their names' dates.
RUN = min((RECORDS / "runs" / "jsd").glob("rerun-jsd-full-sitegen-nvidia-h200-tokens2048-vocab128256-fp32-*.json"))
OTHER_RUN = min((RECORDS / "runs" / "jsd").glob("rerun-jsd-backward-sitegen-nvidia-h200-tokens4096-vocab128256-bf16-*.json"))


def cli(*args: str | Path, input: str | None = None) -> Result:
    return CliRunner().invoke(main, [str(a) for a in args], input=input)


def problem_lines(result: Result) -> list[str]:
    return [line for line in result.stderr.splitlines() if line and not line.endswith(" problem(s) found.")]


@cache
def _bundled() -> dict[str, tuple[str, dict]]:
    """digest → (relative path, document) of every single-document file of the bundled registry."""
    from sitegen.core.digest import document_digest

    out = {}
    for path in RECORDS.rglob("*.json"):
        if path.name.startswith(".") or "runs" in path.parts:
            continue
        doc = json.loads(path.read_text())
        if "kind" in doc:
            out[document_digest(doc)] = (str(path.relative_to(RECORDS)), doc)
    return out


def write_json(path: Path, doc: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n")


def mini_registry(root: Path, *runs: Path) -> Path:
    """``root`` holding ``runs`` (default RUN) unsigned, every document they reference and the bundled settings, unlocked."""
    bundled = _bundled()
    for run_path in runs or (RUN,):
        run = json.loads(run_path.read_text())
        run["metadata"].pop("signature", None)  # the tests sign with keys of their own
        write_json(root / "runs" / run_path.name, run)
        for field in ("implementationDigest", "workloadDigest", "protocolDigest", "environmentDigest"):
            relative, doc = bundled[run["spec"][field]]
            write_json(root / relative, doc)
            operation = doc["spec"].get("operationSpecDigest") or (doc["spec"].get("operation") or {}).get("specDigest")
            if operation:
                relative, op = bundled[operation]
                write_json(root / relative, op)
    for name in ("gpus.toml",):
        (root / name).write_text((RECORDS / name).read_text())
    journal_runs(root)
    return root


def journal_runs(root: Path) -> None:
    """Journal every run file of ``root`` as `sitegen rerun` journals what it writes, for `sign` to find
    (a test that edits a run in place journals it again, as a rerun that wrote those bytes would have)."""
    from sitegen.registry import journal

    entries = {f"runs/{p.name}": journal.digest(p.read_bytes()) for p in sorted((root / "runs").glob("*.json"))}
    (root / journal.JOURNAL).write_bytes(journal.render(entries))


def edit_run(root: Path, change, name: str = RUN.name) -> Path:
    """Apply ``change(spec)`` to a run of ``root`` and write it back."""
    path = root / "runs" / name
    doc = json.loads(path.read_text())
    change(doc["spec"])
    write_json(path, doc)
    return path
