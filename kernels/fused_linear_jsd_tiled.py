"""Issue 45's candidate head (variant "tiled"): the log-sum-exps come out of the logits GEMM's epilogue.

Same loss, gradients and chunking as kernels/fused_linear_jsd.py (read its docstring for the math
and for dz written over the teacher's buffer); what differs is per chunk:
  1. a Triton GEMM (persistent: one program per SM walks the output tiles in grouped order; operand
     tiles by cp.async, or by TMA with USE_TMA) writes
     the fp32 logits from its fp32 accumulator and, in its epilogue, each (row, column tile)'s
     maximum and sum of exp2 of the base-2 scaled logits u2 = z log2(e) / T, student and teacher;
  2. a combine over the [C, V / BLOCK_N] partials gives each row's log-sum-exps (torch: 0.1% of
     the chunk's bytes, fixed order, so deterministic);
  3. two row sweeps instead of three: the loss and its row sum R, then dz;
  4. the gradient GEMMs stay cuBLAS's, on dz in the input dtype.

Why dz is not formed inside the gradient GEMMs' loads. Bytes per element of the chunk's [C, V]
(student and teacher together; C 1024, V 128256: 131 M elements, so 1 B/element = 0.13 GB):
  shipped    GEMM writes zs, zt 8 + three sweeps 24 + dz write 2 + two GEMMs read dz 4  = 38 B
  this       GEMM writes 8 + loss/R sweep 8 + dz sweep 8 + 2 + 4                       = 30 B
  dz in loads  GEMM writes 8 + loss/R sweep 8 + each gradient GEMM reads zs, zt 8 + 8   = 32 B
  G, Q stash   (fp32 Q a and Q written over the buffers, dz = (G - R Q) g on load)      = 40 B
and dz in loads recomputes dz's 2 exp2 + 1 log2 once per output tile that reads it: H / BLOCK_N
(32 at H 4096, BLOCK_N 128) times in each gradient GEMM, 192 MUFU operations per element against
4 H = 16,384 MMA FLOP; at 16 MUFU and about 4,096 bf16 MMA FLOP per SM per clock (H100) that is
12 clocks of MUFU to 4 of MMA, so the gradient GEMMs would run about 3x slower. (A bf16 G, Q stash
costs 34 B and loses dz's precision where a ~ R.) 30 B it is: 1.05 GB less per 1,024-row chunk than
the shipped kernel, about 0.35 ms at 3 TB/s, about 2.8 ms at BT 8192. With beta 0 or 1 the loss and
R are sums that an online rescaling can carry through the epilogue too, which would drop the loss
sweep; not done here (the benchmark's beta is 0.5).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from .jsd import _exp2, _log2, _mode

_LOG2E = 1.4426950408889634
_LN2 = 0.6931471805599453


@triton.jit
def _tile_coords(tile, tiles_m, tiles_n, GROUP_M: tl.constexpr):
    """Grouped order: GROUP_M row blocks take each weight tile in turn, close in time (the weight
    is the big operand, so its tiles are the ones worth finding in L2)."""
    per_group = GROUP_M * tiles_n
    first_m = (tile // per_group) * GROUP_M
    group_rows = tl.minimum(tiles_m - first_m, GROUP_M)
    return first_m + (tile % per_group) % group_rows, (tile % per_group) // group_rows


@triton.jit
def _dot(a, b, acc, IEEE: tl.constexpr, UPCAST: tl.constexpr):
    if UPCAST:  # Triton 3.9's interpreter multiplies bf16 tiles wrongly (1e10 off); fp32 is exact
        return tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")
    elif IEEE:  # fp32 inputs: no TF32 (its 10-bit mantissa would miss the 1e-4 bound)
        return tl.dot(a, b, acc, input_precision="ieee")
    else:
        return tl.dot(a, b, acc)


@triton.jit
def _epilogue(acc, Z, PMAX, PSUM, pm, pn, M, N, stride_zm, stride_pm, c,
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, FAST: tl.constexpr, STATS: tl.constexpr):
    rm = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pn * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_m = rm < M
    mask_n = rn < N
    tl.store(Z + rm.to(tl.int64)[:, None] * stride_zm + rn[None, :], acc, mask=mask_m[:, None] & mask_n[None, :])
    if STATS:  # off only for the benchmark's GEMM-alone rows, which price the epilogue
        # This tile's share of each row's log-sum-exp, in base 2; every tile has at least one
        # column inside V, so the maximum is finite. The max is taken on acc and scaled after
        # (c > 0) so no second [BLOCK_M, BLOCK_N] tensor lives beside acc: with u = acc * c
        # held whole, ptxas spilled at 128 x 256 x 8 warps (255 registers, 8 STL), now 249, none.
        tmax = tl.max(tl.where(mask_n[None, :], acc, -float("inf")), 1) * c
        tsum = tl.sum(tl.where(mask_n[None, :], _exp2(acc * c - tmax[:, None], FAST), 0.0), 1)
        p = rm.to(tl.int64) * stride_pm + pn
        tl.store(PMAX + p, tmax, mask=mask_m)
        tl.store(PSUM + p, tsum, mask=mask_m)


@triton.jit
def _logits_stats_kernel(
    X, W, Z, PMAX, PSUM, M, N, K, stride_xm, stride_wn, stride_zm, stride_pm, c,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    NUM_PROGRAMS: tl.constexpr, IEEE: tl.constexpr, UPCAST: tl.constexpr, FAST: tl.constexpr,
    STATS: tl.constexpr,
):
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    # Persistent: a fixed grid walks all tiles, so no wave quantization tail.
    for tile in tl.range(tl.program_id(0), tiles_m * tiles_n, NUM_PROGRAMS):
        pm, pn = _tile_coords(tile, tiles_m, tiles_n, GROUP_M)
        rm = pm * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pn * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        mask_m = rm < M
        mask_n = rn < N
        x_ptr = X + rm.to(tl.int64)[:, None] * stride_xm + rk[None, :]
        w_ptr = W + rn.to(tl.int64)[None, :] * stride_wn + rk[:, None]
        acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
        for k in range(0, K, BLOCK_K):
            a = tl.load(x_ptr, mask=mask_m[:, None] & (rk[None, :] < K - k), other=0.0)
            b = tl.load(w_ptr, mask=mask_n[None, :] & (rk[:, None] < K - k), other=0.0)
            acc = _dot(a, b, acc, IEEE, UPCAST)
            x_ptr += BLOCK_K
            w_ptr += BLOCK_K
        _epilogue(acc, Z, PMAX, PSUM, pm, pn, M, N, stride_zm, stride_pm, c, BLOCK_M, BLOCK_N, FAST, STATS)


@triton.jit
def _logits_stats_tma_kernel(
    x_desc, w_desc, Z, PMAX, PSUM, M, N, K, stride_zm, stride_pm, c,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    NUM_PROGRAMS: tl.constexpr, IEEE: tl.constexpr, UPCAST: tl.constexpr, FAST: tl.constexpr,
    STATS: tl.constexpr,
):
    """The same GEMM with its operand tiles fetched by the tensor-memory accelerator (host-built
    descriptors; out-of-range rows, columns and K are zero-filled by the hardware, no masks)."""
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    for tile in tl.range(tl.program_id(0), tiles_m * tiles_n, NUM_PROGRAMS):
        pm, pn = _tile_coords(tile, tiles_m, tiles_n, GROUP_M)
        acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
        for k in range(0, K, BLOCK_K):
            a = x_desc.load([pm * BLOCK_M, k])
            b = w_desc.load([pn * BLOCK_N, k])
            acc = _dot(a, b.T, acc, IEEE, UPCAST)
        _epilogue(acc, Z, PMAX, PSUM, pm, pn, M, N, stride_zm, stride_pm, c, BLOCK_M, BLOCK_N, FAST, STATS)


@triton.jit
def _sweep_kernel(
    ZS, ZT, DZ, LSE_S, LSE_T, S1, LABELS, N_VALID, LOSS,
    stride_s, stride_t, stride_dz, V, n_rows_f, inv_t, beta, ignore_index,
    MODE: tl.constexpr, HAS_LABEL: tl.constexpr, PHASE: tl.constexpr, BLOCK: tl.constexpr,
    FAST: tl.constexpr, ALIASED: tl.constexpr,
):
    """PHASE 0: the row's loss (times its weight) and R = s1; PHASE 1: dz from the same terms."""
    row = tl.program_id(0).to(tl.int64)
    zs = ZS + row * stride_s
    zt = ZT + row * stride_t
    offs = tl.arange(0, BLOCK)
    c = inv_t * 1.4426950408889634
    lse_s = tl.load(LSE_S + row)
    lse_t = tl.load(LSE_T + row)
    if HAS_LABEL:
        n = tl.maximum(tl.load(N_VALID).to(tl.float32), 1.0)
        w = tl.where(tl.load(LABELS + row) != ignore_index, 1.0 / n, 0.0)
    else:
        w = 1.0 / n_rows_f
    if PHASE == 0:
        acc1 = tl.zeros([BLOCK], tl.float32)
        acc2 = tl.zeros([BLOCK], tl.float32)
    else:
        s1 = tl.load(S1 + row)
        g = w * inv_t
        dz = DZ + row * stride_dz
    for start in range(0, V, BLOCK):
        o = start + offs
        mask = o < V
        x2 = tl.load(zs + o, mask=mask, other=0.0) * c - lse_s
        y2 = tl.load(zt + o, mask=mask, other=0.0) * c - lse_t
        if MODE == 2:  # floors as in fused_linear_jsd.py: M stays a normal float
            x2 = tl.maximum(x2, -120.0)
            y2 = tl.maximum(y2, -120.0)
        if PHASE == 0:
            if MODE == 0:
                t1 = _exp2(y2, FAST) * (y2 - x2)
                t2 = t1
            elif MODE == 1:
                t1 = _exp2(x2, FAST) * (x2 - y2)
                t2 = t1
            else:
                p = _exp2(y2, FAST)
                aq = (1.0 - beta) * _exp2(x2, FAST)
                l2m = _log2(beta * p + aq, FAST)
                t1 = aq * (x2 - l2m)
                t2 = p * (y2 - l2m)
            acc1 += tl.where(mask, t1, 0.0)
            acc2 += tl.where(mask, t2, 0.0)
        else:
            if MODE == 0:
                d = _exp2(x2, FAST) - _exp2(y2, FAST)
            elif MODE == 1:
                d = _exp2(x2, FAST) * ((x2 - y2) * 0.6931471805599453 - s1)
            else:
                q = _exp2(x2, FAST)
                l2m = _log2(beta * _exp2(y2, FAST) + (1.0 - beta) * q, FAST)
                d = q * ((1.0 - beta) * 0.6931471805599453 * (x2 - l2m) - s1)
            if ALIASED:  # dz's bf16 bytes land in teacher elements another warp may still load
                tl.debug_barrier()
            tl.store(dz + o, (d * g).to(DZ.dtype.element_ty), mask=mask)
    if PHASE == 0:
        s1 = tl.sum(acc1, 0) * 0.6931471805599453
        if MODE == 2:
            loss = s1 + beta * tl.sum(acc2, 0) * 0.6931471805599453
        else:
            loss = s1
        tl.store(LOSS + row, loss * w)
        tl.store(S1 + row, s1)


