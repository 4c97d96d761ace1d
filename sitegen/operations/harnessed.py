"""Which recorded runs sitegen's own harness can measure again: the implementations it knows by
name and the protocol families it runs (``sitegen rerun --like`` plans from these, and a record
page offers the command only where they hold)."""

from __future__ import annotations

from typing import Any

from sitegen.rules.protocol import FAMILY, INTERPRET_FAMILY, LIGER_FAMILY

# Protocol family -> the timing mode the harness reruns it in.
MODES = {FAMILY: "controlled", INTERPRET_FAMILY: "controlled", LIGER_FAMILY: "do_bench"}


def impl_of(doc: dict[str, Any]) -> tuple[str | None, str | None]:
    """The harness name sitegen rerun knows an ImplementationRevision document by, and its version
    (None where sitegen has no harness for it)."""
    spec = doc["spec"]
    revision = spec.get("projectRevision", {})
    call = spec.get("callable") or {}
    project = revision.get("project", "")
    if project == "Liger-Kernel" or call.get("module", "").startswith("liger_kernel"):
        return ("liger" if spec.get("name") == "Liger" else None), revision.get("version")
    if project == "sitegen":
        return "sitegen", revision.get("version")
    if project == "PyTorch":
        variant = call.get("variant") or ("torch.compile" if spec.get("name") == "torch.compile" else "eager")
        return ("torch-compile" if variant == "torch.compile" else "torch"), revision.get("version")
    return None, None
