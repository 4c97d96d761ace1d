"""How many input sets a timed pass holds: as many as fit the GPU's free memory, within the protocol's pool.

The protocol times every call on a pool of 2-3 input sets at distinct addresses (sitegen.rules.protocol's
notes), 3 unless a set is over BIG_SET_BYTES. Besides its sets, a timed call needs room for its
own working memory (the implementation's temporaries and the gradients it writes) and for a set
drawn again before a call or beside a checked one (passes.PassRunner). Those are measured, not
guessed: the first set's draw gives the redraw's peak, the warm-up (on the two sets every pool
holds) the peak of a call with its draw. A third set is then added only if it fits beside that
room. A set's gradients are dropped once its call is judged, and the sets before the timed
outputs are verified, so neither stale gradients nor idle sets take the room a call needs.

On an 80 GB H100, KL divergence at tokens 16384 x vocab 131072 fp32 (16 GiB a set: input and
target) ran out of memory with its two sets, two stale gradients and a redraw held at once
(benchmarks/results/rerun_h100_issue28f/README.md); sitegen.rerun.plan.fits refuses, before the
gate, a workload that cannot fit even the two sets.
"""

from __future__ import annotations

# The protocol's pool: at least MIN_SETS sets, at most 3, or 2 where a set is over BIG_SET_BYTES
# (torch eager's retained graphs for backward, about six full-size float32 temporaries per set,
# must fit beside them).
MIN_SETS = 2
BIG_SET_BYTES = 4 << 30
# Of the memory free when a case starts, the share a pool may plan to fill: the rest is left to
# the caching allocator's rounding and to what the measurement does not see in advance (a
# checked forward's untimed backward runs outside the warm-up).
HEADROOM = 0.9


def fit(cap: int, set_bytes: int, room: int, free: int) -> int:
    """The most sets, from `cap` down to MIN_SETS, such that they and `room` fit HEADROOM x `free`
    (MIN_SETS whatever fits: a pool is never smaller)."""
    n = cap
    while n > MIN_SETS and n * set_bytes + room > HEADROOM * free:
        n -= 1
    return n


def clearly_fits(cap: int, set_bytes: int, grad_bytes: int, draw_bytes: int, free: int) -> bool:
    """Whether the cap's sets fit beside a room so generous (three calls' worth of sets and
    gradients, and a redraw) that no call could need more: the pool is then the cap from the
    start, as before budgets, and nothing is measured."""
    return cap * set_bytes + 3 * (set_bytes + grad_bytes) + draw_bytes <= HEADROOM * free


class CudaMemory:
    """The CUDA caching allocator's view of this process's device."""

    def __init__(self):
        import torch

        self.torch = torch

    def free(self) -> int:
        """Bytes free on the device now, with what this process's allocator caches counted free."""
        cuda = self.torch.cuda
        free, _ = cuda.mem_get_info()
        return int(free + cuda.memory_reserved() - cuda.memory_allocated())

    def mark(self) -> int:
        """Start a peak measurement: the bytes allocated now."""
        self.torch.cuda.reset_peak_memory_stats()
        return int(self.torch.cuda.memory_allocated())

    def peak(self) -> int:
        """The most bytes allocated since mark()."""
        return int(self.torch.cuda.max_memory_allocated())
