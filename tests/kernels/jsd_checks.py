"""Checks shared by the interpreter and GPU tests: the kernel against the float64 reference."""

import torch

try:
    from sitegen.kernels.jsd import JSD, jsd_forward, jsd_loss
    from sitegen.kernels.reference import bytes_moved, jsd_reference
except ImportError:  # sitegen not installed (the GPU machine): the repo's kernels/ directly
    from kernels.jsd import JSD, jsd_forward, jsd_loss
    from kernels.reference import bytes_moved, jsd_reference

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
BETAS = [0.0, 0.1, 0.5, 0.9, 1.0]
DTYPES = [torch.float32, torch.bfloat16, torch.float16]

# Tolerances, by input dtype, and why:
#  float32: MUFU ex2/lg2.approx are good to ~2^-22 relative; per-element terms such as
#           Q*(X - log M) cancel, so errors are absolute in the largest term: 1e-5 of max|grad|.
#           The loss is a sum of BT*V fp32 terms: rtol 1e-5.
#  bfloat16: the loss is returned and dX stored in bf16 (8-bit mantissa, 2^-8 = 3.9e-3).
#  float16: loss and dX in fp16 (11-bit mantissa, 2^-11 = 4.9e-4); dX below 6e-5 is subnormal.
LOSS_RTOL = {torch.float32: 1e-5, torch.bfloat16: 8e-3, torch.float16: 1.5e-3}
GRAD_ATOL = {torch.float32: 1e-5, torch.bfloat16: 8e-3, torch.float16: 1.5e-3}  # x max|grad|
GRAD_RTOL = {torch.float32: 1e-4, torch.bfloat16: 1.6e-2, torch.float16: 2e-3}


def gen(seed):
    return torch.Generator(device=DEVICE).manual_seed(seed)


def logprobs(bt, v, dtype, device, *, scale=3.0, gen=None):
    """Random, non-uniform log-probabilities (never zeros), rounded to `dtype`."""
    z = torch.randn(bt, v, generator=gen, dtype=torch.float32, device=gen.device if gen else device) * scale
    return z.log_softmax(-1).to(device=device, dtype=dtype)


def pair(bt, v, dtype, seed):
    """x and y from one seeded generator, returned with it so that labels continue its stream."""
    g = gen(seed)
    return logprobs(bt, v, dtype, DEVICE, gen=g), logprobs(bt, v, dtype, DEVICE, gen=g), g


def labels_for(kind, bt, device, gen=None):
    if kind == "none":
        return None
    lab = torch.randint(0, 1000, (bt,), generator=gen, device=gen.device if gen else device)
    if kind == "some":
        lab[torch.arange(bt, device=lab.device) % 3 == 1] = -100
    elif kind == "all":
        lab[:] = -100
    return lab.to(device)


def assert_loss_close(loss, ref, dtype):
    assert loss.dtype == dtype and loss.dim() == 0
    assert torch.isfinite(loss), loss
    torch.testing.assert_close(loss.double().cpu(), ref.detach().cpu(), rtol=LOSS_RTOL[dtype], atol=1e-6)


def assert_grad_close(grad, ref, dtype):
    assert grad.dtype == dtype
    assert torch.isfinite(grad).all()
    ref = ref.cpu()
    atol = GRAD_ATOL[dtype] * max(ref.abs().max().item(), 1e-12)
    torch.testing.assert_close(grad.double().cpu(), ref, rtol=GRAD_RTOL[dtype], atol=atol)


def reference_with_grad(x, y, labels, beta, *, upstream=1.0, **kwargs):
    """Float64 reference loss and its gradient with respect to x, scaled by `upstream`."""
    x64 = x.detach().double().requires_grad_()
    ref = jsd_reference(x64, y, labels, beta=beta, **kwargs)
    g = torch.tensor(float(upstream), dtype=torch.float64, device=ref.device)
    (ref_grad,) = torch.autograd.grad(ref, x64, grad_outputs=g)
    return ref, ref_grad


def check_against_reference(x, y, labels, beta, *, upstream=1.0, module=False):
    """Loss and student gradient of the kernel vs float64 autograd of the reference."""
    dtype = x.dtype
    xk = x.detach().clone().requires_grad_()
    if module:
        loss = JSD(beta=beta)(xk, y, labels)
    else:
        loss = jsd_loss(xk, y, labels, beta=beta)
    g = torch.tensor(upstream, dtype=loss.dtype, device=loss.device)
    (grad,) = torch.autograd.grad(loss, xk, grad_outputs=g)

    ref, ref_grad = reference_with_grad(x, y, labels, beta, upstream=float(g))
    assert_loss_close(loss, ref, dtype)
    assert_grad_close(grad, ref_grad, dtype)
    return loss, grad


def underflow_pair(bt, v, dtype, device, gen=None):
    """Rows where both distributions are exactly 0 on many entries, as -1e4 and as -inf."""
    x = logprobs(bt, v, torch.float32, device, gen=gen)
    y = logprobs(bt, v, torch.float32, device, gen=gen)
    x[0, :] = -1e4  # a whole row underflowing in both
    y[0, :] = -1e4
    x[1, ::2] = float("-inf")
    y[1, ::2] = float("-inf")
    x[2, 1::3] = -1e4
    y[2, 1::3] = float("-inf")
    return x.to(device=device, dtype=dtype), y.to(device=device, dtype=dtype)
