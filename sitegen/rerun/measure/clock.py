"""One call pattern for every call the harness makes of an implementation: a window.

    synchronize · lead spin · L2 flush · start event · the call · mid event · (host polls mid) ·
    device-wide synchronize, timed on the host

Gate calls, warm-up calls, timed calls, the forward that builds a timed backward's graph and the
backward that completes a checked forward all run in this pattern, so no phase can be told from
another by the queue's state or by a synchronize only one of them has.

Why each part is where it is:
- Every window opens and closes on a device-wide synchronize: nothing from one call (or from
  the harness's untimed work, such as the draw of the next inputs) is in flight in another.
- The lead (torch.cuda._sleep, LEAD_FACTOR × the host's time to issue the call) holds the GPU
  until the call is queued: start → mid is then GPU work, not the host's launch latency
  (kernels/NOTES.md: the noisy backward). The flush evicts the previous call's data from L2.
  The sample is start → mid, the caller's stream.
- Work the call leaves running on another stream shows once mid has fired: the host polls mid
  (no sleep, so no wake-up latency), then times the closing synchronize. That wait, less an
  empty call's (the median of empty windows interleaved with the calls, one per EMPTY_EVERY), is
  work handed back unfinished, and host_timed refuses a call that leaves more than its slack.

On a CPU (--interpret) the host clock stands in for the events and nothing is flushed.

Untrusted code runs in this process and could rewrite the clock it is timed by, or leave work
on a thread of its own: after every window sitegen.rerun.checks.guards checks the clock functions'
identity (clock_intact) and the threads left running (host_threads); guards.py says what that
cannot see.
"""

from __future__ import annotations

import statistics
import time

import torch

from sitegen.rerun.checks import guards

from sitegen.rules.protocol import EMPTY_EVERY, FLUSH_BYTES, LEAD_FACTOR, LEAD_MAX_MS

# Empty windows measured whenever the lead changes, before any call's: the median needs a few.
BASE_FIRST = 5


class Window:
    """One call's window: GPU time of the caller's stream, and the host time the device-wide
    synchronize then waited (work left on other streams, plus the call's fixed cost)."""

    __slots__ = ("start", "mid", "wait")

    def __init__(self, start, mid, wait: int):
        self.start, self.mid, self.wait = start, mid, wait

    def stream_ns(self) -> int:
        if isinstance(self.start, int):
            return self.mid - self.start
        return int(round(self.start.elapsed_time(self.mid) * 1e6))


