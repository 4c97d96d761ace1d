"""What the harness importers' tests share: run `sitegen import`, read what it wrote, snapshot a folder."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from sitegen.cli.main import main

DATA = Path(__file__).resolve().parent / "data"


def run_import(name: str, path: Path, out: Path, *options: str):
    return CliRunner().invoke(main, ["import", name, str(path), "--out", str(out), *options])


def documents(out: Path, folder: str) -> list[dict]:
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted((out / folder).rglob("*.json"))]


def by_digest(out: Path) -> dict[str, dict]:
    """Every document of the registry by its digest, as the runs reference them."""
    from sitegen.core.digest import document_digest

    return {document_digest(d): d for folder in ("operations", "workloads", "implementations", "protocols", "environments")
            for d in documents(out, folder)}


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(root.rglob("*")) if p.is_file()}


def verified(out: Path) -> bool:
    return CliRunner().invoke(main, ["verify", str(out)]).exit_code == 0


def run_of(out: Path, external_id: str) -> dict:
    """The one run the registry holds for the tool's result named ``external_id``."""
    (run,) = [r for r in documents(out, "runs") if r["spec"]["sourceNative"]["externalId"] == external_id]
    return run


def edited(source: Path, tmp_path: Path, edit) -> Path:
    """A copy of the tool's JSON file with ``edit`` applied to its data (a malformed input made from a real one)."""
    data = json.loads(source.read_text())
    edit(data)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data))
    return path
