"""Keep throttled GPU time out of the samples: wait before a case, re-take a throttled batch.

A memory-bound pass at full HBM bandwidth draws the H200 to its 700 W board limit within a
few hundred milliseconds; the power controller then pulls the SM clock down (seen: 1665-1965
of 1980 MHz), and it stays down into the next case. The protocol marks a run throttled when
the GPU was in that state (integrity.throttle). Rather than publish such runs flagged, the
worker follows NVIDIA's nvbench, which discards a throttled sample and pauses before the
next: here samples are timed in short batches, NVML is read after each, a batch whose closing
read finds the GPU throttled is discarded, and the GPU is given time to recover before the
batch is taken again. (nvbench judges each sample by the SM clock measured over it; a batch's
closing NVML read is coarser: throttling that starts and ends inside a batch goes unseen.)
The discarded timed calls are counted in the run's details.

All waiting in one process, and the batches it discards, are bounded
(integrity.THROTTLE_BUDGET_S), so a GPU that never
leaves its cap cannot push the default sweep past its 10-minute budget: once the budget is
spent, batches are kept as measured and the throttle check flags the run.
"""

from __future__ import annotations

import time

from sitegen.rerun.measure import gpustate

from sitegen.rules import integrity

POLL_S = 0.01


class ThrottleGuard:
    """One measuring process's waits for an unthrottled GPU, and what they saw."""

    def __init__(self, max_sm_mhz: int | None, budget_s: float | None = None):
        self.max_sm_mhz = max_sm_mhz
        self.budget_s = integrity.THROTTLE_BUDGET_S if budget_s is None else budget_s
        self.left_s = self.budget_s
        self.start_case()

    def start_case(self) -> None:
        self.discarded = 0
        self.after: dict | None = None
        self._kept_throttled: dict | None = None

    def calm(self, state: dict | None) -> bool:
        return state is None or integrity.calm(state, self.max_sm_mhz)

    def settle(self, limit_s: float = integrity.SETTLE_S, at_least_s: float = 0.0) -> dict | None:
        """Wait (at least `at_least_s`, at most `limit_s` and the budget) until the GPU is calm;
        returns the last state read."""
        start = time.monotonic()
        limit = min(limit_s, self.left_s)
        try:
            while True:
                state = gpustate.state()
                waited = time.monotonic() - start
                if waited >= limit or (waited >= min(at_least_s, limit) and self.calm(state)):
                    return state
                time.sleep(POLL_S)
        finally:
            self.left_s = max(0.0, self.left_s - (time.monotonic() - start))

    def keep(self, calls: int, elapsed_s: float = 0.0) -> bool:
        """After a batch of `calls` timed calls that took `elapsed_s`: keep it (True), or
        discard it after a recovery wait (False), charging the batch to the budget too.

        A throttled batch is kept only once the budget is spent; the first such state is then
        what `after` reports, so that the run's throttle check sees it.
        """
        state = gpustate.state()
        if self.calm(state) or self.left_s <= 0.0:
            if not self.calm(state) and self._kept_throttled is None:
                self._kept_throttled = state
            self.after = self._kept_throttled or state
            return True
        self.discarded += calls
        self.left_s = max(0.0, self.left_s - elapsed_s)
        # nvbench pauses 50 ms after a throttled sample; waiting on past that until NVML reports
        # the clock back spends the pause only where the GPU needs it.
        self.settle(limit_s=integrity.RECOVER_S, at_least_s=integrity.RECOVER_MIN_S)
        return False
