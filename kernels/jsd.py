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
def _tile(x, y, acc1, acc2, a, b, log2s, s, MODE: tl.constexpr, FAST: tl.constexpr):
    """One tile: returns updated accumulators and dX (already divided by n).

    acc1/acc2 hold per-lane partial sums whose row total becomes the loss in _jsd_kernel.
    log2s = log2(1/n) is folded into the exponent for the KL paths, so scaling costs nothing.
    """
    if MODE == 0:
        xc = tl.maximum(x, -1e30)
        yc = tl.maximum(y, -1e30)
        ps = _exp2(yc * 1.4426950408889634 + log2s, FAST)  # P / n
        acc1 += ps * (yc - xc)
        dx = -ps
    elif MODE == 1:
        xc = tl.maximum(x, -1e30)
        yc = tl.maximum(y, -1e30)
        qs = _exp2(xc * 1.4426950408889634 + log2s, FAST)  # Q / n
        diff = xc - yc
        acc1 += qs * diff
        dx = qs * diff + qs
    else:
        x2 = tl.maximum(x * 1.4426950408889634, -120.0)
        y2 = tl.maximum(y * 1.4426950408889634, -120.0)
        q = _exp2(x2, FAST)
        p = _exp2(y2, FAST)
        aq = a * q
        l2m = _log2(b * p + aq, FAST)
        g = aq * (x2 - l2m)  # (1-beta) Q (X - log M) / ln 2
        acc1 += g
        acc2 += p * (y2 - l2m)  # times beta at the end
        dx = g * s  # s = ln2 / n
    return acc1, acc2, dx


@triton.jit
def _off(rs, start, offs, ALIGN: tl.constexpr):
    # With ALIGN, rs (row start + shift) makes every block start on a 16-byte boundary; the hint
    # lets Triton emit 16-byte vector accesses although V itself is odd.
    if ALIGN > 1:
        return tl.multiple_of(rs + start + offs, ALIGN)
    else:
        return start + offs


