"""Sample collection: CUDA events around each call with the L2 flushed before it, plus a
host-timed cross-check, a repeated-input probe, and Liger's do_bench for --like.

Sampling goes on until the 95% confidence interval of the median is within PRECISION of it
(after the protocol's minimum samples and time) or the case's time budget is spent, in the
spirit of nvbench's stdrel criterion; which one ended it is returned.

Every timed call's input set is drawn again, untimed, immediately before it (runner.draw: after
the previous call and its check, so nothing an earlier call started could have seen it), and
the call is followed, untimed, by runner.after(): its output is kept for the timed_output check
(passes, timedcheck). The call is preceded by a device-side spin (torch.cuda._sleep) about as long as the host takes to issue
the call, so that the start event fires only once the call is queued: event time is then
GPU time, not the host's launch latency (see kernels/NOTES.md: the noisy backward).

On a CPU (--interpret) the same loops run with the host clock: those numbers only rehearse
the pipeline.
"""

from __future__ import annotations

import math
import statistics
import time

import torch

from sitegen.rerun.integrity import SAMPLE_BATCH_MS
from sitegen.rerun.protocol import (FLUSH_BYTES, LEAD_FACTOR, LEAD_MAX_MS, MAX_WALL_S, PRECISION, PROBE_BLOCKS,
                                    PROBE_MIN_BLOCK, WARMUP_MIN_CALLS, WARMUP_MIN_MS)
from sitegen.rerun.stats import ci_half_width_rel

MAX_SAMPLES = 20000
PROBE_MS = 50.0


def _after(runner, i: int, out, *, check: bool, pass_events=None) -> None:
    after = getattr(runner, "after", None)
    if after is not None:
        after(i, out, check=check, pass_events=pass_events)


def _reset(runner, i: int, draw: bool = True) -> None:
    """Untimed, right before call i: its input set drawn again (unless the same content is
    wanted, as in the repeated-input probe), then whatever the pass needs (a backward's graph)."""
    if draw and hasattr(runner, "draw"):
        runner.draw(i)
    runner.reset(i)


def _pick(runner) -> bool:
    check = getattr(runner, "check", None)
    return check is not None and check.pick()


class Clock:
    """Event timing on CUDA, host timing elsewhere; one interface for the loops below."""

    def __init__(self, device: str):
        self.cuda = device.startswith("cuda")
        self.flush_buf = torch.empty(FLUSH_BYTES if self.cuda else 1, dtype=torch.int8, device=device)
        self.lead_cycles = 0
        self.cycles_per_ms = self._calibrate() if self.cuda else 0.0

    def _calibrate(self) -> float:
        """Cycles of torch.cuda._sleep per millisecond on this GPU (its clock as it runs)."""
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda._sleep(1000)
        start.record()
        torch.cuda._sleep(2_000_000)
        end.record()
        end.synchronize()
        return 2_000_000 / max(start.elapsed_time(end), 1e-3)

    def set_lead(self, host_ms: float) -> None:
        """Spin the GPU this long before each timed call: LEAD_FACTOR × the host's issue time."""
        if self.cuda:
            self.lead_cycles = int(min(LEAD_MAX_MS, LEAD_FACTOR * host_ms) * self.cycles_per_ms)

    def lead(self) -> None:
        if self.lead_cycles:
            torch.cuda._sleep(self.lead_cycles)

    def sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()

    def flush(self) -> None:
        if self.cuda:
            self.flush_buf.zero_()

    def timed(self, runner, indices, *, flush: bool = True, guard=None, batch: int = 0, perturb: bool = True) -> list[int]:
        """One sample per index: (reset, flush, timed call); returns nanoseconds.

        With a ThrottleGuard, samples are taken `batch` at a time and a batch that ended with
        the GPU throttled is taken again once it has recovered (see throttleguard).
        """
        indices = list(indices)
        if not self.cuda:
            out = []
            for i in indices:
                _reset(runner, i, perturb)
                t0 = time.perf_counter_ns()
                result = runner(i)
                out.append(time.perf_counter_ns() - t0)
                _after(runner, i, result, check=_pick(runner))
            return out
        if guard is None:
            return self._events(runner, indices, flush, perturb)
        step = max(1, batch)
        out = []
        for at in range(0, len(indices), step):
            chunk = indices[at:at + step]
            while True:
                t0 = time.monotonic()
                times = self._events(runner, chunk, flush, perturb)
                if guard.keep(len(chunk), time.monotonic() - t0):
                    break
            out += times
        return out

    def _events(self, runner, indices: list[int], flush: bool, perturb: bool = True) -> list[int]:
        # Everything is queued before one synchronize, so the host runs ahead of the GPU.
        pairs = []
        for i in indices:
            _reset(runner, i, perturb)
            self.lead()
            if flush:
                self.flush()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            result = runner(i)
            end.record()
            pairs.append((start, end))
            _after(runner, i, result, check=_pick(runner), pass_events=(start, end))
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
            _reset(runner, i)
            self.sync()
            t0 = time.perf_counter_ns()
            result = runner(i)
            t1 = time.perf_counter_ns()
            self.sync()
            t2 = time.perf_counter_ns()
            _after(runner, i, result, check=False)
            whole.append(t2 - t0)
            wait.append(t2 - t1)
        return {"hostTimedNs": int(statistics.median(whole)), "hostWaitNs": int(statistics.median(wait))}


