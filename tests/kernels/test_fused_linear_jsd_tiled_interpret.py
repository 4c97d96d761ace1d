"""Issue 45's candidate head (variant="tiled": log-sum-exps from the logits GEMM's epilogue, two row
sweeps) against the float64 autograd reference, under Triton's interpreter or on a GPU.

Under the interpreter the GEMM takes 8 x 32 x 16 tiles and 3 persistent programs, so V = 101 ends
in a partial column tile, the hidden sizes 24 and 40 in partial K tiles, and each program walks
several tiles; chunks of 5 rows split BT = 13 so the weight gradient is accumulated across chunks.
"""

import os

import pytest

torch = pytest.importorskip("torch", reason="the fused head needs torch")
pytest.importorskip("triton", reason="the fused head needs triton")
if os.environ.get("TRITON_INTERPRET") == "1":
    pytest.importorskip("numpy", reason="Triton's interpreter needs numpy")

from linear_jsd_checks import DEVICE, FusedLinearJSD, check, head_inputs, labels, normwise, run_module  # noqa: E402

try:
    from sitegen.kernels import fused_linear_jsd_tiled as tiled, linear_jsd_logits as gemm
except ImportError:  # sitegen not installed (the GPU machine): the repo's kernels/ directly
    from kernels import fused_linear_jsd_tiled as tiled, linear_jsd_logits as gemm

logits_with_stats = gemm.logits_with_stats

BT, HS, HT, V = 13, 24, 40, 101
LOG2E = 1.4426950408889634


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("beta", [0.0, 0.37, 1.0])
@pytest.mark.parametrize("temperature", [1.0, 2.0])
@pytest.mark.parametrize("label_kind", ["none", "some"])
def test_matches_float64_reference(dtype, beta, temperature, label_kind):
    (xs, ws, xt, wt), g = head_inputs(BT, HS, HT, V, dtype, seed=hash((str(dtype), beta, temperature, label_kind)) % 2**31)
    lab = None if label_kind == "none" else labels(BT, g)
    check(xs, ws, xt, wt, lab, beta=beta, temperature=temperature, chunk_rows=5, variant="tiled")


