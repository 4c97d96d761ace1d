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
  content-cache       remembers whole inputs by content, so only repeated inputs hit;
  prefetch-next       answers each call from the work the call before it did for that set
                      (a side stream in the untimed gap, on a GPU);
  sampled-loss        forward reads an eighth of the rows and returns their mean loss (the rows
                      are alike, so at the timed shape the estimate lands well inside bf16's
                      rtol), backward computes the exact gradient: right-looking outputs from a
                      forward that moves a fraction of its floor's bytes, so only the roofline
                      floor can see it.
Cheats of the guards themselves (issue 43 item 5): guard-patch (switches the guard off through the
name it once called), resealed-snapshot (rewrites the guard's snapshot and seal to match a halved
clock), norm-patch (torch.linalg.vector_norm reads 0, gradients zero), generator-swap (the
generator that picks checked calls never picks, gradients zero), spoofed-thread (a gradient
thread started from code compiled under a torch file name).
On a CPU there is no GPU clock to judge time by: the cheats only a time can expose
(side-stream, sampled-loss) are skipped there, and repeated_input allows CPU_REPEATED_SPEEDUP.

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


class PrefetchNext(torch.nn.Module):
    """Learns the rotation of the input sets by address; each call answers from what the call
    before it computed for this set, then computes the next set's answer (on a GPU that work
    would go to a side stream, into the harness's untimed gap). Right whenever a set's content
    is final by the time the call before it runs."""

    def __init__(self):
        super().__init__()
        self.order: list[int] = []
        self.sets: dict[int, tuple] = {}
        self.ready: dict[int, tuple] = {}

    def forward(self, x, y):
        at = x.data_ptr()
        if at not in self.sets:
            self.order.append(at)
            self.sets[at] = (x, y)
        answer = self.ready.pop(at, None) or _honest(x, y)
        nxt = self.order[(self.order.index(at) + 1) % len(self.order)]
        if len(self.order) > 1:
            self.ready[nxt] = _honest(*self.sets[nxt])
        return _Given.apply(x, *answer)


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
    torch reference on a side stream that starts once the loss is done and that only backward
    waits for: the caller's events see a loss-only forward, the host sees the rest."""

    def __init__(self):
        super().__init__()
        self.stream = torch.cuda.Stream()

    def forward(self, x, y):
        from sitegen.operations.jsd import BETA
        from sitegen.operations.jsd_torch import TorchReference

        main = torch.cuda.current_stream()
        loss = _loss_only(x, y)
        self.stream.wait_stream(main)
        with torch.cuda.stream(self.stream):
            leaf = x.detach().requires_grad_()
            (grad,) = torch.autograd.grad(TorchReference(BETA)(leaf, y), leaf)
            done = self.stream.record_event()
        grad.record_stream(main)
        return _Given.apply(x, loss, grad, done)


class _ExactBackward(torch.autograd.Function):
    """Returns `loss`; backward computes the exact gradient with the bundled kernel."""

    @staticmethod
    def forward(ctx, x, y, loss):
        ctx.save_for_backward(x, y)
        return loss.clone()

    @staticmethod
    def backward(ctx, g):
        from sitegen.kernels.jsd import jsd_forward

        # The kernel directly: autograd runs backward with grad mode off, so _honest's own
        # backward would find no graph.
        x, y = ctx.saved_tensors
        _, grad = jsd_forward(x, y)
        return grad * g, None, None


