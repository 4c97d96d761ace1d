"""Whether a workload can be timed on the GPU at all: the least memory a timed pass needs.

However few input sets the pool holds (measure.memory fills it to what the GPU's free memory
allows), a timed pass holds the protocol's least pool, two sets, draws a set's next content
beside them before every call (a redraw makes a whole new set before copying it in) and writes
a set's gradients: at least three sets and the gradients. A workload whose least need exceeds the GPU's memory is refused before
any measuring process starts, before the gate, in one line naming the bytes; anything above it
may still run out of memory in a call, which ends that case alone.

The sizes are read from the operation's own make_inputs run under torch's FakeTensorMode on the
CPU: shapes and dtypes without memory, and no CUDA context in the parent.
"""

from __future__ import annotations

from sitegen.core.problems import Problem
from sitegen.rerun.measure.memory import MIN_SETS
from sitegen.core.workload import Workload
from sitegen.rerun.plan.inputsizes import fake_sizes


def sizes(op, w: Workload) -> tuple[int, int] | None:
    """(bytes of one call's inputs, bytes of their gradients and of a tensor output's drawn gradient)."""
    from sitegen.rerun.plan.opfacts import Described

    if isinstance(op, Described):
        return op.sizes(w)  # a plugin's: computed in its own process (opfacts), never here
    return fake_sizes(op, w)


def least_bytes(op, w: Workload) -> tuple[int, int, int] | None:
    """(the least bytes a timed pass of `w` needs, one set's bytes, its gradients' bytes); None when unknown."""
    found = sizes(op, w)
    if found is None:
        return None
    one, grads = found
    return (MIN_SETS + 1) * one + grads, one, grads


def too_big(op, loads: list[Workload], memory_bytes: int | None, product: str | None) -> list[Problem]:
    """One Problem per workload whose least need exceeds the GPU's `memory_bytes` (none when unknown)."""
    if not memory_bytes:
        return []
    out = []
    for w in loads:
        least = least_bytes(op, w)
        if least is None:
            continue  # a plugin whose inputs could not be sized: a call that runs out of memory ends its case alone
        need, one, grads = least
        if need > memory_bytes:
            out.append(Problem(f"{op.name} {w.key}", "$", (
                f"needs at least {need} bytes ({_gib(need)}: {MIN_SETS} input sets of {_gib(one)} held, another drawn "
                f"beside them, gradients {_gib(grads)}) and the {product or 'GPU'} has {memory_bytes} ({_gib(memory_bytes)}); "
                "refused before the gate, nothing measured")))
    return out


def _gib(n: int) -> str:
    return f"{n / 2**30:.1f} GiB"
