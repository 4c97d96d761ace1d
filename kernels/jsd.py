"""Generalized Jensen-Shannon divergence, one memory pass, as a drop-in for Liger-Kernel's LigerJSD.

Inputs are (BT, V) log-probabilities: X = log Q (student), Y = log P (teacher). With
M = beta*P + (1-beta)*Q the loss per row is

    sum_v beta*P*(Y - log M) + (1-beta)*Q*(X - log M)          (0 < beta < 1)
    sum_v P*(Y - X)                                             (beta = 0, forward KL)
    sum_v Q*(X - Y)                                             (beta = 1, reverse KL)

summed over rows and divided by the number of rows whose label is not ignore_index.

Gradient (student only). For 0 < beta < 1, d/dX_i of the row sum is
    (1-beta)*Q*(X - log M) + (1-beta)*Q - M * (1-beta)*Q / M  =  (1-beta)*Q*(X - log M):
the derivative of log M cancels the derivative of the Q factor exactly, element by element.
For beta = 0 it is -P, for beta = 1 it is Q*(X - Y + 1), as Liger defines them.

Everything runs in base 2 (x2 = X*log2(e)): exp2/log2 are single MUFU instructions, so the
general case costs three special-function ops per element (two ex2, one lg2).

Underflow: where a probability is exactly 0 its log-prob may be -inf or merely very negative;
0 * (-inf) must not appear. The beta in {0, 1} paths floor X and Y at -1e30 (exp of that is 0,
the difference stays finite). The general path floors x2 and y2 at -120 in base 2, so
M >= max(beta, 1-beta) * 2^-120 is a normal float and log2(M) is finite; an element so floored
contributes at most ~2^-120 * 120 to the loss and its gradient, far below any tolerance.
"""

from __future__ import annotations

import functools

import torch
import triton
import triton.language as tl

LOG2E = 1.4426950408889634
LN2 = 0.6931471805599453

_MODE_FKL, _MODE_RKL, _MODE_GENERAL = 0, 1, 2


@triton.jit
def _exp2(x, FAST: tl.constexpr):
    # ex2.approx.ftz is one MUFU.EX2; the non-ftz form adds a denormal fix-up around it.
    if FAST:
        return tl.inline_asm_elementwise(
            "ex2.approx.ftz.f32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1
        )
    else:
        return tl.math.exp2(x)


@triton.jit
def _log2(x, FAST: tl.constexpr):
    if FAST:
        return tl.inline_asm_elementwise(
            "lg2.approx.ftz.f32 $0, $1;", "=r,r", [x], dtype=tl.float32, is_pure=True, pack=1
        )
    else:
        return tl.math.log2(x)


@triton.jit
def _tile(x, y, a, b, log2s, s, MODE: tl.constexpr, FAST: tl.constexpr):
    """One tile's per-lane loss terms (c1, c2) and dX, already divided by n.

    The row total is sum(c1) for the KL paths and (sum(c1) + beta*sum(c2)) * s for the general one.
    log2s = log2(1/n) is folded into the exponent for the KL paths, so scaling costs nothing.
    """
    if MODE == 0:
        xc = tl.maximum(x, -1e30)
        yc = tl.maximum(y, -1e30)
        ps = _exp2(yc * 1.4426950408889634 + log2s, FAST)  # P / n
        c1 = ps * (yc - xc)
        c2 = c1
        dx = -ps
    elif MODE == 1:
        xc = tl.maximum(x, -1e30)
        yc = tl.maximum(y, -1e30)
        qs = _exp2(xc * 1.4426950408889634 + log2s, FAST)  # Q / n
        c1 = qs * (xc - yc)
        c2 = c1
        dx = c1 + qs
    else:
        x2 = tl.maximum(x * 1.4426950408889634, -120.0)
        y2 = tl.maximum(y * 1.4426950408889634, -120.0)
        q = _exp2(x2, FAST)
        p = _exp2(y2, FAST)
        aq = a * q
        l2m = _log2(b * p + aq, FAST)
        c1 = aq * (x2 - l2m)  # (1-beta) Q (X - log M) / ln 2
        c2 = p * (y2 - l2m)  # times beta at the end
        dx = c1 * s  # s = ln2 / n
    return c1, c2, dx


