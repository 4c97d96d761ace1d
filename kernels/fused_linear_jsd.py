"""Fused linear + JSD (the distillation head), a drop-in for Liger-Kernel's LigerFusedLinearJSD.

    loss = JSD_beta( log_softmax(student_input @ student_weight.T / T),
                     log_softmax(teacher_input @ teacher_weight.T / T) )

with JSD_beta, ignore_index and the kept-row mean exactly as kernels/jsd.py (Liger's LigerJSD).
Gradients flow to the student's input and weight; the teacher gets none.

The [BT, V] logits are never held whole. Tokens go in chunks of C rows; per chunk:
  1. two GEMMs write the student's and the teacher's logits in fp32 straight from cuBLAS's
     fp32 accumulator (no bf16 rounding before the softmax, which is what costs Liger 4-23%
     gradient error in bf16);
  2. one row kernel (a program per row) reads both rows three times: log-sum-exps, then the
     loss and the one row sum the gradient needs, then dz = d loss / d (student logits);
  3. two GEMMs take dz back: grad_input[chunk] = dz @ W_s, grad_weight += dz.T @ X_s[chunk].

The gradient in the logits (u = z_s / T, X = log_softmax(u), Y likewise for the teacher,
Q = e^X, P = e^Y, M = beta P + (1-beta) Q, n = kept rows). The JSD kernel's derivation gives
g = dL/dX; the log-softmax Jacobian gives dL/du = g - Q * sum(g), and dL/dz_s = (dL/du) / T:
    0 < beta < 1:  g = Q a / n,  a = (1-beta)(X - log M)   ->  dz = Q (a - R) / (n T),  R = sum Q a
    beta = 0:      g = -P / n,   sum g = -1/n              ->  dz = (Q - P) / (n T)
    beta = 1:      g = Q (X - Y + 1) / n,  sum g = (KL+1)/n ->  dz = Q (X - Y - KL) / (n T)
R is the student's half of the general loss (times 1): the row sum the loss needs anyway.
Everything runs in base 2 as in jsd.py (x2 = X log2 e), and the general path floors x2, y2 at
-120 for the same reason (M stays a normal float; an element so floored weighs < 2^-113).

Memory: two fp32 [C, V] buffers. dz is written in the input dtype over the teacher's buffer,
row r's dz over the first bytes of row r's teacher logits, which only row r's program reads:
a bf16 element j lands on bytes [2j, 2j+2), inside fp32 element j/2, which the program has read
by then (j/2 <= j), but possibly in another warp: a barrier before each tile's store orders them
(without it, a 1024-wide tile of 4 warps showed 4x the gradient error on the H200). The weight gradient is accumulated in the weight's
dtype by cuBLAS (fp32 accumulate, one rounding per chunk; NOTES.md gives the measured error).
"""

from __future__ import annotations


import torch
import triton
import triton.language as tl

from .jsd import _exp2, _log2, _mode, _scale_
from .linear_jsd_terms import dz_terms, loss_terms, row_loss

VARIANTS = ("rows", "tiled")


@triton.jit
def _log2probs(zs, zt, o, mask, c, lse_s, lse_t, MODE: tl.constexpr):
    """A tile's base-2 log-probabilities X log2(e) and Y log2(e); floored at -120 on the general path."""
    x2 = tl.load(zs + o, mask=mask, other=0.0) * c - lse_s
    y2 = tl.load(zt + o, mask=mask, other=0.0) * c - lse_t
    if MODE == 2:
        x2 = tl.maximum(x2, -120.0)
        y2 = tl.maximum(y2, -120.0)
    return x2, y2


