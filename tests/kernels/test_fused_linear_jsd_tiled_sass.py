"""The tiled head's logits GEMM as ptxas builds it for an H100 (sm_90a), checked without a GPU:
the tensor-core path (HGMMA), the pipelined tile loads (LDGSTS, cp.async; UTMALDG in the TMA
kernel) and no register spills
(STL) in the configs the benchmark's GPU call times. A spill in the epilogue would cost every
tile, and the GPU call that would show it is a single one, so it is caught here first.

Uses the ptxas and cuobjdump that ship inside Triton's wheel; skipped where they or Triton's
ahead-of-time compile API are missing (the API moves between Triton releases)."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("torch", reason="the fused head needs torch")
triton = pytest.importorskip("triton", reason="the fused head needs triton")

try:
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
except ImportError:  # pragma: no cover - another Triton layout
    pytest.skip("this Triton has no ahead-of-time compile API", allow_module_level=True)

try:
    from sitegen.kernels import linear_jsd_logits as gemm
except ImportError:  # sitegen not installed (the GPU machine): the repo's kernels/ directly
    from kernels import linear_jsd_logits as gemm

BIN = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
if not os.path.exists(os.path.join(BIN, "cuobjdump")):
    pytest.skip("Triton's wheel has no cuobjdump here", allow_module_level=True)

# What the runtime would specialize for the benchmark's shapes (H 4096, V 128256, C 1024): every
# pointer and these sizes and strides divisible by 16.
ALIGNED = ("X", "W", "Z", "PMAX", "PSUM", "M", "N", "K", "stride_xm", "stride_wn", "stride_zm")


def sass(config, form, tma, cubin_path):
    """The SASS of one config, compiled in this process: Triton must not be in interpreter mode."""
    bm, bn, bk, group, warps, stages = config
    fn = gemm._logits_stats_tma_kernel if tma else gemm._logits_stats_kernel
    constexprs = dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, GROUP_M=group, NUM_PROGRAMS=132, IEEE=False,
                      UPCAST=False, FAST=True, STATS=form != "plain", HALF=form == "fp16-out")
    pointers = {"X": "*bf16", "W": "*bf16", "Z": "*fp16" if form == "fp16-out" else "*fp32", "PMAX": "*fp32", "PSUM": "*fp32",
                "x_desc": f"tensordesc<bf16[{bm}, {bk}]>", "w_desc": f"tensordesc<bf16[{bn}, {bk}]>"}
    scalars = {name: "constexpr" for name in constexprs} | {"c": "fp32"}
    signature = {name: pointers.get(name) or scalars.get(name, "i32") for name in fn.arg_names}
    attrs = {(fn.arg_names.index(name),): [["tt.divisibility", 16]] for name in ALIGNED if name in fn.arg_names}
    kernel = triton.compile(ASTSource(fn, signature, constexprs, attrs), target=GPUTarget("cuda", 90, 32),
                            options={"num_warps": warps, "num_stages": stages})
    with open(cubin_path, "wb") as f:
        f.write(kernel.asm["cubin"])
    return subprocess.run([os.path.join(BIN, "cuobjdump"), "-sass", cubin_path], capture_output=True, text=True,
                          check=True).stdout


def compiled_elsewhere(config, form, tma, tmp_path):
    """sass() in a child process: this one's Triton may be the interpreter (tests/kernels/conftest.py)."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    args = [sys.executable, __file__, "x".join(map(str, config)), form, str(int(tma)), str(tmp_path / "k.cubin")]
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.parametrize("tma", [False, True], ids=["pointers", "tma"])
@pytest.mark.parametrize("form", ["plain", "with-lse", "fp16-out"])
@pytest.mark.parametrize("config", [gemm._GEMM_CONFIG["bf16"], (128, 256, 64, 8, 8, 4), (128, 128, 64, 8, 8, 4)], ids=str)
def test_logits_gemm_uses_wgmma_pipelines_and_does_not_spill(config, form, tma, tmp_path):
    code = compiled_elsewhere(config, form, tma, tmp_path)
    assert "HGMMA" in code, "no Hopper tensor-core instruction"
    copy = "UTMALDG" if tma else "LDGSTS"  # TMA loads, or cp.async
    assert copy in code, f"no {copy}: the tile loads are not asynchronous copies, so the K loop is not pipelined"
    assert code.count("STL") == 0, f"{code.count('STL')} register spills"


if __name__ == "__main__":
    print(sass(tuple(int(n) for n in sys.argv[1].split("x")), sys.argv[2], bool(int(sys.argv[3])), sys.argv[4]))
