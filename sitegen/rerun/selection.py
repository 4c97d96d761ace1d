"""What a rerun may measure here, decided before any work starts.

Every refusal is one line that says what to do; every implementation that "every one
available" leaves out is named with the reason. Only import specs are looked up: the
parent never imports torch for this (`sitegen rerun --help` stays fast, and the GPU stays
free of this process).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from sitegen.problems import InputError, Problem
from sitegen.rerun.cases import IMPLEMENTATIONS, INTERPRET_IMPLEMENTATIONS, INTERPRET_TOKENS, INTERPRET_VOCAB, Workload

GPU_EXTRA = "needs torch and triton: pip install 'sitegen[gpu]'"
# The modules each implementation imports, and how to get them.
NEEDS: dict[str, tuple[tuple[str, ...], str]] = {
    "sitegen": (("torch", "triton"), "pip install 'sitegen[gpu]'"),
    "liger": (("liger_kernel",), "pip install liger-kernel"),
    "torch": (("torch",), "pip install 'sitegen[gpu]'"),
    "torch-compile": (("torch",), "pip install 'sitegen[gpu]'"),
}
INTERPRET_LEFT_OUT = ("under --interpret, inductor compiles C++ for every shape on a CPU, tens of "
                      "seconds each; ask for it by name with --impl torch-compile")


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
        raise InputError([Problem(command, "$", "needs numpy for Triton's interpreter: pip install 'sitegen[gpu]'")])


def missing(impl: str) -> str | None:
    """Why ``impl`` cannot run here ("X is not installed: pip install …"), or None."""
    modules, how = NEEDS[impl]
    absent = [m for m in modules if not installed(m)]
    return f"{', '.join(absent)} {'is' if len(absent) == 1 else 'are'} not installed: {how}" if absent else None


@dataclass(frozen=True)
class Choice:
    impls: tuple[str, ...]
    left_out: dict[str, str]  # implementation → why "every one available" did not include it


def choose(asked: tuple[str, ...] | None, *, interpret: bool) -> Choice:
    """The implementations to measure: the ones asked for (each must be installed), else every
    one available, naming what was left out and why."""
    if asked:
        problems = [Problem("--impl", "$", f"{impl} cannot run here: {why}") for impl in asked
                    if (why := missing(impl))]
        if problems:
            raise InputError(problems)
        return Choice(tuple(asked), {})
    impls, left_out = [], {}
    for impl in IMPLEMENTATIONS:
        why = missing(impl)
        if why is None and interpret and impl not in INTERPRET_IMPLEMENTATIONS:
            why = INTERPRET_LEFT_OUT
        if why:
            left_out[impl] = why
        else:
            impls.append(impl)
    if not impls:
        raise InputError([Problem("--impl", "$", "no implementation can run here: " + "; ".join(
            f"{impl}: {why}" for impl, why in left_out.items()))])
    return Choice(tuple(impls), left_out)


def require_like_impl(run_name: str, impl: str) -> None:
    why = missing(impl)
    if why:
        raise InputError([Problem(run_name, "$.spec.implementationDigest",
                                  f"--like needs the implementation {impl}, which is not installed ({why})")])


def interpreter_workload(workload: Workload) -> Workload:
    """The record's workload cut to the interpreter's sizes (same dtype); unchanged if already within them."""
    return Workload(min(workload.tokens, max(INTERPRET_TOKENS)), min(workload.vocab, max(INTERPRET_VOCAB)),
                    workload.dtype)
