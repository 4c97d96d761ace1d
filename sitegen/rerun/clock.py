"""One call pattern for every call the harness makes of an implementation: a window.

    start event · lead · L2 flush · the call · mid event · device-wide synchronize · end event

Gate calls, warm-up calls, timed calls, the forward that builds a timed backward's graph and the
backward that completes a checked forward all run in this pattern, so no phase can be told from
another by the queue's state or by a synchronize only one of them has.

Why each part is where it is:
- The synchronize waits for every stream. Work the call leaves running on a side stream is inside
  its window, and nothing from one call is in flight when the next call's inputs are drawn.
- The window starts before the lead and the flush, and both move memory (zero_ passes over a
  256 MiB buffer). A side stream that the call starts while they run shares their bandwidth and
  lengthens them by about the bytes it moves. A spin would have left the memory system free to
  it. The lead is there so that the call is queued before the GPU reaches it: the window then
  holds GPU work, not the host's launch latency (kernels/NOTES.md: the noisy backward).
- What an empty call's window takes is subtracted: the median of empty windows interleaved with
  the timed ones in the same process (one per BASE_EVERY calls), which holds the lead, the flush,
  the synchronize's wake-up and the end event's launch.
- mid → end is the time the call's work went on after its own stream was done. Less an empty
  window's, that is work the call handed back unfinished (host_timed); it is counted in the time
  either way.

On a CPU (--interpret) the host clock stands in for the events and nothing is flushed.
"""

from __future__ import annotations

import math
import statistics
import time

import torch

from sitegen.rerun.protocol import FLUSH_BYTES, LEAD_FACTOR, LEAD_MAX_MS

# One empty window per this many timed calls: enough (and spread through the samples) for a
# median of the fixed cost that drifts as the GPU's clocks do, without doubling short cases.
BASE_EVERY = 4
BASE_FIRST = 5


class Window:
    """One call's window; times read once the window's end has completed."""

    __slots__ = ("start", "mid", "end")

    def __init__(self, start, mid, end):
        self.start, self.mid, self.end = start, mid, end

    def total_ns(self) -> int:
        if isinstance(self.start, int):
            return self.end - self.start
        self.end.synchronize()
        return int(round(self.start.elapsed_time(self.end) * 1e6))

    def tail_ns(self) -> int:
        if isinstance(self.start, int):
            return self.end - self.mid
        self.end.synchronize()
        return int(round(self.mid.elapsed_time(self.end) * 1e6))


def reset(runner, i: int, draw: bool = True) -> None:
    """Untimed, right before call i: its input set drawn again (unless the same content is
    wanted, as in the repeated-input probe), then whatever the pass needs (a backward's graph)."""
    if draw and hasattr(runner, "draw"):
        runner.draw(i)
    runner.reset(i)


def after(runner, i: int, out, *, check: bool, window=None) -> None:
    hook = getattr(runner, "after", None)
    if hook is not None:
        hook(i, out, check=check, window=window)


def pick(runner) -> bool:
    check = getattr(runner, "check", None)
    return check is not None and check.pick()


class Clock:
    """Windows on CUDA, the host clock elsewhere; one interface for the loops in timing."""

    def __init__(self, device: str):
        self.cuda = device.startswith("cuda")
        self.flush_buf = torch.empty(FLUSH_BYTES if self.cuda else 1, dtype=torch.int8, device=device)
        self.lead_passes = 0
        self.pass_ms = self._calibrate() if self.cuda else 0.0
        self.base: list[int] = []
        self.base_tail: list[int] = []

    def _calibrate(self) -> float:
        """Milliseconds one zero_ pass over the flush buffer takes on this GPU."""
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        self.flush_buf.zero_()
        start.record()
        for _ in range(20):
            self.flush_buf.zero_()
        end.record()
        end.synchronize()
        return max(start.elapsed_time(end) / 20, 1e-3)

    @property
    def lead_ms(self) -> float:
        return round(self.lead_passes * self.pass_ms, 4)

    def set_lead(self, host_ms: float) -> None:
        """Lead each call by LEAD_FACTOR × the host's time to issue it (at most LEAD_MAX_MS), in
        whole passes; the empty windows are measured again for the new lead."""
        if self.cuda:
            self.lead_passes = max(0, math.ceil(min(LEAD_MAX_MS, LEAD_FACTOR * host_ms) / self.pass_ms) - 1)
        self.base, self.base_tail = [], []
        for _ in range(BASE_FIRST):
            self.empty()

    def sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()

    def _mark(self):
        if not self.cuda:
            return time.perf_counter_ns()
        event = torch.cuda.Event(enable_timing=True)
        event.record()
        return event

    def window(self, fn):
        """(fn()'s result, its Window): the one pattern every call of an implementation runs in."""
        start = self._mark()
        if self.cuda:
            for _ in range(self.lead_passes + 1):
                self.flush_buf.zero_()
        result = fn()
        mid = self._mark()
        self.sync()
        return result, Window(start, mid, self._mark())

    def empty(self) -> None:
        """An empty call's window, for the fixed cost subtracted from every window."""
        _, w = self.window(lambda: None)
        self.base.append(w.total_ns())
        self.base_tail.append(w.tail_ns())

    def base_ns(self) -> int:
        return int(statistics.median(self.base)) if self.base else 0

    def net_ns(self, w: Window) -> int:
        """The call's own time: its window less an empty one's (at least 1 ns)."""
        return max(1, w.total_ns() - self.base_ns())

    def hidden_ns(self, tails: list[int]) -> int:
        """Median time work went on after the call's own stream was done, less an empty call's."""
        if not tails:
            return 0
        return max(0, int(statistics.median(tails)) - (int(statistics.median(self.base_tail)) if self.base_tail else 0))

    def timed(self, runner, indices, *, guard=None, batch: int = 0, perturb: bool = True,
              tails: list[int] | None = None) -> list[int]:
        """One sample per index: (draw and reset, untimed; the call in its window); returns net
        nanoseconds, and appends each window's tail to `tails`.

        With a ThrottleGuard, samples are taken `batch` at a time and a batch that ended with
        the GPU throttled is taken again once it has recovered (see throttleguard).
        """
        indices = list(indices)
        if guard is None:
            return self._events(runner, indices, perturb, tails)
        step = max(1, batch)
        out = []
        for at in range(0, len(indices), step):
            chunk = indices[at:at + step]
            while True:
                t0 = time.monotonic()
                times = self._events(runner, chunk, perturb, tails)
                if guard.keep(len(chunk), time.monotonic() - t0):
                    break
            out += times
        return out

    def _events(self, runner, indices: list[int], perturb: bool = True, tails=None) -> list[int]:
        windows = []
        for n, i in enumerate(indices):
            if n % BASE_EVERY == 0:
                self.empty()
            reset(runner, i, perturb)
            result, w = self.window(lambda: runner(i))
            windows.append(w)
            after(runner, i, result, check=pick(runner), window=w)
        if tails is not None:
            tails += [w.tail_ns() for w in windows]
        return [self.net_ns(w) for w in windows]
