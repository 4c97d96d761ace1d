"""What is computed and by which code: OperationSpec, WorkloadCase, ImplementationRevision."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints, model_validator

from sitegen.format.model.common import (
    API_VERSION, Commit, Digest, HttpUrl, Metadata, NonNegative, NonNegativeInt, Scalar, Short,
    Strict, Text,
)

Key = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")]
DType = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]{1,15}$")]
Pass = Literal["forward", "backward", "full"]

# Bytes per element of the types a bytes-moved rule may name; "dtype" means the workload's own.
ELEMENT_BYTES = {
    "fp64": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1,
    "int64": 8, "int32": 4, "int16": 2, "int8": 1, "uint8": 1, "bool": 1,
}


def _element_type(value: str) -> str:
    if value != "dtype" and value not in ELEMENT_BYTES:
        raise ValueError(f"must be 'dtype' (the workload's element type) or one of {', '.join(ELEMENT_BYTES)}")
    return value


ElementOf = Annotated[str, AfterValidator(_element_type)]


class AxisDef(Strict):
    """An axis along which workloads of an operation vary."""

    name: Key
    """Axis name as workloads use it, e.g. ``tokens``."""
    description: Short | None = None
    """What the axis counts, e.g. "batch × sequence length"."""


class TensorDef(Strict):
    """A tensor argument of an operation, with a symbolic shape."""

    name: Key
    """Argument name, e.g. ``student_log_probs``."""
    shape: list[Key] | None = None
    """Shape in axis names, e.g. ``["tokens", "vocab"]``."""
    description: Short | None = None
    """What the tensor holds."""


class Semantics(Strict):
    """What the operation computes, independent of any code."""

    expression: Text
    """The defining expression, in plain mathematical notation."""
    notes: Text | None = None
    """Edge cases and conventions (reductions, ignored rows, special parameter values)."""


class BytesTerm(Strict):
    """One term of a bytes-moved rule: coefficient × the product of the named axes × element size."""

    coefficient: Annotated[float, Field(gt=0)]
    """How many tensors of this size the pass moves, e.g. ``2`` for reading X and Y."""
    axes: list[Key]
    """Workload axes whose values multiply, e.g. ``["tokens", "vocab"]`` (an empty list is 1)."""
    perElementOf: ElementOf
    """Element type whose size multiplies: ``dtype`` (the workload's) or a fixed type such as ``fp32``."""


class BytesMoved(Strict):
    """The fewest bytes each pass must move to or from device memory: the roofline floor.

    A pass's bytes are the sum of its terms. Counts what every correct implementation must
    move in that pass, not what one implementation happens to move.
    """

    forward: list[BytesTerm] | None = None
    """Terms of the forward pass."""
    backward: list[BytesTerm] | None = None
    """Terms of the backward pass."""
    full: list[BytesTerm] | None = None
    """Terms of forward and backward together."""
    notes: Text | None = None
    """What the terms count, e.g. "forward reads X and Y; backward writes dX"."""


class OperationSpecBody(Strict):
    family: Short
    """Operation family, e.g. ``loss`` or ``normalization``."""
    axes: list[AxisDef]
    """Axes along which workloads vary."""
    inputs: list[TensorDef] | None = None
    """Tensor inputs."""
    outputs: list[TensorDef] | None = None
    """Tensor outputs."""
    parameters: dict[Key, Short] | None = None
    """Scalar parameters and what they mean, e.g. ``{"beta": "mixture weight"}``."""
    semantics: Semantics | None = None
    """The defining expression."""
    bytesMoved: BytesMoved | None = None
    """Bytes each pass must move, as a function of the workload's axes and element type."""

    @model_validator(mode="after")
    def _known_axes(self) -> "OperationSpecBody":
        names = {axis.name for axis in self.axes}
        for pass_name in ("forward", "backward", "full"):
            for term in getattr(self.bytesMoved, pass_name, None) or []:
                unknown = [axis for axis in term.axes if axis not in names]
                if unknown:
                    raise ValueError(f"bytesMoved.{pass_name} names axes {unknown} the operation does not have")
        return self


class OperationSpec(Strict):
    """What is computed, independent of code: e.g. "Jensen-Shannon divergence loss"."""

    apiVersion: Literal[API_VERSION]
    """Format version of the document."""
    kind: Literal["OperationSpec"]
    """Document kind."""
    metadata: Metadata
    """Descriptive data (not identity)."""
    spec: OperationSpecBody
    """The operation's identity."""


class TensorSpec(Strict):
    """A concrete tensor of a workload."""

    name: Key
    """Argument name, matching the operation's inputs."""
    dtype: DType
    """Element type, e.g. ``fp32``, ``bf16``."""
    shape: list[NonNegativeInt]
    """Concrete shape."""


class Tolerance(Strict):
    """Bounds an output must meet against the reference."""

    rtol: NonNegative | None = None
    """Relative tolerance."""
    atol: NonNegative | None = None
    """Absolute tolerance."""


class CorrectnessPolicy(Strict):
    """How outputs of a workload are judged correct."""

    comparator: Short
    """Comparison rule, e.g. ``allclose`` or ``not_asserted``."""
    tolerance: Tolerance | None = None
    """Bounds used by the comparator."""
    notes: Text | None = None
    """Why these bounds."""


class WorkloadCaseBody(Strict):
    operationSpecDigest: Digest
    """The OperationSpec this workload instantiates."""
    axes: dict[Key, Scalar]
    """Axis values, e.g. ``{"vocab": 128256, "tokens": 2048}``; order is display order."""
    dtype: DType | None = None
    """Element type of the case, when one type describes it."""
    tensors: list[TensorSpec] | None = None
    """Concrete tensors."""
    scalars: dict[Key, Scalar] | None = None
    """Scalar arguments, e.g. ``{"beta": 0.5}``."""
    config: dict[Key, Scalar] | None = None
    """Other source configuration that defines the case, kept as published."""
    correctness: CorrectnessPolicy | None = None
    """How outputs are judged."""


class WorkloadCase(Strict):
    """One concrete problem: vocab = 128256, tokens = 2048, fp32."""

    apiVersion: Literal[API_VERSION]
    """Format version of the document."""
    kind: Literal["WorkloadCase"]
    """Document kind."""
    metadata: Metadata
    """Descriptive data (not identity)."""
    spec: WorkloadCaseBody
    """The workload's identity."""


class ProjectRevision(Strict):
    """The code base and revision an implementation comes from."""

    project: Short
    """Project name, e.g. ``Liger-Kernel``."""
    repository: HttpUrl | None = None
    """Repository URL."""
    commit: Commit | None = None
    """Commit the code was taken at."""
    version: Short | None = None
    """Released version, when known."""
    sourceDigest: Digest | None = None
    """Digest of the implementation's source files, when the revision alone is not enough."""


class OperationRef(Strict):
    """The operation an implementation computes."""

    specDigest: Digest
    """Digest of the OperationSpec."""


class CallableRef(Strict):
    """How to call the implementation."""

    module: Short
    """Import path, e.g. ``liger_kernel.transformers``."""
    name: Short
    """Attribute in that module, e.g. ``LigerJSD``."""
    variant: Short | None = None
    """How it is run, e.g. ``eager`` or ``torch.compile``."""


class Support(Strict):
    """What the implementation supports."""

    dtypes: list[DType] | None = None
    """Element types."""
    passes: list[Pass] | None = None
    """Passes (forward, backward, full)."""
    devices: list[Short] | None = None
    """Device families, e.g. ``cuda``."""


class Licensing(Strict):
    """Terms the code is published under."""

    license: Short
    """SPDX identifier."""


class PassNotes(Strict):
    """One line per pass on what the implementation does in it.

    Implementations split work differently between passes (one writes the gradient in
    forward, another in backward), so a per-pass time is read with this note beside it.
    """

    forward: Short | None = None
    """What the forward pass does, e.g. "computes the loss and writes dX in one kernel"."""
    backward: Short | None = None
    """What the backward pass does, e.g. "scales the dX saved in forward"."""
    full: Short | None = None
    """What forward + backward do together."""


class ImplementationRevisionBody(Strict):
    name: Short
    """Implementation name as shown in rankings, e.g. ``Liger``."""
    projectRevision: ProjectRevision
    """Code base and revision."""
    operation: OperationRef
    """The operation it computes."""
    callable: CallableRef | None = None
    """Entry point."""
    support: Support | None = None
    """What it supports."""
    licensing: Licensing | None = None
    """License of the code."""
    passNotes: PassNotes | None = None
    """What the implementation does in each pass."""


class ImplementationRevision(Strict):
    """A piece of code at a revision: Liger 0.8.0, sitegen's Triton kernel at commit X."""

    apiVersion: Literal[API_VERSION]
    """Format version of the document."""
    kind: Literal["ImplementationRevision"]
    """Document kind."""
    metadata: Metadata
    """Descriptive data (not identity)."""
    spec: ImplementationRevisionBody
    """The implementation's identity."""
