"""The closed-form gradient the rerun harness checks against is autograd's, for every beta."""

import pytest

torch = pytest.importorskip("torch")

try:
    from sitegen.kernels.reference import jsd_reference, jsd_sum_and_grad
except ImportError:  # sitegen not installed (the GPU machine): the repo's kernels/ directly
    from kernels.reference import jsd_reference, jsd_sum_and_grad


@pytest.mark.parametrize("beta", [0.0, 0.1, 0.5, 0.9, 1.0])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float64])
def test_closed_form_matches_autograd(beta, dtype):
    gen = torch.Generator().manual_seed(7)
    x = torch.randn(9, 33, generator=gen, dtype=torch.float64).mul(3).log_softmax(-1).to(dtype)
    y = torch.randn(9, 33, generator=gen, dtype=torch.float64).mul(3).log_softmax(-1).to(dtype)
    # Zero probabilities, as -inf log-probs, in the student and the teacher, apart and together.
    x[0, 0] = y[1, 1] = x[2, 2] = y[2, 2] = -float("inf")
    leaf = x.to(torch.float64).requires_grad_()
    loss = jsd_reference(leaf, y, beta=beta)
    (want,) = torch.autograd.grad(loss, leaf)

    total, grad = jsd_sum_and_grad(x, y, beta=beta)

    assert grad.dtype == torch.float64 and grad.shape == x.shape
    assert torch.isfinite(grad).all()
    torch.testing.assert_close(total / x.shape[0], loss.detach(), rtol=1e-12, atol=1e-15)
    torch.testing.assert_close(grad / x.shape[0], want, rtol=1e-10, atol=1e-15)


def test_rows_chunk_like_the_whole():
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(12, 50, generator=gen).log_softmax(-1)
    y = torch.randn(12, 50, generator=gen).log_softmax(-1)
    total, grad = jsd_sum_and_grad(x, y)
    parts = [jsd_sum_and_grad(x[r:r + 5], y[r:r + 5]) for r in range(0, 12, 5)]
    torch.testing.assert_close(sum(p[0] for p in parts), total)
    torch.testing.assert_close(torch.cat([p[1] for p in parts]), grad)


def test_beta_out_of_range_is_refused():
    x = torch.zeros(1, 2)
    with pytest.raises(ValueError, match="beta"):
        jsd_sum_and_grad(x, x, beta=1.5)
