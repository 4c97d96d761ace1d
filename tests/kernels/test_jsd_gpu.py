"""The JSD kernel on a CUDA GPU at full size: float64 reference, Liger drop-in, determinism, no sync."""

import pytest

torch = pytest.importorskip("torch", reason="the JSD kernel needs torch")
pytest.importorskip("triton", reason="the JSD kernel needs triton")
if not torch.cuda.is_available():
    pytest.skip("needs a CUDA GPU", allow_module_level=True)

from jsd_checks import (  # noqa: E402
    BETAS,
    DTYPES,
    assert_grad_close,
    assert_loss_close,
    check_against_reference,
    gen,
    labels_for,
    logprobs,
    pair,
    underflow_pair,
)

from jsd_checks import JSD, jsd_loss, jsd_reference  # noqa: E402

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("beta", BETAS)
@pytest.mark.parametrize("labels", ["none", "some"])
def test_full_size(beta, dtype, labels):
    x, y, g = pair(256, 128256, dtype, 1)
    check_against_reference(x, y, labels_for(labels, 256, "cuda", g), beta)


@pytest.mark.parametrize("v", [50257, 32000, 152064, 1000, 5])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_other_vocab_sizes(v, dtype):
    x, y, g = pair(67, v, dtype, v)
    for beta in (0.0, 0.5, 1.0):
        check_against_reference(x, y, labels_for("some", 67, "cuda", g), beta)


@pytest.mark.parametrize("beta", BETAS)
def test_all_rows_ignored(beta):
    x, y, g = pair(64, 50257, torch.float32, 2)
    loss, grad = check_against_reference(x, y, labels_for("all", 64, "cuda", g), beta)
    assert loss.item() == 0.0 and not grad.any()


def test_non_contiguous():
    g = gen(3)
    x = logprobs(128, 128256 + 64, torch.bfloat16, "cuda", gen=g)[:, 64:]
    y = logprobs(128, 2 * 128256, torch.bfloat16, "cuda", gen=g)[:, ::2]
    for beta in (0.0, 0.5, 1.0):
        check_against_reference(x, y, labels_for("some", 128, "cuda", g), beta, upstream=0.37, module=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("beta", BETAS)
def test_underflow(beta, dtype):
    x, y = underflow_pair(16, 128256, dtype, "cuda", gen=gen(4))
    check_against_reference(x, y, None, beta, upstream=2.0)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_forward_only(dtype):
    x, y, g = pair(512, 128256, dtype, 5)
    labels = labels_for("some", 512, "cuda", g)
    with torch.no_grad():
        loss = jsd_loss(x, y, labels)
    assert loss.grad_fn is None
    assert_loss_close(loss, jsd_reference(x, y, labels), dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_bitwise_deterministic(dtype):
    x, y, g = pair(1024, 128256, dtype, 6)
    labels = labels_for("some", 1024, "cuda", g)
    runs = []
    for _ in range(2):
        xk = x.clone().requires_grad_()
        loss = jsd_loss(xk, y, labels, beta=0.3)
        (grad,) = torch.autograd.grad(loss, xk, grad_outputs=torch.full((), 1.7, dtype=dtype, device="cuda"))
        with torch.no_grad():
            fwd_only = jsd_loss(x, y, labels, beta=0.3)
        runs.append((loss, grad, fwd_only))
    assert torch.equal(runs[0][0], runs[1][0]) and torch.equal(runs[0][1], runs[1][1])
    assert torch.equal(runs[0][2], runs[1][2])


@pytest.mark.parametrize("beta", [0.0, 0.5, 1.0])
def test_no_host_sync(beta):
    x, y, g = pair(256, 32000, torch.float32, 7)
    labels = labels_for("some", 256, "cuda", g)
    x.requires_grad_()
    upstream = torch.full((), 0.5, device="cuda")
    jsd_loss(x, y, labels, beta=beta).backward(upstream)  # compile outside the checked region
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        loss = jsd_loss(x, y, labels, beta=beta)
        (grad,) = torch.autograd.grad(loss, x, grad_outputs=upstream)
        with torch.no_grad():
            jsd_loss(x, y, None, beta=beta)
    finally:
        torch.cuda.set_sync_debug_mode(0)
    assert torch.isfinite(grad).all()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_backward_allocates_no_second_gradient(dtype):
    """Peak extra memory of backward stays O(BT): dX is scaled in place and becomes x.grad."""
    x, y, g = pair(1024, 128256, dtype, 9)
    x.requires_grad_()
    loss = jsd_loss(x, y, labels_for("some", 1024, "cuda", g))
    upstream = torch.full((), 0.5, dtype=dtype, device="cuda")
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    loss.backward(upstream)
    torch.cuda.synchronize()
    extra = torch.cuda.max_memory_allocated() - base
    assert x.grad is not None and x.grad.shape == x.shape
    assert extra < x.numel() * x.element_size() // 4, f"backward allocated {extra} bytes"


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("beta", BETAS)
@pytest.mark.parametrize("labels", ["none", "some", "all"])
def test_drop_in_for_liger(beta, dtype, labels):
    liger = pytest.importorskip("liger_kernel.transformers", reason="liger_kernel not installed")
    x, y, g = pair(256, 128256, dtype, 8)
    lab = labels_for(labels, 256, "cuda", g)
    upstream = torch.full((), 1.3, dtype=dtype, device="cuda")
    out = []
    for module in (JSD(beta=beta, ignore_index=-100), liger.LigerJSD(beta=beta, ignore_index=-100)):
        xk = x.clone().requires_grad_()
        loss = module(xk, y, lab)
        (grad,) = torch.autograd.grad(loss, xk, grad_outputs=upstream)
        out.append((loss, grad))
    (ours, our_grad), (theirs, their_grad) = out
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    assert_loss_close(ours, theirs.double(), dtype)
    assert_grad_close(our_grad, their_grad.double(), dtype)