# (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages). GPU values are the usual Hopper
# starting points for a Triton GEMM, not tuned (no GPU this round); the bench's "triton GEMM"
# row says how far they are from cuBLAS. The interpreter's tiles leave partial tiles in M, N and K.
_GEMM_CONFIG = {"bf16": (128, 256, 64, 8, 8, 3), "fp32": (128, 128, 32, 8, 8, 3), "cpu": (8, 32, 16, 2, 1, 1)}
_ROW_CONFIG = {"cuda": (2048, 4), "cpu": (32, 1)}
USE_TMA = False  # the bench's "sitegen.tiled[tma]" row flips it; the default waits for that row


def _gemm_config(x: torch.Tensor):
    if x.device.type != "cuda":
        return _GEMM_CONFIG["cpu"]
    return _GEMM_CONFIG["fp32" if x.dtype == torch.float32 else "bf16"]


def _programs(device: torch.device, tiles: int) -> int:
    if device.type != "cuda":
        return min(tiles, 3)  # fewer programs than tiles: the persistent loop is exercised
    return min(tiles, torch.cuda.get_device_properties(device).multi_processor_count)


def _tma_ok(x: torch.Tensor, w: torch.Tensor) -> bool:
    """TMA descriptors need 16-byte-aligned bases and row strides (the benchmark's shapes have them)."""
    return all(t.stride(1) == 1 and (t.stride(0) * t.element_size()) % 16 == 0 and t.data_ptr() % 16 == 0 for t in (x, w))


