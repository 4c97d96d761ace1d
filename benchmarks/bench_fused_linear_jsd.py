"""Benchmark the fused linear + JSD head against the four GEMMs it cannot avoid, and its peers.

One process on one GPU. Per BT it times, with triton.testing.do_bench (median):
  - the four GEMMs alone through cuBLAS, unchunked: student logits Xs Ws^T, teacher logits
    Xt Wt^T, grad_input dz Ws and grad_weight dz^T Xs (8 BT H V FLOP at Hs = Ht; forward's
    floor is the first two), in the input dtype;
  - the logits GEMMs as the heads run them (chunks of 1,024 rows, fp32 out): cuBLAS, and the
    tiled variant's Triton GEMM with and without its log-sum-exp epilogue, per --gemm-configs
    (how close a Triton GEMM comes to cuBLAS here);
  - each implementation's forward (as Liger's rows: the call with gradients wanted), its forward
    without grad (under torch.no_grad, against the two forward GEMMs) and full (forward +
    backward), and its extra peak memory over a full step (gradients included);
  - each implementation's normwise relative error of the loss, grad_input and grad_weight
    against kernels/linear_jsd_reference's float64 autograd, on the same inputs.
FLOP per pass: linear_jsd_reference.flop (forward 2 BT V (Hs+Ht), full + 4 BT V Hs).

    python benchmarks/bench_fused_linear_jsd.py --out benchmarks/results/fused_linear_jsd_h200
    python benchmarks/bench_fused_linear_jsd.py --bts 1024 --impls sitegen,torch   # a quick look

No row can stop the run: each measurement that raises prints one line and leaves its cells
empty, and the text and JSON are rewritten after every row (default $OUT/fused_linear_jsd when
$OUT is set), so a run cut off by a time limit keeps what it measured.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import sys
import time

import torch
import triton

try:
    from sitegen.kernels import fused_linear_jsd as fused, fused_linear_jsd_tiled as tiled, jsd, linear_jsd_logits as gemm, linear_jsd_reference as ref
except ImportError:  # not installed (the GPU machine): the repo's kernels/ directly
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from kernels import fused_linear_jsd as fused, fused_linear_jsd_tiled as tiled, jsd, linear_jsd_logits as gemm, linear_jsd_reference as ref

DTYPES = {"bf16": torch.bfloat16, "fp32": torch.float32}


def make_impls(args):
    kw = dict(beta=args.beta, temperature=args.temperature)

    def torch_eager(xs, ws, xt, wt):
        return ref.linear_jsd_reference(xs, ws, xt, wt, compute_dtype=torch.float32, logits_in_input_dtype=True, **kw)

    compiled = torch.compile(torch_eager)

    def matmul_sitegen_jsd(xs, ws, xt, wt):
        log_q = torch.log_softmax((xs @ ws.t()).float() / args.temperature, dim=-1)
        log_p = torch.log_softmax((xt @ wt.t()).float() / args.temperature, dim=-1)
        return jsd.jsd_loss(log_q, log_p, beta=args.beta)

    ours = fused.FusedLinearJSD(jsd_beta=args.beta, temperature=args.temperature)
    candidate = fused.FusedLinearJSD(jsd_beta=args.beta, temperature=args.temperature, variant="tiled")
    impls = {"sitegen": lambda xs, ws, xt, wt: ours(xs, ws, xt, wt),
             "sitegen.tiled": lambda xs, ws, xt, wt: candidate(xs, ws, xt, wt),
             **{f"sitegen.tiled[{'+'.join(f)}]": functools.partial(with_flags, candidate, f)
                for f in (("tma",), ("fp16",), ("tma", "fp16"))}}
    try:
        from liger_kernel.transformers import LigerFusedLinearJSD

        liger = LigerFusedLinearJSD(jsd_beta=args.beta, temperature=args.temperature)
        impls["liger"] = lambda xs, ws, xt, wt: liger(xs, ws, xt, wt, None)
    except ImportError:
        print("liger-kernel not installed: its rows are left out", file=sys.stderr)
    for c in filter(None, args.chunks.split(",")):
        other = fused.FusedLinearJSD(jsd_beta=args.beta, temperature=args.temperature, chunk_rows=int(c))
        impls[f"sitegen[C={c}]"] = functools.partial(lambda m, xs, ws, xt, wt: m(xs, ws, xt, wt), other)
    for rc in filter(None, args.row_configs.split(",")):
        impls[f"sitegen[row={rc}]"] = functools.partial(with_row_config, ours, tuple(int(n) for n in rc.split("x")))
    impls.update({"torch": torch_eager, "torch.compile": compiled, "matmul+sitegen_jsd": matmul_sitegen_jsd})
    wanted = args.impls.split(",")
    return {k: v for k, v in impls.items() if k in wanted or k.startswith("sitegen[")}


def with_row_config(module, config, xs, ws, xt, wt):
    """The fused head with another row-kernel config (BLOCK, warps), for tuning runs."""
    saved, fused._ROW_CONFIG_GPU = fused._ROW_CONFIG_GPU, config
    try:
        return module(xs, ws, xt, wt)
    finally:
        fused._ROW_CONFIG_GPU = saved


def with_flags(module, flags, xs, ws, xt, wt):
    """The tiled candidate with its GEMM's operand tiles by TMA ("tma") and/or fp16 logits ("fp16")."""
    saved = gemm.USE_TMA, tiled.HALF_LOGITS
    gemm.USE_TMA, tiled.HALF_LOGITS = "tma" in flags, "fp16" in flags
    try:
        return module(xs, ws, xt, wt)
    finally:
        gemm.USE_TMA, tiled.HALF_LOGITS = saved


