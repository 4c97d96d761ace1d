"""Planted cheating implementations for the self-test (selftest), each with LigerJSD's call
shape: module(log_q, log_p) -> loss, differentiable in log_q.

Cheats (the six of #18 item 5, then one per check that no other check would catch):
  phase-skip          honest for its first calls on a shape (gate, warm-up), then computes the
                      loss without writing dX and hands back the last honest gradient;
  identity-cache      remembers results by input address and shape;
  forward-skips-dx    forward reads X and Y for the loss but never writes dX;
  wrong-gradient      correct loss, gradient 5% off;
  side-stream         the gradient on a side stream the caller's stream never waits for until
                      backward (a host-visible wait; the loss comes from the main stream);
  bf16-1.5pct         loss and gradient 1.5% off, on bf16;
  shape-special       correct only at the timed shape (a benchmark-specialised path);
  row-memo            remembers gradient rows by content and gathers them, correct under the
                      harness's row moves, so only the full pass's floor can see it;
  content-cache       remembers whole inputs by content, so only repeated inputs hit.
On a CPU there is no GPU clock to judge time by: the cheats only a time can expose
(side-stream, row-memo) are skipped there, and repeated_input allows CPU_REPEATED_SPEEDUP.
"""

from __future__ import annotations

import torch


def bundled_kernel():
    from sitegen.kernels.jsd import JSD

    return JSD()


def _loss_only(x, y):
    from sitegen.kernels.jsd import jsd_forward

    return jsd_forward(x.detach(), y, store_grad=False)[0]


class _Given(torch.autograd.Function):
    """Returns `loss`; backward hands out `grad` (scaled by the upstream gradient, as JSD does)."""

    @staticmethod
    def forward(ctx, x, loss, grad, event=None):
        ctx.grad, ctx.event = grad, event
        return loss.clone()

    @staticmethod
    def backward(ctx, g):
        if ctx.event is not None:
            torch.cuda.current_stream().wait_event(ctx.event)
        return ctx.grad * g, None, None, None


def _honest(x, y):
    leaf = x.detach().requires_grad_()
    loss = bundled_kernel()(leaf, y)
    loss.backward()
    return loss.detach(), leaf.grad


class PhaseSkip(torch.nn.Module):
    """Honest for its first HONEST calls per shape, then: loss only, the last gradient again
    (copied, so that its backward still moves the bytes a real one would)."""

    HONEST = 8

    def __init__(self):
        super().__init__()
        self.seen: dict = {}

    def forward(self, x, y):
        key = tuple(x.shape)
        n, last = self.seen.get(key, (0, None))
        if n < self.HONEST or last is None:
            loss, grad = _honest(x, y)
            self.seen[key] = (n + 1, grad)
            return _Given.apply(x, loss, grad)
        self.seen[key] = (n + 1, last)
        return _Given.apply(x, _loss_only(x, y), last.clone())


class IdentityCache(torch.nn.Module):
    """Results remembered by (address, shape, dtype) of the inputs."""

    def __init__(self):
        super().__init__()
        self.cache: dict = {}

    def forward(self, x, y):
        key = (x.data_ptr(), y.data_ptr(), tuple(x.shape), x.dtype)
        if key not in self.cache:
            self.cache[key] = _honest(x, y)
        return _Given.apply(x, *self.cache[key])


class ForwardSkipsDx(torch.nn.Module):
    """Reads X and Y for the loss; the gradient buffer it hands back is never written."""

    def forward(self, x, y):
        return _Given.apply(x, _loss_only(x, y), torch.empty_like(x))


class WrongGradient(torch.nn.Module):
    """The right loss, a gradient 5% off."""

    def forward(self, x, y):
        loss, grad = _honest(x, y)
        return _Given.apply(x, loss, grad * 1.05)


class OffBy(torch.nn.Module):
    """Loss and gradient both `factor` times the right ones."""

    def __init__(self, factor: float):
        super().__init__()
        self.factor = factor

    def forward(self, x, y):
        loss, grad = _honest(x, y)
        return _Given.apply(x, loss * self.factor, grad * self.factor)