def reset(runner, i: int, draw: bool = True) -> None:
    """Untimed, right before call i: its input set drawn again (unless the same content is
    wanted, as in the repeated-input probe), then whatever the pass needs (a backward's graph)."""
    if draw and hasattr(runner, "draw"):
        runner.draw(i)
    elif not draw and hasattr(runner, "restore"):
        runner.restore(i)
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
        self.lead_cycles = 0
        self.cycles_per_ms = self._calibrate() if self.cuda else 0.0
        self.base: list[int] = []
        self.watch = guards.Watch()

    def _calibrate(self) -> float:
        """Cycles of torch.cuda._sleep per millisecond on this GPU (its clock as it runs)."""
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(1000)
        start.record()
        torch.cuda._sleep(2_000_000)
        end.record()
        end.synchronize()
        return 2_000_000 / max(start.elapsed_time(end), 1e-3)

    @property
    def lead_ms(self) -> float:
        return round(self.lead_cycles / self.cycles_per_ms, 4) if self.lead_cycles else 0.0

    def set_lead(self, host_ms: float) -> None:
        """Spin LEAD_FACTOR × the host's time to issue a call (at most LEAD_MAX_MS) before each
        call; the empty windows are measured again."""
        if self.cuda:
            self.lead_cycles = int(min(LEAD_MAX_MS, LEAD_FACTOR * host_ms) * self.cycles_per_ms)
        self.base = []
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

    def window(self, fn, *, strict: bool = False):
        """(fn()'s result, its Window): the one pattern every call of an implementation runs in.
        ``strict``: a timed call (no OS thread it starts may outlive its window)."""
        self.sync()
        if self.cuda:
            if self.lead_cycles:
                torch.cuda._sleep(self.lead_cycles)
            self.flush_buf.zero_()
        tasks = _OS_THREADS() if strict else set()
        start = self._mark()
        result = fn()
        mid = self._mark()
        if self.cuda:
            while not mid.query():  # polled: a blocking wait's wake-up would count as hidden work
                pass
        t0 = time.perf_counter_ns()
        self.sync()
        window = Window(start, mid, time.perf_counter_ns() - t0)
        _AFTER_CALL(self.watch, tasks, strict=strict)
        return result, window

    def empty(self) -> None:
        """An empty call's window, for the synchronize's fixed cost."""
        _, w = self.window(lambda: None)
        self.base.append(w.wait)

    def base_ns(self) -> int:
        return int(statistics.median(self.base)) if self.base else 0

    def hidden_ns(self, waits: list[int]) -> int:
        """Median time work went on after the call's own stream was done, less an empty call's."""
        return max(0, int(statistics.median(waits)) - self.base_ns()) if waits else 0

    def timed(self, runner, indices, *, guard=None, batch: int = 0, perturb: bool = True,
              tails: list[int] | None = None) -> list[int]:
        """One sample per index: (draw and reset, untimed; the call in its window); returns
        nanoseconds, and appends each window's synchronize wait to `tails`.

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
            if n % EMPTY_EVERY == 0:
                self.empty()
            reset(runner, i, perturb)
            result, w = self.window(lambda: runner(i), strict=True)
            windows.append(w)
            after(runner, i, result, check=pick(runner), window=w)
        if tails is not None:
            tails += [w.wait for w in windows]
        # A call's time is its stream's, start to mid (at least 1 ns, for the ratios made of it).
        return [max(1, w.stream_ns()) for w in windows]


def _kept() -> list[tuple[object, str, str]]:
    """What a window reads time through and checks itself with, for the guard's snapshot: the
    clock functions, this module's, the guard's own, threads, and the secret draws and the norm
    every comparison ends in (replaced, they let a wrong output through). Named here, where they
    are called, so that the guard imports none of the modules it guards; the judges join them
    later (sitegen.rerun.checks.judges)."""
    import os
    import random
    import secrets
    import sys
    import threading

    clock = sys.modules[__name__]
    out = [(time, name, f"time.{name}") for name in ("perf_counter_ns", "perf_counter", "monotonic")]
    out += [(torch.cuda, name, f"torch.cuda.{name}") for name in ("synchronize", "_sleep")]
    out += [(torch.cuda.Event, name, f"torch.cuda.Event.{name}") for name in ("record", "query", "synchronize", "elapsed_time")]
    out += [(Clock, name, f"Clock.{name}") for name in ("window", "_mark", "sync", "empty", "base_ns", "hidden_ns",
                                                        "timed", "_events")]
    out += [(Window, "stream_ns", "Window.stream_ns")]
    out += [(clock, name, f"sitegen.rerun.measure.clock.{name}") for name in ("time", "torch", "guards", "Window", "_AFTER_CALL", "_OS_THREADS")]
    out += guards.own()
    out += [(threading.Thread, "start", "threading.Thread.start"), (threading, "enumerate", "threading.enumerate")]
    out += [(secrets, "randbits", "secrets.randbits"), (os, "urandom", "os.urandom"), (random, "_urandom", "random._urandom")]
    out += [(random.SystemRandom, name, f"random.SystemRandom.{name}") for name in ("random", "getrandbits")]
    out += [(torch.linalg, "vector_norm", "torch.linalg.vector_norm"), (torch, "Generator", "torch.Generator")]
    return out


# Before any implementation is imported (workers import this module first): what the clock is.
# The guard's functions as they are before any implementation is imported: the window calls
# these, not whatever the names hold later.
_AFTER_CALL, _OS_THREADS = guards.Watch.after_call, guards.os_threads
guards.snapshot(_kept())