@triton.jit
def _jsd_kernel(
    X, stride_x, Y, stride_y, DX, stride_dx,
    LABELS, N_VALID, PARTIAL,
    V, n_rows, beta, ignore_index, blocks_per_chunk,
    MODE: tl.constexpr, HAS_LABEL: tl.constexpr, STORE_GRAD: tl.constexpr,
    BLOCK: tl.constexpr, PREFETCH: tl.constexpr, ALIGN: tl.constexpr, FAST: tl.constexpr,
):
    row = tl.program_id(0)
    chunk = tl.program_id(1)
    n_chunks = tl.num_programs(1)
    row64 = row.to(tl.int64)
    out_ptr = PARTIAL + row64 * n_chunks + chunk
    if ALIGN > 1:
        # X, Y and dX share one row stride here. Blocks start `shift` elements into the row,
        # where the address is 16-byte aligned; the first `shift` elements form a head tile.
        rs = row64 * stride_x
        shift = tl.minimum((ALIGN - rs % ALIGN) % ALIGN, V).to(tl.int32)
        rs += shift
        x_ptr = X
        y_ptr = Y
        dx_ptr = DX
    else:
        shift = 0
        rs = 0
        x_ptr = X + row64 * stride_x
        y_ptr = Y + row64 * stride_y
        dx_ptr = DX + row64 * stride_dx

    Vb = V - shift  # elements covered by blocks
    blk0 = chunk * blocks_per_chunk
    blk1 = tl.minimum(blk0 + blocks_per_chunk, tl.cdiv(Vb, BLOCK))
    n_full = Vb // BLOCK
    offs = tl.arange(0, BLOCK)
    hoffs = tl.arange(0, ALIGN if ALIGN > 1 else 2)
    do_head = ALIGN > 1 and chunk == 0 and shift > 0

    if HAS_LABEL:
        n = tl.maximum(tl.load(N_VALID).to(tl.float32), 1.0)
        if tl.load(LABELS + row) == ignore_index:
            if STORE_GRAD:
                zero = tl.zeros([BLOCK], dtype=DX.dtype.element_ty)
                for blk in range(blk0, blk1):
                    o = _off(rs, blk * BLOCK, offs, ALIGN)
                    tl.store(dx_ptr + o, zero, mask=blk * BLOCK + offs < Vb)
                if do_head:
                    tl.store(dx_ptr + rs - shift + hoffs, tl.zeros_like(hoffs).to(DX.dtype.element_ty),
                             mask=hoffs < shift)
            tl.store(out_ptr, 0.0)
            return
    else:
        n = n_rows

    # Scalars per program: the cost is nil, and keeping n on the device avoids a host sync.
    a = 1.0 - beta
    s = 0.6931471805599453 / n
    log2s = -tl.log2(n)

    acc1 = tl.zeros([BLOCK], dtype=tl.float32)
    acc2 = tl.zeros([BLOCK], dtype=tl.float32)
    # Unmasked main loop over full blocks only, so loads/stores are plain 16-byte accesses.
    hi = tl.minimum(blk1, n_full)
    if PREFETCH:
        # Load block k+1 before computing block k: each warp keeps a tile of loads in flight
        # while it computes, instead of relying on other warps alone to cover DRAM latency.
        # The last iteration re-reads its own block (an L2 hit) rather than branch.
        o = _off(rs, blk0 * BLOCK, offs, ALIGN)
        m0 = (offs * 0 + blk0) < hi  # a chunk with no full block loads nothing
        xn = tl.load(x_ptr + o, mask=m0, other=0.0)
        yn = tl.load(y_ptr + o, mask=m0, other=0.0)
        for blk in range(blk0, hi):
            x = xn.to(tl.float32)
            y = yn.to(tl.float32)
            o_next = _off(rs, tl.minimum(blk + 1, hi - 1) * BLOCK, offs, ALIGN)
            xn = tl.load(x_ptr + o_next)
            yn = tl.load(y_ptr + o_next)
            acc1, acc2, dx = _tile(x, y, acc1, acc2, a, beta, log2s, s, MODE, FAST)
            if STORE_GRAD:
                tl.store(dx_ptr + _off(rs, blk * BLOCK, offs, ALIGN), dx.to(DX.dtype.element_ty))
    else:
        for blk in range(blk0, hi):
            o = _off(rs, blk * BLOCK, offs, ALIGN)
            x = tl.load(x_ptr + o).to(tl.float32)
            y = tl.load(y_ptr + o).to(tl.float32)
            acc1, acc2, dx = _tile(x, y, acc1, acc2, a, beta, log2s, s, MODE, FAST)
            if STORE_GRAD:
                tl.store(dx_ptr + o, dx.to(DX.dtype.element_ty))
    # The one partial block of the row, in whichever chunk owns it.
    if blk1 > n_full:
        to = _off(rs, n_full * BLOCK, offs, ALIGN)
        tm = n_full * BLOCK + offs < Vb
        tx = tl.load(x_ptr + to, mask=tm, other=0.0).to(tl.float32)
        ty = tl.load(y_ptr + to, mask=tm, other=0.0).to(tl.float32)
        t1, t2, tdx = _tile(tx, ty, tl.zeros_like(tx), tl.zeros_like(tx), a, beta, log2s, s, MODE, FAST)
        acc1 += tl.where(tm, t1, 0.0)
        acc2 += tl.where(tm, t2, 0.0)
        if STORE_GRAD:
            tl.store(dx_ptr + to, tdx.to(DX.dtype.element_ty), mask=tm)
    sum1 = tl.sum(acc1, axis=0)
    sum2 = tl.sum(acc2, axis=0)
    if do_head:
        ho = rs - shift + hoffs
        hm = hoffs < shift
        hx = tl.load(x_ptr + ho, mask=hm, other=0.0).to(tl.float32)
        hy = tl.load(y_ptr + ho, mask=hm, other=0.0).to(tl.float32)
        h1, h2, hdx = _tile(hx, hy, tl.zeros_like(hx), tl.zeros_like(hx), a, beta, log2s, s, MODE, FAST)
        sum1 += tl.sum(tl.where(hm, h1, 0.0), axis=0)
        sum2 += tl.sum(tl.where(hm, h2, 0.0), axis=0)
        if STORE_GRAD:
            tl.store(dx_ptr + ho, hdx.to(DX.dtype.element_ty), mask=hm)

    if MODE == 2:
        part = (sum1 + beta * sum2) * s
    else:
        part = sum1
    tl.store(out_ptr, part)


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


