"""Scratch variants of the JSD forward kernel, timed side by side with kernels/jsd.py.

Variants (constexpr flags on a copy of _jsd_kernel; tile math shared with kernels/jsd.py):
  EVICT   streaming cache hints: X, Y loaded evict_first, dX stored .cs (written once, never
          re-read by this kernel), so neither displaces the other in L2.
  TAILPF  the masked partial block of a row is prefetched by the main loop's last iteration,
          instead of being loaded after the loop with nothing in flight (a DRAM latency per row).

    python benchmarks/jsd_variants.py                          # on a GPU: correctness, then timings
    TRITON_INTERPRET=1 python benchmarks/jsd_variants.py --check   # CPU: every variant vs float64
    python benchmarks/jsd_variants.py --offline                # no GPU: sm_90 registers, spills, accesses
"""

from __future__ import annotations

import os
import sys

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from kernels import jsd, reference  # noqa: E402
from kernels.jsd import _off, _tile  # noqa: E402


@triton.jit
def _ldu(p, EVICT: tl.constexpr):
    if EVICT:
        return tl.load(p, eviction_policy="evict_first")
    else:
        return tl.load(p)


@triton.jit
def _ldm(p, m, EVICT: tl.constexpr):
    if EVICT:
        return tl.load(p, mask=m, other=0.0, eviction_policy="evict_first")
    else:
        return tl.load(p, mask=m, other=0.0)


@triton.jit
def _st(p, v, m, EVICT: tl.constexpr):
    if EVICT:
        tl.store(p, v, mask=m, cache_modifier=".cs")
    else:
        tl.store(p, v, mask=m)


@triton.jit
def _stu(p, v, EVICT: tl.constexpr):
    if EVICT:
        tl.store(p, v, cache_modifier=".cs")
    else:
        tl.store(p, v)