class SampledLoss(torch.nn.Module):
    """The loss from the first eighth of the rows (a contiguous view: no copy); the exact
    gradient in backward."""

    SHARE = 8

    def forward(self, x, y):
        part = max(1, x.shape[0] // self.SHARE)
        return _ExactBackward.apply(x, y, _loss_only(x[:part], y[:part]))


class ContentCache(torch.nn.Module):
    """The last result, kept while the inputs' content is unchanged (row sums weighted by row
    position), so that only repeated inputs hit."""

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



# -- Cheats of code sitegen did not write (issue 28 item 4): each honest through the gate and
# the warm-up (its first AFTER calls), so that only the check named for it can catch it.

class _Phased(torch.nn.Module):
    """Honest (the bundled kernel) for the first AFTER calls, then cheat(x, y)."""

    AFTER = 12

    def __init__(self):
        super().__init__()
        self.calls = 0

    def forward(self, x, y):
        self.calls += 1
        if self.calls <= self.AFTER:
            return bundled_kernel()(x, y)
        return self.cheat(x, y)


def halve_clock() -> list[tuple[object, str]]:
    """Replace time.perf_counter_ns (the host clock) and torch.cuda.Event.elapsed_time (the GPU's)
    with versions that report half the time; the (owner, name) of each replaced."""
    import time

    if not getattr(time.perf_counter_ns, "_halved", False):
        real_ns, real_elapsed = time.perf_counter_ns, torch.cuda.Event.elapsed_time
        start = real_ns()

        def halved_ns():
            return start + (real_ns() - start) // 2

        def halved_elapsed(self_, end):
            return real_elapsed(self_, end) / 2

        halved_ns._halved = True
        time.perf_counter_ns = halved_ns
        torch.cuda.Event.elapsed_time = halved_elapsed
    return [(time, "perf_counter_ns"), (torch.cuda.Event, "elapsed_time")]


class ClockPatch(_Phased):
    """Halves the clocks (halve_clock) on every call, and computes honestly."""

    def cheat(self, x, y):
        halve_clock()
        return bundled_kernel()(x, y)


class GuardPatch(_Phased):
    """Switches the clock's guard off (issue 43: `guards.changed = lambda *a, **k: []`, the function
    it checked itself through), then halves the clocks and computes honestly."""

    def cheat(self, x, y):
        from sitegen.rerun.checks import guards

        guards.changed = lambda *a, **k: []
        halve_clock()
        return bundled_kernel()(x, y)


class ResealedSnapshot(_Phased):
    """Halves the clocks, writes the halved functions into the guard's snapshot in place of the
    real ones and reseals it, so that the snapshot agrees with the patch; computes honestly."""

    def cheat(self, x, y):
        from sitegen.rerun.checks import guards

        replaced = halve_clock()
        for k, (owner, attr, label, _, _) in enumerate(guards._SNAPSHOT):
            if (owner, attr) in [(o, a) for o, a in replaced]:
                guards._SNAPSHOT[k] = (owner, attr, label, getattr(owner, attr), None)
        guards._seal()
        return bundled_kernel()(x, y)


def _zero_gradient(x, y):
    """The right loss, and a gradient of zeros."""
    return _Given.apply(x, _loss_only(x, y), torch.zeros_like(x))


class NormPatch(torch.nn.Module):
    """Replaces torch.linalg.vector_norm, which every comparison ends in, with one that reads 0,
    and hands back zero gradients: a norm-wise error of 0 passes any bound."""

    def forward(self, x, y):
        real = getattr(torch.linalg.vector_norm, "_real", torch.linalg.vector_norm)

        def zero(*args, **kwargs):
            return real(*args, **kwargs) * 0

        zero._real = real
        torch.linalg.vector_norm = zero
        return _zero_gradient(x, y)


class GeneratorSwap(_Phased):
    """After the calls always checked, replaces the generator that picks which calls are checked
    (random.SystemRandom.random, whose instance the timed check held) with one that never picks,
    and hands back zero gradients."""

    def cheat(self, x, y):
        import random

        random.SystemRandom.random = lambda self_: 0.999
        return _zero_gradient(x, y)


class _LazyLoss(torch.Tensor):
    """A loss whose value is computed when first read: the work runs past the timer."""

    pending = None

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if cls.pending is not None:
            fill, cls.pending = cls.pending, None
            fill()
        return super().__torch_function__(func, types, args, kwargs or {})


class _Buffers(torch.autograd.Function):
    """Returns ``loss`` itself, not _Given's copy, so the lazy fill lands in the loss the caller reads."""

    @staticmethod
    def forward(ctx, x, loss, grad):
        ctx.grad = grad
        return loss

    @staticmethod
    def backward(ctx, g):
        return ctx.grad * g, None, None


def lazy_loss(x, y, given=_Buffers.apply):
    """``given(x, loss, grad)`` as a _LazyLoss, ``loss`` and ``grad`` zero buffers that the honest
    kernel fills when something first reads the result: read, it is right, so only a check that
    refuses a result computed past the timer (plain_output) can catch it."""
    loss, grad = torch.zeros((), dtype=x.dtype, device=x.device), torch.zeros_like(x)

    def fill():
        with torch._C.DisableTorchFunctionSubclass():
            right_loss, right_grad = _honest(x, y)
            # .data: around autograd's version counter, as a cheat would.
            loss.data.copy_(right_loss)
            grad.data.copy_(right_grad)

    _LazyLoss.pending = fill
    return given(x, loss, grad).as_subclass(_LazyLoss)


class LazyTensor(_Phased):
    """Every other call hands back a Tensor subclass that computes the loss and gradient when
    something first reads it; the calls between are honest (so the timed outputs read are right)."""

    def cheat(self, x, y):
        if self.calls % 2:
            return bundled_kernel()(x, y)
        return lazy_loss(x, y)


class _Joined(torch.autograd.Function):
    """Returns `loss`; backward waits for the host thread that writes the gradient."""

    @staticmethod
    def forward(ctx, x, loss, grad, thread):
        ctx.grad, ctx.thread = grad, thread
        return loss.clone()

    @staticmethod
    def backward(ctx, g):
        ctx.thread.join()
        return ctx.grad * g, None, None, None


class HostThread(_Phased):
    """The loss on the caller's thread; the gradient on a host thread the call starts and does
    not wait for (backward joins it): a forward timed without its gradient work."""

    def cheat(self, x, y):
        import threading

        loss = _loss_only(x, y)
        grad = torch.empty_like(x)
        xd, yd = x.detach(), y.detach()

        def work():
            import time

            from sitegen.kernels.reference import jsd_sum_and_grad

            time.sleep(0.05)  # after the call's window has closed
            # The reference expression in float32 (Triton's interpreter runs on one thread only).
            _, g = jsd_sum_and_grad(xd, yd, compute_dtype=torch.float32)
            grad.copy_(g / xd.shape[0])

        thread = threading.Thread(target=work, name="cheat-gradient", daemon=True)
        self.start(thread)
        return _Joined.apply(x, loss, grad, thread)

    def start(self, thread) -> None:
        thread.start()


class SpoofedThread(HostThread):
    """HostThread's gradient thread, started from code compiled under a file name in torch's folder:
    what the thread guard once read as torch's own compile pool."""

    def start(self, thread) -> None:
        import os

        where = os.path.join(os.path.dirname(torch.__file__), "_inductor", "compile_worker", "spoof.py")
        space: dict = {}
        exec(compile("def start(thread):\n    thread.start()\n", where, "exec"), space)
        space["start"](thread)


class InPlaceInput(_Phased):
    """Right loss and gradient, then uses the teacher's buffer as scratch space (writes into an
    input): every later reader of that input sees garbage."""

    def cheat(self, x, y):
        out = bundled_kernel()(x, y)
        with torch.no_grad():
            y.mul_(0.5)
        return out


class AliasedGradient(_Phased):
    """Hands back the gradient in the student's own storage (saving an allocation): the
    gradient aliases an input."""

    def cheat(self, x, y):
        loss, grad = _honest(x, y)
        with torch.no_grad():
            x.data.copy_(grad)
        return _Given.apply(x, loss, x.data)


class SideStreamShare(torch.nn.Module):
    """The loss and gradient of the first 95% of the rows on the caller's stream, the last 5%
    on a side stream the caller never waits for (backward does): on a call of 2 ms or more,
    100 us and up of work its events do not see."""

    SHARE = 0.05

    def __init__(self):
        super().__init__()
        self.stream = torch.cuda.Stream()

    def forward(self, x, y):
        from sitegen.kernels.jsd import jsd_forward

        rows = x.shape[0]
        cut = rows - max(1, int(rows * self.SHARE))
        main = torch.cuda.current_stream()
        head_loss, head_grad = jsd_forward(x.detach()[:cut], y[:cut])
        self.stream.wait_stream(main)
        with torch.cuda.stream(self.stream):
            tail_loss, tail_grad = jsd_forward(x.detach()[cut:], y[cut:])
            loss = (head_loss * cut + tail_loss * (rows - cut)) / rows
            grad = torch.cat([head_grad * (cut / rows), tail_grad * ((rows - cut) / rows)])
            done = self.stream.record_event()
        for t in (loss, grad):
            t.record_stream(main)
        return _Given.apply(x, loss, grad, done)
