"""Operations a rerun can measure, found by name: the ones sitegen ships, the
``sitegen.operations`` entry points of installed distributions, or ``pkg.module:Name``.

An operation is the measurement's contract (inputs, float64 reference, tolerances, floors), so
its module is imported where it is named; implementations, which are untrusted, are not
(sitegen.rerun.plan.plugins).

Below the facts and the features. The rerun imports it on GPU hosts without pydantic, so it
imports only sitegen.core and sitegen.rules (the pydantic contract follows imports through it).
"""

from __future__ import annotations

import importlib
import importlib.metadata

from sitegen.operations.base import Implementation, Operation
from sitegen.core.problems import InputError, Problem

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
    except (Exception, SystemExit, KeyboardInterrupt) as exc:
        # A plugin that fails to import is reported, not raised: sys.exit(3) or a KeyboardInterrupt
        # raised by its module would otherwise end sitegen with that code, or a bare "Aborted!".
        raise InputError([Problem(where, "$", f"cannot import {target}: {_fault(exc)}")]) from None
    return obj


def _fault(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"its module called sys.exit({exc.code!r})"
    text = str(exc)
    return f"{type(exc).__name__}: {text[:300]}" if text else type(exc).__name__


# What a run reads of an operation that Operation gives no default for.
_REQUIRED = ("name", "family", "definition", "axes", "default_axes", "interpret_axes", "tolerances", "reference_name")


def _faults(op: Operation) -> list[str]:
    """What is wrong with an operation's class attributes, before any sweep reads them."""
    missing = [attr for attr in _REQUIRED if not hasattr(op, attr)]
    if missing:
        return [f"lacks {', '.join(missing)} (Operation's class attributes without a default)"]
    axes = op.axes
    if not isinstance(axes, tuple) or not axes or not all(isinstance(a, str) for a in axes):
        return [f"axes is {axes!r}, not a tuple of axis names"]
    faults = []
    for attr in ("default_axes", "interpret_axes"):
        sweep = getattr(op, attr)
        if not isinstance(sweep, dict):
            faults.append(f"{attr} is {type(sweep).__name__}, not a dict of axis -> sizes")
            continue
        lacking = [a for a in axes if a not in sweep]
        if lacking:
            faults.append(f"{attr} has no {', '.join(lacking)} (its axes: {', '.join(axes)})")
        bad = [a for a in axes if a in sweep and not (isinstance(sweep[a], (tuple, list)) and sweep[a] and all(
            isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in sweep[a]))]
        if bad:
            faults.append(f"{attr}[{bad[0]!r}] is {sweep[bad[0]]!r}, not positive sizes")
    return faults


def load(ref: str) -> Operation:
    """The operation ``ref`` names (a known name or pkg.module:Name), instantiated."""
    targets = known()
    target = targets.get(ref) or (ref if ":" in ref else None)
    if target is None:
        raise InputError([Problem("--operation", "$", f"unknown operation {ref!r}; known: {', '.join(sorted(targets))}, "
                                                       "or pkg.module:Name")])
    obj = import_target(target, "--operation")
    try:
        op = obj() if isinstance(obj, type) else obj
    except (Exception, SystemExit, KeyboardInterrupt) as exc:
        raise InputError([Problem("--operation", "$", f"{target}: cannot make one with {target.partition(':')[2]}(): "
                                                       f"{_fault(exc)}")]) from None
    if not isinstance(op, Operation):
        raise InputError([Problem("--operation", "$", f"{target} is not a sitegen.operations.base.Operation")])
    faults = _faults(op)
    if faults:
        raise InputError([Problem("--operation", "$", f"{target}: {'; '.join(faults)}")])
    op.target = target
    return op


def by_name(name: str) -> Operation | None:
    """The operation registered under ``name`` (a registry operation's name), or None."""
    return load(name) if name in known() else None


__all__ = ["IMPLEMENTATIONS_GROUP", "Implementation", "OPERATIONS_GROUP", "Operation", "by_name", "entry_points",
           "import_target", "known", "load"]