def _config(V: int, elem_bytes: int, device: torch.device):
    """(BLOCK, num_warps, blocks_per_chunk, prefetch) by vocabulary size and dtype; tuned on one H200."""
    if device.type != "cuda":
        return 64, 1, 2, 1  # interpreter: small tiles so tests cover several blocks and chunks
    # H200, [2048, 128256] (NOTES.md): fp32 4096/8 warps and bf16 2048/4 warps with prefetch were
    # best; bf16 wants small tiles (more warps per SM hide latency; its loop is instruction-heavy).
    block, num_warps = (4096, 8) if elem_bytes == 4 else (2048, 4)
    n_blocks = triton.cdiv(V, block)
    # Chunks of ~32K elements: enough programs that the last wave is a small share of the work.
    blocks_per_chunk = max(1, min(n_blocks, 32768 // block))
    return block, num_warps, blocks_per_chunk, 1


def _mode(beta: float) -> int:
    if not 0.0 <= beta <= 1.0:
        raise ValueError(f"beta must be in [0, 1], got {beta}")
    return _MODE_FKL if beta == 0.0 else _MODE_RKL if beta == 1.0 else _MODE_GENERAL


def _rows(t: torch.Tensor) -> torch.Tensor:
    # Rows may be strided; elements within a row must be adjacent for vector loads.
    return t if t.stride(-1) == 1 else t.contiguous()


def _launch(x, y, dx, partial, labels, n_valid, beta, ignore_index, config):
    """One launch over (BT rows, chunks); returns Triton's compiled kernel (for SASS reading)."""
    BT, V = x.shape
    block, num_warps, bpc, prefetch = config
    vec = 16 // x.element_size()
    # Odd row strides defeat 16-byte accesses; realign per row when X, Y and dX share a stride.
    align = vec if (x.stride(0) % vec and x.stride(0) == y.stride(0) == V) else 0
    # Unused pointers get a placeholder: the constexpr flags keep the kernel from touching them.
    return _jsd_kernel[(BT, partial.shape[1])](
        x, x.stride(0), y, y.stride(0), partial if dx is None else dx, 0 if dx is None else dx.stride(0),
        partial if labels is None else labels, partial if n_valid is None else n_valid, partial,
        V, float(BT), float(beta), int(ignore_index), bpc,
        MODE=_mode(float(beta)), HAS_LABEL=labels is not None, STORE_GRAD=dx is not None,
        BLOCK=block, PREFETCH=bool(prefetch), ALIGN=align, FAST=x.is_cuda and torch.version.hip is None,
        num_warps=num_warps,
    )


def jsd_forward(x, y, shift_labels=None, *, beta=0.5, ignore_index=-100, store_grad=True, config=None):
    """Loss in x.dtype and, when store_grad, dX (already divided by the kept-row count)."""
    if x.dim() != 2 or x.shape != y.shape:
        raise ValueError(f"expected two (BT, V) tensors of one shape, got {tuple(x.shape)} and {tuple(y.shape)}")
    _mode(float(beta))
    x, y = _rows(x), _rows(y)
    BT, V = x.shape
    config = config or _config(V, x.element_size(), x.device)
    n_chunks = triton.cdiv(triton.cdiv(V, config[0]), config[2])
    partial = torch.empty((BT, n_chunks), dtype=torch.float32, device=x.device)
    dx = torch.empty((BT, V), dtype=x.dtype, device=x.device) if store_grad else None
    labels = n_valid = None
    if shift_labels is not None:
        if shift_labels.shape != (BT,):
            raise ValueError(f"shift_labels must have shape ({BT},), got {tuple(shift_labels.shape)}")
        labels = shift_labels.contiguous()
        n_valid = (labels != ignore_index).sum()  # stays on the device: no .item()
    if BT > 0 and V > 0:
        _launch(x, y, dx, partial, labels, n_valid, beta, ignore_index, config)
    else:
        partial.zero_()
        if dx is not None:
            dx.zero_()
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