def bench(fn, args):
    if args.device == "cpu":  # the smoke run: every code path once; the figure means nothing
        t = time.perf_counter()
        fn()
        return (time.perf_counter() - t) * 1e3
    return triton.testing.do_bench(fn, warmup=args.warmup, rep=args.rep, return_mode="median")


def four_gemms(xs, ws, xt, wt, args):
    """(forward two GEMMs ms, all four ms), unchunked, outputs preallocated, in the input dtype."""
    bt, v = xs.shape[0], ws.shape[0]
    zs = torch.empty(bt, v, dtype=xs.dtype, device=xs.device)
    zt = torch.empty_like(zs)
    dz = torch.randn(bt, v, device=xs.device).to(xs.dtype)
    gi, gw = torch.empty_like(xs), torch.empty_like(ws)

    def fwd():
        torch.mm(xs, ws.t(), out=zs)
        torch.mm(xt, wt.t(), out=zt)

    def full():
        fwd()
        torch.mm(dz, ws, out=gi)
        torch.mm(dz.t(), xs, out=gw)

    result = bench(fwd, args), bench(full, args)
    del zs, zt, dz, gi, gw
    return result


def attempt(what, fn):
    """fn() or, when it raises, None after one line naming what failed (the run goes on)."""
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - any failure of one row must leave the others
        print(f"{what}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}", file=sys.stderr, flush=True)
        if isinstance(e, torch.OutOfMemoryError) and torch.cuda.is_available():
            gc.collect()
            torch.cuda.empty_cache()
        return None


def gemm_rows(dtype_name, xs, ws, xt, wt, fwd_gemm, args):
    """The two logits GEMMs as the heads run them: chunks of 1,024 rows into one fp32 [C, V]
    buffer each; cuBLAS first, then each Triton config with and without the epilogue."""
    bt, v = xs.shape[0], ws.shape[0]
    c = fused.default_chunk_rows(bt)
    zs = torch.empty(c, v, dtype=torch.float32, device=xs.device)
    zt = torch.empty_like(zs)

    def chunked(one, half=False):
        bs, bt_ = (zs.view(torch.float16)[:, :v], zt.view(torch.float16)[:, :v]) if half else (zs, zt)

        def run():
            for s in range(0, bt, c):
                one(xs[s:s + c], ws, bs[: min(c, bt - s)])
                one(xt[s:s + c], wt, bt_[: min(c, bt - s)])
        return run

    variants = [("cuBLAS fp32-out", None, chunked(fused._logits_fp32))]
    for cfg in filter(None, args.gemm_configs.split(",")):
        tma = cfg.startswith("tma:")
        config = tuple(int(n) for n in cfg.removeprefix("tma:").split("x"))
        for form in ("", " +lse", " +lse fp16"):
            one = functools.partial(
                lambda cf, st, tm, x, w, out: gemm.logits_with_stats(x, w, out, 1.0, stats=st, config=cf, tma=tm),
                config, bool(form), tma)
            variants.append((f"triton {cfg}{form}", cfg, chunked(one, half="fp16" in form)))
    rows, base = [], None
    for name, cfg, fn in variants:
        ms = attempt(f"{dtype_name} BT {bt} {name}", lambda: bench(fn, args))
        if name.startswith("cuBLAS"):
            base = ms
        rows.append(dict(dtype=dtype_name, bt=bt, gemm=name, ms=ms, gemm2_ms=fwd_gemm,
                         x_cublas=ms / base if ms and base else None, x_gemm2=ms / fwd_gemm if ms and fwd_gemm else None,
                         tflops=ref.flop(bt, xs.shape[1], xt.shape[1], v, pass_="forward") / ms / 1e9 if ms else None))
        print(fmt_gemm(rows[-1]), flush=True)
    del zs, zt
    return rows


