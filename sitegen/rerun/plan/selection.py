"""What a rerun may measure here, decided before any work starts.

Every refusal is one line that says what to do; every implementation that "every one
available" leaves out is named with the reason. Only import specs are looked up: the
parent never imports torch for this (`sitegen rerun --help` stays fast, and the GPU stays
free of this process).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from sitegen.core.problems import InputError, Problem
from sitegen.core.workload import Workload
from sitegen.rerun.plan.plugins import ImplRef, resolve

GPU_EXTRA = "needs torch and triton: pip install '.[gpu]' in the sitegen checkout"
def installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that fails, or sys.modules[name] = None
        return False


def require_gpu_extra(command: str, *, interpret: bool) -> None:
    """Refuse, with the install command, where torch or triton is missing (the CPU rehearsal
    needs them too, and numpy for Triton's interpreter)."""
    if not (installed("torch") and installed("triton")):
        raise InputError([Problem(command, "$", GPU_EXTRA)])
    if interpret and not installed("numpy"):
        raise InputError([Problem(command, "$", "needs numpy for Triton's interpreter: pip install '.[gpu]' in the sitegen checkout")])


def missing(ref: ImplRef) -> str | None:
    """Why ``ref`` cannot run here ("X is not installed: pip install …"), or None, from the
    modules it declares it needs (read without running it)."""
    absent = [m for m in ref.needs if not installed(m)]
    how = f": {ref.install}" if ref.install else ""
    return f"{', '.join(absent)} {'is' if len(absent) == 1 else 'are'} not installed{how}" if absent else None


@dataclass(frozen=True)
class Choice:
    impls: list[ImplRef]
    left_out: dict[str, str]  # implementation → why "every one available" did not include it


def choose(op, asked: tuple[str, ...] | None, *, interpret: bool) -> Choice:
    """The implementations to measure: the ones asked for (each must be installed), else the
    operation's default peers that are available, naming what was left out and why."""
    if asked:
        refs = resolve(op, asked)
        problems = [Problem("--impl", "$", f"{ref.name} cannot run here: {why}") for ref in refs if (why := missing(ref))]
        if problems:
            raise InputError(problems)
        return Choice(refs, {})
    impls, left_out = [], {}
    for ref in resolve(op, op.default_peers):
        why = missing(ref)
        if why is None and interpret and ref.name not in op.interpret_peers:
            why = f"under --interpret, {op.interpret_left_out}; ask for it by name with --impl {ref.name}"
        if why:
            left_out[ref.name] = why
        else:
            impls.append(ref)
    if not impls:
        raise InputError([Problem("--impl", "$", "no implementation can run here: " + "; ".join(
            f"{impl}: {why}" for impl, why in left_out.items()))])
    return Choice(impls, left_out)


def require_like_impl(op, run_name: str, impl: str) -> None:
    why = missing(resolve(op, (impl,))[0])
    if why:
        raise InputError([Problem(run_name, "$.spec.implementationDigest",
                                  f"--like needs the implementation {impl}, which is not installed ({why})")])


def interpreter_workload(op, workload: Workload) -> Workload:
    """The record's workload cut to the interpreter's sizes (same dtype); unchanged if already within them."""
    return Workload.of({a: min(v, max(op.interpret_axes[a])) for a, v in workload.axes}, workload.dtype)
