"""Round 3: the flat one-wave JSD kernel (kernels/jsd.py) against the row-chunk kernel it replaced.

Flat programs take interleaved blocks (p, p+G, ...: the wave sweeps memory as one window, like
an elementwise torch kernel). The "contiguous" rows of results/jsd_flat_h200.txt and every
"flat" row of results/jsd_flat_contiguous_h200.txt (one run of blocks per program) came from a
constexpr flag removed once they had lost; that kernel was never committed.

The row-chunk kernel (round 2, one program per (row, 32K-element chunk), ~31 waves at
[2048, 128256]) is read from a file given by JSD_ROW_KERNEL (`git show a0ffafa:kernels/jsd.py`),
since it no longer lives in the package. Beside both: a same-size copy and torch.add(x, y) (two
reads, one write: the JSD forward's mix) show what the harness and the traffic mix allow.

    git show a0ffafa:kernels/jsd.py > .whl/jsd_row.py
    JSD_ROW_KERNEL=.whl/jsd_row.py python benchmarks/jsd_variants.py     # GPU: writes $OUT/variants.*
    python benchmarks/jsd_variants.py --offline     # no GPU: sm_90 registers, spills, access widths
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time

import torch
import triton

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from kernels import jsd, reference  # noqa: E402

# (dtype, BT, V, store_grad, flat configs (BLOCK, num_warps, programs per SM) to try)
FP32_CFGS = [(8192, 16, 1), (4096, 8, 2), (2048, 4, 4), (1024, 4, 8), (2048, 8, 3)]
BF16_CFGS = [(2048, 4, 5), (1024, 4, 8), (2048, 4, 4), (4096, 8, 2), (1024, 2, 16)]
CASES = [
    (torch.float32, 2048, 128256, True, FP32_CFGS),
    (torch.float32, 2048, 128256, False, FP32_CFGS[:3]),
    (torch.bfloat16, 2048, 128256, True, BF16_CFGS),
    (torch.float32, 4096, 32000, True, FP32_CFGS),
    (torch.float32, 4096, 50257, True, FP32_CFGS[:4]),
    (torch.float32, 16384, 128256, True, FP32_CFGS[:4]),
    (torch.bfloat16, 4096, 32000, True, BF16_CFGS),
    (torch.bfloat16, 4096, 262144, True, BF16_CFGS[:4]),
]


def load_row_kernel():
    path = os.environ.get("JSD_ROW_KERNEL", "")
    if not os.path.exists(path):
        return None
    spec = importlib.util.spec_from_file_location("jsd_row", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    import bench_jsd  # benchmarks/: copy bandwidth, inputs

    class A:  # stands in for bench_jsd's parsed arguments: its default --warmup and --rep
        warmup, rep = 25, 100

    bw = bench_jsd.copy_bandwidth(A)
    row = load_row_kernel()
    out, results = [], []

    def log(s):
        print(s, flush=True)
        out.append(s)

    log(f"# {torch.cuda.get_device_name()}; copy {bw / 1e12:.3f} TB/s; torch {torch.__version__} triton {triton.__version__}")
    t0 = time.time()
    for dtype, bt, v, store, cfgs in CASES:
        x, y = bench_jsd.make_inputs(bt, v, dtype)
        ref_loss = reference.jsd_reference(x[:64].double(), y[:64].double()).item()
        fns = {}
        if row is not None:
            fns["row (round 2)"] = lambda: row.jsd_forward(x, y, beta=0.5, store_grad=store)
        for cfg in cfgs:
            loss, _ = jsd.jsd_forward(x[:64], y[:64], beta=0.5, store_grad=store, config=cfg)
            if abs(loss.item() - ref_loss) > 1e-2 * abs(ref_loss):
                log(f"!! flat {cfg} {dtype} [{bt},{v}] loss {loss.item()} vs reference {ref_loss}; not timed")
                continue
            fns[f"flat {cfg[0]}/{cfg[1]}w/{cfg[2]}"] = lambda c=cfg: jsd.jsd_forward(x, y, beta=0.5, store_grad=store, config=c)
        nbytes = reference.bytes_moved(bt, v, x.element_size(), pass_="forward" if store else "forward_only")
        floor = nbytes / bw * 1e3
        src = torch.empty(nbytes // 2, dtype=torch.uint8, device=x.device)
        dst = torch.empty_like(src)
        fns["same-size copy"] = lambda: dst.copy_(src)
        if store:
            z = torch.empty_like(x)
            fns["torch.add x+y (2 reads, 1 write)"] = lambda: torch.add(x, y, out=z)
        times = {k: [] for k in fns}
        for _ in range(2):  # two interleaved rounds: drift shows as disagreement between them
            for k, fn in fns.items():
                times[k].append(bench_jsd.bench(fn, A))
        pas = "fwd" if store else "fwd-only"
        for k, ts in times.items():
            ms = min(ts)
            log(f"{str(dtype)[6:]:8} [{bt},{v}] {pas:8} {k:34} {ms:.4f} ms ({ts[0]:.4f}/{ts[1]:.4f})  "
                f"{floor / ms * 100:5.1f}% of copy  {ms / floor:.3f}x floor")
            results.append(dict(dtype=str(dtype), bt=bt, v=v, store_grad=store, variant=k, ms=ts, floor_ms=floor))
        del x, y, src, dst
        z = None
        torch.cuda.empty_cache()
    log(f"# {time.time() - t0:.0f} s")
    dest = os.environ.get("OUT", "/tmp")
    with open(os.path.join(dest, "variants.txt"), "w") as f:
        f.write("\n".join(out) + "\n")
    with open(os.path.join(dest, "variants.json"), "w") as f:
        json.dump(dict(copy_Bps=bw, results=results), f, indent=1)


def offline():
    """Compile the flat kernel for sm_90 without a GPU; print registers, stack and global accesses.

    Pointers get the divisibility-by-16 specialization Triton gives them on the GPU, so the
    access widths are the ones the GPU would run.
    """
    import collections
    import re
    import subprocess
    import tempfile

    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    cuobjdump = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")
    fn = jsd._jsd_kernel
    names = fn.arg_names
    for fp, cfgs in (("*fp32", FP32_CFGS), ("*bf16", BF16_CFGS)):
        for block, nw, _ in cfgs:
            for label in (False, True):
                types = {"X": fp, "Y": fp, "DX": fp, "LABELS": "*i64", "N_VALID": "*i64", "PARTIAL": "*fp32",
                         "N": "i64", "n_blocks": "i32", "rows_f": "fp32", "beta": "fp32"}
                constexprs = dict(MODE=2, HAS_LABEL=label, MULTIROW=False, STORE_GRAD=True, BLOCK=block, FAST=True)
                sig = {n: "constexpr" if n in constexprs else types.get(n, "i32") for n in names}
                aligned = ("X", "Y", "DX", "PARTIAL", "LABELS")
                src = ASTSource(fn=fn, signature=sig, constexprs={(names.index(k),): v for k, v in constexprs.items()},
                                attrs={(names.index(k),): [["tt.divisibility", 16]] for k in aligned})
                k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": nw})
                with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
                    f.write(k.asm["cubin"])
                    f.flush()
                    res = subprocess.run([cuobjdump, "--dump-resource-usage", f.name], capture_output=True, text=True).stdout
                regs, stack = re.search(r"REG:(\d+).*?STACK:(\d+)", res).groups()
                acc = collections.Counter(re.findall(r"\b((?:ld|st)\.global\S*)", k.asm["ptx"]))
                print(f"{fp} {block}/{nw}w labels={label}: {regs} registers, stack {stack}, {dict(acc)}", flush=True)


if __name__ == "__main__":
    offline() if "--offline" in sys.argv else main()
