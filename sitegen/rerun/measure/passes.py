"""Inputs and the three timed passes (forward, backward, full), with every timed call's output
kept for checking (timedcheck) and its inputs drawn again, untimed, right before it.

The inputs are the operation's (``make_inputs(workload, seed)``); the inputs at the operation's
``differentiable`` positions get gradients from the scalar loss the call returns.

Inputs no cache can win on (protocol: "fresh-random-every-call"): immediately before every
timed call, untimed (draw(), before its backward's graph, the lead and the flush), the set it
uses is drawn again from a seed taken from the `secrets` module at that moment. No call sees
content any earlier call saw, and work an earlier call did ahead for that set (the set is
known: they rotate) was done on the content before the draw, so nothing remembered or
prefetched can answer it: an implementation that skips work hands back wrong outputs, and
timedcheck compares a random quarter of the calls (the loss and a digest of each gradient)
with float64 references of their own inputs. The sets stay 2-3 at distinct addresses, so a
cache keyed on identity finds one and returns a wrong answer.
"""

from __future__ import annotations

import secrets

import torch

from sitegen.core.workload import grad_seed
from sitegen.rerun.checks.timedcheck import TimedCheck, aliasing, foreign, modes
from sitegen.rerun.measure.memory import BIG_SET_BYTES, MIN_SETS, CudaMemory, clearly_fits, fit


def set_bytes(tensors) -> int:
    """Bytes of the tensors given (None skipped)."""
    return sum(t.numel() * t.element_size() for t in tensors if t is not None)


def pool_size(inputs: tuple) -> int:
    """The pool's cap; measure.memory fills it only as far as the GPU's free memory allows."""
    return 2 if set_bytes(inputs) > BIG_SET_BYTES else 3


# Elements of an input read at a time in float64 by fingerprint(): a sum or norm in float64 of a
# whole float32 input makes a float64 copy of it (16 GiB for KL divergence's 8 GiB input at vocab
# 131072, beside both sets on an 80 GB GPU), a block of rows 512 MiB at most.
_FINGERPRINT_CHUNK = 1 << 26


def fingerprint(inputs: tuple) -> list[tuple[float, float]]:
    """Every input's float64 sum and norm: cheap enough for every call (one read), and changed by
    any write short of one that keeps both (the checked calls compare every element)."""
    with torch.no_grad():
        return [None if t is None else _sum_and_norm(t.detach().reshape(-1)) for t in inputs]


def _sum_and_norm(flat) -> tuple[float, float]:
    total = torch.zeros((), dtype=torch.float64, device=flat.device)
    squares = torch.zeros((), dtype=torch.float64, device=flat.device)
    for start in range(0, flat.numel(), _FINGERPRINT_CHUNK):
        part = flat[start:start + _FINGERPRINT_CHUNK].double()
        total += part.sum()
        squares += part.square().sum()
    return float(total), float(squares.sqrt())