@triton.jit
def _keep(LABELS, start, offs, V, n_rows, ignore_index, MULTIROW: tl.constexpr):
    # Which lanes of the block starting at flat element `start` lie in rows that count.
    if MULTIROW:  # V < BLOCK: a block may span many rows (small vocabularies only)
        return tl.load(LABELS + tl.minimum((start + offs) // V, n_rows - 1)) != ignore_index
    else:  # V >= BLOCK: at most two rows, split where row r0 ends
        r0 = start // V
        k0 = tl.load(LABELS + r0) != ignore_index
        k1 = tl.load(LABELS + tl.minimum(r0 + 1, n_rows - 1)) != ignore_index
        return tl.where(offs < (r0 + 1) * V - start, k0, k1)


@triton.jit
def _jsd_kernel(
    X, Y, DX, LABELS, N_VALID, PARTIAL,
    N, V, n_rows, rows_f, n_blocks, beta, ignore_index,
    MODE: tl.constexpr, HAS_LABEL: tl.constexpr, MULTIROW: tl.constexpr, STORE_GRAD: tl.constexpr,
    BLOCK: tl.constexpr, FAST: tl.constexpr,
):
    # X, Y and dX are contiguous (BT, V): the loss is a sum over all BT*V elements, so the kernel
    # walks them flat, ignoring row boundaries except to mask ignored rows. The grid is one wave
    # (as many programs as fit on the SMs at once); program p takes blocks p, p+G, p+2G, ... so
    # the wave sweeps memory as one window, as an elementwise torch kernel does. That (measured,
    # NOTES.md round 3) beat one program per (row, chunk) (~31 waves, 264 rows apart in memory)
    # and contiguous runs per program (264 streams 12 MB apart): 2 reads + 1 write streams run
    # above copy speed only when the DRAM pages open at any moment are few and adjacent.
    # It also needs no per-row tail or realignment for odd V: only the array's last block is partial.
    pid = tl.program_id(0).to(tl.int64)
    G = tl.num_programs(0)
    n_full = N // BLOCK
    owns_tail = (pid == n_full % G) & (n_full < n_blocks)
    offs = tl.arange(0, BLOCK)

    if HAS_LABEL:
        n = tl.maximum(tl.load(N_VALID).to(tl.float32), 1.0)
    else:
        n = rows_f
    # Scalars per program: the cost is nil, and keeping n on the device avoids a host sync.
    a = 1.0 - beta
    s = 0.6931471805599453 / n
    log2s = -tl.log2(n)

    acc1 = tl.zeros([BLOCK], dtype=tl.float32)
    acc2 = tl.zeros([BLOCK], dtype=tl.float32)
    # Unmasked main loop over full blocks, so loads and stores are plain 16-byte accesses.
    # The next block is loaded before this one is computed: each warp keeps a tile of loads in
    # flight while it computes. The last iteration re-reads its own block (an L2 hit) rather than branch.
    m0 = (offs * 0 + pid) < n_full  # a program with no full block loads nothing here
    xn = tl.load(X + pid * BLOCK + offs, mask=m0, other=0.0)
    yn = tl.load(Y + pid * BLOCK + offs, mask=m0, other=0.0)
    for blk in range(pid, n_full, G):
        x = xn.to(tl.float32)
        y = yn.to(tl.float32)
        nxt = tl.where(blk + G < n_full, blk + G, blk) * BLOCK
        xn = tl.load(X + nxt + offs)
        yn = tl.load(Y + nxt + offs)
        c1, c2, dx = _tile(x, y, a, beta, log2s, s, MODE, FAST)
        if HAS_LABEL:
            keep = _keep(LABELS, blk * BLOCK, offs, V, n_rows, ignore_index, MULTIROW)
            c1 = tl.where(keep, c1, 0.0)
            c2 = tl.where(keep, c2, 0.0)
            dx = tl.where(keep, dx, 0.0)
        acc1 += c1
        acc2 += c2
        if STORE_GRAD:
            tl.store(DX + blk * BLOCK + offs, dx.to(DX.dtype.element_ty))
    # The array's one partial block, owned by the program next in turn.
    if owns_tail:
        start = n_full * BLOCK
        tm = start + offs < N
        x = tl.load(X + start + offs, mask=tm, other=0.0).to(tl.float32)
        y = tl.load(Y + start + offs, mask=tm, other=0.0).to(tl.float32)
        c1, c2, dx = _tile(x, y, a, beta, log2s, s, MODE, FAST)
        if HAS_LABEL:
            keep = _keep(LABELS, start, offs, V, n_rows, ignore_index, MULTIROW) & tm
        else:
            keep = tm
        acc1 += tl.where(keep, c1, 0.0)
        acc2 += tl.where(keep, c2, 0.0)
        if STORE_GRAD:
            tl.store(DX + start + offs, tl.where(keep, dx, 0.0).to(DX.dtype.element_ty), mask=tm)
    sum1 = tl.sum(acc1, axis=0)
    if MODE == 2:
        part = (sum1 + beta * tl.sum(acc2, axis=0)) * s
    else:
        part = sum1
    tl.store(PARTIAL + pid, part)


@triton.jit
def _scale_kernel(DX, G, numel, BLOCK: tl.constexpr):
    # dX *= grad_output, in place: each element is read and written by the same thread, so no
    # second (BT, V) buffer exists. grad_output is read on the device (no host sync); a plain
    # torch mul by a 0-d CUDA tensor takes the broadcast path and reached only ~70% of copy speed.
    # When grad_output is exactly 1 (the loss is the training objective itself) the product is
    # dX bit for bit, so the pass is skipped on the device: backward then costs one launch
    # instead of a read and write of dX, which Liger gets only by syncing with the host.
    pid = tl.program_id(0).to(tl.int64)
    o = pid * BLOCK + tl.arange(0, BLOCK)
    g = tl.load(G).to(tl.float32)
    if g != 1.0:
        if pid * BLOCK + BLOCK <= numel:
            d = tl.load(DX + o)
            tl.store(DX + o, (d.to(tl.float32) * g).to(DX.dtype.element_ty))
        else:
            mask = o < numel
            d = tl.load(DX + o, mask=mask)
            tl.store(DX + o, (d.to(tl.float32) * g).to(DX.dtype.element_ty), mask=mask)


def _scale_(dx, grad_output):
    """dx *= grad_output in place; returns dx."""
    numel = dx.numel()
    if numel:
        block = 8192
        _scale_kernel[(triton.cdiv(numel, block),)](dx, grad_output.reshape(()), numel, BLOCK=block, num_warps=8)
    return dx


def _config(V: int, elem_bytes: int, device: torch.device, labels: bool = False):
    """(BLOCK, num_warps, programs per SM) by dtype; tuned on one H200 (NOTES.md round 3).

    Programs per SM must not exceed what fits at once (registers): a second, partial wave would
    leave interleaved programs running alone at the end. Register counts are sm_90's (offline
    compile, benchmarks/jsd_variants.py --offline); masking ignored rows costs registers.
    """
    if device.type != "cuda":
        return 64, 1, 3  # interpreter: small tiles and several programs, so tests cross both
    if elem_bytes == 4:
        # 8192 x 16 warps (97 registers) fills an SM with one program: 1.027x floor at [2048, 128256].
        return (2048, 8, 2) if labels else (8192, 16, 1)
    # bf16 is instruction-heavy per byte: small tiles, five programs (102 registers) per SM.
    return (2048, 4, 4) if labels else (2048, 4, 5)


@functools.lru_cache(maxsize=None)
def _sm_count(device: torch.device) -> int:
    return torch.cuda.get_device_properties(device).multi_processor_count if device.type == "cuda" else 1


def _mode(beta: float) -> int:
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"beta must be in [0, 1], got {beta}")
    return _MODE_FKL if beta == 0.0 else _MODE_RKL if beta == 1.0 else _MODE_GENERAL


def _launch(x, y, dx, labels, n_valid, beta, ignore_index, config):
    """One wave of programs over the flat (BT*V) elements; returns (partial sums, compiled kernel)."""
    BT, V = x.shape
    block, num_warps, per_sm = config
    n_blocks = triton.cdiv(x.numel(), block)
    programs = min(n_blocks, per_sm * _sm_count(x.device))
    partial = torch.empty(programs, dtype=torch.float32, device=x.device)
    # Unused pointers get a placeholder: the constexpr flags keep the kernel from touching them.
    kernel = _jsd_kernel[(programs,)](
        x, y, partial if dx is None else dx,
        partial if labels is None else labels, partial if n_valid is None else n_valid, partial,
        x.numel(), V, BT, float(BT), n_blocks, float(beta), int(ignore_index),
        MODE=_mode(float(beta)), HAS_LABEL=labels is not None, MULTIROW=V < block, STORE_GRAD=dx is not None,
        BLOCK=block, FAST=x.is_cuda and torch.version.hip is None, num_warps=num_warps,
    )
    return partial, kernel


def jsd_forward(x, y, shift_labels=None, *, beta=0.5, ignore_index=-100, store_grad=True, config=None):
    """Loss in x.dtype and, when store_grad, dX (already divided by the kept-row count)."""
    if x.dim() != 2 or x.shape != y.shape:
        raise ValueError(f"expected two (BT, V) tensors of one shape, got {tuple(x.shape)} and {tuple(y.shape)}")
    _mode(float(beta))
    # The kernel walks X, Y and dX as flat arrays; other layouts are copied once (as Liger does).
    x, y = x.contiguous(), y.contiguous()
    BT, V = x.shape
    dx = torch.empty((BT, V), dtype=x.dtype, device=x.device) if store_grad else None
    labels = n_valid = None
    if shift_labels is not None:
        if shift_labels.shape != (BT,):
            raise ValueError(f"shift_labels must have shape ({BT},), got {tuple(shift_labels.shape)}")
        labels = shift_labels.contiguous()
        n_valid = (labels != ignore_index).sum()  # stays on the device: no .item()
    if x.numel() == 0:
        return torch.zeros((), dtype=x.dtype, device=x.device), dx
    partial, _ = _launch(x, y, dx, labels, n_valid, beta, ignore_index, config or _config(V, x.element_size(), x.device, labels is not None))
    # torch.sum over a fixed-shape tensor has a fixed order: the loss is bitwise reproducible.
    return partial.sum().to(x.dtype), dx


class JSDFunction(torch.autograd.Function):
    """Forward writes dX; backward scales that same buffer in place and returns it.

    Peak extra memory is therefore dX plus O(BT) (as in Liger). The price: a graph's backward can
    run once. A second backward through a retained graph (retain_graph=True) raises RuntimeError
    rather than return a gradient scaled twice; run the forward again instead.
    """

    @staticmethod
    def forward(ctx, x, y, shift_labels=None, beta=0.5, ignore_index=-100):
        loss, dx = jsd_forward(x, y, shift_labels, beta=beta, ignore_index=ignore_index, store_grad=True)
        # An attribute, not save_for_backward: backward must drop the ctx's reference so that the
        # returned gradient is the only one left (AccumulateGrad then keeps it without a copy).
        ctx.dx = dx
        return loss

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_output):
        dx = ctx.dx
        if dx is None:
            raise RuntimeError(
                "JSD backward ran twice through one graph: the first backward scaled the saved gradient "
                "in place and handed it out, so retain_graph=True cannot replay it; run the forward again"
            )
        ctx.dx = None
        # grad_output is compared with 1 on the device (see _scale_kernel); on the host it would sync.
        return _scale_(dx, grad_output), None, None, None, None


