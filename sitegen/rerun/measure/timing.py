"""Sample collection: every call in its window (clock), with the cross-checks: the
work a call left running (host_timed), a repeated-input probe, and Liger's do_bench for --like.

Sampling goes on until the 95% confidence interval of the median is within PRECISION of it
(after the protocol's minimum samples and time) or the case's time budget is spent, in the
spirit of nvbench's stdrel criterion; which one ended it is returned.

Every timed call's input set is drawn again, untimed, immediately before it (runner.draw: after
the previous call's window closed on a device-wide synchronize, so nothing an earlier call
started is still running or could have seen it), and the call is followed, untimed, by
runner.after(): its output is kept for the timed_output check (passes, timedcheck).

On a CPU (--interpret) the same loops run with the host clock: those numbers only rehearse
the pipeline.
"""

from __future__ import annotations

import math
import statistics
import time

from sitegen.rerun.measure.clock import Clock, after, reset
from sitegen.rules.integrity import SAMPLE_BATCH_MS
from sitegen.rules.protocol import MAX_WALL_S, PRECISION, PROBE_BLOCKS, PROBE_MIN_BLOCK, WARMUP_MIN_CALLS, WARMUP_MIN_MS
from sitegen.rules.stats import ci_half_width_rel

MAX_SAMPLES = 20000
PROBE_MS = 50.0


def host_batch(clock: Clock, runner, calls: int) -> dict[str, int]:
    """Synchronized calls timed on the host, for a protocol whose own loop times the calls
    (do_bench): its events see one stream, the sync waits for every stream.

    hostTimedNs is the median whole call; hostWaitNs the median time the host still waited
    after the call returned, which is GPU work (on any stream) the call left running.
    """
    whole, wait = [], []
    for i in range(calls):
        runner.reset(i)
        clock.sync()
        t0 = time.perf_counter_ns()
        runner(i)
        t1 = time.perf_counter_ns()
        clock.sync()
        t2 = time.perf_counter_ns()
        whole.append(t2 - t0)
        wait.append(t2 - t1)
    return {"hostTimedNs": int(statistics.median(whole)), "hostWaitNs": int(statistics.median(wait))}


def warm_up(clock: Clock, runner, min_calls: int = WARMUP_MIN_CALLS, min_ms: float = WARMUP_MIN_MS) -> tuple[int, float, float]:
    """Call until compilation and autotuning are behind us: the first call (which compiles),
    then at least `min_calls` more and `min_ms` of wall time. Returns (calls, ms per call,
    median host ms to issue one call)."""
    reset(runner, 0)
    result, w = clock.window(lambda: runner(0))
    after(runner, 0, result, check=False, window=w)
    calls, t0, issue = 1, time.perf_counter(), []

    def issued(i):
        t1 = time.perf_counter()
        out = runner(i)
        issue.append(time.perf_counter() - t1)
        return out

    while True:
        reset(runner, calls)
        result, w = clock.window(lambda: issued(calls))
        after(runner, calls, result, check=False, window=w)
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
    clock.watch.take()  # what an earlier case's calls left is theirs
    warm_calls, est_ms, issue_ms = warm_up(clock, runner, *warmup)
    if hasattr(runner, "fill"):
        runner.fill()  # the pool, where memory bounds it, sized by what the warm-up's calls took
    clock.set_lead(issue_ms)
    per_ms = max(est_ms, 1e-6)
    budget_ms = max(min_ms, max_ms if max_ms is not None else min_ms)
    batch = max(1, math.floor(SAMPLE_BATCH_MS / per_ms))
    t0 = time.monotonic()
    tails: list[int] = []
    samples = clock.timed(runner, range(min_samples), guard=guard, batch=batch, tails=tails)
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
        samples += clock.timed(runner, range(len(samples), len(samples) + more), guard=guard, batch=batch, tails=tails)
    probe = max(min_samples, min(len(samples), math.ceil(PROBE_MS / per_ms)))
    out = {
        "samplesNs": samples,
        "warmupCalls": warm_calls,
        "samplingStoppedBy": stopped,
        "leadMs": clock.lead_ms,
        "emptySyncNs": clock.base_ns(),
        "hiddenNs": clock.hidden_ns(tails),
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
            reset(runner, 0, draw=False)
            result, w = clock.window(lambda: runner(0))
            after(runner, 0, result, check=False, window=w)
            repeated += clock.timed(runner, [0] * per, guard=guard, batch=batch, perturb=False)
        out["repeatedMedianNs"] = int(statistics.median(repeated))
        out["repeatedFreshMedianNs"] = int(statistics.median(fresh))
    check = getattr(runner, "check", None)
    if check is not None:
        if hasattr(runner, "drop_inputs"):
            runner.drop_inputs()  # the references are drawn again beside no input set
        out["timedCheck"] = check.verify()
    out["guards"] = clock.watch.take()
    return out


def do_bench_samples(clock: Clock, runner, *, rep_ms: float = 100.0, warmup_ms: float = 25.0) -> dict:
    """Liger-Kernel's protocol: triton.testing.do_bench(rep=100), all raw times kept.

    On a CPU do_bench cannot run (it needs a GPU's events); the host-timed loop stands in.
    """
    if not clock.cuda:
        warm_calls, est_ms, _ = warm_up(clock, runner, 1, 0.0)
        n = max(1, int(rep_ms / max(est_ms, 1e-6)))
        return {"samplesNs": clock.timed(runner, range(n)), "warmupCalls": warm_calls}
    # do_bench times a loop of its own; the host-timed batch is the cross-check its events need.
    import triton.testing

    state = {"i": 0}

    def fn():
        runner.reset(state["i"])
        runner(state["i"])
        state["i"] += 1

    times_ms = triton.testing.do_bench(fn, warmup=warmup_ms, rep=rep_ms, return_mode="all")
    return {"samplesNs": [int(round(t * 1e6)) for t in times_ms], **host_batch(clock, runner, 10)}
