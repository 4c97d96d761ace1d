"""The bytes one call of an operation takes in and hands back gradients for, read from the
operation's own make_inputs under torch's FakeTensorMode on the CPU: shapes and dtypes without
memory, and no CUDA context.

The memory check (sitegen.rerun.plan.fits) sizes sitegen's own operations with it; a plugin's
process (sitegen.rerun.plan.opfacts) sizes the plugin with it and reports the numbers. Here,
below both, so neither imports the other (issue 46).
"""

from __future__ import annotations

from sitegen.core.workload import Workload


def fake_sizes(op, w: Workload) -> tuple[int, int]:
    """(bytes of one call's inputs, bytes of their gradients and of a tensor output's drawn gradient)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    def nbytes(tensors) -> int:
        return sum(t.numel() * t.element_size() for t in tensors if t is not None)

    with FakeTensorMode():
        inputs = op.make_inputs(w, 0, "cpu")
        grads = nbytes(inputs[j] for j in op.differentiable) + nbytes([op.make_grad_output(w, 0, "cpu")])
        return nbytes(inputs), grads