def jsd_loss(student_logprobs, teacher_logprobs, shift_labels=None, *, beta=0.5, ignore_index=-100):
    """Generalized JSD of (BT, V) log-probabilities; scalar loss in the input dtype.

    With a gradient to compute, one pass writes dX for backward; otherwise a forward-only
    pass reads the inputs and writes O(BT) partial sums.
    """
    if torch.is_grad_enabled() and student_logprobs.requires_grad:
        return JSDFunction.apply(student_logprobs, teacher_logprobs, shift_labels, beta, ignore_index)
    return jsd_forward(
        student_logprobs, teacher_logprobs, shift_labels, beta=beta, ignore_index=ignore_index, store_grad=False
    )[0]


class JSD(torch.nn.Module):
    """Drop-in for liger_kernel.transformers.LigerJSD: forward(log_q, log_p, shift_labels=None)."""

    def __init__(self, beta: float = 0.5, ignore_index: int = -100):
        super().__init__()
        _mode(float(beta))
        self.beta = beta
        self.ignore_index = ignore_index

    def forward(self, log_q, log_p, shift_labels=None):
        return jsd_loss(log_q, log_p, shift_labels, beta=self.beta, ignore_index=self.ignore_index)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, ignore_index={self.ignore_index}"


__all__ = ["JSD", "JSDFunction", "jsd_forward", "jsd_loss"]
