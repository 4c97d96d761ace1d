"""The published protocol of `sitegen rerun`: what is timed, how, and what counts as correct.

The numbers here are the contract the harness keeps; the protocol document states them
so that a reader (or a second machine) can check a run against them.
"""

from __future__ import annotations

import math
from typing import Any

from sitegen.core.digest import document_digest
from sitegen.core.documents import document
from sitegen.rules import integrity
from sitegen.rules.checkparams import CHECK_SHARE, DIGEST_DIM, DIGEST_SLACK  # noqa: F401 (part of the protocol)


HARNESS = "sitegen rerun"
FAMILY = "sitegen_controlled"
INTERPRET_FAMILY = "sitegen_interpret"
LIGER_FAMILY = "liger_kernel_bench"
AGREEMENT = 0.05

# Larger than any current GPU's L2 (H200: 50 MB): zeroing it evicts the inputs and outputs of
# the previous call, so every timed call starts from device memory.
FLUSH_BYTES = 256 << 20
WARMUP_MIN_CALLS = 3
WARMUP_MIN_MS = 25.0
# Correctness gate inputs, each from a secret seed s (gate.checked_shapes): the student from
# generator seed 2s, the teacher from 2s+1.
GATE_INPUTS = 4
SMALL_ROWS = 256
# The repeated-input probe: this many alternating blocks of fresh and of repeated calls, each
# at least PROBE_MIN_BLOCK calls long.
PROBE_BLOCKS = 4
PROBE_MIN_BLOCK = 3

MIN_SAMPLES = 10
MIN_TIME_MS = 300.0  # per case, summed over the processes
# Sampling goes on past the minimum until the median's 95% CI half-width is within PRECISION
# of it, or MAX_TIME_MS of event time (per case, summed over the processes) is spent.
PRECISION = 0.01
MAX_TIME_MS = 900.0
# ...and a process spends at most MAX_WALL_S of wall time sampling one case once it has its
# minimum samples: a host-bound call (a 16 us backward through the autograd engine, with the
# spin below) costs ~1.4 ms of wall time per sample, so its minimum event time alone took ~9 s.
MAX_WALL_S = 1.5
# Before each call (and its flush) the GPU spins LEAD_FACTOR × the host's median time to issue
# one call (at most LEAD_MAX_MS), so that event time is GPU time even for a host-bound call.
LEAD_FACTOR = 1.5
LEAD_MAX_MS = 1.0
# One empty call before every EMPTY_EVERY-th call: enough, spread through the samples, for a
# median of the closing synchronize's fixed cost (host_timed), without doubling short cases.
EMPTY_EVERY = 4
PROCESSES = 3
INTERPRET_MIN_SAMPLES = 3
INTERPRET_MIN_TIME_MS = 0.0
# The interpreter compiles nothing and has no clocks to settle: one call after the first.
INTERPRET_WARMUP = (1, 0.0)
WARMUP = (WARMUP_MIN_CALLS, WARMUP_MIN_MS)

# The operations' tolerances (sitegen.operations) are set from the honest implementations'
# measured error times this margin (benchmarks/honest_errors.py).
TOLERANCE_MARGIN = 2.0


def per_process_ms(min_time_ms: float, processes: int) -> float:
    return min_time_ms / processes


def settings(doc: dict[str, Any], interpret: bool, tolerances: dict[str, float]) -> dict[str, Any]:
    """What the workers must do to follow the protocol document `doc`, read from the document.

    A --like rerun cites the original's protocol, so its numbers, not this module's current
    constants, must drive the measurement. A protocol that states no sample counts (Liger's
    do_bench family) times by its own harness in one process; the gate then uses ours. Under
    --interpret the interpreter's tiny budgets apply whatever the document says.
    """
    spec = doc["spec"]
    m = spec.get("measurement") or {}
    processes = m.get("processes") or 1
    warmup = m.get("warmup") or {}
    if interpret or "minSamples" not in m:
        min_samples = INTERPRET_MIN_SAMPLES if interpret else MIN_SAMPLES
        min_ms = INTERPRET_MIN_TIME_MS if interpret else MIN_TIME_MS
        warm = INTERPRET_WARMUP if interpret else WARMUP
    else:
        min_samples, min_ms = m["minSamples"], m.get("minTimeMs", 0.0)
        warm = (warmup.get("minIterations", 1) - 1, warmup.get("minMs", 0.0))
    bounds = (spec.get("correctness") or {}).get("tolerances") or {}
    rtol = {dtype: bounds.get(dtype, {}).get("rtol", default) for dtype, default in tolerances.items()}
    max_ms = max(min_ms, INTERPRET_MIN_TIME_MS if interpret else MAX_TIME_MS)
    return {"processes": processes, "minSamples": min_samples, "minTimeMs": per_process_ms(min_ms, processes),
            "maxTimeMs": per_process_ms(max_ms, processes), "warmup": list(warm), "rtol": rtol}


