"""The implementations a rerun compares, as modules with LigerJSD's call shape.

Every one is called as ``module(log_q, log_p)`` and returns the scalar loss in the input
dtype, differentiable in ``log_q``. Torch-side: imported by workers only.
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass
from typing import Callable

import torch

from sitegen.rerun.cases import BETA

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


class TorchReference(torch.nn.Module):
    """sitegen's reference in float32 (upcast, as Liger's own torch JSD does), result in the input dtype."""

    def __init__(self, beta: float = BETA):
        super().__init__()
        self.beta = beta

    def forward(self, log_q, log_p, shift_labels=None):
        from sitegen.kernels.reference import jsd_reference

        loss = jsd_reference(log_q, log_p, shift_labels, beta=self.beta, compute_dtype=torch.float32)
        return loss.to(log_q.dtype)


@dataclass(frozen=True)
class Available:
    """Whether an implementation can run here, and which release of its code would."""

    ok: bool
    version: str | None = None
    reason: str | None = None


def _dist_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def availability(impl: str) -> Available:
    """Import what the implementation needs; never raises."""
    try:
        if impl == "sitegen":
            import sitegen.kernels.jsd  # noqa: F401
            return Available(True, _dist_version("sitegen"))
        if impl == "liger":
            import liger_kernel
            from liger_kernel.transformers import LigerJSD  # noqa: F401
            return Available(True, _dist_version("liger-kernel") or getattr(liger_kernel, "__version__", None))
        if impl in ("torch", "torch-compile"):
            return Available(True, torch.__version__)
    except Exception as exc:  # an optional peer that fails to import is simply absent
        return Available(False, None, f"{type(exc).__name__}: {exc}")
    return Available(False, None, f"unknown implementation {impl!r}")


def build(impl: str, beta: float = BETA, *, dynamic: bool = False) -> Callable:
    """A fresh module for the implementation.

    torch.compile is timed with static shapes (one graph per timed shape, the fastest code
    it makes); the correctness gate, which sees several shapes and never times, asks for
    dynamic=True to compile once per dtype.
    """
    if impl == "sitegen":
        from sitegen.kernels.jsd import JSD
        return JSD(beta=beta)
    if impl == "liger":
        from liger_kernel.transformers import LigerJSD
        return LigerJSD(beta=beta)
    if impl == "torch":
        return TorchReference(beta)
    if impl == "torch-compile":
        return torch.compile(TorchReference(beta), dynamic=dynamic)
    raise ValueError(f"unknown implementation {impl!r}")
