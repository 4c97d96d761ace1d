"""An --operation plugin as the process that plans, judges and writes sees it: data read from a
process of its own, never its code (issue 43).

An operation sitegen does not ship (an entry point, pkg.module:Name) is outside code, like an
implementation: its module body and its methods could rewrite the records this process writes.
So `python -m sitegen.rerun.plan.opfacts` loads it and prints, as JSON, its declared attributes and
documents, and for the workloads the rerun will measure their documents and each pass's bytes and
FLOP; the parent builds a Described operation from that. The measuring processes load the
plugin itself (they run outside code anyway). sitegen's own operations are sitegen's code, known
by their bytes (sitegen.rerun.plan.owncode), and load here as they are.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from typing import Any

from sitegen.operations.base import Operation
from sitegen.core.problems import InputError, Problem
from sitegen.core.workload import Workload

# Declared attributes the parent reads, and those that are tuples (JSON makes them lists).
ATTRS = ("name", "title", "family", "definition", "axes", "axis_descriptions", "passes", "dtypes", "default_dtypes",
         "default_axes", "interpret_axes", "peers", "default_peers", "interpret_peers", "interpret_left_out",
         "tolerances", "comparator", "reference_name", "differentiable", "writable_inputs", "inputs_notes",
         "grad_inputs_notes", "input_names", "gate_notes", "bytes_notes")
TUPLES = ("axes", "passes", "dtypes", "default_dtypes", "default_peers", "interpret_peers", "differentiable",
          "writable_inputs")


class Described(Operation):
    """An operation plugin's facts, as its own process reported them: nothing here runs its code."""

    def __init__(self, target: str, facts: dict[str, Any], per: dict[str, dict] | None = None):
        for attr in ATTRS:
            if attr in facts:
                value = facts[attr]
                if attr in TUPLES:
                    value = tuple(value)
                elif attr in ("default_axes", "interpret_axes"):
                    value = {axis: tuple(values) for axis, values in value.items()}
                setattr(self, attr, value)
        self.target = target
        self.facts = facts
        self.per = per or {}

    def operation_document(self) -> dict[str, Any]:
        return copy.deepcopy(self.facts["operationDocument"])

    def _of(self, w: Workload) -> dict:
        if w.key not in self.per:
            raise KeyError(f"{self.target}: workload {w.key} was not described")
        return self.per[w.key]

    def workload_document(self, w: Workload) -> dict[str, Any]:
        return copy.deepcopy(self._of(w)["document"])

    def bytes_moved(self, w: Workload, timed_pass: str) -> int:
        return self._of(w)["bytes"][timed_pass]

    def flop(self, w: Workload, timed_pass: str) -> int:
        return self._of(w)["flop"][timed_pass]

    def sizes(self, w: Workload) -> tuple[int, int] | None:
        """fits.sizes of ``w``, as the plugin's process computed them from its make_inputs (None: it could not)."""
        found = self._of(w).get("sizes")
        return (int(found[0]), int(found[1])) if found else None

    def make_inputs(self, w, seed, device):
        raise RuntimeError(f"{self.target} runs only in a measuring process")

    reference = make_grad_output = make_inputs


def _ask(target: str, workloads: list[Workload]) -> dict:
    request = json.dumps({"target": target, "workloads": [w.as_json() for w in workloads]})
    done = subprocess.run([sys.executable, "-m", "sitegen.rerun.plan.opfacts"], input=request, capture_output=True,
                          text=True)
    try:
        answer = json.loads(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else None
    except ValueError:
        answer = None
    if not isinstance(answer, dict):
        last = (done.stderr.strip().splitlines() or ["no answer"])[-1]
        raise InputError([Problem("--operation", "$", f"{target}: its process ended without describing it "
                                                       f"(exit code {done.returncode}: {last[:300]})")])
    if "problems" in answer:
        raise InputError([Problem(p["file"], p["path"], p["message"]) for p in answer["problems"]])
    return answer


def builtin(ref: str) -> bool:
    from sitegen.operations import BUILTIN

    return ref in BUILTIN or ref in BUILTIN.values()


def load(ref: str) -> Operation:
    """The operation ``ref`` names: sitegen's own, loaded; any other, Described from its own process."""
    from sitegen import operations

    if builtin(ref):
        return operations.load(ref)
    target = operations.known().get(ref) or (ref if ":" in ref else None)
    if target is None or builtin(target):
        return operations.load(ref)  # unknown: load() says so in its one line; or sitegen's own
    return Described(target, _ask(target, [])["facts"])


def describe_workloads(op: Operation, loads: list[Workload]) -> Operation:
    """``op`` with the facts of ``loads`` (a Described one asks its process again)."""
    if not isinstance(op, Described):
        return op
    return Described(op.target, op.facts, _ask(op.target, loads)["per"])


def _answer(request: dict) -> dict:
    from sitegen import operations

    op = operations.load(request["target"])
    facts = {attr: getattr(op, attr) for attr in ATTRS if hasattr(op, attr)}
    facts["operationDocument"] = op.operation_document()
    per = {}
    for raw in request["workloads"]:
        w = Workload.from_json(raw)
        per[w.key] = {"document": op.workload_document(w),
                      "bytes": {p: int(op.bytes_moved(w, p)) for p in op.passes},
                      "flop": {p: int(op.flop(w, p)) for p in op.passes},
                      # The parent's memory check needs make_inputs' sizes, and never runs plugin code.
                      "sizes": _sizes(op, w)}
    return {"facts": facts, "per": per}


def _sizes(op, w: Workload) -> list[int] | None:
    from sitegen.rerun.plan.inputsizes import fake_sizes

    try:
        return list(fake_sizes(op, w))
    except Exception:  # make_inputs that cannot run on fake tensors: the memory check is skipped, not the rerun
        return None


def main() -> int:
    request = json.loads(sys.stdin.read())
    try:
        answer = _answer(request)
    except InputError as exc:
        answer = {"problems": [p.as_dict() for p in exc.problems]}
    # The last line of stdout is the answer: whatever the plugin printed comes before it.
    print("\n" + json.dumps(answer, default=list))
    return 0


if __name__ == "__main__":
    sys.exit(main())
