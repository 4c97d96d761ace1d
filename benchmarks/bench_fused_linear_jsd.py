"""Benchmark the fused linear + JSD head against the four GEMMs it cannot avoid, and its peers.

One process on one GPU. Per BT it times, with triton.testing.do_bench (median):
  - the four GEMMs alone through cuBLAS, unchunked: student logits Xs Ws^T, teacher logits
    Xt Wt^T, grad_input dz Ws and grad_weight dz^T Xs (8 BT H V FLOP at Hs = Ht; forward's
    floor is the first two), in the input dtype;
  - each implementation's forward (as Liger's rows: the call with gradients wanted) and full
    (forward + backward), and its extra peak memory over a full step (gradients included);
  - each implementation's normwise relative error of the loss, grad_input and grad_weight
    against kernels/linear_jsd_reference's float64 autograd, on the same inputs.
FLOP per pass: linear_jsd_reference.flop (forward 2 BT V (Hs+Ht), full + 4 BT V Hs).

    python benchmarks/bench_fused_linear_jsd.py --out benchmarks/results/fused_linear_jsd_h200
    python benchmarks/bench_fused_linear_jsd.py --bts 1024 --impls sitegen,torch   # a quick look
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import sys

import torch
import triton

try:
    from sitegen.kernels import fused_linear_jsd as fused, jsd, linear_jsd_reference as ref
except ImportError:  # not installed (the GPU machine): the repo's kernels/ directly
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from kernels import fused_linear_jsd as fused, jsd, linear_jsd_reference as ref

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
    impls = {"sitegen": lambda xs, ws, xt, wt: ours(xs, ws, xt, wt)}
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


def bench(fn, args):
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


def normwise(a, r):
    return float((a.double() - r).norm() / r.norm())


def run_case(dtype_name, bt, impls, args):
    dtype = DTYPES[dtype_name]
    g = torch.Generator(device="cuda").manual_seed(bt)
    h, v = args.hidden, args.vocab
    xs = torch.randn(bt, h, generator=g, device="cuda").to(dtype)
    xt = torch.randn(bt, h, generator=g, device="cuda").to(dtype)
    ws = (torch.randn(v, h, generator=g, device="cuda") * (3.0 / h**0.5)).to(dtype)
    wt = (torch.randn(v, h, generator=g, device="cuda") * (3.9 / h**0.5)).to(dtype)
    fwd_gemm, gemm4 = four_gemms(xs, ws, xt, wt, args)
    rl, rgi, rgw = ref.reference_loss_and_grads(xs, ws, xt, wt, beta=args.beta, temperature=args.temperature, chunk_rows=1024)
    rows = []
    for name, impl in impls.items():
        xs_, ws_ = xs.clone().requires_grad_(True), ws.clone().requires_grad_(True)

        def full():
            xs_.grad = ws_.grad = None
            impl(xs_, ws_, xt, wt).backward()

        def forward():
            return impl(xs_, ws_, xt, wt)

        try:
            gc.collect()
            torch.cuda.empty_cache()
            xs_.grad = ws_.grad = None
            torch.cuda.synchronize()
            torch.cuda.reset_peak_memory_stats()
            base = torch.cuda.memory_allocated()
            loss = impl(xs_, ws_, xt, wt)
            loss.backward()
            torch.cuda.synchronize()
            extra_gb = (torch.cuda.max_memory_allocated() - base) / 1e9
            errs = (abs(float(loss.detach()) - float(rl)) / abs(float(rl)), normwise(xs_.grad, rgi), normwise(ws_.grad, rgw))
            del loss
            t_full = bench(full, args)
            xs_.grad = ws_.grad = None
            t_fwd = bench(forward, args)
        except torch.OutOfMemoryError:
            print(f"{dtype_name} BT {bt} {name}: out of memory", file=sys.stderr)
            continue
        finally:
            xs_.grad = ws_.grad = None
        rows.append(dict(dtype=dtype_name, bt=bt, impl=name, forward_ms=t_fwd, full_ms=t_full,
                         gemm2_ms=fwd_gemm, gemm4_ms=gemm4, forward_x_gemm=t_fwd / fwd_gemm, full_x_gemm=t_full / gemm4,
                         extra_peak_gb=extra_gb, err_loss=errs[0], err_grad_input=errs[1], err_grad_weight=errs[2],
                         full_tflops=ref.flop(bt, h, h, v, pass_="full") / t_full / 1e9))
        print(fmt(rows[-1]), flush=True)
    del xs, xt, ws, wt, rgi, rgw
    return rows


HEADER = (f"{'dtype':5} {'BT':>5} {'impl':20} {'fwd ms':>8} {'x2GEMM':>7} {'full ms':>8} {'x4GEMM':>7} "
          f"{'TFLOP/s':>8} {'peak GB':>8} {'err loss':>9} {'err dX':>9} {'err dW':>9}")


def fmt(r):
    return (f"{r['dtype']:5} {r['bt']:>5} {r['impl']:20} {r['forward_ms']:8.2f} {r['forward_x_gemm']:7.3f} "
            f"{r['full_ms']:8.2f} {r['full_x_gemm']:7.3f} {r['full_tflops']:8.1f} {r['extra_peak_gb']:8.2f} "
            f"{r['err_loss']:9.2e} {r['err_grad_input']:9.2e} {r['err_grad_weight']:9.2e}")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bts", default="1024,2048,4096,8192")
    p.add_argument("--dtypes", default="bf16")
    p.add_argument("--hidden", type=int, default=4096)
    p.add_argument("--vocab", type=int, default=128256)
    p.add_argument("--beta", type=float, default=0.5)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--impls", default="sitegen,liger,torch,torch.compile,matmul+sitegen_jsd")
    p.add_argument("--chunks", default="", help="also time the fused head at these chunk sizes (tuning)")
    p.add_argument("--row-configs", default="", help="also time these row-kernel configs, BLOCKxWARPS (tuning)")
    p.add_argument("--warmup", type=int, default=300, help="do_bench warm-up, ms")
    p.add_argument("--rep", type=int, default=1500, help="do_bench measuring time, ms")
    p.add_argument("--out", help="write OUT.txt and OUT.json")
    args = p.parse_args()
    impls = make_impls(args)
    props = torch.cuda.get_device_properties(0)
    head = (f"# {props.name}, {props.multi_processor_count} SMs, torch {torch.__version__}, triton {triton.__version__}; "
            f"H {args.hidden}, V {args.vocab}, beta {args.beta}, T {args.temperature}; ratios: time / the same run's "
            f"cuBLAS GEMMs (x2GEMM: forward's two, x4GEMM: all four, unchunked); errors: normwise vs float64")
    print(head)
    print(HEADER, flush=True)
    rows = []
    for d in args.dtypes.split(","):
        for bt in (int(b) for b in args.bts.split(",")):
            rows += run_case(d, bt, impls, args)
    if args.out:
        with open(args.out + ".txt", "w") as f:
            f.write("\n".join([head, HEADER] + [fmt(r) for r in rows]) + "\n")
        with open(args.out + ".json", "w") as f:
            json.dump({"header": head, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
