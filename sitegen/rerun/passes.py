"""Inputs and the three timed passes (forward, backward, full) over a rotating pool of inputs.

Inputs are log_softmax of standard-normal logits, as in Liger's benchmark: never zeros,
which hide unwritten outputs and can run faster than real data.
"""

from __future__ import annotations

import torch

from sitegen.rerun.implementations import DTYPES

# Inputs of one set above this size are kept two to a pool instead of three, so that
# torch eager's retained graphs for backward (about six full-size float32 temporaries per
# set) still fit beside them on one GPU. With the L2 flushed before every call, the pool
# only has to defeat caching of results, which two sets do.
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
    """Calls one implementation's pass on input set i; reset(i) runs outside the timed region.

    Backward is timed on a graph built by reset() just before the call (untimed), so an
    implementation may consume what its forward saved, as a training step lets it. With
    ``liger_script`` the passes are those of Liger-Kernel's benchmark script instead: the
    student is log_softmax of a leaf, and backward replays one graph per input set with
    retain_graph=True (full, too, keeps the graph).
    """

    def __init__(self, module, rows: int, vocab: int, dtype: str, device: str, timed_pass: str,
                 seed: int, pool: int | None = None, liger_script: bool = False):
        self.module = module
        self.timed_pass = timed_pass
        self.liger_script = liger_script
        n = pool or pool_size(rows, vocab, dtype)
        self.leaves = [logprobs(rows, vocab, dtype, device, seed + 2 * k).requires_grad_() for k in range(n)]
        self.xs = [leaf.log_softmax(dim=-1) for leaf in self.leaves] if liger_script else self.leaves
        self.ys = [logprobs(rows, vocab, dtype, device, seed + 2 * k + 1) for k in range(n)]
        self.losses: list = [None] * n
        if timed_pass == "backward" and liger_script:
            self.losses = [module(x, y) for x, y in zip(self.xs, self.ys)]

    def __len__(self) -> int:
        return len(self.xs)

    def reset(self, i: int) -> None:
        k = i % len(self.leaves)
        self.leaves[k].grad = None
        if self.timed_pass == "backward" and not self.liger_script:
            self.losses[k] = self.module(self.xs[k], self.ys[k])

    def __call__(self, i: int):
        k = i % len(self.xs)
        if self.timed_pass == "forward":
            return self.module(self.xs[k], self.ys[k])
        if self.timed_pass == "backward":
            loss = self.losses[k]
            if not self.liger_script:
                self.losses[k] = None
            loss.backward(retain_graph=self.liger_script)
            return None
        loss = self.module(self.xs[k], self.ys[k])
        loss.backward(retain_graph=self.liger_script)
        return loss

    def release(self) -> None:
        self.losses = []
        self.xs = self.ys = self.leaves = []