class PassRunner:
    """Calls one implementation's pass on input set i; reset(i) and after(i, ...) run outside
    the timed region.

    Backward is timed on a graph built by reset() just before the call (untimed, but its
    forward is bracketed by events of its own so that the full pass can be judged), so an
    implementation may consume what its forward saved, as a training step lets it. With
    ``liger_script`` the passes are those of Liger-Kernel's benchmark script instead: the
    inputs as the operation says that script feeds them, backward replays one graph per input
    set with retain_graph=True, and nothing is perturbed or checked (do_bench drives the loop).
    """

    def __init__(self, module, op, workload, device: str, timed_pass: str, seed: int, pool: int | None = None,
                 liger_script: bool = False, rtol: float | None = None, clock=None, memory=None):
        self.module = module
        self.op = op
        self.clock = clock
        self.timed_pass = timed_pass
        self.liger_script = liger_script
        self._workload, self._device = workload, device
        self._seed = seed
        # The device's memory (measure.memory.CudaMemory) bounds the pool where no pool is asked
        # for: Liger's script (do_bench) times one set, as asked.
        if memory is None and device.startswith("cuda") and pool is None and not liger_script:
            memory = CudaMemory()
        self.memory = memory
        free = memory.free() if memory else None
        base = memory.mark() if memory else 0
        first = self._draw(seed)
        cap = pool or pool_size(first)
        self._growth = None
        n = cap
        if memory is not None:
            sizes = (set_bytes(first), set_bytes([first[j] for j in op.differentiable]) + set_bytes([self._gout(seed)]),
                     memory.peak() - base)
            if not clearly_fits(cap, *sizes, free):
                # The pool's least until the warm-up has measured a call: then fill() adds what fits.
                n, self._growth = min(cap, MIN_SETS), (cap, free, *sizes)
        self.recipes = [seed + k for k in range(n)]
        self.sets = [first]
        self.args, self.gouts, self.losses, self.fwd_windows, self.prints = [], [], [], [], []
        self._add(first, self.recipes[0])
        for s in self.recipes[1:]:
            self._add(self._draw(s), s)
        if timed_pass == "backward" and liger_script:
            self.losses = [module(*a) for a in self.args]
        self.check = None if liger_script else TimedCheck([first[j].shape for j in op.differentiable], device, rtol,
                                                          op.output_shape(workload))
        self._modes = modes()
        if self._growth is not None:
            self._warm = self.memory.mark()

    def _add(self, inputs: tuple, recipe: int) -> None:
        """One more set in the pool (the first is already in self.sets)."""
        if inputs is not self.sets[0]:
            self.sets.append(inputs)
        for j in self.op.differentiable:
            inputs[j].requires_grad_()
        self.args.append(self.op.liger_script_inputs(inputs) if self.liger_script else inputs)
        # The gradient each call's backward gets: None for a scalar loss, else drawn with the set.
        self.gouts.append(self._gout(recipe))
        self.losses.append(None)
        self.fwd_windows.append(None)
        self.prints.append(None)

    def fill(self) -> None:
        """After the warm-up, where the pool's cap did not clearly fit: as many more sets as fit
        beside the room a call took in the warm-up (its draw included) or a checked call's
        gradients and redraw, whichever is more (measure.memory)."""
        if self._growth is None:
            return
        cap, free, size, grads, draw = self._growth
        self._growth = None
        room = max(self.memory.peak() - self._warm, grads + draw)
        for k in range(len(self.sets), fit(cap, size, room, free)):
            self.recipes.append(self._seed + k)
            self._add(self._draw(self.recipes[-1]), self.recipes[-1])

    def drop_inputs(self) -> None:
        """After the last timed call, before the timed outputs are verified: the sets, their
        gradients and graphs are no longer needed, and the references are drawn again from seeds."""
        self.losses = []
        self.sets = self.args = self.gouts = []

    def __len__(self) -> int:
        return len(self.sets)

    def _leaves(self, k: int) -> list:
        return [self.sets[k][j] for j in self.op.differentiable]

    def _guarded(self, k: int) -> tuple:
        """The inputs of set k no call may write or share memory with (None where the
        operation lets it: positions stay those of the inputs)."""
        return tuple(None if j in self.op.writable_inputs else t for j, t in enumerate(self.sets[k]))

    def _grads(self, k: int) -> list:
        return [leaf.grad for leaf in self._leaves(k)]

    def reset(self, i: int) -> None:
        k = i % len(self.sets)
        for leaf in self._leaves(k):
            leaf.grad = None
        # Drawn again before every call: a backward may write into the gradient it is given (Liger's
        # RMSNorm does, in place), and the reference is computed from the draw.
        self.gouts[k] = self._gout(self.recipes[k])
        if self.timed_pass == "backward" and not self.liger_script:
            self.losses[k], self.fwd_windows[k] = self._window(lambda: self.module(*self.args[k]))

    def __call__(self, i: int):
        k = i % len(self.sets)
        if self.timed_pass == "forward":
            return self.module(*self.args[k])
        if self.timed_pass == "backward":
            loss = self.losses[k]
            if not self.liger_script:
                self.losses[k] = None
            loss.backward(self.gouts[k], retain_graph=self.liger_script)
            return loss
        loss = self.module(*self.args[k])
        loss.backward(self.gouts[k], retain_graph=self.liger_script)
        return loss

    def restore(self, i: int) -> None:
        """Untimed, before a call on the same content (the repeated-input probe): the inputs a
        call may write (writable_inputs) put back as drawn. Else each repeated call would see
        what the last one wrote (Liger's cross entropy writes its gradient over the logits), and
        the timed-output check, which holds a call to the reference of its set's draw, would
        call an honest kernel wrong (it did, on the H200)."""
        if self.check is not None and self.op.writable_inputs:
            k = i % len(self.sets)
            with torch.no_grad():
                for j, fresh in enumerate(self._draw(self.recipes[k])):
                    if j in self.op.writable_inputs:
                        self.sets[k][j].copy_(fresh)

    def draw(self, i: int) -> None:
        """Untimed, immediately before call i (before its backward's graph, the lead and the
        flush): its set drawn again, so that nothing an earlier call left could know it."""
        if self.check is not None:
            k = i % len(self.sets)
            self.perturb(k)
            self.prints[k] = fingerprint(self._guarded(k))

    def after(self, i: int, out, *, check: bool, window=None) -> None:
        """Untimed, right after the call: keep its loss, and on checked calls complete its
        gradients (forward: the backward, bracketed by events) and digest them."""
        if self.check is None:
            return
        k = i % len(self.sets)
        # On every call, before anything reads the output: a subclass's methods or an active
        # mode would run the implementation's code inside the untimed reads below.
        why = out is not None and (foreign(out, self._modes) or next(
            (w for g in self._grads(k) if (w := foreign(g, self._modes))), None))
        if why:
            self.check.record_foreign(why)
            check = out = None
        elif out is not None and (shared := aliasing(self._guarded(k), [out, *self._grads(k)])):
            self.check.record_inputs(shared)
        elif self.prints[k] is not None and (now := fingerprint(self._guarded(k))) != self.prints[k]:
            j = next(j for j, (a, b) in enumerate(zip(now, self.prints[k])) if a != b)
            self.check.record_inputs(f"input {j} was written during the call (its float64 sum and norm changed)")
        if check and out is not None:
            # The loss as the call returned it, before anything else runs (a backward could
            # otherwise write into it).
            loss = self.check.output(out)
            other = None
            if self.timed_pass == "forward":
                _, other = self._window(lambda: out.backward(self.gouts[k]))
            elif self.timed_pass == "backward":
                other = self.fwd_windows[k]
            seed = self.recipes[k]
            grads = self._grads(k)
            why = next((w for g in grads if (w := foreign(g, self._modes))), None)
            if why:
                self.check.record_foreign(why)
            else:
                self.check.record(loss, grads, window, other, redraw=lambda: self._reference(seed))
            if shared := aliasing(self._guarded(k), [loss, *grads]):  # a forward's gradients exist only now
                self.check.record_inputs(shared)
            # The inputs as the call (and its other half) left them, against the same draw.
            with torch.no_grad():
                for j, (now, drawn) in enumerate(zip(self.sets[k], self._draw(seed))):
                    if j not in self.op.writable_inputs and not torch.equal(now.detach(), drawn):
                        self.check.record_inputs(f"input {j} was written during the call")
                        break
        elif out is not None:
            self.check.record_loss()
        self.fwd_windows[k] = None
        # Judged: its gradients are not read again (the next call on the set starts from none),
        # so no set holds a stale one while another set is timed.
        for leaf in self._leaves(k):
            leaf.grad = None

    def perturb(self, k: int) -> None:
        # A seed drawn now, not once: a generator's state could be read ahead by code in this
        # process. It is kept, so that a checked call's reference is computed from its inputs
        # drawn again, not from tensors the implementation could have written to.
        self.recipes[k] = secrets.randbits(62)
        with torch.no_grad():
            for t, fresh in zip(self.sets[k], self._draw(self.recipes[k])):
                t.copy_(fresh)

    def _draw(self, seed: int) -> tuple:
        return tuple(self.op.make_inputs(self._workload, seed, self._device))

    def _gout(self, seed: int):
        # Its own stream of the seed: never the same numbers as an input's.
        return self.op.make_grad_output(self._workload, grad_seed(seed, self._device), self._device)

    def _reference(self, seed: int):
        g = self._gout(seed)
        return self.op.reference(self._draw(seed)) if g is None else self.op.reference(self._draw(seed), g)

    def _window(self, fn):
        """The other half of a pass (a backward's forward, a forward's backward) in the same
        pattern as the timed call, timed too: the full pass is judged on their sum."""
        if self.clock is None:
            return fn(), None
        return self.clock.window(fn)

    def release(self) -> None:
        self.losses = []
        self.sets = self.args = []
        self.check = None