def warm_up(clock: Clock, runner, min_calls: int = WARMUP_MIN_CALLS, min_ms: float = WARMUP_MIN_MS) -> tuple[int, float, float]:
    """Call until compilation and autotuning are behind us: the first call (which compiles),
    then at least `min_calls` more and `min_ms` of wall time. Returns (calls, ms per call,
    median host ms to issue one call)."""
    _reset(runner, 0)
    _after(runner, 0, runner(0), check=False)
    clock.sync()
    calls, t0, issue = 1, time.perf_counter(), []
    while True:
        _reset(runner, calls)
        t1 = time.perf_counter()
        result = runner(calls)
        issue.append(time.perf_counter() - t1)
        _after(runner, calls, result, check=False)
        clock.sync()
        calls += 1
        elapsed = (time.perf_counter() - t0) * 1e3
        if calls > min_calls and elapsed >= min_ms:
            return calls, elapsed / (calls - 1), statistics.median(issue) * 1e3


def collect(clock: Clock, runner, *, min_samples: int, min_ms: float, repeated_probe: bool,
            warmup: tuple[int, float] = (WARMUP_MIN_CALLS, WARMUP_MIN_MS), guard=None,
            max_ms: float | None = None, precision: float = PRECISION, max_wall_s: float = MAX_WALL_S) -> dict:
    """Samples of one implementation's pass in this process, with the cross-checks.

    At least `min_samples` and `min_ms` of event time (or `max_wall_s` of wall time); then on
    until the median's 95% CI half-width is within `precision` of it, or `max_ms` of event time
    or `max_wall_s` is spent.
    """
    warm_calls, est_ms, issue_ms = warm_up(clock, runner, *warmup)
    clock.set_lead(issue_ms)
    per_ms = max(est_ms, 1e-6)
    budget_ms = max(min_ms, max_ms if max_ms is not None else min_ms)
    batch = max(1, math.floor(SAMPLE_BATCH_MS / per_ms))
    t0 = time.monotonic()
    samples = clock.timed(runner, range(min_samples), guard=guard, batch=batch)
    stopped = "budget"
    while len(samples) < MAX_SAMPLES:
        spent, wall = sum(samples) / 1e6, time.monotonic() - t0
        if (spent >= min_ms or wall >= max_wall_s) and ci_half_width_rel(samples) <= precision:
            stopped = "precision"
            break
        if spent >= budget_ms or wall >= max_wall_s:
            break
        median_ms = max(statistics.median(samples) / 1e6, 1e-6)
        wall_per = wall / len(samples)
        left = min(math.ceil((budget_ms - spent) / median_ms), math.ceil((max_wall_s - wall) / max(wall_per, 1e-9)))
        want = math.ceil((min_ms - spent) / median_ms) if spent < min_ms else max(min_samples, len(samples) // 2)
        more = max(1, min(MAX_SAMPLES - len(samples), want, left))
        samples += clock.timed(runner, range(len(samples), len(samples) + more), guard=guard, batch=batch)
    probe = max(min_samples, min(len(samples), math.ceil(PROBE_MS / per_ms)))
    out = {
        "samplesNs": samples,
        "warmupCalls": warm_calls,
        "samplingStoppedBy": stopped,
        "leadMs": round(clock.lead_cycles / clock.cycles_per_ms, 4) if clock.lead_cycles else 0.0,
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
            _after(runner, 0, runner(0), check=False)
            repeated += clock.timed(runner, [0] * per, guard=guard, batch=batch, perturb=False)
        out["repeatedMedianNs"] = int(statistics.median(repeated))
        out["repeatedFreshMedianNs"] = int(statistics.median(fresh))
    check = getattr(runner, "check", None)
    if check is not None:
        clock.sync()
        out["timedCheck"] = check.verify()
    return out


def do_bench_samples(clock: Clock, runner, *, rep_ms: float = 100.0, warmup_ms: float = 25.0) -> dict:
    """Liger-Kernel's protocol: triton.testing.do_bench(rep=100), all raw times kept.

    On a CPU do_bench cannot run (it needs a GPU's events); the host-timed loop stands in.
    """
    if not clock.cuda:
        warm_calls, est_ms, _ = warm_up(clock, runner, 1, 0.0)
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