def logits_with_stats(x: torch.Tensor, w: torch.Tensor, out: torch.Tensor, inv_t: float, *, stats=True, config=None,
                      tma=None):
    """out = x @ w.T in fp32 (out is [rows, V], row stride free); returns the rows' base-2
    log-sum-exps of out * log2(e) * inv_t, combined from the GEMM epilogue's per-tile partials
    (None with stats=False). config: a (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, warps, stages) to try;
    tma: operand tiles by TMA (default USE_TMA; pointer loads wherever the strides do not allow it)."""
    M, K = x.shape
    N = w.shape[0]
    bm, bn, bk, group, warps, stages = config or _gemm_config(x)
    tiles_n = triton.cdiv(N, bn)
    pmax = torch.empty((M, tiles_n), dtype=torch.float32, device=x.device)
    psum = torch.empty_like(pmax)
    programs = _programs(x.device, triton.cdiv(M, bm) * tiles_n)
    tail = (out, pmax, psum, M, N, K)
    flags = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group, NUM_PROGRAMS=programs,
                 IEEE=x.dtype == torch.float32, UPCAST=x.device.type != "cuda", FAST=_fast(x.device), STATS=stats,
                 num_warps=warps, num_stages=stages)
    if (USE_TMA if tma is None else tma) and _tma_ok(x, w):
        from triton.tools.tensor_descriptor import TensorDescriptor

        _logits_stats_tma_kernel[(programs,)](
            TensorDescriptor.from_tensor(x, [bm, bk]), TensorDescriptor.from_tensor(w, [bn, bk]), *tail,
            out.stride(0), pmax.stride(0), inv_t * _LOG2E, **flags)
    else:
        _logits_stats_kernel[(programs,)](
            x, w, *tail, x.stride(0), w.stride(0), out.stride(0), pmax.stride(0), inv_t * _LOG2E, **flags)
    if not stats:
        return None
    row_max = pmax.max(dim=1).values
    return row_max + torch.log2((psum * torch.exp2(pmax - row_max[:, None])).sum(dim=1))


