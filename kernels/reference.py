"""The one pure-torch reference for the JSD kernel, and the one definition of its bytes moved.

Shared by the tests (float64, autograd gives the gradient reference), the benchmark (the same
function in float32 is the "torch eager" and "torch.compile" peer) and the rerun harness.
"""

from __future__ import annotations

import math

import torch

PASSES = ("forward", "forward_only", "backward", "full")


def jsd_reference(
    student_logprobs: torch.Tensor,
    teacher_logprobs: torch.Tensor,
    shift_labels: torch.Tensor | None = None,
    *,
    beta: float = 0.5,
    ignore_index: int = -100,
    compute_dtype: torch.dtype = torch.float64,
) -> torch.Tensor:
    """Liger-Kernel's generalized JSD, computed in `compute_dtype`; differentiable in the student.

    loss = sum over kept rows and the vocabulary of
        beta*P*(Y - log M) + (1-beta)*Q*(X - log M),  M = beta*P + (1-beta)*Q   (0 < beta < 1)
        P*(Y - X)  (beta = 0),   Q*(X - Y)  (beta = 1)
    divided by the number of kept rows (rows whose label is not ignore_index; all rows without
    labels). With every row ignored the loss is 0, as in Liger (its kernel writes zeros).
    Returned as a 0-d tensor of `compute_dtype`.
    """
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"beta must be in [0, 1], got {beta}")
    per_elem, _ = _elementwise(student_logprobs, teacher_logprobs, beta, compute_dtype)
    per_row = per_elem.sum(dim=-1)
    if shift_labels is None:
        return per_row.sum() / per_row.shape[0]
    keep = shift_labels != ignore_index
    n = keep.sum().clamp_min(1).to(compute_dtype)
    return torch.where(keep, per_row, torch.zeros_like(per_row)).sum() / n


def _elementwise(student_logprobs, teacher_logprobs, beta: float, compute_dtype: torch.dtype):
    """Each element's loss term, and d(term)/dX, both in compute_dtype."""
    x = student_logprobs.to(compute_dtype)
    y = teacher_logprobs.to(compute_dtype)
    # A probability of exactly 0 may come as log-prob -inf; floor it to a finite number whose
    # exp is still 0, so 0 * (-inf) never appears and the gradient there is 0 (clamp passes none).
    floor = -1e300 if compute_dtype == torch.float64 else -1e30
    clamped = x < floor
    x = x.clamp_min(floor)
    y = y.clamp_min(floor)
    if beta == 0.0:
        return torch.exp(y) * (y - x), lambda: torch.where(clamped, 0.0, -torch.exp(y))
    if beta == 1.0:
        return torch.exp(x) * (x - y), lambda: torch.exp(x) * (x - y + 1.0)
    # log M by logaddexp: finite wherever X or Y is, even when both exps underflow.
    log_m = torch.logaddexp(y + math.log(beta), x + math.log1p(-beta))
    q = torch.exp(x)
    term = beta * torch.exp(y) * (y - log_m) + (1.0 - beta) * q * (x - log_m)
    # With dM/dX = (1-beta)Q, the two -(1-beta)Q/M * (beta P + (1-beta)Q) parts of the
    # derivative cancel against the (1-beta)Q from d(Q X)/dX, leaving (1-beta)Q(X - log M).
    return term, lambda: (1.0 - beta) * q * (x - log_m)


def jsd_sum_and_grad(
    student_logprobs: torch.Tensor,
    teacher_logprobs: torch.Tensor,
    *,
    beta: float = 0.5,
    compute_dtype: torch.dtype = torch.float64,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The per-row losses summed over rows (no labels), and their gradient in the student, in
    closed form: what autograd of jsd_reference gives times the row count, without the graph,
    so a caller can take a large input a row chunk at a time and divide by the total rows."""
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"beta must be in [0, 1], got {beta}")
    term, grad = _elementwise(student_logprobs, teacher_logprobs, beta, compute_dtype)
    return term.sum(), grad()


def bytes_moved(bt: int, v: int, dtype_bytes: int, *, pass_: str) -> int:
    """Fewest bytes each pass must move through device memory: the roofline floor's numerator.

    Counts only the (BT, V) tensors, each read or written once; the O(BT) labels, per-row
    partial sums and the scalar loss are left out (under 0.01% at the benchmark sizes).
      forward       read X, read Y, write dX (the gradient saved for backward)   3 * BT*V*b
      forward_only  read X, read Y (no gradient wanted)                         2 * BT*V*b
      backward      read dX, write grad_input = grad_output * dX               2 * BT*V*b
      full          forward then backward                                      5 * BT*V*b
    """
    per_pass = {"forward": 3, "forward_only": 2, "backward": 2, "full": 5}
    if pass_ not in per_pass:
        raise ValueError(f"pass_ must be one of {PASSES}, got {pass_!r}")
    return per_pass[pass_] * bt * v * dtype_bytes


__all__ = ["PASSES", "bytes_moved", "jsd_reference", "jsd_sum_and_grad"]