@pytest.mark.parametrize("tma", [False, True], ids=["pointers", "tma"])
@pytest.mark.parametrize("temperature", [1.0, 2.0, 0.7])
def test_epilogue_log_sum_exp_is_the_rows(temperature, tma):
    # Each row's log-sum-exp is combined from four column tiles' maxima and sums (the last one
    # partial); float64 torch on the same products is the reference.
    (xs, ws, _, _), _ = head_inputs(BT, HS, HT, V, torch.float32, seed=17, logit_std=8.0)
    assert gemm._tma_ok(xs, ws)  # else tma=True would quietly take the pointer kernel
    out = torch.empty(BT, V, dtype=torch.float32, device=DEVICE)
    lse2 = logits_with_stats(xs, ws, out, 1.0 / temperature, tma=tma)
    z = xs.double() @ ws.double().t()
    torch.testing.assert_close(out.double(), z, rtol=1e-5, atol=1e-5)
    expected = torch.logsumexp(z / temperature, dim=1) * LOG2E
    torch.testing.assert_close(lse2.double(), expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("beta", [0.0, 0.37, 1.0])
def test_tma_loads_match_float64_reference(monkeypatch, dtype, beta):
    # Chunks of 5 rows start at 16-byte multiples (5 x 24 x 2 bytes), so every chunk takes TMA;
    # K 24 and 40 end in partial K tiles, which TMA must zero-fill.
    monkeypatch.setattr(gemm, "USE_TMA", True)
    (xs, ws, xt, wt), g = head_inputs(BT, HS, HT, V, dtype, seed=43)
    assert all(gemm._tma_ok(x[s:], w) for x, w in ((xs, ws), (xt, wt)) for s in range(0, BT, 5))
    check(xs, ws, xt, wt, labels(BT, g), beta=beta, temperature=2.0, chunk_rows=5, variant="tiled")


@pytest.mark.parametrize("tma", [False, True], ids=["pointers", "tma"])
@pytest.mark.parametrize("beta", [0.0, 0.37, 1.0])
@pytest.mark.parametrize("temperature", [1.0, 2.0])
def test_fp16_logits_match_float64_reference(monkeypatch, beta, temperature, tma):
    # bf16 inputs store the logits as fp16 relative to each tile's max; the sweeps add the tile's
    # offset back (4 column tiles per row here, the last partial).
    monkeypatch.setattr(tiled, "HALF_LOGITS", True)
    monkeypatch.setattr(gemm, "USE_TMA", tma)
    (xs, ws, xt, wt), g = head_inputs(BT, HS, HT, V, torch.bfloat16, seed=47)
    check(xs, ws, xt, wt, labels(BT, g), beta=beta, temperature=temperature, chunk_rows=5, variant="tiled")


def test_fp16_logits_are_what_the_sweeps_read(monkeypatch):
    # The stored fp16 value plus its tile's offset is the base-2 log-probability, to fp16's rounding.
    (xs, ws, _, _), _ = head_inputs(BT, HS, HT, V, torch.bfloat16, seed=53, logit_std=8.0)
    out = torch.empty(BT, V, dtype=torch.float16, device=DEVICE)
    lse, off, tile_n = logits_with_stats(xs, ws, out, 0.5)
    x2 = out.double() + off.double().repeat_interleave(tile_n, dim=1)[:, :V]
    expected = torch.log_softmax((xs.double() @ ws.double().t()) * 0.5, dim=1) * LOG2E
    assert float((x2 - expected).abs().max()) < 2e-2  # fp16 keeps 11 bits of values down to about -40
    torch.testing.assert_close(lse.double(), torch.logsumexp((xs.double() @ ws.double().t()) * 0.5, 1) * LOG2E,
                               rtol=1e-6, atol=1e-6)


def test_fp32_inputs_keep_fp32_logits(monkeypatch):
    # dz in fp32 (4 bytes) cannot overwrite an fp16 teacher element: fp32 inputs ignore the switch.
    (xs, ws, xt, wt), g = head_inputs(BT, HS, HT, V, torch.float32, seed=59)
    lab = labels(BT, g)
    plain = run_module(xs, ws, xt, wt, lab, beta=0.37, temperature=2.0, chunk_rows=5, variant="tiled")
    monkeypatch.setattr(tiled, "HALF_LOGITS", True)
    switched = run_module(xs, ws, xt, wt, lab, beta=0.37, temperature=2.0, chunk_rows=5, variant="tiled")
    assert all(torch.equal(a, b) for a, b in zip(plain, switched))


def test_agrees_with_the_shipped_head():
    (xs, ws, xt, wt), g = head_inputs(BT, HS, HT, V, torch.float32, seed=23)
    lab = labels(BT, g)
    rows = run_module(xs, ws, xt, wt, lab, beta=0.37, temperature=2.0, chunk_rows=5)
    tiled = run_module(xs, ws, xt, wt, lab, beta=0.37, temperature=2.0, chunk_rows=5, variant="tiled")
    assert float(tiled[0]) == pytest.approx(float(rows[0]), rel=1e-6)
    assert normwise(tiled[1], rows[1]) < 1e-6 and normwise(tiled[2], rows[2]) < 1e-6


@pytest.mark.parametrize("beta", [0.0, 0.37, 1.0])
def test_weight_gradient_sums_every_chunk(beta):
    # One chunk, then chunks of 1 and 4: each chunk's dz^T X must be added to grad_W, not replace it.
    (xs, ws, xt, wt), g = head_inputs(BT, HS, HT, V, torch.float32, seed=29)
    lab = labels(BT, g)
    for chunk in (BT, 1, 4):
        check(xs, ws, xt, wt, lab, beta=beta, temperature=1.5, chunk_rows=chunk, variant="tiled")


def test_upstream_gradient_scales_both_gradients():
    (xs, ws, xt, wt), _ = head_inputs(BT, HS, HT, V, torch.bfloat16, seed=31)
    _, gi, gw = run_module(xs, ws, xt, wt, None, beta=0.37, temperature=2.0, variant="tiled")
    xs_, ws_ = xs.clone().requires_grad_(True), ws.clone().requires_grad_(True)
    (FusedLinearJSD(jsd_beta=0.37, temperature=2.0, variant="tiled")(xs_, ws_, xt, wt) * -2.5).backward()
    torch.testing.assert_close(xs_.grad, -2.5 * gi, rtol=1e-2, atol=0)
    torch.testing.assert_close(ws_.grad, -2.5 * gw, rtol=1e-2, atol=0)


def test_forward_without_grad_gives_the_same_loss():
    (xs, ws, xt, wt), g = head_inputs(BT, HS, HT, V, torch.float32, seed=37)
    lab = labels(BT, g)
    with_grad = run_module(xs, ws, xt, wt, lab, beta=0.37, temperature=2.0, variant="tiled")[0]
    with torch.no_grad():
        plain = FusedLinearJSD(jsd_beta=0.37, temperature=2.0, variant="tiled")(xs, ws, xt, wt, lab)
    assert float(plain) == pytest.approx(float(with_grad), rel=1e-6)


def test_all_rows_ignored_gives_zero_loss_and_gradients():
    (xs, ws, xt, wt), g = head_inputs(BT, HS, HT, V, torch.float32, seed=41)
    loss, gi, gw = run_module(xs, ws, xt, wt, labels(BT, g, kind="all"), beta=0.37, temperature=1.0, variant="tiled")
    assert float(loss) == 0.0 and not gi.any() and not gw.any()


def test_unknown_variant_is_refused():
    with pytest.raises(ValueError, match="variant must be one of"):
        FusedLinearJSD(variant="fast")
