"""The judges the guard keeps (sitegen.rerun.checks.guards): what decides a run's outcome, as
opposed to its time. Replaced, any of them passes anything, and code that replaces one needs no
clock.

keep(worker) hands them to the guard, after the clock's own snapshot (taken when
sitegen.rerun.measure.clock is imported) and before any implementation is imported: a measuring
process keeps them before it loads the operation (worker.run), worker.implementation before it
imports one, the self-test before its first candidate. The list lives here, above the gate, the
timed check and the passes it names, so that the guard imports none of the modules it guards
(issue 46: no import circle); the worker hands in its own module, the one that runs.
"""

from __future__ import annotations

import json

from sitegen.rerun.checks import draws, gate, guards, handover, judge, timedcheck
from sitegen.rerun.measure import clock as _clock  # noqa: F401  (its import takes the snapshot the judges join)
from sitegen.rerun.measure import exchange, passes
from sitegen.rules import integrity


def owners(worker) -> list[tuple[object, str, str]]:
    """(owner, attribute, label) of every judge; ``worker`` is the measuring process's module
    (sitegen.rerun.measure.worker, or __main__ where it runs as ``python -m``)."""
    # The gate's comparison runs in the judge process (sitegen.rerun.checks.judge); what runs here
    # is the call and the handing over of its outputs, which a replaced one could falsify.
    out = [(gate, name, f"sitegen.rerun.checks.gate.{name}") for name in ("call", "gate_workload", "_poison", "_judge",
                                                                          "aliasing", "foreign", "modes")]
    out += [(handover.Channel, name, f"Channel.{name}") for name in ("send", "recv", "_write", "_read_header", "_exact")]
    out += [(handover, name, f"sitegen.rerun.checks.handover.{name}") for name in ("_copy_in", "_layout", "Channel")]
    out += [(judge, name, f"sitegen.rerun.checks.judge.{name}") for name in ("spawn_local", "start", "Refused")]
    out += [(timedcheck.TimedCheck, name, f"TimedCheck.{name}") for name in (
        "verify", "record", "record_loss", "record_foreign", "record_inputs", "output", "pick", "_output_error",
        "_digests", "__init__")]
    out += [(timedcheck, name, f"sitegen.rerun.checks.timedcheck.{name}") for name in (
        "digest", "modes", "foreign", "aliasing", "as_matrix", "_loss_copy", "TimedCheck", "DIGEST_SLACK")]
    out += [(passes, name, f"sitegen.rerun.measure.passes.{name}") for name in ("TimedCheck", "aliasing", "foreign", "modes")]
    out += [(integrity, name, f"sitegen.rules.integrity.{name}") for name in (
        "roofline", "timed_output", "repeated_input", "host_timed", "guard", "calm", "throttle", "exclusive",
        "floor_ns", "GUARDS")]
    out += [(worker, name, f"sitegen.rerun.measure.worker.{name}") for name in ("main", "run", "implementation", "write_atomic",
                                                                        "json", "_CHECK_BUILD", "_THREAD_IDS",
                                                                        "WorkerResult")]
    out += [(exchange.WorkerResult, "to_json", "WorkerResult.to_json")]
    out += [(draws, name, f"sitegen.rerun.checks.draws.{name}") for name in ("randbits", "uniform")]
    out += [(timedcheck, "_norm", "sitegen.rerun.checks.timedcheck._norm")]
    out += [(json, "dumps", "json.dumps")]
    return out


def keep(worker) -> None:
    """The judges kept by the guard from now on (each once: a second call keeps nothing new)."""
    guards.keep(owners(worker))
