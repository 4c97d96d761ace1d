"""Benchmark the JSD kernel against the copy roofline, Liger-Kernel, torch eager and torch.compile.

One process on one GPU: measure device-to-device copy bandwidth (bytes read + written), then
time each implementation for each pass with triton.testing.do_bench (median, L2 flushed before
every run, random non-zero inputs). Bytes moved per pass are sitegen.kernels.reference's
bytes_moved (see its docstring):
    forward = 3*BT*V*b (read X, Y; write dX)   forward_only = 2*BT*V*b (read X, Y)
    backward = 2*BT*V*b (read dX; write grad)  full = 5*BT*V*b
Every implementation is charged the same bytes, so TB/s is "useful" bandwidth and share is
floor time / measured time, floor = bytes / copy bandwidth. Full above 100% is no error: a
training step's upstream gradient is 1, and then ours (and Liger) hand forward's dX back
without the backward pass the 5*BT*V*b model charges for.

    python benchmarks/bench_jsd.py --rep 50 --warmup 10 --out benchmarks/results/jsd_h200  # full sweep
    python benchmarks/bench_jsd.py --quick                                                # [2048, 128256] only
    python benchmarks/bench_jsd.py --tune --quick                                         # kernel configs only
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import time

import torch
import triton

try:
    from sitegen.kernels import jsd, reference
except ImportError:  # not installed (e.g. on the GPU machine): use the repo's kernels/ directly
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    from kernels import jsd, reference

TOKENS = [1024, 2048, 4096, 8192, 16384]
VOCABS = [32000, 50257, 128256, 152064, 262144]
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16}


def cases(args):
    if args.quick:
        shapes = [(2048, 128256)]
    else:
        shapes = [(t, 128256) for t in TOKENS] + [(4096, v) for v in VOCABS if v != 128256]
    if args.shapes:
        shapes = [tuple(int(n) for n in s.split("x")) for s in args.shapes.split(",")]
    return [(d, bt, v) for d in args.dtypes.split(",") for bt, v in shapes]


def bench(fn, args):
    return triton.testing.do_bench(fn, warmup=args.warmup, rep=args.rep, return_mode="median")


def bench_backward(fn, xg, y, args):
    """Median ms of backward alone, L2 flushed before each, as do_bench times its runs.

    Our backward (like Liger's) scales the gradient saved by forward in place, so a graph's
    backward runs once: each timed backward gets a fresh forward, enqueued outside the events.
    The upstream gradient is 2, not 1: with 1 both ours and Liger's skip the scale (the saved
    dX is the gradient), and backward would time a bare launch, not the pass's bytes.
    """
    two = torch.tensor(2.0, device="cuda")
    cache = torch.empty(256 << 20, dtype=torch.int8, device="cuda")
    grad = lambda: torch.autograd.grad(fn(xg, y), xg)  # noqa: E731
    grad()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(3):
        grad()
    e.record()
    torch.cuda.synchronize()
    # The estimate counts forward too, so this runs at most `rep` ms of backward.
    n = max(5, int(args.rep / (s.elapsed_time(e) / 3)))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    for i in range(n):
        loss = fn(xg, y)
        cache.zero_()
        starts[i].record()
        # When the loss is bf16, two.to(loss.dtype) launches a cast kernel between the events,
        # so bf16 backward times include it. Kept so the committed results stay reproducible
        # (kernels/NOTES.md, "Known, not changed").
        torch.autograd.grad(loss, xg, grad_outputs=two.to(loss.dtype))
        ends[i].record()
    torch.cuda.synchronize()
    return sorted(a.elapsed_time(b) for a, b in zip(starts, ends))[n // 2]


def copy_bandwidth(args):
    n = 4 << 30  # 4 GiB each way: far past the 60 MB L2
    src = torch.randint(0, 255, (n,), dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    ms = bench(lambda: dst.copy_(src), args)
    del src, dst
    return 2 * n / (ms * 1e-3)


def make_inputs(bt, v, dtype):
    # Log-softmax of scaled noise: realistic, non-uniform, never zeros.
    x = (torch.randn(bt, v, device="cuda") * 3).log_softmax(-1).to(dtype)
    y = (torch.randn(bt, v, device="cuda") * 3).log_softmax(-1).to(dtype)
    return x, y


def impls(args):
    out = {"ours": lambda beta: functools.partial(jsd_loss_beta, beta=beta)}
    if "liger" in args.impls:
        try:
            from liger_kernel.transformers import LigerJSD

            out["liger"] = lambda beta: LigerJSD(beta=beta)
        except ImportError as e:
            print(f"# liger_kernel not importable ({e}); skipped", flush=True)
    ref32 = functools.partial(reference.jsd_reference, compute_dtype=torch.float32)
    if "eager" in args.impls:
        out["eager"] = lambda beta: functools.partial(ref32, beta=beta)
    if "compile" in args.impls:
        compiled = torch.compile(ref32)
        out["compile"] = lambda beta: functools.partial(compiled, beta=beta)
    return {k: v for k, v in out.items() if k in args.impls}


def jsd_loss_beta(x, y, beta):
    return jsd.jsd_loss(x, y, beta=beta)


def time_passes(fn, x, y, passes, args):
    """ms per pass; None where the pass does not apply."""
    res = {}
    xg = x.detach().requires_grad_()
    if "forward" in passes:
        res["forward"] = bench(lambda: fn(xg, y), args)
    if "forward_only" in passes:
        with torch.no_grad():
            res["forward_only"] = bench(lambda: fn(x, y), args)
    if "backward" in passes:
        res["backward"] = bench_backward(fn, xg, y, args)
    if "full" in passes:
        res["full"] = bench(lambda: torch.autograd.grad(fn(xg, y), xg), args)
    return res


def run_sweep(args, bw, log, save=lambda records: None):
    records = []
    fns = impls(args)
    for dname, bt, v in cases(args):
        dtype = DTYPES[dname]
        x, y = make_inputs(bt, v, dtype)
        # Two rounds over the implementations, best median of the two kept: a case timed right
        # after a heavy one (eager at the previous shape) otherwise reads slow (seen at fp32
        # [4096, 32000] after [16384, 128256]; that single-round time was not kept in a file).
        row = {}
        for _ in range(args.rounds):
            for name, factory in fns.items():
                passes = [p for p in args.passes.split(",") if p != "forward_only" or name == "ours"]
                try:
                    times = time_passes(factory(args.beta), x, y, passes, args)
                except torch.OutOfMemoryError:
                    times = {p: None for p in passes}
                    print(f"# {name} {dname} [{bt}, {v}]: out of memory", flush=True)
                prev = row.get(name, times)
                row[name] = {p: min((t for t in (times[p], prev[p]) if t is not None), default=None) for p in passes}
                torch.cuda.empty_cache()
        for name, times in row.items():
            for p, ms in times.items():
                nbytes = reference.bytes_moved(bt, v, x.element_size(), pass_=p)
                rec = dict(dtype=dname, bt=bt, v=v, impl=name, pass_=p, ms=ms, bytes=nbytes, beta=args.beta)
                if ms is not None:
                    rec["tbps"] = nbytes / (ms * 1e-3) / 1e12
                    rec["floor_ms"] = nbytes / bw * 1e3
                    rec["share_of_copy"] = rec["floor_ms"] / ms
                    if name == "ours":
                        rec["speedup_vs"] = {
                            peer: row[peer][p] / ms for peer in row if peer != "ours" and row[peer].get(p)
                        }
                records.append(rec)
                log(fmt(rec))
        del x, y
        torch.cuda.empty_cache()
        save(records)  # a run cut short still leaves every finished case on disk
    return records


def run_labels(args, bw, log):
    """Our forward at [2048, 128256] with shift_labels (every 8th row ignored) beside none."""
    records = []
    for dname in args.dtypes.split(","):
        x, y = make_inputs(2048, 128256, DTYPES[dname])
        xg = x.detach().requires_grad_()
        labels = torch.zeros(2048, dtype=torch.long, device="cuda")
        labels[::8] = -100
        nbytes = reference.bytes_moved(2048, 128256, x.element_size(), pass_="forward")
        for name, lab in (("no labels", None), ("labels", labels)):
            ms = bench(lambda: jsd.jsd_loss(xg, y, lab, beta=args.beta), args)
            share = nbytes / bw * 1e3 / ms
            records.append(dict(dtype=dname, bt=2048, v=128256, impl="ours", pass_="forward", labels=lab is not None,
                                ms=ms, share_of_copy=share))
            log(f"# labels {dname} [2048, 128256] forward, {name}: {ms:.3f} ms, {100 * share:.1f}% of copy")
        del x, y, xg
    return records


def fmt(r):
    if r["ms"] is None:
        return f"{r['dtype']:5} {r['bt']:6} {r['v']:7} {r['pass_']:13} {r['impl']:8} {'OOM':>9}"
    peers = " ".join(f"{k}:{s:.2f}x" for k, s in r.get("speedup_vs", {}).items())
    return (
        f"{r['dtype']:5} {r['bt']:6} {r['v']:7} {r['pass_']:13} {r['impl']:8} {r['ms']:9.3f} "
        f"{r['bytes'] / 1e9:7.3f} {r['floor_ms']:8.3f} {r['tbps']:6.2f} {100 * r['share_of_copy']:6.1f}%  {peers}"
    )


HEADER = (
    f"{'dtype':5} {'BT':>6} {'V':>7} {'pass':13} {'impl':8} {'ms':>9} {'GB':>7} {'floor_ms':>8} "
    f"{'TB/s':>6} {'share':>7}  speedup of ours vs peer (peer ms / our ms)"
)


def run_tune(args, bw, log):
    """Time our kernel under several (BLOCK, num_warps, programs per SM) configs."""
    records = []
    configs = [tuple(int(n) for n in c.split(":")) for c in args.configs.split(",")]
    for dname, bt, v in cases(args):
        dtype = DTYPES[dname]
        x, y = make_inputs(bt, v, dtype)
        for cfg in configs:
            if dname == "bf16" and cfg[0] < 1024 or dname == "fp32" and cfg[0] > 16384:
                continue
            for p, store in (("forward", True), ("forward_only", False)):
                ms = bench(lambda: jsd.jsd_forward(x, y, beta=args.beta, store_grad=store, config=cfg), args)
                nbytes = reference.bytes_moved(bt, v, x.element_size(), pass_=p)
                rec = dict(dtype=dname, bt=bt, v=v, config=cfg, pass_=p, ms=ms, share_of_copy=nbytes / bw * 1e3 / ms)
                records.append(rec)
                log(f"tune {dname} [{bt},{v}] {p:12} cfg={cfg}: {ms:.4f} ms  {100 * rec['share_of_copy']:.1f}% of copy")
        del x, y
    return records


def dump_sass(path, beta):
    """SASS, registers and spills of the general-beta kernel with gradient, bf16 and fp32."""
    with open(path, "w") as f:
        for dtype in (torch.bfloat16, torch.float32):
            x, y = make_inputs(64, 128256, dtype)
            cfg = jsd._config(128256, x.element_size(), x.device)
            _, k = jsd._launch(x, y, torch.empty_like(x), None, None, beta, -100, cfg)
            f.write(f"### {dtype} config={cfg} n_regs={k.n_regs} n_spills={k.n_spills}\n{k.asm['sass']}\n")
            print(f"# sass {dtype} cfg={cfg}: {k.n_regs} registers, {k.n_spills} spills", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="only [2048, 128256]")
    ap.add_argument("--shapes", default="", help="comma list of BTxV, overrides the sweep")
    ap.add_argument("--dtypes", default="fp32,bf16")
    ap.add_argument("--impls", default="ours,liger,eager,compile")
    ap.add_argument("--passes", default=",".join(reference.PASSES))
    ap.add_argument("--beta", type=float, default=0.5)
    ap.add_argument("--warmup", type=int, default=25, help="do_bench warm-up, ms")
    ap.add_argument("--rep", type=int, default=100, help="do_bench repetitions, ms")
    ap.add_argument("--rounds", type=int, default=2, help="rounds over the implementations per case; best kept")
    ap.add_argument("--tune", action="store_true", help="time our kernel's configs instead of the sweep")
    ap.add_argument("--configs", default="4096:8:2,2048:8:3,2048:4:5", help="BLOCK:num_warps:programs_per_sm,...")
    ap.add_argument("--sass", default="", help="write the kernel's SASS to this file")
    ap.add_argument("--out", default="", help="write OUT.txt (table) and OUT.json (numbers)")
    args = ap.parse_args()

    lines = []

    def log(s):
        print(s, flush=True)
        lines.append(s)

    props = torch.cuda.get_device_properties(0)
    bw = copy_bandwidth(args)
    log(f"# {props.name}, {props.multi_processor_count} SMs; torch {torch.__version__}, triton {triton.__version__}")
    log(f"# copy bandwidth (4 GiB device-to-device, read + write): {bw / 1e12:.3f} TB/s; beta={args.beta}")
    log(f"# {time.strftime('%Y-%m-%d %H:%M:%S')}; do_bench median, warmup {args.warmup} ms, rep {args.rep} ms, L2 flushed; "
        f"best of {args.rounds} rounds; backward with upstream gradient 2")
    if args.sass:
        dump_sass(args.sass, args.beta)
    props_meta = dict(device=props.name, sms=props.multi_processor_count, torch=torch.__version__,
                      triton=triton.__version__, copy_bandwidth_Bps=bw, beta=args.beta,
                      bytes_moved_doc=reference.bytes_moved.__doc__)

    def save(records):
        if not args.out:
            return
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out + ".txt", "w") as f:
            f.write("\n".join(lines) + "\n")
        with open(args.out + ".json", "w") as f:
            json.dump(dict(meta=props_meta, records=records), f, indent=1)

    if args.tune:
        save(run_tune(args, bw, log))
    else:
        log(HEADER)
        records = run_sweep(args, bw, log, save)
        if "ours" in args.impls and not args.shapes:
            records += run_labels(args, bw, log)
        save(records)


if __name__ == "__main__":
    main()
