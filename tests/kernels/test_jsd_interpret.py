"""The JSD kernel on small shapes (Triton's interpreter on a CPU, or the GPU) vs float64 autograd.

Under the interpreter the launcher picks BLOCK=64 and three programs over the flat BT*V
elements, so V=301 has blocks that span a row boundary and V=37 blocks that span several
rows (the per-element label path), and every program takes several interleaved blocks.
"""

import os

import pytest

torch = pytest.importorskip("torch", reason="the JSD kernel needs torch")
pytest.importorskip("triton", reason="the JSD kernel needs triton")
if os.environ.get("TRITON_INTERPRET") == "1":
    pytest.importorskip("numpy", reason="Triton's interpreter needs numpy")

from jsd_checks import (  # noqa: E402
    BETAS,
    DEVICE,
    DTYPES,
    assert_grad_close,
    assert_loss_close,
    check_against_reference,
    gen,
    labels_for,
    logprobs,
    pair,
    reference_with_grad,
    underflow_pair,
)

from jsd_checks import JSD, bytes_moved, jsd_forward, jsd_loss, jsd_reference  # noqa: E402


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("beta", BETAS)
@pytest.mark.parametrize("labels", ["none", "some"])
def test_loss_and_grad(beta, dtype, labels):
    x, y, g = pair(6, 301, dtype, hash((beta, str(dtype), labels)) % 2**31)
    check_against_reference(x, y, labels_for(labels, 6, DEVICE, g), beta)


@pytest.mark.parametrize("beta", BETAS)
def test_all_rows_ignored_gives_zero_loss_and_grad(beta):
    x, y, g = pair(4, 301, torch.float32, 1)
    loss, grad = check_against_reference(x, y, labels_for("all", 4, DEVICE, g), beta)
    assert loss.item() == 0.0 and not grad.any()


@pytest.mark.parametrize("v", [37, 64, 128, 300])
@pytest.mark.parametrize("beta", [0.0, 0.5, 1.0])
def test_vocab_sizes(v, beta):
    x, y, g = pair(3, v, torch.float32, v)
    check_against_reference(x, y, labels_for("some", 3, DEVICE, g), beta)


@pytest.mark.parametrize("layout", ["row_strided", "column_strided", "transposed"])
def test_non_contiguous_inputs(layout):
    g = gen(7)
    bt, v = 5, 150
    if layout == "row_strided":  # rows padded: stride(0) > V, elements adjacent
        x = logprobs(bt, v + 27, torch.float32, DEVICE, gen=g)[:, :v]
        y = logprobs(bt, v + 13, torch.float32, DEVICE, gen=g)[:, 5 : v + 5]
    elif layout == "column_strided":
        x = logprobs(bt, 2 * v, torch.float32, DEVICE, gen=g)[:, ::2]
        y = logprobs(bt, 2 * v, torch.float32, DEVICE, gen=g)[:, 1::2]
    else:
        x = logprobs(v, bt, torch.float32, DEVICE, gen=g).t()
        y = logprobs(v, bt, torch.float32, DEVICE, gen=g).t()
    assert not x.is_contiguous()
    for beta in (0.0, 0.5, 1.0):
        check_against_reference(x, y, labels_for("some", bt, DEVICE, g), beta)


