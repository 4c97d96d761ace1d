"""The interface every operation a rerun can measure implements, and its implementations'.

An operation declares as data what the harness must know: its name and the OperationSpec it
writes, its axes and workloads (the default sweep and the --interpret one), its passes and
dtypes, the peers it compares by default, its per-dtype tolerances, and three functions of a
workload: ``make_inputs`` (seeded), ``reference`` (float64 output and gradients) and
``bytes_moved``/``flop`` per pass (the roofline's floor and the record's FLOP count). The
harness (sitegen.rerun) calls only these; it knows no operation by name.

Calling convention: ``module(*inputs)`` returns a scalar loss in the input dtype, and the inputs
at ``differentiable`` get gradients from ``loss.backward()``; or (``output_shape``) a tensor,
whose backward is given ``make_grad_output``'s gradient. Torch is imported inside the
methods only: the parent process plans from the class attributes without it.
"""

from __future__ import annotations

from typing import Any, ClassVar

from sitegen.core.workload import DTYPES, Workload

COMPARATOR = ("normwise_relative: |Δloss| ≤ rtol·|loss| and ‖Δgrad‖₂ ≤ rtol·‖grad‖₂ against float64 "
              "(every differentiable input's gradient), outputs all finite")
TORCH_DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}


def torch_dtype(dtype: str):
    import torch

    return getattr(torch, TORCH_DTYPES[dtype])


