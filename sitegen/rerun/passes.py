"""Inputs and the three timed passes (forward, backward, full), with every timed call's output
kept for checking (timedcheck) and its inputs changed, untimed, before the next call.

Inputs are log_softmax of standard-normal logits, as in Liger's benchmark: never zeros,
which hide unwritten outputs and can run faster than real data.

Inputs a cache cannot win on (protocol: "fresh-random-rolled"): a pool of 2-3 random sets,
and after every timed call the used set's student and teacher are rolled together, in place
and untimed, as one flat sequence of token·vocab pairs, by a secret random offset (the OS's generator)
that puts the row starts where none of the set's earlier calls had them. Every row then
straddles two earlier rows, at the same address, so no call sees a row an earlier call saw: a cache keyed on identity or on a row's content
returns wrong gradients, which timedcheck's digest of dX sees. One that recognises the roll
itself (a few elements tell it) gains only by not reading X and Y, which the forward's floor
charges, or by handing back a remembered gradient rolled, which reads it and writes dX: two
T·V·b passes where the full pass's floor charges three. Rows straddle: they are no longer
normalised, which no JSD implementation assumes (every term is per element). The loss, a
sum of per-element terms over the tokens, is invariant under the roll and the reference
gradient rolls with the inputs, so the float64 reference is computed once per set.
"""

from __future__ import annotations

import random

import torch

from sitegen.rerun.implementations import DTYPES
from sitegen.rerun.timedcheck import TimedCheck

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
                 seed: int, pool: int | None = None, liger_script: bool = False, rtol: float | None = None):
        self.module = module
        self.timed_pass = timed_pass
        self.liger_script = liger_script
        self.cuda = device.startswith("cuda")
        n = pool or pool_size(rows, vocab, dtype)
        self.leaves = [logprobs(rows, vocab, dtype, device, seed + 2 * k).requires_grad_() for k in range(n)]
        self.xs = [leaf.log_softmax(dim=-1) for leaf in self.leaves] if liger_script else self.leaves
        self.ys = [logprobs(rows, vocab, dtype, device, seed + 2 * k + 1) for k in range(n)]
        self.losses: list = [None] * n
        self.fwd_events: list = [None] * n
        if timed_pass == "backward" and liger_script:
            self.losses = [module(x, y) for x, y in zip(self.xs, self.ys)]
        self.check = None if liger_script else TimedCheck(self.leaves, self.ys, device, rtol)
        # Offsets an implementation cannot predict, from the published seed or from earlier
        # offsets (which a Mersenne Twister's output would give away); drawn on the host, so
        # rolling never makes the host wait for the GPU.
        self._rng = random.SystemRandom()
        self._rolled = [0] * n
        self._starts: list[set[int]] = [set() for _ in range(n)]

    def __len__(self) -> int:
        return len(self.xs)

    def reset(self, i: int) -> None:
        k = i % len(self.leaves)
        self.leaves[k].grad = None
        if self.timed_pass == "backward" and not self.liger_script:
            ev = self._events()
            if ev:
                ev[0].record()
            self.losses[k] = self.module(self.xs[k], self.ys[k])
            if ev:
                ev[1].record()
            self.fwd_events[k] = ev

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

    def after(self, i: int, out, *, check: bool, perturb: bool = True, pass_events=None) -> None:
        """Untimed, right after the call: keep its loss, on checked calls complete its gradient
        (forward: the backward, bracketed by events) and digest it, then roll the set."""
        if self.check is None:
            return
        k = i % len(self.leaves)
        if check and out is not None:
            other = None
            if self.timed_pass == "forward":
                other = self._events()
                if other:
                    other[0].record()
                out.backward()
                if other:
                    other[1].record()
            elif self.timed_pass == "backward":
                other = self.fwd_events[k]
            self.check.record(k, out, self.leaves[k].grad, pass_events, other)
        elif out is not None:
            self.check.record_loss(k, out)
        self.fwd_events[k] = None
        if perturb:
            self.perturb(k)

    def perturb(self, k: int) -> None:
        rows, vocab = self.leaves[k].shape
        n = rows * vocab
        if n < 2:
            return
        # A row's content is fixed by where the rows start in the flat sequence (the roll mod
        # vocab): a start used before would bring back rows already seen, so each set takes a
        # start it has not had until every one has been used.
        used = self._starts[k]
        used.add(self._rolled[k] % vocab)
        if len(used) >= vocab:
            used.clear()
            used.add(self._rolled[k] % vocab)
        start = self._rng.randrange(vocab) if vocab > 1 else 0
        while vocab > 1 and start in used:
            start = self._rng.randrange(vocab)
        target = start + vocab * self._rng.randrange(rows)
        shift = (target - self._rolled[k]) % n or 1
        self._rolled[k] = (self._rolled[k] + shift) % n
        with torch.no_grad():
            for t in (self.leaves[k], self.ys[k]):
                flat = t.view(-1)
                flat.copy_(torch.roll(flat, shift))
        self.check.roll(k, shift)

    def _events(self):
        if not self.cuda:
            return None
        return torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def release(self) -> None:
        self.losses = []
        self.xs = self.ys = self.leaves = []
        self.check = None