def protocol_document(op, *, version: str | None, commit: str | None, repository: str | None,
                      interpret: bool, processes: int = PROCESSES) -> dict[str, Any]:
    """The BenchmarkProtocol of a controlled rerun (or of an --interpret rehearsal) of operation ``op``."""
    harness = {"name": HARNESS, **{k: v for k, v in (("version", version), ("repository", repository),
                                                      ("commit", commit)) if v}}
    min_samples = INTERPRET_MIN_SAMPLES if interpret else MIN_SAMPLES
    min_ms = INTERPRET_MIN_TIME_MS if interpret else MIN_TIME_MS
    warm_calls, warm_ms = INTERPRET_WARMUP if interpret else WARMUP
    measurement = {
        "timer": "host_perf_counter" if interpret else "cuda_events",
        "primaryStatistic": "median",
        "quantiles": [0.2, 0.8],
        "warmup": {
            "minIterations": warm_calls + 1, "minMs": warm_ms,
            "notes": ("The first call compiles (Triton JIT, torch.compile) and autotunes; then at least "
                      f"{warm_calls} more calls, each in a timed call's window, and {warm_ms:g} ms "
                      "before any sample is kept. Every process warms up on its own."),
        },
        "minSamples": min_samples,
        "minTimeMs": min_ms,
        "l2Flush": not interpret,
        "inputs": "fresh-random-every-call",
        "hostTimedCrossCheck": True,
        "processes": processes,
    }
    spec: dict[str, Any] = {
        "harness": harness,
        "measurement": measurement,
        "correctness": {
            "reference": op.reference_name,
            "comparator": op.comparator,
            "tolerances": {dtype: {"rtol": rtol} for dtype, rtol in op.tolerances.items()},
            "poisonOutputs": not interpret,
        },
        "integrity": {
            "roofline": True,
            "repeatedInputMaxSpeedup": integrity.REPEATED_MAX_SPEEDUP,
            "throttleCheck": True,
            "timedOutputCheck": True,
            "exclusiveGpu": True,
            "agreement": AGREEMENT,
        },
        "devicePolicy": {
            "clocks": "as found",
            "l2FlushBytes": FLUSH_BYTES if not interpret else 0,
            "tritonInterpret": interpret,
        },
        "comparability": {
            "family": INTERPRET_FAMILY if interpret else FAMILY,
            "notes": _notes(op, interpret, processes, min_samples, min_ms),
        },
    }
    doc = document("BenchmarkProtocol", {}, spec)
    kind = "interpret" if interpret else "controlled"
    doc["metadata"] = {
        "name": f"sitegen-rerun-{kind}-{document_digest(doc)[7:19]}",
        "title": "sitegen rerun · " + ("CPU rehearsal under Triton's interpreter" if interpret else "controlled GPU rerun"),
    }
    return doc