class ShapeSpecial(torch.nn.Module):
    """Right at the timed shape; elsewhere the fast path's assumption breaks (10% off)."""

    def __init__(self, shape: tuple[int, int]):
        super().__init__()
        self.shape = shape

    def forward(self, x, y):
        loss, grad = _honest(x, y)
        factor = 1.0 if tuple(x.shape) == self.shape else 1.1
        return _Given.apply(x, loss * factor, grad * factor)


class SideStream(torch.nn.Module):
    """Loss on the caller's stream (the bundled kernel, reading X and Y); the gradient by the
    torch reference on a side stream that only backward waits for."""

    def __init__(self):
        super().__init__()
        self.stream = torch.cuda.Stream()

    def forward(self, x, y):
        from sitegen.rerun.implementations import TorchReference

        main = torch.cuda.current_stream()
        self.stream.wait_stream(main)
        with torch.cuda.stream(self.stream):
            leaf = x.detach().requires_grad_()
            (grad,) = torch.autograd.grad(TorchReference()(leaf, y), leaf)
            done = self.stream.record_event()
        grad.record_stream(main)
        return _Given.apply(x, _loss_only(x, y), grad, done)


class _Gather(torch.autograd.Function):
    """Returns `loss`; backward gathers the remembered gradient rows."""

    @staticmethod
    def forward(ctx, x, loss, rows, at):
        ctx.rows, ctx.at = rows, at
        return loss.clone()

    @staticmethod
    def backward(ctx, g):
        return ctx.rows[ctx.at] * g, None, None, None


class RowMemo(torch.nn.Module):
    """Per-row losses and gradient rows remembered by row content (a row's first elements as
    its key). Under the harness's row moves every row is found again, so after one honest call
    per input address the forward only looks the rows up (no pass over X and Y) and backward
    gathers the gradient: correct outputs, but a forward far under its floor."""

    def __init__(self):
        super().__init__()
        self.keys = self.rows = self.losses = None
        self.seen: set = set()
        self.shape = None

    def _key(self, x):
        head = x[:, :4].double()
        return head @ torch.tensor([1.0, 1e3, 1e6, 1e9], dtype=torch.float64, device=x.device)

    def forward(self, x, y):
        if tuple(x.shape) != self.shape:
            self.keys = self.rows = self.losses = None
            self.seen, self.shape = set(), tuple(x.shape)
        if x.data_ptr() not in self.seen:
            self.seen.add(x.data_ptr())
            loss, grad = _honest(x, y)
            per_row = _per_row_loss(x, y)
            keys = self._key(x)
            self.keys = keys if self.keys is None else torch.cat([self.keys, keys])
            self.rows = grad if self.rows is None else torch.cat([self.rows, grad])
            self.losses = per_row if self.losses is None else torch.cat([self.losses, per_row])
            return _Given.apply(x, loss, grad)
        at = (self._key(x)[:, None] == self.keys[None, :]).to(torch.int8).argmax(dim=1)
        loss = self.losses[at].mean().to(x.dtype)
        return _Gather.apply(x, loss, self.rows, at)


class ContentCache(torch.nn.Module):
    """The last result, kept while the inputs' content is unchanged (row sums weighted by row
    position, so that moved rows change the key)."""

    def __init__(self):
        super().__init__()
        self.key = None
        self.result = None

    def forward(self, x, y):
        at = torch.arange(1, x.shape[0] + 1, dtype=torch.float64, device=x.device)
        key = torch.stack([(x.detach().double().sum(dim=1) * at).sum(), (y.double().sum(dim=1) * at).sum()])
        if self.key is not None and self.key.shape == key.shape and bool(torch.equal(key, self.key)):
            return _Given.apply(x, *self.result)
        self.key, self.result = key, _honest(x, y)
        return _Given.apply(x, *self.result)


def _per_row_loss(x, y):
    from sitegen.kernels.reference import jsd_reference

    rows = x.shape[0]
    return torch.stack([jsd_reference(x[r:r + 1].detach(), y[r:r + 1], compute_dtype=torch.float32)
                        for r in range(rows)]) if rows <= 64 else _per_row_loss_batched(x, y)


def _per_row_loss_batched(x, y):
    xf, yf = x.detach().float(), y.float()
    p, q = yf.exp(), xf.exp()
    log_m = (0.5 * (p + q)).log()
    return (0.5 * p * (yf - log_m) + 0.5 * q * (xf - log_m)).sum(dim=1)