@triton.jit
def _row_kernel(
    ZS, ZT, DZ, LABELS, N_VALID, LOSS,
    stride_s, stride_t, stride_dz, V, n_rows_f, inv_t, beta, ignore_index,
    MODE: tl.constexpr, HAS_LABEL: tl.constexpr, STORE_GRAD: tl.constexpr,
    BLOCK: tl.constexpr, FAST: tl.constexpr, ALIASED: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    zs = ZS + row * stride_s
    zt = ZT + row * stride_t
    offs = tl.arange(0, BLOCK)
    c = inv_t * 1.4426950408889634  # logits -> base-2 scaled logits u2 = z log2(e) / T
    if HAS_LABEL:
        n = tl.maximum(tl.load(N_VALID).to(tl.float32), 1.0)
        w = tl.where(tl.load(LABELS + row) != ignore_index, 1.0 / n, 0.0)
    else:
        w = 1.0 / n_rows_f

    # Sweep 1: both log-sum-exps, online per lane (running max, rescaled sum).
    ms = tl.full([BLOCK], -1e30, tl.float32)
    mt = tl.full([BLOCK], -1e30, tl.float32)
    ds = tl.zeros([BLOCK], tl.float32)
    dt = tl.zeros([BLOCK], tl.float32)
    for start in range(0, V, BLOCK):
        o = start + offs
        mask = o < V
        s = tl.load(zs + o, mask=mask, other=-float("inf")) * c
        t = tl.load(zt + o, mask=mask, other=-float("inf")) * c
        ms_new = tl.maximum(ms, s)
        mt_new = tl.maximum(mt, t)
        ds = ds * _exp2(ms - ms_new, FAST) + _exp2(s - ms_new, FAST)
        dt = dt * _exp2(mt - mt_new, FAST) + _exp2(t - mt_new, FAST)
        ms = ms_new
        mt = mt_new
    row_ms = tl.max(ms, 0)
    row_mt = tl.max(mt, 0)
    lse_s = row_ms + _log2(tl.sum(ds * _exp2(ms - row_ms, FAST), 0), FAST)
    lse_t = row_mt + _log2(tl.sum(dt * _exp2(mt - row_mt, FAST), 0), FAST)

    # Sweep 2: the loss terms and the row sum the gradient needs (all in units of ln 2).
    acc1 = tl.zeros([BLOCK], tl.float32)
    acc2 = tl.zeros([BLOCK], tl.float32)
    for start in range(0, V, BLOCK):
        o = start + offs
        mask = o < V
        x2, y2 = _log2probs(zs, zt, o, mask, c, lse_s, lse_t, MODE)
        t1, t2 = loss_terms(x2, y2, beta, MODE, FAST)
        acc1 += tl.where(mask, t1, 0.0)
        acc2 += tl.where(mask, t2, 0.0)
    s1, loss = row_loss(acc1, acc2, beta, MODE)
    tl.store(LOSS + row, loss * w)

    if STORE_GRAD:
        # Sweep 3: dz, scaled by 1/(n T); zero on ignored rows (w = 0).
        dz = DZ + row * stride_dz
        g = w * inv_t
        for start in range(0, V, BLOCK):
            o = start + offs
            mask = o < V
            x2, y2 = _log2probs(zs, zt, o, mask, c, lse_s, lse_t, MODE)
            d = dz_terms(x2, y2, s1, beta, MODE, FAST)
            if ALIASED:
                # dz's bytes [2j, 2j+2) lie in fp32 element j/2 of the teacher's row, which another
                # warp of this program may load in this same iteration: every load of the row up to
                # here must be done before any of these stores (bar.sync orders the CTA's accesses).
                tl.debug_barrier()
            tl.store(dz + o, (d * g).to(DZ.dtype.element_ty), mask=mask)


_ROW_CONFIG_CPU = (32, 1)
_ROW_CONFIG_GPU = (2048, 4)  # tied best of 1024x4 .. 8192x16 on the H200 (rowtune files)


def _row_config(device: torch.device):
    """(BLOCK, num_warps) of the row kernel; the interpreter gets small tiles so tests cross several."""
    if device.type != "cuda":
        return _ROW_CONFIG_CPU
    return _ROW_CONFIG_GPU


def default_chunk_rows(bt: int) -> int:
    """Rows per chunk. 1,024 rows keep the logits GEMMs compute-bound (each chunk re-reads both
    weights, 1 GB each at V 128256 x H 4096 in bf16) and the bf16 weight gradient's read-modify-write
    to one per 1,024 rows; on the H200 512 rows cost 6-8% more time for 0.5 GB less memory, and the
    two fp32 [C, V] buffers (1.05 GB at C 1024) are the head's whole working memory (NOTES.md)."""
    return max(1, min(1024, bt))


def _logits_fp32(x: torch.Tensor, w: torch.Tensor, out: torch.Tensor) -> None:
    """out = x @ w.T in fp32, taken from the GEMM's fp32 accumulator without a round trip through x.dtype."""
    if x.dtype == torch.float32:
        torch.mm(x, w.t(), out=out)
    elif x.is_cuda:
        try:
            torch.mm(x, w.t(), out_dtype=torch.float32, out=out)
        except (TypeError, RuntimeError):  # a torch without mm's out= form for out_dtype
            out.copy_(torch.mm(x, w.t(), out_dtype=torch.float32))
    else:  # CPU (tests under the interpreter): no mixed-dtype GEMM there; the product is exact enough
        torch.mm(x.float(), w.float().t(), out=out)


def fused_linear_jsd_forward(
    student_input, student_weight, teacher_input, teacher_weight, shift_labels=None, *,
    beta=0.5, ignore_index=-100, temperature=1.0, compute_grad=True, chunk_rows=None, variant="rows",
):
    """(loss in fp32, grad_input, grad_weight); the gradients are None unless compute_grad.
    variant "tiled" is issue 45's candidate (fused_linear_jsd_tiled.py), kept out of the default
    until a GPU measures it faster than "rows"."""
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
    BT, H = student_input.shape
    V = student_weight.shape[0]
    if student_weight.shape != (V, H) or teacher_input.shape[0] != BT or teacher_weight.shape != (V, teacher_input.shape[1]):
        raise ValueError(
            "expected student_input [BT, H], student_weight [V, H], teacher_input [BT, Ht], teacher_weight [V, Ht]; got "
            f"{tuple(student_input.shape)}, {tuple(student_weight.shape)}, {tuple(teacher_input.shape)}, {tuple(teacher_weight.shape)}"
        )
    if not temperature > 0:
        raise ValueError(f"temperature must be positive, got {temperature}")
    mode = _mode(float(beta))
    dtype, device = student_input.dtype, student_input.device
    student_input, teacher_input = student_input.contiguous(), teacher_input.contiguous()
    labels = n_valid = None
    if shift_labels is not None:
        if shift_labels.shape != (BT,):
            raise ValueError(f"shift_labels must have shape ({BT},), got {tuple(shift_labels.shape)}")
        labels = shift_labels.contiguous()
        n_valid = (labels != ignore_index).sum()  # stays on the device
    loss_rows = torch.zeros(BT, dtype=torch.float32, device=device)
    grad_input = torch.empty_like(student_input) if compute_grad else None
    grad_weight = torch.zeros_like(student_weight) if compute_grad else None
    if BT == 0:
        return loss_rows.sum(), grad_input, grad_weight
    C = min(chunk_rows or default_chunk_rows(BT), BT)
    if variant == "tiled":
        from .fused_linear_jsd_tiled import tiled_forward  # imported on use: the default never loads it

        return tiled_forward(
            student_input, student_weight, teacher_input, teacher_weight, labels, n_valid, beta=beta,
            ignore_index=ignore_index, temperature=temperature, compute_grad=compute_grad, chunk_rows=C,
            loss_rows=loss_rows, grad_input=grad_input, grad_weight=grad_weight,
        )
    zs_buf = torch.empty((C, V), dtype=torch.float32, device=device)
    zt_buf = torch.empty((C, V), dtype=torch.float32, device=device)
    # dz in the input dtype over the teacher's logits, row r over row r (see the module docstring).
    dz_buf = zt_buf if dtype == torch.float32 else zt_buf.view(dtype)[:, :V]
    block, num_warps = _row_config(device)
    for s in range(0, BT, C):
        e = min(s + C, BT)
        zs, zt, dz = zs_buf[: e - s], zt_buf[: e - s], dz_buf[: e - s]
        _logits_fp32(student_input[s:e], student_weight, zs)
        _logits_fp32(teacher_input[s:e], teacher_weight, zt)
        _row_kernel[(e - s,)](
            zs, zt, dz, loss_rows if labels is None else labels[s:e],
            loss_rows if n_valid is None else n_valid, loss_rows[s:e],
            zs.stride(0), zt.stride(0), dz.stride(0), V, float(BT), 1.0 / float(temperature),
            float(beta), int(ignore_index),
            MODE=mode, HAS_LABEL=labels is not None, STORE_GRAD=compute_grad,
            BLOCK=block, FAST=device.type == "cuda" and torch.version.hip is None, num_warps=num_warps, ALIASED=dz.dtype != torch.float32,
        )
        if compute_grad:
            chunk_grads(dz, student_input, student_weight, s, e, grad_input, grad_weight)
    # A fixed-shape sum has a fixed order: the loss is bitwise reproducible.
    return loss_rows.sum(), grad_input, grad_weight


def chunk_grads(dz, student_input, student_weight, s: int, e: int, grad_input, grad_weight) -> None:
    """Rows s:e's share of both gradients from their dz: grad_input's rows written, grad_weight
    written by the first chunk and accumulated by the others (no zero-fill pass)."""
    torch.mm(dz, student_weight, out=grad_input[s:e])
    if s == 0:
        torch.mm(dz.t(), student_input[s:e], out=grad_weight)
    else:
        grad_weight.addmm_(dz.t(), student_input[s:e])


class FusedLinearJSDFunction(torch.autograd.Function):
    """Forward computes the loss and both gradients (as Liger does); backward scales them by the
    upstream gradient in place (skipped on the device when it is exactly 1) and hands them out."""

    @staticmethod
    def forward(ctx, student_input, student_weight, teacher_input, teacher_weight, shift_labels=None,
                beta=0.5, ignore_index=-100, temperature=1.0, chunk_rows=None, variant="rows"):
        loss, grad_input, grad_weight = fused_linear_jsd_forward(
            student_input, student_weight, teacher_input, teacher_weight, shift_labels,
            beta=beta, ignore_index=ignore_index, temperature=temperature, compute_grad=True, chunk_rows=chunk_rows,
            variant=variant,
        )
        ctx.grads = (grad_input, grad_weight)
        return loss

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_output):
        if ctx.grads is None:
            raise RuntimeError("fused linear JSD backward ran twice through one graph; run the forward again")
        grad_input, grad_weight = ctx.grads
        ctx.grads = None
        return (
            _scale_(grad_input, grad_output) if ctx.needs_input_grad[0] else None,
            _scale_(grad_weight, grad_output) if ctx.needs_input_grad[1] else None,
            None, None, None, None, None, None, None, None,
        )


