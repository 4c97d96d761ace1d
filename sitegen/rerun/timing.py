"""Sample collection: CUDA events around each call with the L2 flushed before it, plus a
host-timed cross-check, a repeated-input probe, and Liger's do_bench for --like.

On a CPU (--interpret) the same loops run with the host clock: those numbers only rehearse
the pipeline.
"""

from __future__ import annotations

import math
import statistics
import time

import torch

from sitegen.rerun.integrity import SAMPLE_BATCH_MS
from sitegen.rerun.protocol import FLUSH_BYTES, PROBE_BLOCKS, PROBE_MIN_BLOCK, WARMUP_MIN_CALLS, WARMUP_MIN_MS

MAX_SAMPLES = 20000
PROBE_MS = 50.0


class Clock:
    """Event timing on CUDA, host timing elsewhere; one interface for the loops below."""

    def __init__(self, device: str):
        self.cuda = device.startswith("cuda")
        self.flush_buf = torch.empty(FLUSH_BYTES if self.cuda else 1, dtype=torch.int8, device=device)

    def sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()

    def flush(self) -> None:
        if self.cuda:
            self.flush_buf.zero_()

    def timed(self, runner, indices, *, flush: bool = True, guard=None, batch: int = 0) -> list[int]:
        """One sample per index: (reset, flush, timed call); returns nanoseconds.

        With a ThrottleGuard, samples are taken `batch` at a time and a batch that ended with
        the GPU throttled is taken again once it has recovered (see throttleguard).
        """
        indices = list(indices)
        if not self.cuda:
            out = []
            for i in indices:
                runner.reset(i)
                t0 = time.perf_counter_ns()
                runner(i)
                out.append(time.perf_counter_ns() - t0)
            return out
        if guard is None:
            return self._events(runner, indices, flush)
        step = max(1, batch)
        out = []
        for at in range(0, len(indices), step):
            chunk = indices[at:at + step]
            while True:
                t0 = time.monotonic()
                times = self._events(runner, chunk, flush)
                if guard.keep(len(chunk), time.monotonic() - t0):
                    break
            out += times
        return out

    def _events(self, runner, indices: list[int], flush: bool) -> list[int]:
        # Everything is queued before one synchronize, so the host runs ahead of the GPU.
        pairs = []
        for i in indices:
            runner.reset(i)
            if flush:
                self.flush()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            runner(i)
            end.record()
            pairs.append((start, end))
        torch.cuda.synchronize()
        return [int(round(s.elapsed_time(e) * 1e6)) for s, e in pairs]

    def host_batch(self, runner, calls: int) -> dict[str, int]:
        """Synchronized calls timed on the host: the sync waits for every stream.

        hostTimedNs is the median whole call; hostWaitNs the median time the host still waited
        after the call returned, which is GPU work (on any stream) the call left running. Only
        the latter can expose a side stream: a CPU-bound call (Python, the autograd engine)
        takes long on the host yet leaves little to wait for. Each call is synchronized on its
        own so that the untimed reset before it, which may build a backward's graph, stays
        outside the clock.
        """
        whole, wait = [], []
        for i in range(calls):
            runner.reset(i)
            self.sync()
            t0 = time.perf_counter_ns()
            runner(i)
            t1 = time.perf_counter_ns()
            self.sync()
            t2 = time.perf_counter_ns()
            whole.append(t2 - t0)
            wait.append(t2 - t1)
        return {"hostTimedNs": int(statistics.median(whole)), "hostWaitNs": int(statistics.median(wait))}


def warm_up(clock: Clock, runner, min_calls: int = WARMUP_MIN_CALLS, min_ms: float = WARMUP_MIN_MS) -> tuple[int, float]:
    """Call until compilation and autotuning are behind us: the first call (which compiles),
    then at least `min_calls` more and `min_ms` of wall time. Returns (calls, ms per call)."""
    runner.reset(0)
    runner(0)
    clock.sync()
    calls, t0 = 1, time.perf_counter()
    while True:
        runner.reset(calls)
        runner(calls)
        clock.sync()
        calls += 1
        elapsed = (time.perf_counter() - t0) * 1e3
        if calls > min_calls and elapsed >= min_ms:
            return calls, elapsed / (calls - 1)


def collect(clock: Clock, runner, *, min_samples: int, min_ms: float, repeated_probe: bool,
            warmup: tuple[int, float] = (WARMUP_MIN_CALLS, WARMUP_MIN_MS), guard=None) -> dict:
    """Samples of one implementation's pass in this process, with the cross-checks."""
    warm_calls, est_ms = warm_up(clock, runner, *warmup)
    per_ms = max(est_ms, 1e-6)
    want = max(min_samples, min(MAX_SAMPLES, math.ceil(min_ms / per_ms)))
    batch = max(1, math.floor(SAMPLE_BATCH_MS / per_ms))
    samples = clock.timed(runner, range(want), guard=guard, batch=batch)
    # The estimate came from synchronized calls; top up if event time fell short of min_ms.
    while sum(samples) < min_ms * 1e6 and len(samples) < MAX_SAMPLES:
        more = min(MAX_SAMPLES - len(samples), max(min_samples, len(samples)))
        samples += clock.timed(runner, range(len(samples), len(samples) + more), guard=guard, batch=batch)
    probe = max(min_samples, min(len(samples), math.ceil(PROBE_MS / per_ms)))
    out = {
        "samplesNs": samples,
        "warmupCalls": warm_calls,
        **clock.host_batch(runner, probe),
    }
    if repeated_probe:
        # The same input set many calls in a row: a result cache or data-dependent shortcut
        # shows as a speed-up over rotating fresh inputs. Blocks of each alternate, so that a
        # drift of the GPU or host over the probe (seen: a ~0.3 ms host-bound call wandering
        # by 30% within a second) lands on both sides of the comparison, not on one.
        per = max(PROBE_MIN_BLOCK, math.ceil(probe / PROBE_BLOCKS))
        pool = len(runner) if hasattr(runner, "__len__") else 1
        # Fresh calls rotate (no two in a row on one set) and each fresh block starts off set
        # 0, while each repeated block starts warm (one untimed call on set 0 first): a cache
        # of the last result then hits on every repeated call and on no fresh one.
        fresh, repeated = [], []
        at = len(samples)
        for _ in range(PROBE_BLOCKS):
            at += pool > 1 and at % pool == 0
            fresh += clock.timed(runner, range(at, at + per), guard=guard, batch=batch)
            at += per
            runner.reset(0)
            runner(0)
            repeated += clock.timed(runner, [0] * per, guard=guard, batch=batch)
        out["repeatedMedianNs"] = int(statistics.median(repeated))
        out["repeatedFreshMedianNs"] = int(statistics.median(fresh))
    return out


def do_bench_samples(clock: Clock, runner, *, rep_ms: float = 100.0, warmup_ms: float = 25.0) -> dict:
    """Liger-Kernel's protocol: triton.testing.do_bench(rep=100), all raw times kept.

    On a CPU do_bench cannot run (it needs a GPU's events); the host-timed loop stands in.
    """
    if not clock.cuda:
        warm_calls, est_ms = warm_up(clock, runner, 1, 0.0)
        n = max(1, int(rep_ms / max(est_ms, 1e-6)))
        return {"samplesNs": clock.timed(runner, range(n)), "warmupCalls": warm_calls}
    import triton.testing

    state = {"i": 0}

    def fn():
        runner.reset(state["i"])
        runner(state["i"])
        state["i"] += 1

    times_ms = triton.testing.do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="all")
    return {"samplesNs": [int(round(t * 1e6)) for t in times_ms], **clock.host_batch(runner, 10)}