def _fast(device: torch.device) -> bool:
    return device.type == "cuda" and torch.version.hip is None


def tiled_forward(student_input, student_weight, teacher_input, teacher_weight, labels, n_valid, *,
                  beta, ignore_index, temperature, compute_grad, chunk_rows, loss_rows, grad_input, grad_weight):
    """The candidate's chunk loop; fused_linear_jsd_forward(variant="tiled") checks the arguments
    and allocates the outputs, so both variants answer the same calls the same way."""
    BT = student_input.shape[0]
    V = student_weight.shape[0]
    dtype, device = student_input.dtype, student_input.device
    mode = _mode(float(beta))
    inv_t = 1.0 / float(temperature)
    C = min(chunk_rows, BT)
    zs_buf = torch.empty((C, V), dtype=torch.float32, device=device)
    zt_buf = torch.empty((C, V), dtype=torch.float32, device=device)
    dz_buf = zt_buf if dtype == torch.float32 else zt_buf.view(dtype)[:, :V]
    s1_buf = torch.empty(C, dtype=torch.float32, device=device)
    block, warps = _ROW_CONFIG["cuda" if device.type == "cuda" else "cpu"]
    for s in range(0, BT, C):
        e = min(s + C, BT)
        zs, zt, dz, s1 = zs_buf[: e - s], zt_buf[: e - s], dz_buf[: e - s], s1_buf[: e - s]
        lse_s = logits_with_stats(student_input[s:e], student_weight, zs, inv_t)
        lse_t = logits_with_stats(teacher_input[s:e], teacher_weight, zt, inv_t)
        common = (
            zs, zt, dz, lse_s, lse_t, s1, loss_rows if labels is None else labels[s:e],
            loss_rows if n_valid is None else n_valid, loss_rows[s:e],
            zs.stride(0), zt.stride(0), dz.stride(0), V, float(BT), inv_t, float(beta), int(ignore_index),
        )
        flags = dict(MODE=mode, HAS_LABEL=labels is not None, BLOCK=block, FAST=_fast(device),
                     ALIASED=dz.dtype != torch.float32, num_warps=warps)
        _sweep_kernel[(e - s,)](*common, PHASE=0, **flags)
        if compute_grad:
            _sweep_kernel[(e - s,)](*common, PHASE=1, **flags)
            torch.mm(dz, student_weight, out=grad_input[s:e])
            if s == 0:
                torch.mm(dz.t(), student_input[s:e], out=grad_weight)
            else:
                grad_weight.addmm_(dz.t(), student_input[s:e])
    return loss_rows.sum(), grad_input, grad_weight


__all__ = ["logits_with_stats", "tiled_forward"]