class Operation:
    """Subclass and fill in the class attributes; override the methods marked so."""

    name: ClassVar[str]
    """The operation's registry name, e.g. "jsd" (OperationSpec metadata.name)."""
    title: ClassVar[str] = ""
    family: ClassVar[str]
    """OperationSpec family, e.g. "loss"."""
    definition: ClassVar[str]
    """The defining expression (OperationSpec semantics.expression)."""
    axes: ClassVar[tuple[str, ...]]
    """Axis names in the order a workload lists them, e.g. ("tokens", "vocab")."""
    axis_descriptions: ClassVar[dict[str, str]] = {}
    passes: ClassVar[tuple[str, ...]] = ("forward", "backward", "full")
    dtypes: ClassVar[tuple[str, ...]] = DTYPES
    default_dtypes: ClassVar[tuple[str, ...]] = ("fp32", "bf16")
    default_axes: ClassVar[dict[str, tuple[int, ...]]]
    """The default sweep: each axis's values."""
    interpret_axes: ClassVar[dict[str, tuple[int, ...]]]
    """What --interpret runs (Triton's interpreter runs kernels in numpy: tiny sizes)."""
    peers: ClassVar[dict[str, str]] = {}
    """Implementations shipped with the operation: short name → "module:Name" of an Implementation."""
    default_peers: ClassVar[tuple[str, ...]] = ()
    interpret_peers: ClassVar[tuple[str, ...]] = ()
    """The default peers run under --interpret (torch.compile compiles C++ for tens of seconds on a CPU)."""
    interpret_left_out: ClassVar[str] = "the operation leaves it out of what it runs by default"
    """Why the default peers not in interpret_peers are left out under --interpret."""
    tolerances: ClassVar[dict[str, float]]
    """Norm-wise relative bound per dtype, from the honest implementations' measured error."""
    comparator: ClassVar[str] = COMPARATOR
    reference_name: ClassVar[str]
    """What computes the float64 reference, for the protocol document."""
    differentiable: ClassVar[tuple[int, ...]] = (0,)
    """Which inputs get gradients."""
    writable_inputs: ClassVar[tuple[int, ...]] = ()
    """Inputs an implementation may overwrite, its gradient living in their storage (inputs_intact
    skips them): only where a training step never reads them again and a peer does so by design."""
    # What the protocol document says of this operation (its notes are written for a reader).
    inputs_notes: ClassVar[str] = "the operation's inputs (drawn by its make_inputs)"
    """What one call's inputs are."""
    grad_inputs_notes: ClassVar[str] = "the differentiable inputs"
    input_names: ClassVar[str] = "every input"
    """What is drawn again before every call."""
    gate_notes: ClassVar[str] = ("twice with the first axis cut to {small} and on an odd shape (first axis "
                                 "max(3, n/4) | 1, every other axis odd)")
    """The gate's shapes besides the timed one ({small}: protocol.SMALL_ROWS)."""
    bytes_notes: ClassVar[str] = "bytes each pass must move, as the operation counts them"
    """How bytes_moved counts, for the protocol document."""

    # -- documents ----------------------------------------------------------------------
    def operation_document(self) -> dict[str, Any]:
        """The OperationSpec the runs reference (override to reuse one already in the registry)."""
        from sitegen.core.documents import document

        axes = [{"name": a, "description": self.axis_descriptions.get(a, a.replace("_", " "))} for a in self.axes]
        return document("OperationSpec", {"name": self.name, "title": self.title or self.name},
                        {"family": self.family, "axes": axes, "semantics": {"expression": self.definition}})

    def tensors(self, w: Workload) -> list[dict[str, Any]]:
        """The WorkloadCase's tensors: override to name them."""
        return []

    def workload_document(self, w: Workload) -> dict[str, Any]:
        from sitegen.core import identity

        return identity.workload_document(self.name, w.sizes, dtype=w.dtype, tensors=self.tensors(w) or None,
                                         operation=self.operation_document())

    # -- workloads ----------------------------------------------------------------------
    def workload(self, dtype: str, **sizes: int) -> Workload:
        missing = [a for a in self.axes if a not in sizes]
        if missing or set(sizes) - set(self.axes):
            raise ValueError(f"{self.name} workloads have axes {list(self.axes)}, got {sorted(sizes)}")
        return Workload.of({a: sizes[a] for a in self.axes}, dtype)

    def gate_workloads(self, w: Workload, small_rows: int) -> list[Workload]:
        """The shapes the gate checks: the timed one, a smaller one twice and an odd one (a
        ragged first axis and no other axis a tile divides). Override where shapes are tied."""
        first, *rest = self.axes
        small = {**w.sizes, first: min(w[first], small_rows)}
        odd = {first: max(3, w[first] // 4) | 1}
        odd.update({a: (w[a] - 1 if w[a] % 2 == 0 else w[a] - 2) if w[a] > 2 else w[a] for a in rest})
        return [w, Workload.of(small, w.dtype), Workload.of(small, w.dtype), Workload.of(odd, w.dtype)]

    # -- what the harness calls (torch inside) -------------------------------------------
    def make_inputs(self, w: Workload, seed: int, device: str) -> tuple:
        """The inputs of one call, drawn from ``seed`` alone (same seed, same tensors)."""
        raise NotImplementedError

    def reference(self, inputs: tuple) -> tuple[Any, tuple]:
        """(loss, gradients of the differentiable inputs), float64 tensors on the inputs' device."""
        raise NotImplementedError

    def output_shape(self, w: Workload) -> tuple[int, ...] | None:
        """The output's shape where it is a tensor (its backward gets make_grad_output's
        gradient); None for a scalar loss (backward() with no argument)."""
        return None

    def make_grad_output(self, w: Workload, seed: int, device: str):
        """The gradient a tensor output's backward is given, drawn from ``seed``; None for a loss.
        reference(inputs, grad_output) then returns the output and the gradients it gives."""
        return None

    def bytes_moved(self, w: Workload, timed_pass: str) -> int:
        """Fewest bytes the pass must move through device memory (the roofline floor)."""
        raise NotImplementedError

    def flop(self, w: Workload, timed_pass: str) -> int:
        raise NotImplementedError

    def liger_script_inputs(self, inputs: tuple) -> tuple:
        """Liger's benchmark-script protocol (--like of an imported run): the inputs as its
        script feeds them. Identity unless the operation's script transforms them."""
        return inputs


class Implementation:
    """An implementation of one operation: ``build()`` returns a module with its call shape.

    ``operation`` is a plain string literal in the class body: sitegen reads it with ``ast``
    without running the implementation's code in the process that plans and writes records.
    """

    operation: ClassVar[str]
    needs: ClassVar[tuple[str, ...]] = ()
    """Top-level modules it imports that may be missing (a literal: read with ast)."""
    install: ClassVar[str | None] = None
    """How to get them, e.g. "pip install liger-kernel" (a literal)."""
    title: ClassVar[str] = ""
    license: ClassVar[str | None] = None
    pass_notes: ClassVar[dict[str, str]] = {}

    def available(self) -> str | None:
        """Why the implementation cannot run here (an import that failed), or None."""
        return None

    def version(self) -> str | None:
        """The version of the code that runs, where a distribution does not say it."""
        return None

    def build(self, *, dynamic: bool = False):
        raise NotImplementedError