def normwise(a, r):
    return float((a.double() - r).norm() / r.norm())


def run_case(dtype_name, bt, impls, args, sink):
    dtype = DTYPES[dtype_name]
    dev = args.device
    g = torch.Generator(device=dev).manual_seed(bt)
    h, v = args.hidden, args.vocab
    xs = torch.randn(bt, h, generator=g, device=dev).to(dtype)
    xt = torch.randn(bt, h, generator=g, device=dev).to(dtype)
    ws = (torch.randn(v, h, generator=g, device=dev) * (3.0 / h**0.5)).to(dtype)
    wt = (torch.randn(v, h, generator=g, device=dev) * (3.9 / h**0.5)).to(dtype)
    fwd_gemm, gemm4 = attempt(f"{dtype_name} BT {bt} cuBLAS GEMMs", lambda: four_gemms(xs, ws, xt, wt, args)) or (None, None)
    print(f"{dtype_name:5} {bt:>5} cuBLAS GEMMs, unchunked, {dtype_name} out: forward's two "
          f"{_f(fwd_gemm, '.2f')} ms, all four {_f(gemm4, '.2f')} ms", flush=True)
    if args.gemm_configs:
        sink(gemm=gemm_rows(dtype_name, xs, ws, xt, wt, fwd_gemm, args))
    reference = attempt(f"{dtype_name} BT {bt} float64 reference", lambda: ref.reference_loss_and_grads(
        xs, ws, xt, wt, beta=args.beta, temperature=args.temperature, chunk_rows=1024))
    for name, impl in impls.items():
        xs_, ws_ = xs.clone().requires_grad_(True), ws.clone().requires_grad_(True)
        what = f"{dtype_name} BT {bt} {name}"

        def full():
            xs_.grad = ws_.grad = None
            impl(xs_, ws_, xt, wt).backward()

        def forward():
            return impl(xs_, ws_, xt, wt)

        def no_grad():
            with torch.no_grad():
                return impl(xs, ws, xt, wt)

        def step():
            gc.collect()
            xs_.grad = ws_.grad = None
            if dev == "cpu":
                loss = impl(xs_, ws_, xt, wt)
                loss.backward()
                extra_gb = None
            else:
                torch.cuda.empty_cache()
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
                base = torch.cuda.memory_allocated()
                loss = impl(xs_, ws_, xt, wt)
                loss.backward()
                torch.cuda.synchronize()
                extra_gb = (torch.cuda.max_memory_allocated() - base) / 1e9
            if reference is None:
                return extra_gb, (None, None, None)
            rl, rgi, rgw = reference
            return extra_gb, (abs(float(loss.detach()) - float(rl)) / abs(float(rl)), normwise(xs_.grad, rgi), normwise(ws_.grad, rgw))

        extra_gb, errs = attempt(f"{what} step", step) or (None, (None, None, None))
        t_full = attempt(f"{what} full", lambda: bench(full, args))
        xs_.grad = ws_.grad = None
        t_fwd = attempt(f"{what} forward", lambda: bench(forward, args))
        t_nograd = attempt(f"{what} no-grad forward", lambda: bench(no_grad, args))
        xs_.grad = ws_.grad = None
        del xs_, ws_
        rows = [dict(dtype=dtype_name, bt=bt, impl=name, forward_ms=t_fwd, full_ms=t_full, nograd_ms=t_nograd,
                     gemm2_ms=fwd_gemm, gemm4_ms=gemm4, forward_x_gemm=_ratio(t_fwd, fwd_gemm),
                     full_x_gemm=_ratio(t_full, gemm4), nograd_x_gemm=_ratio(t_nograd, fwd_gemm),
                     extra_peak_gb=extra_gb, err_loss=errs[0], err_grad_input=errs[1], err_grad_weight=errs[2],
                     full_tflops=ref.flop(bt, h, h, v, pass_="full") / t_full / 1e9 if t_full else None)]
        print(fmt(rows[-1]), flush=True)
        sink(impl=rows)
    del xs, xt, ws, wt, reference


def _ratio(a, b):
    return a / b if a and b else None


def _f(x, spec, width=0):
    return f"{x:{width}{spec}}" if x is not None else f"{'-':>{width}}"


HEADER = (f"{'dtype':5} {'BT':>5} {'impl':20} {'fwd ms':>8} {'x2GEMM':>7} {'nograd':>8} {'x2GEMM':>7} "
          f"{'full ms':>8} {'x4GEMM':>7} {'TFLOP/s':>8} {'peak GB':>8} {'err loss':>9} {'err dX':>9} {'err dW':>9}")
GEMM_HEADER = (f"{'dtype':5} {'BT':>5} {'logits GEMMs (C 1024, fp32 out)':32} {'ms':>8} {'xcuBLAS':>8} "
               f"{'x2GEMM':>7} {'TFLOP/s':>8}")