@triton.jit
def _jsd_kernel_v(
    X, stride_x, Y, stride_y, DX, stride_dx,
    LABELS, N_VALID, PARTIAL, COUNTER, LOSS,
    V, n_rows, beta, ignore_index, blocks_per_chunk, n_tasks,
    MODE: tl.constexpr, HAS_LABEL: tl.constexpr, STORE_GRAD: tl.constexpr,
    BLOCK: tl.constexpr, ALIGN: tl.constexpr, FAST: tl.constexpr,
    EVICT: tl.constexpr, TAILPF: tl.constexpr, FUSED: tl.constexpr,
):
    row = tl.program_id(0)
    chunk = tl.program_id(1)
    n_chunks = tl.num_programs(1)
    row64 = row.to(tl.int64)
    out_ptr = PARTIAL + row64 * n_chunks + chunk
    if ALIGN > 1:
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

    Vb = V - shift
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
                    _st(dx_ptr + o, zero, blk * BLOCK + offs < Vb, EVICT)
                if do_head:
                    tl.store(dx_ptr + rs - shift + hoffs, tl.zeros_like(hoffs).to(DX.dtype.element_ty),
                             mask=hoffs < shift)
            tl.store(out_ptr, 0.0)
            if FUSED:
                _finish(PARTIAL, COUNTER, LOSS, n_tasks, BLOCK)
            return
    else:
        n = n_rows

    a = 1.0 - beta
    s = 0.6931471805599453 / n
    log2s = -tl.log2(n)

    acc1 = tl.zeros([BLOCK], dtype=tl.float32)
    acc2 = tl.zeros([BLOCK], dtype=tl.float32)
    hi = tl.minimum(blk1, n_full)
    has_tail = blk1 > n_full
    if TAILPF:
        # The prefetch chain runs through the full blocks and ends on the tail (masked off where
        # this chunk does not own it), so the tail's loads overlap the last full block's math.
        # Tail addresses are computed from the loop index inside the branch, not hoisted above
        # the loop, where they would hold ~40 registers for its whole length.
        if blk0 < hi:
            o = _off(rs, blk0 * BLOCK, offs, ALIGN)
            xn = _ldu(x_ptr + o, EVICT)
            yn = _ldu(y_ptr + o, EVICT)
        else:
            t0 = _off(rs, blk0 * BLOCK, offs, ALIGN)
            m_t = (blk0 * BLOCK + offs < Vb) & ((offs * 0 + blk0) < blk1)
            xn = _ldm(x_ptr + t0, m_t, EVICT)
            yn = _ldm(y_ptr + t0, m_t, EVICT)
        for blk in range(blk0, hi):
            x = xn.to(tl.float32)
            y = yn.to(tl.float32)
            o_next = _off(rs, (blk + 1) * BLOCK, offs, ALIGN)
            if blk + 1 < hi:
                xn = _ldu(x_ptr + o_next, EVICT)
                yn = _ldu(y_ptr + o_next, EVICT)
            else:
                # blk + 1 == n_full: the tail, if this chunk owns it (blk + 1 < blk1).
                m_t = ((blk + 1) * BLOCK + offs < Vb) & ((offs * 0 + blk + 1) < blk1)
                xn = _ldm(x_ptr + o_next, m_t, EVICT)
                yn = _ldm(y_ptr + o_next, m_t, EVICT)
            acc1, acc2, dx = _tile(x, y, acc1, acc2, a, beta, log2s, s, MODE, FAST)
            if STORE_GRAD:
                _stu(dx_ptr + _off(rs, blk * BLOCK, offs, ALIGN), dx.to(DX.dtype.element_ty), EVICT)
        tx = xn.to(tl.float32)
        ty = yn.to(tl.float32)
        to = _off(rs, n_full * BLOCK, offs, ALIGN)
        tm = n_full * BLOCK + offs < Vb
    else:
        o = _off(rs, blk0 * BLOCK, offs, ALIGN)
        m0 = (offs * 0 + blk0) < hi
        xn = _ldm(x_ptr + o, m0, EVICT)
        yn = _ldm(y_ptr + o, m0, EVICT)
        for blk in range(blk0, hi):
            x = xn.to(tl.float32)
            y = yn.to(tl.float32)
            o_next = _off(rs, tl.minimum(blk + 1, hi - 1) * BLOCK, offs, ALIGN)
            xn = _ldu(x_ptr + o_next, EVICT)
            yn = _ldu(y_ptr + o_next, EVICT)
            acc1, acc2, dx = _tile(x, y, acc1, acc2, a, beta, log2s, s, MODE, FAST)
            if STORE_GRAD:
                _stu(dx_ptr + _off(rs, blk * BLOCK, offs, ALIGN), dx.to(DX.dtype.element_ty), EVICT)
        to = _off(rs, n_full * BLOCK, offs, ALIGN)
        tm = n_full * BLOCK + offs < Vb
        tmo = tm & ((offs * 0 + blk1) > n_full)  # tail lanes; none where another chunk owns it
        tx = _ldm(x_ptr + to, tmo, EVICT).to(tl.float32)
        ty = _ldm(y_ptr + to, tmo, EVICT).to(tl.float32)
    if has_tail:
        t1, t2, tdx = _tile(tx, ty, tl.zeros_like(tx), tl.zeros_like(tx), a, beta, log2s, s, MODE, FAST)
        acc1 += tl.where(tm, t1, 0.0)
        acc2 += tl.where(tm, t2, 0.0)
        if STORE_GRAD:
            _st(dx_ptr + to, tdx.to(DX.dtype.element_ty), tm, EVICT)
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
    if FUSED:
        _finish(PARTIAL, COUNTER, LOSS, n_tasks, BLOCK)


@triton.jit
def _finish(PARTIAL, COUNTER, LOSS, total, BLOCK: tl.constexpr):
    # The last program to finish sums every partial in a fixed order (bitwise reproducible) and
    # writes the loss in its dtype, replacing the partial.sum() and .to() launches. The counter is
    # reset for the next launch, so it is zeroed once per device, not per call.
    tl.debug_barrier()  # every thread's partial store precedes the release below
    done = tl.atomic_add(COUNTER, 1, sem="acq_rel", scope="gpu")
    if done == total - 1:
        offs = tl.arange(0, BLOCK)
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for i in range(0, total, BLOCK):
            acc += tl.load(PARTIAL + i + offs, mask=i + offs < total, other=0.0, cache_modifier=".cg")
        tl.store(LOSS, tl.sum(acc, axis=0).to(LOSS.dtype.element_ty))
        tl.store(COUNTER, 0)


