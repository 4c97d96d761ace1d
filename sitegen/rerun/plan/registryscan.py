"""A registry folder read without pydantic: documents by digest and by kind/name.

The GPU host has no pydantic, so --like and the never-overwrite checks read records with
the strict JSON reader and the digest function alone; `sitegen validate` checks them fully.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sitegen.core.digest import document_digest
from sitegen.core.problems import InputError
from sitegen.core.strictjson import read_file

BUNDLE = ("run", "protocol", "environment")


@dataclass
class Scan:
    by_digest: dict[str, dict[str, Any]] = field(default_factory=dict)
    by_name: dict[str, tuple[str, str]] = field(default_factory=dict)  # "Kind/name" -> (digest, file)

    def add(self, doc: Any, file: str) -> None:
        if not (isinstance(doc, dict) and isinstance(doc.get("kind"), str) and isinstance(doc.get("spec"), dict)
                and isinstance(doc.get("metadata"), dict) and "apiVersion" in doc):
            return
        digest = document_digest(doc)
        self.by_digest.setdefault(digest, doc)
        name = doc["metadata"].get("name")
        if isinstance(name, str):
            self.by_name.setdefault(f"{doc['kind']}/{name}", (digest, file))


def scan(root: Path) -> Scan:
    """Every document under root (bundles opened), hidden folders and unreadable files skipped."""
    out = Scan()
    if not root.is_dir():
        return out
    for path in sorted(root.rglob("*.json")):
        if any(part.startswith(".") for part in path.relative_to(root).parts):
            continue
        try:
            raw = read_file(path)
        except InputError:  # not ours to judge here: `sitegen validate` names it
            continue
        if isinstance(raw, dict) and "kind" not in raw:
            for key in BUNDLE:
                out.add(raw.get(key), str(path))
        else:
            out.add(raw, str(path))
    return out


def find_run(found: Scan, run_id: str) -> tuple[str, dict[str, Any]] | None:
    """A BenchmarkRun by digest (sha256:…, or a unique hex prefix of 12+) or by name."""
    if run_id.startswith("sha256:") or len(run_id) >= 12 and all(c in "0123456789abcdef" for c in run_id):
        prefix = run_id if run_id.startswith("sha256:") else "sha256:" + run_id
        hits = [(d, doc) for d, doc in found.by_digest.items() if d.startswith(prefix) and doc["kind"] == "BenchmarkRun"]
        if len(hits) == 1:
            return hits[0]
    entry = found.by_name.get(f"BenchmarkRun/{run_id}")
    if entry is not None:
        return entry[0], found.by_digest[entry[0]]
    return None