def _notes(op, interpret: bool, processes: int, min_samples: int, min_ms: float) -> str:
    head = ("A dry run on the CPU under Triton's interpreter: it rehearses the pipeline and its numbers "
            "time numpy, not a GPU. " if interpret else "")
    return head + (
        f"Timed: one call of the implementation's pass on {op.inputs_notes}: forward = the module call with "
        f"{op.grad_inputs_notes} requiring grad; backward = loss.backward() on a graph the forward built just before, "
        "outside the timed region (an implementation may consume what its forward saved); "
        "full = forward then backward; torch.compile is compiled for each timed shape (dynamic=False), and "
        "that same module is the one the gate checks. Every call of an implementation (gate, warm-up, timed, "
        "and the untimed other half of a checked pass) runs in one pattern: a device-wide synchronize, the GPU "
        f"held by a spin of {LEAD_FACTOR:g}x the host's time to issue the call (at most {LEAD_MAX_MS:g} ms, so that "
        f"the events time the GPU, not the launch), the L2 cache zeroed ({FLUSH_BYTES >> 20} MiB), a CUDA event, "
        "the call, a CUDA event that the host then polls, and a device-wide synchronize timed on the host; a "
        "sample is the time between the two events; "
"inputs from a pool of 2-3 random sets at distinct addresses, and immediately before every call "
        f"(before its lead and flush), untimed, the set it uses drawn again, {op.input_names}, from a "
        "generator seeded from the operating system's secret source at that moment, so no call sees content "
        "that any earlier call saw, and nothing an earlier call computed before the draw can answer it. On "
        f"a random {CHECK_SHARE:.0%} of calls (drawn after the call was issued) the loss and a digest of the "
        f"gradient (a secret random projection onto {DIGEST_DIM} directions; for a forward, the gradient its "
        "untimed backward completes) are compared with the float64 reference for that call's own inputs "
        f"(timed_output: loss within rtol, digest within {DIGEST_SLACK:g}x rtol); one wrong output refuses the "
        "time. "
        f"The measurement is repeated in {processes} separate processes, each taking at "
        f"least {min_samples} samples and {math.ceil(per_process_ms(min_ms, processes))} ms of GPU time "
        f"({min_ms:g} ms per case in all), then on until the 95% confidence interval of its median (order "
        f"statistics) is within {PRECISION:.0%} of it or {math.ceil(per_process_ms(max(min_ms, MAX_TIME_MS), processes))} "
        f"ms are spent (or {MAX_WALL_S:g} s of wall time, which then stands in for the minimum time) (the run's details say which ended it, and mark it noisy when the processes' medians "
        f"differ by more than {AGREEMENT:.0%}); the median of all samples ranks, p20/p80 give the spread, and "
        "every raw sample is kept per process. Before any timing every implementation is checked against "
        f"the float64 reference on the timed shape, {op.gate_notes.format(small=SMALL_ROWS)}, each drawn from a seed taken from the operating system's secret source "
        "then and kept in the run's record; "
        "one that fails is recorded as failed with its error and never timed. A time is refused below the "
        f"bytes-moved floor at the copy bandwidth measured in the run ({op.bytes_notes}; with a slack of "
        f"{integrity.ROOFLINE_SLACK:g}x), and whenever forward and backward of one call were both timed "
        "(forward: with its untimed backward; backward: with the untimed forward that built its graph) when "
        "their sum is below the full pass's floor: a backward under its own floor passes only there, as the "
        "work its forward did, or when the call handed back work unfinished: the median time the closing "
        "synchronize waited after the call's own stream was done, less an empty call's (empty calls "
        f"interleaved with the calls in the same process, one before every {EMPTY_EVERY}th), over "
        f"{integrity.HIDDEN_MAX_SHARE:.0%} of the median plus {integrity.HIDDEN_SLACK_NS / 1e3:g} us (host_timed)"
"; and, for code sitegen did not write, when an output was not a plain tensor or left a torch mode active "
        "(plain_output), an output shared memory with an input or an input was written (inputs_intact, on the "
        "checked calls against the inputs drawn again), the clock functions the windows read were replaced "
        "(clock_intact, by identity after every window and after the implementation was imported and built), or "
        "a thread it started outlived a call (host_threads)"
        "; a speed-up over "
        f"{integrity.REPEATED_MAX_SPEEDUP - 1:.0%} of calls "
        f"on one input set, repeated, over fresh ones (first process; {PROBE_BLOCKS} alternating blocks of each, every "
        "repeated block begun with an untimed call on its set) or GPU throttling (a thermal or hardware "
        "slowdown, or a power cap that held the SM clock under "
        f"{integrity.POWER_CAP_MIN_CLOCK_SHARE:.0%} of its maximum, judged on each NVML reading) is flagged. "
        + ("" if interpret else _guard_notes())
        + "Comparable with runs of this "
        "family on the same GPU product and workload."
    )


def _fraction(share: float) -> str:
    return {0.5: "half"}.get(share, f"{share:g}")


def _guard_notes() -> str:
    return (
        "Throttled time is kept out of the samples (after nvbench, which discards a throttled sample "
        f"and pauses): before each case a process waits up to {integrity.SETTLE_S:g} s for the GPU to leave "
        f"any such state; samples are taken in batches of about {integrity.SAMPLE_BATCH_MS:g} ms, and a batch "
        "whose closing NVML reading finds the GPU throttled is discarded (the discarded timed calls are "
        f"counted in the run's details) and taken again after a pause of {integrity.RECOVER_MIN_S:g}-"
        f"{integrity.RECOVER_S:g} s. Throttling that begins and ends inside one batch is not seen. A process "
        f"spends {integrity.THROTTLE_BUDGET_S:g} s at most on these waits and discarded batches; after that, "
        "batches are kept as measured. The states judged are, in every process, the one before each case "
        "and the one at the end of its last kept batch, or of its first batch kept throttled. "
    )
