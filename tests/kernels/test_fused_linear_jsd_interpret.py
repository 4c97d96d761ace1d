"""The fused linear + JSD head on small, odd shapes (Triton's interpreter on a CPU, or the GPU)
against the float64 autograd reference.

Under the interpreter the row kernel takes tiles of 32, so V = 101 ends in a partial tile; the
chunk sizes below split BT = 13 into uneven chunks so the weight gradient is accumulated across
chunks, and student and teacher hidden sizes differ.
"""

import os

import pytest

torch = pytest.importorskip("torch", reason="the fused head needs torch")
pytest.importorskip("triton", reason="the fused head needs triton")
if os.environ.get("TRITON_INTERPRET") == "1":
    pytest.importorskip("numpy", reason="Triton's interpreter needs numpy")

from linear_jsd_checks import FusedLinearJSD, check, head_inputs, labels, run_module  # noqa: E402

BT, HS, HT, V = 13, 24, 40, 101


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("beta", [0.0, 0.5, 1.0, 0.1])
@pytest.mark.parametrize("temperature", [1.0, 2.0])
@pytest.mark.parametrize("label_kind", ["none", "some"])
def test_matches_float64_reference(dtype, beta, temperature, label_kind):
    (xs, ws, xt, wt), g = head_inputs(BT, HS, HT, V, dtype, seed=hash((str(dtype), beta, temperature, label_kind)) % 2**31)
    lab = None if label_kind == "none" else labels(BT, g)
    check(xs, ws, xt, wt, lab, beta=beta, temperature=temperature, chunk_rows=4)


@pytest.mark.parametrize("beta", [0.0, 0.5, 1.0])
def test_module_path_one_chunk_and_many_agree_with_reference(beta):
    (xs, ws, xt, wt), g = head_inputs(BT, HS, HT, V, torch.float32, seed=7)
    lab = labels(BT, g)
    check(xs, ws, xt, wt, lab, beta=beta, temperature=1.5)  # module + autograd, default chunking
    for chunk in (1, 5, BT):
        check(xs, ws, xt, wt, lab, beta=beta, temperature=1.5, chunk_rows=chunk)


def test_temperature_changes_the_loss_as_the_reference_does():
    (xs, ws, xt, wt), _ = head_inputs(BT, HS, HT, V, torch.float32, seed=3)
    l1 = check(xs, ws, xt, wt, None, beta=0.5, temperature=1.0, chunk_rows=4)[0]
    l3 = check(xs, ws, xt, wt, None, beta=0.5, temperature=3.0, chunk_rows=4)[0]
    assert float(l3) < 0.5 * float(l1)  # a softer pair of distributions is much closer


def test_all_rows_ignored_gives_zero_loss_and_gradients():
    (xs, ws, xt, wt), g = head_inputs(BT, HS, HT, V, torch.float32, seed=5)
    loss, gi, gw = run_module(xs, ws, xt, wt, labels(BT, g, kind="all"), beta=0.5, temperature=1.0)
    assert float(loss) == 0.0 and not gi.any() and not gw.any()


def test_upstream_gradient_scales_both_gradients():
    (xs, ws, xt, wt), _ = head_inputs(BT, HS, HT, V, torch.float32, seed=11)
    _, gi, gw = run_module(xs, ws, xt, wt, None, beta=0.5, temperature=1.0)
    xs_, ws_ = xs.clone().requires_grad_(True), ws.clone().requires_grad_(True)
    (FusedLinearJSD()(xs_, ws_, xt, wt) * 3.0).backward()
    torch.testing.assert_close(xs_.grad, 3.0 * gi, rtol=1e-6, atol=0)
    torch.testing.assert_close(ws_.grad, 3.0 * gw, rtol=1e-6, atol=0)


def test_forward_without_grad_gives_the_same_loss():
    (xs, ws, xt, wt), g = head_inputs(BT, HS, HT, V, torch.float32, seed=13)
    lab = labels(BT, g)
    with_grad = run_module(xs, ws, xt, wt, lab, beta=0.5, temperature=2.0)[0]
    with torch.no_grad():
        plain = FusedLinearJSD(temperature=2.0)(xs, ws, xt, wt, lab)
    assert float(plain) == pytest.approx(float(with_grad), rel=1e-6)


@pytest.mark.parametrize("kwargs", [{"jsd_beta": 1.5}, {"jsd_beta": -0.1}, {"temperature": 0.0}])
def test_bad_arguments_are_refused(kwargs):
    with pytest.raises(ValueError):
        FusedLinearJSD(**kwargs)


def test_mismatched_shapes_are_refused():
    (xs, ws, xt, wt), _ = head_inputs(BT, HS, HT, V, torch.float32, seed=1)
    with pytest.raises(ValueError, match="expected student_input"):
        FusedLinearJSD()(xs, ws, xt[:-1], wt)
