"""What a rerun measures: workloads × timed passes × implementations, as plain data.

No torch here: the parent process plans with these and hands them to workers as JSON. The
axes a workload has are the operation's (sitegen.operations): nothing here knows one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

ELEMENT_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2}
DTYPES = tuple(ELEMENT_BYTES)


@dataclass(frozen=True, order=True)
class Workload:
    """One problem: the operation's axes (name, value) in its declared order, one element type."""

    axes: tuple[tuple[str, int], ...]
    dtype: str

    @classmethod
    def of(cls, axes: dict[str, int], dtype: str) -> "Workload":
        return cls(tuple((name, int(value)) for name, value in axes.items()), dtype)

    def __getitem__(self, name: str) -> int:
        return dict(self.axes)[name]

    @property
    def sizes(self) -> dict[str, int]:
        return dict(self.axes)

    @property
    def elem_bytes(self) -> int:
        return ELEMENT_BYTES[self.dtype]

    @property
    def key(self) -> str:
        # Axes alphabetically, as catalog.case_slug names a workload ("tokens8-vocab100-fp32").
        return "-".join([f"{name}{value}" for name, value in sorted(self.axes)] + [self.dtype])

    def as_json(self) -> dict[str, Any]:
        return {"axes": [list(a) for a in self.axes], "dtype": self.dtype}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Workload":
        return cls(tuple((str(n), int(v)) for n, v in data["axes"]), data["dtype"])

    def label(self) -> str:
        return " ".join(f"{name} {value}" for name, value in self.axes) + f" {self.dtype}"


@dataclass(frozen=True, order=True)
class Case:
    """One timed measurement: a workload, a pass, an implementation."""

    workload: Workload
    timed_pass: str
    impl: str

    @property
    def key(self) -> str:
        return f"{self.workload.key}/{self.timed_pass}/{self.impl}"


def split_list(text: str, convert=str) -> tuple:
    """'a,b,c' → (a, b, c) converted. Order kept, duplicates dropped."""
    items = [convert(part.strip()) for part in text.split(",") if part.strip()]
    return tuple(dict.fromkeys(items))


def workloads(axes: dict[str, tuple[int, ...]], dtypes: tuple[str, ...]) -> list[Workload]:
    """Every combination of the axes' values (in the axes' order) and the dtypes, sorted."""
    combos: list[dict[str, int]] = [{}]
    for name, values in axes.items():
        combos = [{**c, name: v} for c in combos for v in values]
    return sorted(Workload.of(c, d) for c in combos for d in dtypes)


def cases(loads: list[Workload], passes: tuple[str, ...], impls: tuple[str, ...]) -> list[Case]:
    """Every combination, in a stable order: workload, then pass, then implementation."""
    return [Case(w, p, i) for w in loads for p in passes for i in impls]


def grad_seed(seed: int, device: str) -> int:
    """The seed of the gradient a tensor output's backward is given: a stream of its own, never
    the inputs' (drawn from ``seed``). CUDA's generator takes all 64 bits, so flipping bit 61
    gives another stream (the committed H200 records drew theirs so); the CPU's Mersenne Twister
    keeps only the low 32 bits, where that flip changes nothing and the gradient came out equal
    to the input: there bit 31 flips too."""
    return seed ^ (1 << 61) if device.startswith("cuda") else seed ^ ((1 << 61) | (1 << 31))