def fmt(r):
    return (f"{r['dtype']:5} {r['bt']:>5} {r['impl']:20} {_f(r['forward_ms'], '.2f', 8)} {_f(r['forward_x_gemm'], '.3f', 7)} "
            f"{_f(r['nograd_ms'], '.2f', 8)} {_f(r['nograd_x_gemm'], '.3f', 7)} "
            f"{_f(r['full_ms'], '.2f', 8)} {_f(r['full_x_gemm'], '.3f', 7)} {_f(r['full_tflops'], '.1f', 8)} "
            f"{_f(r['extra_peak_gb'], '.2f', 8)} {_f(r['err_loss'], '.2e', 9)} {_f(r['err_grad_input'], '.2e', 9)} "
            f"{_f(r['err_grad_weight'], '.2e', 9)}")


def fmt_gemm(r):
    return (f"{r['dtype']:5} {r['bt']:>5} {r['gemm']:32} {_f(r['ms'], '.2f', 8)} {_f(r['x_cublas'], '.3f', 8)} "
            f"{_f(r['x_gemm2'], '.3f', 7)} {_f(r['tflops'], '.1f', 8)}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bts", default="1024,2048,4096,8192")
    p.add_argument("--dtypes", default="bf16")
    p.add_argument("--hidden", type=int, default=4096)
    p.add_argument("--vocab", type=int, default=128256)
    p.add_argument("--beta", type=float, default=0.5)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--impls", default="sitegen,sitegen.tiled,sitegen.tiled[tma],sitegen.tiled[fp16],sitegen.tiled[tma+fp16],"
                                      "liger,torch,torch.compile,matmul+sitegen_jsd")
    p.add_argument("--chunks", default="", help="also time the fused head at these chunk sizes (tuning)")
    p.add_argument("--row-configs", default="", help="also time these row-kernel configs, BLOCKxWARPS (tuning)")
    p.add_argument("--gemm-configs", default="128x256x64x8x8x3,128x128x64x8x8x4,tma:128x256x64x8x8x3,tma:128x256x64x8x8x4",
                   help="Triton logits-GEMM configs to time against cuBLAS, BMxBNxBKxGROUPxWARPSxSTAGES, "
                        "tma: before one for TMA operand loads ('' for none)")
    p.add_argument("--device", default="cuda", choices=("cuda", "cpu"),
                   help="cpu: run every code path once at tiny sizes under TRITON_INTERPRET=1 (a smoke test)")
    p.add_argument("--warmup", type=int, default=300, help="do_bench warm-up, ms")
    p.add_argument("--rep", type=int, default=1500, help="do_bench measuring time, ms")
    p.add_argument("--out", default=os.path.join(os.environ["OUT"], "fused_linear_jsd") if os.environ.get("OUT") else None,
                   help="write OUT.txt and OUT.json (default $OUT/fused_linear_jsd when $OUT is set)")
    args = p.parse_args(argv)
    impls = make_impls(args)
    if args.device == "cpu":
        where = "CPU smoke run (TRITON_INTERPRET=1; times mean nothing)"
    else:
        props = torch.cuda.get_device_properties(0)
        where = f"{props.name}, {props.multi_processor_count} SMs"
    head = (f"# {where}, torch {torch.__version__}, triton {triton.__version__}; "
            f"H {args.hidden}, V {args.vocab}, beta {args.beta}, T {args.temperature}; ratios: time / the same run's "
            f"cuBLAS GEMMs (x2GEMM: forward's two, x4GEMM: all four, unchunked); nograd: forward under torch.no_grad; "
            f"xcuBLAS: / the chunked cuBLAS fp32-out logits GEMMs; errors: normwise vs float64")
    print(head)
    print(GEMM_HEADER)
    print(HEADER, flush=True)
    rows = {"gemm": [], "impl": []}

    def sink(**new):
        for key, more in new.items():
            rows[key] += more
        if args.out:  # rewritten after every row: a run cut short keeps what it measured
            with open(args.out + ".txt", "w") as f:
                f.write("\n".join([head, GEMM_HEADER] + [fmt_gemm(r) for r in rows["gemm"]]
                                  + [HEADER] + [fmt(r) for r in rows["impl"]]) + "\n")
            with open(args.out + ".json", "w") as f:
                json.dump({"header": head, "gemm_rows": rows["gemm"], "rows": rows["impl"]}, f, indent=1)

    for d in args.dtypes.split(","):
        for bt in (int(b) for b in args.bts.split(",")):
            attempt(f"{d} BT {bt}", lambda: run_case(d, bt, impls, args, sink))


if __name__ == "__main__":
    main()
