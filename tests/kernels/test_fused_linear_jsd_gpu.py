"""The fused linear + JSD head on an H200-class GPU at the benchmark's width (V = 128256):
float64 errors within the issue's bounds, and the memory the design promises."""

import pytest

torch = pytest.importorskip("torch", reason="the fused head needs torch")
pytest.importorskip("triton", reason="the fused head needs triton")
if not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU", allow_module_level=True)

from linear_jsd_checks import FusedLinearJSD, check, head_inputs, labels  # noqa: E402

pytestmark = pytest.mark.gpu
V = 128256


@pytest.mark.parametrize("variant", ["rows", "tiled"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
@pytest.mark.parametrize("beta,temperature", [(0.5, 1.0), (0.0, 2.0), (1.0, 1.0), (0.5, 2.0)])
def test_large_vocabulary_against_float64(dtype, beta, temperature, variant):
    (xs, ws, xt, wt), g = head_inputs(1536, 1024, 768, V, dtype, seed=int(beta * 10 + temperature))
    lab = labels(1536, g)
    # chunk 512: three chunks, so the weight gradient is accumulated in the weight's dtype twice.
    check(xs, ws, xt, wt, lab, beta=beta, temperature=temperature, chunk_rows=512, variant=variant)


@pytest.mark.parametrize("variant", ["rows", "tiled"])
def test_extra_memory_is_two_chunk_buffers_and_the_gradients(variant):
    (xs, ws, xt, wt), _ = head_inputs(4096, 4096, 4096, V, torch.bfloat16, seed=1)
    xs.requires_grad_(True)
    ws.requires_grad_(True)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    FusedLinearJSD(variant=variant)(xs, ws, xt, wt).backward()
    torch.cuda.synchronize()
    extra = torch.cuda.max_memory_allocated() - base
    chunk = 1024  # default_chunk_rows(4096)
    expected = 2 * chunk * V * 4 + xs.numel() * 2 + ws.numel() * 2
    assert extra <= expected * 1.02 + (8 << 20), (extra, expected)


@pytest.mark.parametrize("config", [(1024, 4), (4096, 8)])
def test_dz_written_over_the_teacher_logits_races_no_warp(monkeypatch, config):
    # dz overwrites the teacher's fp32 row it is computed from; without the barrier, another warp's
    # store could land before this warp's load (seen: 4x the gradient error at 1024 x 4 warps).
    import linear_jsd_checks

    fused_module = __import__(linear_jsd_checks.FusedLinearJSD.__module__, fromlist=["_ROW_CONFIG_GPU"])
    monkeypatch.setattr(fused_module, "_ROW_CONFIG_GPU", config)
    (xs, ws, xt, wt), _ = head_inputs(2048, 4096, 4096, V, torch.bfloat16, seed=2)
    runs = [check(xs, ws, xt, wt, None, beta=0.5, temperature=1.0) for _ in range(3)]
    for loss, gi, gw, errs in runs:
        assert errs["grad_input"] < 3.5e-3, errs  # 2.3e-3 measured race-free at this size
        assert torch.equal(gi, runs[0][1]) and torch.equal(gw, runs[0][2])
