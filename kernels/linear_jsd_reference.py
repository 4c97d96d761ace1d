"""The one pure-torch reference of the fused linear + JSD head, and its FLOP and bytes per pass.

Shared by the tests (float64, gradients by autograd), the benchmark (its float64 errors, and the
same math in float32 as the "torch eager" and "torch.compile" peers) and the rerun harness.
The JSD itself is kernels/reference.py's jsd_reference, so both kernels answer to one definition.
"""

from __future__ import annotations

import torch

from .reference import jsd_reference

PASSES = ("forward", "full")


def linear_jsd_reference(
    student_input, student_weight, teacher_input, teacher_weight, shift_labels=None, *,
    beta: float = 0.5, ignore_index: int = -100, temperature: float = 1.0,
    compute_dtype: torch.dtype = torch.float64, logits_in_input_dtype: bool = False,
):
    """JSD_beta(log_softmax(Xs Ws^T / T), log_softmax(Xt Wt^T / T)) as LigerFusedLinearJSD defines it.

    compute_dtype float64 casts the inputs first (the reference). logits_in_input_dtype=True takes
    the GEMM in the inputs' dtype and casts its output, as a plain torch head in bf16 does.
    """
    def logits(x, w):
        z = x @ w.t() if logits_in_input_dtype else x.to(compute_dtype) @ w.to(compute_dtype).t()
        return z.to(compute_dtype) / temperature

    log_q = torch.log_softmax(logits(student_input, student_weight), dim=-1)
    log_p = torch.log_softmax(logits(teacher_input, teacher_weight), dim=-1)
    return jsd_reference(log_q, log_p, shift_labels, beta=beta, ignore_index=ignore_index, compute_dtype=compute_dtype)


def reference_loss_and_grads(
    student_input, student_weight, teacher_input, teacher_weight, shift_labels=None, *,
    beta: float = 0.5, ignore_index: int = -100, temperature: float = 1.0, chunk_rows: int | None = None,
):
    """Float64 loss, grad_input and grad_weight by autograd of linear_jsd_reference, a chunk of rows
    at a time so that a [BT, V] float64 graph never exists whole (the benchmark's sizes)."""
    BT = student_input.shape[0]
    chunk = chunk_rows or BT
    xs = student_input.detach().to(torch.float64)
    ws = student_weight.detach().to(torch.float64).requires_grad_(True)
    xt, wt = teacher_input.detach().to(torch.float64), teacher_weight.detach().to(torch.float64)
    kept = BT if shift_labels is None else int((shift_labels != ignore_index).sum())
    total = torch.zeros((), dtype=torch.float64, device=xs.device)
    grad_input = torch.empty_like(xs)
    for s in range(0, BT, chunk):
        e = min(s + chunk, BT)
        x = xs[s:e].clone().requires_grad_(True)
        labels = None if shift_labels is None else shift_labels[s:e]
        chunk_kept = (e - s) if labels is None else int((labels != ignore_index).sum())
        # jsd_reference averages over the chunk's kept rows; rescale to the whole batch's mean.
        part = linear_jsd_reference(x, ws, xt[s:e], wt, labels, beta=beta, ignore_index=ignore_index,
                                    temperature=temperature) * (max(chunk_kept, 1) / max(kept, 1))
        part.backward()
        grad_input[s:e] = x.grad
        total += part.detach()
    return total, grad_input, ws.grad


def flop(bt: int, h_student: int, h_teacher: int, v: int, *, pass_: str) -> int:
    """GEMM FLOP each pass cannot avoid (the row work is O(BT V), negligible beside O(BT V H)).
      forward  student and teacher logits              2 BT V (Hs + Ht)
      full     + grad_input = dz W_s, grad_W = dz^T X  2 BT V (Hs + Ht) + 4 BT V Hs   (8 BT H V at Hs = Ht)
    """
    fwd = 2 * bt * v * (h_student + h_teacher)
    if pass_ == "forward":
        return fwd
    if pass_ == "full":
        return fwd + 4 * bt * v * h_student
    raise ValueError(f"pass_ must be one of {PASSES}, got {pass_!r}")


def bytes_moved(bt: int, h_student: int, h_teacher: int, v: int, dtype_bytes: int, *, pass_: str) -> int:
    """Fewest bytes a pass must move: read both inputs and both weights once; full also writes
    grad_input and grad_weight. The logits are not counted: a design that never stores them exists."""
    reads = (bt + v) * (h_student + h_teacher)
    if pass_ == "forward":
        return reads * dtype_bytes
    if pass_ == "full":
        return (reads + (bt + v) * h_student) * dtype_bytes
    raise ValueError(f"pass_ must be one of {PASSES}, got {pass_!r}")


__all__ = ["PASSES", "bytes_moved", "flop", "linear_jsd_reference", "reference_loss_and_grads"]