def fused_linear_jsd(student_input, student_weight, teacher_input, teacher_weight, shift_labels=None, *,
                     beta=0.5, ignore_index=-100, temperature=1.0, chunk_rows=None, variant="rows"):
    """The fused head's scalar loss (fp32); differentiable in the student's input and weight."""
    if torch.is_grad_enabled() and (student_input.requires_grad or student_weight.requires_grad):
        return FusedLinearJSDFunction.apply(
            student_input, student_weight, teacher_input, teacher_weight, shift_labels, beta, ignore_index, temperature,
            chunk_rows, variant,
        )
    return fused_linear_jsd_forward(
        student_input, student_weight, teacher_input, teacher_weight, shift_labels,
        beta=beta, ignore_index=ignore_index, temperature=temperature, compute_grad=False, chunk_rows=chunk_rows,
        variant=variant,
    )[0]


class FusedLinearJSD(torch.nn.Module):
    """Drop-in for liger_kernel.transformers.LigerFusedLinearJSD:
    forward(student_input, student_weight, teacher_input, teacher_weight, shift_labels=None)."""

    def __init__(self, jsd_beta: float = 0.5, ignore_index: int = -100, temperature: float = 1.0,
                 chunk_rows: int | None = None, variant: str = "rows"):
        """chunk_rows (not in Liger's signature; default 1,024) trades memory for time: two fp32
        [chunk_rows, V] buffers are the head's working memory. variant: see fused_linear_jsd_forward."""
        super().__init__()
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
        self.chunk_rows = chunk_rows
        self.variant = variant
        _mode(float(jsd_beta))
        if not temperature > 0:
            raise ValueError(f"temperature must be positive, got {temperature}")
        self.jsd_beta = jsd_beta
        self.ignore_index = ignore_index
        self.temperature = temperature

    def forward(self, student_input, student_weight, teacher_input, teacher_weight, shift_labels=None):
        return fused_linear_jsd(
            student_input, student_weight, teacher_input, teacher_weight, shift_labels,
            beta=self.jsd_beta, ignore_index=self.ignore_index, temperature=self.temperature,
            chunk_rows=self.chunk_rows, variant=self.variant,
        )

    def extra_repr(self) -> str:
        return f"jsd_beta={self.jsd_beta}, ignore_index={self.ignore_index}, temperature={self.temperature}"


__all__ = ["FusedLinearJSD", "FusedLinearJSDFunction", "default_chunk_rows", "fused_linear_jsd", "fused_linear_jsd_forward"]
