"""Operations a rerun can measure, found by name: the ones sitegen ships, the
``sitegen.operations`` entry points of installed distributions, or ``pkg.module:Name``.

An operation is the measurement's contract (inputs, float64 reference, tolerances, floors), so
its module is imported where it is named; implementations, which are untrusted, are not
(sitegen.rerun.plan.plugins).
"""

from __future__ import annotations

import importlib
import importlib.metadata

from sitegen.operations.base import Implementation, Operation
from sitegen.problems import InputError, Problem

OPERATIONS_GROUP = "sitegen.operations"
IMPLEMENTATIONS_GROUP = "sitegen.implementations"
# Shipped with sitegen; an installed sitegen also declares them as entry points (pyproject).
BUILTIN = {
    "jsd": "sitegen.operations.jsd:JSD",
    "cross-entropy": "sitegen.operations.liger_losses:CrossEntropy",
    "kl-div": "sitegen.operations.liger_losses:KLDiv",
    "fused-linear-jsd": "sitegen.operations.fused_linear_jsd:FusedLinearJSD",
    "rms-norm": "sitegen.operations.rms_norm:RMSNorm",
}


def entry_points(group: str) -> dict[str, importlib.metadata.EntryPoint]:
    """name → entry point, first distribution wins (sorted by distribution name, so stable)."""
    found: dict[str, importlib.metadata.EntryPoint] = {}
    eps = sorted(importlib.metadata.entry_points(group=group), key=lambda e: ((e.dist.name if e.dist else ""), e.name))
    for ep in eps:
        found.setdefault(ep.name, ep)
    return found


def known() -> dict[str, str]:
    """Every operation name found → its "module:Name"."""
    out = dict(BUILTIN)
    for name, ep in entry_points(OPERATIONS_GROUP).items():
        out.setdefault(name, ep.value)
    return out


def import_target(target: str, where: str):
    """The object "pkg.module:Name" names; InputError (one line) when it cannot be imported."""
    module, _, attr = target.partition(":")
    if not module or not attr:
        raise InputError([Problem(where, "$", f"{target!r} is not pkg.module:Name")])
    try:
        obj = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except Exception as exc:  # a plugin that fails to import is reported, not raised
        raise InputError([Problem(where, "$", f"cannot import {target}: {type(exc).__name__}: {exc}")]) from None
    return obj


def load(ref: str) -> Operation:
    """The operation ``ref`` names (a known name or pkg.module:Name), instantiated."""
    targets = known()
    target = targets.get(ref) or (ref if ":" in ref else None)
    if target is None:
        raise InputError([Problem("--operation", "$", f"unknown operation {ref!r}; known: {', '.join(sorted(targets))}, "
                                                       "or pkg.module:Name")])
    obj = import_target(target, "--operation")
    op = obj() if isinstance(obj, type) else obj
    if not isinstance(op, Operation):
        raise InputError([Problem("--operation", "$", f"{target} is not a sitegen.operations.base.Operation")])
    op.target = target
    return op


def by_name(name: str) -> Operation | None:
    """The operation registered under ``name`` (a registry operation's name), or None."""
    return load(name) if name in known() else None


__all__ = ["IMPLEMENTATIONS_GROUP", "Implementation", "OPERATIONS_GROUP", "Operation", "by_name", "entry_points",
           "import_target", "known", "load"]