def forward_v(x, y, labels=None, *, beta=0.5, ignore_index=-100, store_grad=True, config=None,
              evict=False, tailpf=False, fused=False):
    """jsd.jsd_forward with the variant kernel; config = (BLOCK, num_warps, blocks_per_chunk)."""
    x, y = jsd._rows(x), jsd._rows(y)
    BT, V = x.shape
    block, num_warps, bpc = (config or jsd._config(V, x.element_size(), x.device))[:3]
    n_chunks = triton.cdiv(triton.cdiv(V, block), bpc)
    partial = torch.empty((BT, n_chunks), dtype=torch.float32, device=x.device)
    dx = torch.empty((BT, V), dtype=x.dtype, device=x.device) if store_grad else None
    n_valid = None
    if labels is not None:
        labels = labels.contiguous()
        n_valid = (labels != ignore_index).sum()
    vec = 16 // x.element_size()
    align = vec if (x.stride(0) % vec and x.stride(0) == y.stride(0) == V) else 0
    loss = torch.empty((), dtype=x.dtype, device=x.device) if fused else partial
    counter = _COUNTERS.get(x.device)
    if counter is None:
        counter = _COUNTERS[x.device] = torch.zeros(1, dtype=torch.int32, device=x.device)
    _jsd_kernel_v[(BT, n_chunks)](
        x, x.stride(0), y, y.stride(0), partial if dx is None else dx, 0 if dx is None else dx.stride(0),
        partial if labels is None else labels, partial if n_valid is None else n_valid, partial, counter, loss,
        V, float(BT), float(beta), int(ignore_index), bpc, BT * n_chunks,
        MODE=jsd._mode(float(beta)), HAS_LABEL=labels is not None, STORE_GRAD=dx is not None,
        BLOCK=block, ALIGN=align, FAST=x.is_cuda, EVICT=evict, TAILPF=tailpf, FUSED=fused, num_warps=num_warps,
    )
    return (loss if fused else partial.sum().to(x.dtype)), dx


_COUNTERS: dict = {}


VARIANTS = {  # name: forward_v keyword arguments (config None = the launcher's table)
    "hints": dict(evict=True),
    "tailpf": dict(tailpf=True),
    "hints+tailpf": dict(evict=True, tailpf=True),
    "fused": dict(fused=True),
    "all": dict(evict=True, tailpf=True, fused=True),
}


def check_small(device):
    """Every variant and tiling vs the float64 reference on small shapes (interpreter or GPU)."""
    g = torch.Generator(device=device).manual_seed(0)
    for dtype in (torch.float32, torch.bfloat16):
        for v in (37, 64, 301):
            x = (torch.randn(5, v, generator=g, device=device) * 3).log_softmax(-1).to(dtype)
            y = (torch.randn(5, v, generator=g, device=device) * 3).log_softmax(-1).to(dtype)
            labels = torch.tensor([1, -100, 2, 3, -100], device=device)
            for beta in (0.0, 0.5, 1.0):
                x64 = x.double().requires_grad_()
                ref = reference.jsd_reference(x64, y, labels, beta=beta)
                ref.backward()
                for cfg in ((64, 1, 2), (32, 1, 3), (64, 2, 1), (128, 1, 8)):
                    for name, kw in VARIANTS.items():
                        loss, dx = forward_v(x, y, labels, beta=beta, config=cfg, **kw)
                        tol = 1e-5 if dtype == torch.float32 else 1e-2
                        torch.testing.assert_close(loss.double(), ref.detach(), rtol=tol, atol=1e-6)
                        torch.testing.assert_close(dx.double(), x64.grad, rtol=tol * 10,
                                                   atol=tol * x64.grad.abs().max().item())
    print("check_small: all variants match the float64 reference", flush=True)


