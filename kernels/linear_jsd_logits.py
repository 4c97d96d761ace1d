"""The tiled head's logits GEMM: out = x @ w.T in fp32, and in its epilogue each (row, column
tile)'s max and sum of exp2 of the base-2 scaled logits, combined into the rows' log-sum-exps
(kernels/fused_linear_jsd_tiled.py uses it; the benchmark times it alone against cuBLAS).

Persistent: one program per SM walks the output tiles in grouped order (no wave-quantization
tail). Operand tiles come by cp.async pointer loads, or with USE_TMA by the tensor-memory
accelerator from host-built descriptors. With half=True the logits are stored as fp16 relative
to their tile's max, in base-2 units (u2 - max u2 of the tile, <= 0): half the bytes of fp32 for
the GEMM's write and for every sweep that reads them; fp16 keeps 11 bits of each value's
distance from its tile's max, which a float64 emulation at V 128256 found to add 1% to the
gradients' error (1.45e-3 -> 1.46e-3) and 6e-8 to the loss's (NOTES.md, Round 4).
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl

from .jsd import _exp2

_LOG2E = 1.4426950408889634

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
              BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, FAST: tl.constexpr, STATS: tl.constexpr,
              HALF: tl.constexpr):
    rm = pm * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pn * BLOCK_N + tl.arange(0, BLOCK_N)
    mask_m = rm < M
    mask_n = rn < N
    z = Z + rm.to(tl.int64)[:, None] * stride_zm + rn[None, :]
    if HALF:  # u2 - the tile's max u2, one tensor in place of acc; floored inside fp16's range
        tmax = tl.max(tl.where(mask_n[None, :], acc, -float("inf")), 1) * c
        d = acc * c - tmax[:, None]
        tl.store(z, tl.maximum(d, -60000.0).to(tl.float16), mask=mask_m[:, None] & mask_n[None, :])
        tsum = tl.sum(tl.where(mask_n[None, :], _exp2(d, FAST), 0.0), 1)
        p = rm.to(tl.int64) * stride_pm + pn
        tl.store(PMAX + p, tmax, mask=mask_m)
        tl.store(PSUM + p, tsum, mask=mask_m)
    else:
        tl.store(z, acc, mask=mask_m[:, None] & mask_n[None, :])
    if STATS and not HALF:  # off only for the benchmark's GEMM-alone rows, which price the epilogue
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
    STATS: tl.constexpr, HALF: tl.constexpr,
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
        _epilogue(acc, Z, PMAX, PSUM, pm, pn, M, N, stride_zm, stride_pm, c, BLOCK_M, BLOCK_N, FAST, STATS, HALF)


@triton.jit
def _logits_stats_tma_kernel(
    x_desc, w_desc, Z, PMAX, PSUM, M, N, K, stride_zm, stride_pm, c,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
    NUM_PROGRAMS: tl.constexpr, IEEE: tl.constexpr, UPCAST: tl.constexpr, FAST: tl.constexpr,
    STATS: tl.constexpr, HALF: tl.constexpr,
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
        _epilogue(acc, Z, PMAX, PSUM, pm, pn, M, N, stride_zm, stride_pm, c, BLOCK_M, BLOCK_N, FAST, STATS, HALF)


# (BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, num_warps, num_stages). GPU values are the usual Hopper
# starting points for a Triton GEMM, not tuned (no GPU this round); the bench's "triton GEMM"
# row says how far they are from cuBLAS. The interpreter's tiles leave partial tiles in M, N and K.
_GEMM_CONFIG = {"bf16": (128, 256, 64, 8, 8, 3), "fp32": (128, 128, 32, 8, 8, 3), "cpu": (8, 32, 16, 2, 1, 1)}
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
    tma: operand tiles by TMA (default USE_TMA; pointer loads wherever the strides do not allow it).
    An fp16 out takes the half form (module docstring) and returns (lse, off, BLOCK_N) instead:
    x2 = out[r, j] + off[r, j // BLOCK_N] is then the base-2 log-probability."""
    half = out.dtype == torch.float16
    M, K = x.shape
    N = w.shape[0]
    bm, bn, bk, group, warps, stages = config or _gemm_config(x)
    tiles_n = triton.cdiv(N, bn)
    pmax = torch.empty((M, tiles_n), dtype=torch.float32, device=x.device)
    psum = torch.empty_like(pmax)
    programs = _programs(x.device, triton.cdiv(M, bm) * tiles_n)
    tail = (out, pmax, psum, M, N, K)
    flags = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group, NUM_PROGRAMS=programs,
                 IEEE=x.dtype == torch.float32, UPCAST=x.device.type != "cuda", FAST=_fast(x.device),
                 STATS=stats or half, HALF=half,
                 num_warps=warps, num_stages=stages)
    if (USE_TMA if tma is None else tma) and _tma_ok(x, w):
        from triton.tools.tensor_descriptor import TensorDescriptor

        _logits_stats_tma_kernel[(programs,)](
            TensorDescriptor.from_tensor(x, [bm, bk]), TensorDescriptor.from_tensor(w, [bn, bk]), *tail,
            out.stride(0), pmax.stride(0), inv_t * _LOG2E, **flags)
    else:
        _logits_stats_kernel[(programs,)](
            x, w, *tail, x.stride(0), w.stride(0), out.stride(0), pmax.stride(0), inv_t * _LOG2E, **flags)
    if not (stats or half):
        return None
    row_max = pmax.max(dim=1).values
    lse = row_max + torch.log2((psum * torch.exp2(pmax - row_max[:, None])).sum(dim=1))
    return (lse, pmax.sub_(lse[:, None]), bn) if half else lse


def _fast(device: torch.device) -> bool:
    return device.type == "cuda" and torch.version.hip is None



__all__ = ["USE_TMA", "logits_with_stats"]
