"""Inputs and the three timed passes (forward, backward, full), with every timed call's output
kept for checking (timedcheck) and its inputs drawn again, untimed, right before it.

Inputs are log_softmax of standard-normal logits, as in Liger's benchmark: never zeros,
which hide unwritten outputs and can run faster than real data.

Inputs no cache can win on (protocol: "fresh-random-every-call"): immediately before every
timed call, untimed (draw(), before its backward's graph, the lead and the flush), the set it
uses is drawn again, student and teacher, from a device generator seeded by the `secrets` module
at that moment. No call sees content any earlier call saw, and work an earlier call did ahead
for that set (the set is known: they rotate) was done on the content before the draw, so
nothing remembered or prefetched can answer it: an implementation that
skips work hands back wrong outputs, and timedcheck compares a random quarter of the calls (the
loss and a digest of dX) with float64 references of their own inputs. The sets stay 2-3 at
distinct addresses, so a cache keyed on identity finds one and returns a wrong answer.
"""

from __future__ import annotations

import secrets

import torch

from sitegen.rerun.implementations import DTYPES
from sitegen.rerun.timedcheck import TimedCheck, _loss_copy, foreign, modes

# Inputs of one set above this size are kept two to a pool instead of three, so that
# torch eager's retained graphs for backward (about six full-size float32 temporaries per
# set) still fit beside them on one GPU.
_BIG_SET_BYTES = 4 << 30


def logprobs(rows: int, vocab: int, dtype: str, device: str, seed: int) -> torch.Tensor:
    """(rows, vocab) log-probabilities in `dtype`, normalised in float32 then cast."""
    gen = torch.Generator(device=device).manual_seed(seed)
    logits = torch.randn(rows, vocab, generator=gen, device=device, dtype=torch.float32)
    return torch.log_softmax(logits, dim=-1).to(DTYPES[dtype])


def pool_size(rows: int, vocab: int, dtype: str) -> int:
    set_bytes = 2 * rows * vocab * DTYPES[dtype].itemsize
    return 2 if set_bytes > _BIG_SET_BYTES else 3


class PassRunner:
    """Calls one implementation's pass on input set i; reset(i) and after(i, ...) run outside
    the timed region.

    Backward is timed on a graph built by reset() just before the call (untimed, but its
    forward is bracketed by events of its own so that the full pass can be judged), so an
    implementation may consume what its forward saved, as a training step lets it. With
    ``liger_script`` the passes are those of Liger-Kernel's benchmark script instead: the
    student is log_softmax of a leaf, backward replays one graph per input set with
    retain_graph=True, and nothing is perturbed or checked (do_bench drives the loop).
    """

    def __init__(self, module, rows: int, vocab: int, dtype: str, device: str, timed_pass: str,
                 seed: int, pool: int | None = None, liger_script: bool = False, rtol: float | None = None,
                 clock=None):
        self.module = module
        self.clock = clock
        self.timed_pass = timed_pass
        self.liger_script = liger_script
        n = pool or pool_size(rows, vocab, dtype)
        self._shape, self._dtype, self._device = (rows, vocab), dtype, device
        self.recipes = [(seed + 2 * k, seed + 2 * k + 1) for k in range(n)]
        self.leaves = [self._draw(sx).requires_grad_() for sx, _ in self.recipes]
        self.xs = [leaf.log_softmax(dim=-1) for leaf in self.leaves] if liger_script else self.leaves
        self.ys = [self._draw(sy) for _, sy in self.recipes]
        self.losses: list = [None] * n
        self.fwd_windows: list = [None] * n
        if timed_pass == "backward" and liger_script:
            self.losses = [module(x, y) for x, y in zip(self.xs, self.ys)]
        self.check = None if liger_script else TimedCheck(rows, vocab, device, rtol)
        self._modes = modes()

    def __len__(self) -> int:
        return len(self.xs)

    def reset(self, i: int) -> None:
        k = i % len(self.leaves)
        self.leaves[k].grad = None
        if self.timed_pass == "backward" and not self.liger_script:
            self.losses[k], self.fwd_windows[k] = self._window(lambda: self.module(self.xs[k], self.ys[k]))

    def __call__(self, i: int):
        k = i % len(self.xs)
        if self.timed_pass == "forward":
            return self.module(self.xs[k], self.ys[k])
        if self.timed_pass == "backward":
            loss = self.losses[k]
            if not self.liger_script:
                self.losses[k] = None
            loss.backward(retain_graph=self.liger_script)
            return loss
        loss = self.module(self.xs[k], self.ys[k])
        loss.backward(retain_graph=self.liger_script)
        return loss

    def draw(self, i: int) -> None:
        """Untimed, immediately before call i (before its backward's graph, the lead and the
        flush): its set drawn again, so that nothing an earlier call left could know it."""
        if self.check is not None:
            self.perturb(i % len(self.leaves))

    def after(self, i: int, out, *, check: bool, window=None) -> None:
        """Untimed, right after the call: keep its loss, and on checked calls complete its
        gradient (forward: the backward, bracketed by events) and digest it."""
        if self.check is None:
            return
        k = i % len(self.leaves)
        # On every call, before anything reads the output: a subclass's methods or an active
        # mode would run the implementation's code inside the untimed reads below.
        if out is not None and (foreign(out, self._modes) or foreign(self.leaves[k].grad, self._modes)):
            self.check.record_foreign()
            check = out = None
        if check and out is not None:
            # The loss as the call returned it, before anything else runs (a backward could
            # otherwise write into it).
            loss = _loss_copy(out)
            other = None
            if self.timed_pass == "forward":
                _, other = self._window(out.backward)
            elif self.timed_pass == "backward":
                other = self.fwd_windows[k]
            sx, sy = self.recipes[k]
            if foreign(self.leaves[k].grad, self._modes):
                self.check.record_foreign()
            else:
                self.check.record(loss, self.leaves[k].grad, window, other,
                                  redraw=lambda: (self._draw(sx), self._draw(sy)))
        elif out is not None:
            self.check.record_loss()
        self.fwd_windows[k] = None

    def perturb(self, k: int) -> None:
        # Seeds drawn now, not once: a generator's state could be read ahead by code in this
        # process. They are kept, so that a checked call's reference is computed from its inputs
        # drawn again, not from tensors the implementation could have written to.
        self.recipes[k] = (secrets.randbits(63), secrets.randbits(63))
        with torch.no_grad():
            for t, s in zip((self.leaves[k], self.ys[k]), self.recipes[k]):
                t.copy_(self._draw(s))

    def _draw(self, seed: int) -> torch.Tensor:
        return logprobs(*self._shape, self._dtype, self._device, seed)

    def _window(self, fn):
        """The other half of a pass (a backward's forward, a forward's backward) in the same
        pattern as the timed call, timed too: the full pass is judged on their sum."""
        if self.clock is None:
            return fn(), None
        return self.clock.window(fn)

    def release(self) -> None:
        self.losses = []
        self.xs = self.ys = self.leaves = []
        self.check = None