@pytest.mark.parametrize("beta", BETAS)
def test_upstream_gradient_other_than_one(beta):
    x, y, g = pair(4, 200, torch.float32, 11)
    check_against_reference(x, y, labels_for("some", 4, DEVICE, g), beta, upstream=-2.5, module=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("beta", BETAS)
def test_underflow_gives_no_nan(beta, dtype):
    x, y = underflow_pair(4, 301, dtype, DEVICE, gen=gen(13))
    check_against_reference(x, y, None, beta)


@pytest.mark.parametrize("beta", BETAS)
def test_forward_only_path(beta):
    x, y, g = pair(5, 301, torch.float32, 17)
    labels = labels_for("some", 5, DEVICE, g)
    ref = jsd_reference(x, y, labels, beta=beta)
    loss = jsd_loss(x, y, labels, beta=beta)  # x does not require grad
    assert loss.grad_fn is None
    torch.testing.assert_close(loss.double().cpu(), ref.cpu(), rtol=1e-5, atol=1e-6)
    with torch.no_grad():
        loss2 = JSD(beta=beta)(x.clone().requires_grad_(), y, labels)
    assert loss2.grad_fn is None and torch.equal(loss, loss2)


def test_backward_scales_the_saved_gradient_in_place():
    """Backward allocates no second (BT, V) tensor: the returned gradient is forward's dX buffer."""
    x, y, _ = pair(3, 100, torch.float32, 19)
    x.requires_grad_()
    loss = jsd_loss(x, y)
    saved = loss.grad_fn.dx
    assert saved.shape == x.shape
    ptr = saved.data_ptr()
    del saved
    (grad,) = torch.autograd.grad(loss, x, grad_outputs=torch.tensor(3.0, device=DEVICE))
    assert grad.data_ptr() == ptr
    assert loss.grad_fn.dx is None  # released: the caller holds the only reference


def test_second_backward_through_a_retained_graph_raises():
    x, y, _ = pair(3, 100, torch.float32, 19)
    x.requires_grad_()
    loss = jsd_loss(x, y)
    (g1,) = torch.autograd.grad(loss, x, grad_outputs=torch.tensor(3.0, device=DEVICE), retain_graph=True)
    kept = g1.clone()
    with pytest.raises(RuntimeError, match="twice"):
        torch.autograd.grad(loss, x, grad_outputs=torch.tensor(3.0, device=DEVICE))
    assert torch.equal(g1, kept)  # the first gradient is left as it was
    # A fresh forward gives the same gradient again.
    (g2,) = torch.autograd.grad(jsd_loss(x, y), x, grad_outputs=torch.tensor(3.0, device=DEVICE))
    assert torch.equal(g1, g2)


def test_bad_arguments():
    x = torch.zeros(2, 3, device=DEVICE)
    with pytest.raises(ValueError):
        jsd_loss(x, x, beta=1.5)
    with pytest.raises(ValueError):
        jsd_loss(x, torch.zeros(2, 4, device=DEVICE))
    with pytest.raises(ValueError):
        jsd_loss(x, x, torch.zeros(3, dtype=torch.long, device=DEVICE))


def test_bytes_moved():
    assert bytes_moved(2048, 128256, 4, pass_="forward") == 3 * 2048 * 128256 * 4
    assert bytes_moved(2048, 128256, 2, pass_="forward_only") == 2 * 2048 * 128256 * 2
    assert bytes_moved(1, 1, 4, pass_="full") == bytes_moved(1, 1, 4, pass_="forward") + bytes_moved(
        1, 1, 4, pass_="backward"
    )
    with pytest.raises(ValueError):
        bytes_moved(1, 1, 4, pass_="sideways")


@pytest.mark.parametrize("config", [(64, 1, 1), (64, 2, 3), (128, 1, 2), (32, 1, 7), (1024, 1, 4), (64, 1, 1000)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_launch_configs(config, dtype):
    """Every tiling computes the same thing: blocks spanning two rows or many (V < BLOCK), one
    program or many, and as many programs as blocks (the launcher caps the grid there)."""
    x, y, g = pair(4, 301, dtype, 23)
    labels = labels_for("some", 4, DEVICE, g)
    for beta in (0.0, 0.5, 1.0):
        loss, dx = jsd_forward(x, y, labels, beta=beta, config=config)
        ref, ref_grad = reference_with_grad(x, y, labels, beta)
        assert_loss_close(loss, ref, dtype)
        assert_grad_close(dx, ref_grad, dtype)


def _launch_with_grid(x, y, labels, beta, block, programs):
    """The flat kernel with an explicit grid, which jsd_forward never picks above the block count.

    dX and the partial sums start as NaN, so an element or partial that no program writes, or a
    block that two programs both add, shows up against the reference. Mirrors jsd._launch's call.
    """
    import sys

    import triton

    jsd = sys.modules[jsd_forward.__module__]
    bt, v = x.shape
    dx = torch.full_like(x, float("nan"))
    partial = torch.full((programs,), float("nan"), device=x.device)
    n_valid = None if labels is None else (labels != -100).sum()
    jsd._jsd_kernel[(programs,)](
        x, y, dx, partial if labels is None else labels, partial if n_valid is None else n_valid, partial,
        x.numel(), v, bt, float(bt), triton.cdiv(x.numel(), block), float(beta), -100,
        MODE=jsd._mode(beta), HAS_LABEL=labels is not None, MULTIROW=v < block, STORE_GRAD=True,
        BLOCK=block, FAST=False, num_warps=1,
    )
    return partial.sum(), dx


# (BT, V) against BLOCK=16: N < BLOCK (1x1, 1x5, 5x1), BT=1, V=1, V = BLOCK-1/BLOCK/BLOCK+1,
# N % BLOCK == 0 (2x16, 3x48), blocks spanning two rows (3x17, 4x33) and three (7x9).
@pytest.mark.parametrize("bt,v", [(1, 1), (1, 5), (5, 1), (1, 40), (2, 15), (2, 16), (3, 17), (4, 33), (7, 9), (3, 48)])
def test_every_element_written_once_for_any_grid(bt, v):
    """Each block is owned by exactly one program for grids of 1 program up to more than n_blocks."""
    block = 16
    x, y, _ = pair(bt, v, torch.float32, bt * 1000 + v)
    n_full, n_blocks = bt * v // block, -(-bt * v // block)
    rows = torch.arange(bt, device=DEVICE)
    label_sets = {"none": None, "even_ignored": torch.where(rows % 2 == 0, -100, rows + 5),
                  "odd_ignored": torch.where(rows % 2 == 1, -100, rows + 5)}
    for programs in sorted({1, 2, 3, n_full, n_full + 1, n_blocks + 2} - {0}):
        for name, labels in label_sets.items():
            for beta in (0.0, 0.5, 1.0):
                loss, dx = _launch_with_grid(x, y, labels, beta, block, programs)
                ref, ref_grad = reference_with_grad(x, y, labels, beta)
                assert_loss_close(loss, ref, torch.float32)
                assert_grad_close(dx, ref_grad, torch.float32)


@pytest.mark.parametrize("bt,v", [(1, 1), (1, 5), (1, 37), (1, 301), (5, 1), (2, 20), (6, 37)])
@pytest.mark.parametrize("labels", ["none", "first_ignored", "last_ignored"])
def test_small_shapes(bt, v, labels):
    """Through the public API: BT = 1, V = 1, N = 1 and N < BLOCK, where integer arguments equal to
    1 become constexprs on the GPU (n_rows, V, N, n_blocks), including the backward scale; and
    BLOCK/2 <= V < BLOCK (6x37 under the interpreter), where one block spans three rows, so the
    launcher must pick the per-element (MULTIROW) label path."""
    x, y, _ = pair(bt, v, torch.float32, bt * 1000 + v)
    lab = None
    if labels != "none":
        lab = torch.arange(bt, device=DEVICE) + 7
        lab[0 if labels == "first_ignored" else -1] = -100
    for beta in (0.0, 0.5, 1.0):
        loss, grad = check_against_reference(x, y, lab, beta, upstream=0.5)
        if lab is not None and bt == 1:
            assert loss.item() == 0.0 and not grad.any()


def test_ignore_index_one():
    """ignore_index = 1 is specialized to a constexpr on the GPU; labels equal to 1 are dropped."""
    x, y, _ = pair(4, 70, torch.float32, 29)
    lab = torch.tensor([1, 5, 1, -100], device=DEVICE)
    for beta in (0.0, 0.5, 1.0):
        xk = x.clone().requires_grad_()
        loss = JSD(beta=beta, ignore_index=1)(xk, y, lab)
        (grad,) = torch.autograd.grad(loss, xk)
        ref, ref_grad = reference_with_grad(x, y, lab, beta, ignore_index=1)
        torch.testing.assert_close(loss.double().cpu(), ref.detach().cpu(), rtol=1e-5, atol=1e-6)
        atol = 1e-5 * ref_grad.abs().max().item()
        torch.testing.assert_close(grad.double().cpu(), ref_grad.cpu(), rtol=1e-4, atol=atol)
        assert not grad[0].any() and not grad[2].any() and grad[3].any()
