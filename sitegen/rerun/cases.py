"""What a rerun measures: workloads × timed passes × implementations, as plain data.

No torch here: the parent process plans with these and hands them to workers as JSON.
"""

from __future__ import annotations

from dataclasses import dataclass

OPERATION = "jsd"
PASSES = ("forward", "backward", "full")
IMPLEMENTATIONS = ("sitegen", "liger", "torch", "torch-compile")
ELEMENT_BYTES = {"fp32": 4, "bf16": 2, "fp16": 2}
DTYPES = tuple(ELEMENT_BYTES)
BETA = 0.5  # LigerJSD's default, and the one Liger's benchmark times

DEFAULT_TOKENS = (1024, 2048, 4096, 8192)
DEFAULT_VOCAB = (128256,)
DEFAULT_DTYPES = ("fp32", "bf16")
# Under Triton's interpreter every kernel launch runs in numpy on the CPU: tiny shapes only.
INTERPRET_TOKENS = (8, 16)
INTERPRET_VOCAB = (100,)
# inductor on a CPU compiles C++ (tens of seconds per shape): left out of --interpret
# unless asked for by name.
INTERPRET_IMPLEMENTATIONS = ("sitegen", "liger", "torch")


@dataclass(frozen=True, order=True)
class Workload:
    """One problem: (tokens, vocab) log-probabilities of one element type."""

    tokens: int
    vocab: int
    dtype: str

    @property
    def key(self) -> str:
        return f"tokens{self.tokens}-vocab{self.vocab}-{self.dtype}"

    def as_list(self) -> list:
        return [self.tokens, self.vocab, self.dtype]


@dataclass(frozen=True, order=True)
class Case:
    """One timed measurement: a workload, a pass, an implementation."""

    workload: Workload
    timed_pass: str
    impl: str

    @property
    def key(self) -> str:
        return f"{self.workload.key}/{self.timed_pass}/{self.impl}"


def odd_shape(tokens: int, vocab: int) -> tuple[int, int]:
    """An odd shape near the workload's: ragged row count and a vocabulary no tile divides."""
    rows = max(3, tokens // 4) | 1
    return rows, (vocab - 1) if vocab % 2 == 0 else (vocab - 2)


def split_list(text: str, convert=str) -> tuple:
    """'a,b,c' → (a, b, c) converted. Order kept, duplicates dropped."""
    items = [convert(part.strip()) for part in text.split(",") if part.strip()]
    return tuple(dict.fromkeys(items))


def workloads(tokens: tuple[int, ...], vocab: tuple[int, ...], dtypes: tuple[str, ...]) -> list[Workload]:
    return sorted(Workload(t, v, d) for t in tokens for v in vocab for d in dtypes)


def cases(loads: list[Workload], passes: tuple[str, ...], impls: tuple[str, ...]) -> list[Case]:
    """Every combination, in a stable order: workload, then pass, then implementation."""
    return [Case(w, p, i) for w in loads for p in passes for i in impls]