def main():
    import json
    import time

    import bench_jsd  # benchmarks/: copy bandwidth, inputs, backward timing

    class A:
        warmup, rep = 25, 100

    bench = lambda fn: triton.testing.do_bench(fn, warmup=A.warmup, rep=A.rep, return_mode="median")  # noqa: E731
    bw = bench_jsd.copy_bandwidth(A)
    out = []

    def log(s):
        print(s, flush=True)
        out.append(s)

    log(f"# {torch.cuda.get_device_name()}; copy {bw / 1e12:.3f} TB/s; torch {torch.__version__} triton {triton.__version__}")
    t0 = time.time()
    # (dtype, BT, V, store_grad, extra configs to try besides the launcher's table)
    cases = [
        (torch.float32, 2048, 128256, True, []),
        (torch.float32, 2048, 128256, False, []),
        (torch.bfloat16, 2048, 128256, True, []),
        (torch.float32, 4096, 32000, True, [(4096, 8, 2), (2048, 4, 4), (2048, 8, 16), (8192, 16, 4)]),
        (torch.float32, 4096, 32000, False, []),
        (torch.float32, 4096, 50257, True, [(4096, 8, 4)]),
        (torch.bfloat16, 4096, 32000, True, [(2048, 4, 4), (1024, 4, 8), (4096, 8, 8)]),
    ]
    results = []
    smoke = os.environ.get("JSD_VARIANTS_SMOKE") == "1"  # CPU interpreter dry run of this script
    for dtype, bt, v, store, cfgs in cases:
        if smoke:
            bt, v = 2, v // 64
        x, y = bench_jsd.make_inputs(bt, v, dtype)
        base_loss, base_dx = jsd.jsd_forward(x, y, beta=0.5, store_grad=store)
        fns = {"current": lambda: jsd.jsd_forward(x, y, beta=0.5, store_grad=store)}
        default = jsd._config(v, x.element_size(), x.device)[:3]
        for cfg in cfgs:  # the current kernel under the other tilings, to separate tiling from variant
            fns[f"current@{cfg[0]}/{cfg[1]}w/{cfg[2]}"] = (
                lambda c=cfg: jsd.jsd_forward(x, y, beta=0.5, store_grad=store, config=(*c, 1)))
        for cfg in [None] + cfgs:
            for name, kw in VARIANTS.items():
                if cfg is not None and name not in ("tailpf", "all"):
                    continue
                key = name if cfg is None else f"{name}@{cfg[0]}/{cfg[1]}w/{cfg[2]}"
                loss, dx = forward_v(x, y, beta=0.5, store_grad=store, config=cfg, **kw)
                same = torch.equal(loss, base_loss) and (dx is None or torch.equal(dx, base_dx))
                rt = 1e-5 if dtype == torch.float32 else 8e-3  # a bf16 loss summed in another order may round apart
                close = torch.allclose(loss.float(), base_loss.float(), rtol=rt) and (
                    dx is None or torch.allclose(dx.float(), base_dx.float(), rtol=1e-4, atol=1e-6 * base_dx.abs().max().item()))
                if not close:
                    log(f"!! {key} {dtype} [{bt},{v}] disagrees with the current kernel; not timed")
                    continue
                fns[key + ("" if same else "(~)")] = (lambda c=cfg, k=kw: forward_v(x, y, beta=0.5, store_grad=store, config=c, **k))
        nbytes = reference.bytes_moved(bt, v, x.element_size(), pass_="forward" if store else "forward_only")
        floor = nbytes / bw * 1e3
        # A copy moving the same bytes, timed the same way: its share of the 4 GiB copy shows how
        # much of the gap is the harness (launch ramp, write-back of the dirty L2 lines that
        # do_bench's cache zeroing leaves), which no kernel change can remove.
        src = torch.empty(nbytes // 2, dtype=torch.uint8, device=x.device)
        dst = torch.empty_like(src)
        fns["same-size copy"] = lambda: dst.copy_(src)
        times = {k: [] for k in fns}
        for _ in range(2):  # two interleaved rounds: drift shows as disagreement between them
            for k, fn in fns.items():
                times[k].append(bench(fn))
        pas = "fwd" if store else "fwd-only"
        for k, ts in times.items():
            ms = min(ts)
            log(f"{str(dtype)[6:]:8} [{bt},{v}] {pas:8} {k:28} {ms:.4f} ms ({ts[0]:.4f}/{ts[1]:.4f})  "
                f"{floor / ms * 100:5.1f}% of copy  {ms / floor:.3f}x floor  default cfg {default}")
            results.append(dict(dtype=str(dtype), bt=bt, v=v, store_grad=store, variant=k, ms=ts, floor_ms=floor))
        del x, y, base_dx, src, dst
        torch.cuda.empty_cache()
    # The in-place backward (kernels/jsd.py), timed as bench_jsd now does it.
    for dtype, bt, v in ((torch.float32, 2048, 128256), (torch.bfloat16, 2048, 128256), (torch.float32, 4096, 32000)):
        if smoke:
            bt, v = 2, v // 64
        x, y = bench_jsd.make_inputs(bt, v, dtype)
        xg = x.detach().requires_grad_()
        ms = bench_jsd.bench_backward(lambda a, b: jsd.jsd_loss(a, b), xg, y, A)
        floor = reference.bytes_moved(bt, v, x.element_size(), pass_="backward") / bw * 1e3
        log(f"{str(dtype)[6:]:8} [{bt},{v}] backward in-place scale {ms:.4f} ms  {floor / ms * 100:5.1f}% of copy")
        del x, y, xg
        torch.cuda.empty_cache()
    # Peak memory of backward beyond what forward left: dX is scaled in place, so O(BT).
    if not smoke:
        x, y = bench_jsd.make_inputs(1024, 128256, torch.float32)
        xg = x.detach().requires_grad_()
        loss = jsd.jsd_loss(xg, y)
        torch.cuda.synchronize()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        loss.backward()
        torch.cuda.synchronize()
        log(f"# backward peak extra memory: {torch.cuda.max_memory_allocated() - base} bytes "
            f"(one (BT, V) tensor is {x.numel() * x.element_size()})")
        del x, y, xg, loss
    log(f"# {time.time() - t0:.0f} s")
    dest = os.environ.get("OUT", "/tmp")
    with open(os.path.join(dest, "variants.txt"), "w") as f:
        f.write("\n".join(out) + "\n")
    with open(os.path.join(dest, "variants.json"), "w") as f:
        json.dump(dict(copy_Bps=bw, results=results), f, indent=1)


def offline():
    """Compile each variant for sm_90 without a GPU; print registers, stack and global accesses.

    Pointers, strides and V get the divisibility-by-16 specialization Triton gives them on the
    GPU at [2048, 128256], so the access widths are the ones the GPU would run.
    """
    import collections
    import re
    import subprocess
    import tempfile

    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    cuobjdump = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")

    def compile_(fn, fp, constexprs, num_warps):
        types = {"X": fp, "Y": fp, "DX": fp, "LOSS": fp, "LABELS": "*i64", "N_VALID": "*i64", "PARTIAL": "*fp32",
                 "COUNTER": "*i32", "n_rows": "fp32", "beta": "fp32"}
        names = fn.arg_names
        sig = {n: "constexpr" if n in constexprs else types.get(n, "i64" if n.startswith("stride") else "i32")
               for n in names}
        aligned = ("X", "Y", "DX", "PARTIAL", "stride_x", "stride_y", "stride_dx", "V")
        src = ASTSource(fn=fn, signature=sig, constexprs={(names.index(k),): v for k, v in constexprs.items()},
                        attrs={(names.index(k),): [["tt.divisibility", 16]] for k in aligned})
        k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": num_warps})
        with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
            f.write(k.asm["cubin"])
            f.flush()
            res = subprocess.run([cuobjdump, "--dump-resource-usage", f.name], capture_output=True, text=True).stdout
        m = re.search(r"REG:(\d+).*?STACK:(\d+)", res)
        acc = collections.Counter(re.findall(r"\b((?:ld|st|atom)\.global\S*)", k.asm["ptx"]))
        return m.groups(), dict(acc)

    for fp, block, nw in (("*fp32", 4096, 8), ("*bf16", 2048, 4)):
        base = dict(MODE=2, HAS_LABEL=False, STORE_GRAD=True, BLOCK=block, ALIGN=0, FAST=True)
        (regs, stack), acc = compile_(jsd._jsd_kernel, fp, dict(base, PREFETCH=True), nw)
        print(f"{fp} {block}/{nw}w current: {regs} registers, stack {stack}, {acc}")
        for name, kw in VARIANTS.items():
            flags = dict(EVICT=kw.get("evict", False), TAILPF=kw.get("tailpf", False), FUSED=kw.get("fused", False))
            (regs, stack), acc = compile_(_jsd_kernel_v, fp, dict(base, **flags), nw)
            print(f"{fp} {block}/{nw}w {name}: {regs} registers, stack {stack}, {acc}")


if __name__ == "__main__":
    if "--check" in sys.argv:
        check_small("cpu" if os.environ.get("TRITON_INTERPRET") == "1" else "cuda")
    elif "--offline" in sys.argv:
        offline()
    else:
        main()
