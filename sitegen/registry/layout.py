"""Where a document lives in a registry folder, and the bytes its file holds.

The importer and the GPU rerun write the same layout: operations/, workloads/<operation>/,
implementations/, protocols/, environments/, runs/<operation>/<name>.json. No pydantic:
the rerun harness imports this on hosts without it.
"""

from __future__ import annotations

import json
from typing import Any

from sitegen.core.identity import operation_name

FOLDERS = {
    "OperationSpec": "operations", "WorkloadCase": "workloads", "ImplementationRevision": "implementations",
    "BenchmarkProtocol": "protocols", "ExecutionEnvironment": "environments", "BenchmarkRun": "runs",
}
KEY_ORDER = ("apiVersion", "kind", "metadata", "spec")


def path_of(doc: dict[str, Any], operation: str) -> str:
    """Registry-relative file of a document: runs and workloads are grouped by operation."""
    folder = FOLDERS[doc["kind"]]
    name = doc["metadata"]["name"]
    if doc["kind"] in ("WorkloadCase", "BenchmarkRun"):
        return f"{folder}/{operation_name(operation)}/{name}.json"
    return f"{folder}/{name}.json"


def _compact_lists(value: Any, slots: list[str]) -> Any:
    # Long lists of numbers (raw samples) go on one line each: thousands of samples one per
    # line would make a run file ten times longer with nothing gained for a reader.
    if isinstance(value, dict):
        return {k: _compact_lists(v, slots) for k, v in value.items()}
    if isinstance(value, list):
        if len(value) > 8 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value):
            slots.append(json.dumps(value, separators=(", ", ": ")))
            return f"\u0000{len(slots) - 1}\u0000"
        return [_compact_lists(v, slots) for v in value]
    return value


def render(doc: dict[str, Any]) -> bytes:
    """apiVersion, kind, metadata, spec; 2-space indent; long number lists on one line; UTF-8."""
    slots: list[str] = []
    ordered = _compact_lists({k: doc[k] for k in KEY_ORDER}, slots)
    text = json.dumps(ordered, indent=2, ensure_ascii=False)
    for i, slot in enumerate(slots):
        text = text.replace(f'"\\u0000{i}\\u0000"', slot, 1)
    return (text + "\n").encode("utf-8")
