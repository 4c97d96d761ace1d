"""What a fleet rerun tells: progress per GPU product on stderr, and every case × GPU in the summary.

Plain data in, plain data out: no Ray here.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from sitegen.core.workload import Workload, cases


@dataclass
class Task:
    """One (GPU product × case group × replica) and what became of it."""

    product: str
    replica: int
    group: Workload
    attempts: int = 0
    where: dict[str, Any] | None = None
    lost: list[str] = field(default_factory=list)
    excluded: set[str] = field(default_factory=set)
    state: str = "queued"  # queued, running, done
    outcome: dict[str, Any] | None = None  # {"summary", "documents"} | {"refused"} | {"lost"}

    @property
    def label(self) -> str:
        return f"{self.product} replica {self.replica + 1} {self.group.key}"


def gpu_of(where: dict[str, Any] | None) -> str | None:
    """The GPU's UUID, or (without NVML) the Ray node and its GPU ids."""
    if not where:
        return None
    return where.get("gpuUuid") or f"{where['host']}/ray-node-{where['node'][:12]}/gpu{','.join(where['gpuIds'])}"


class Progress:
    """Tasks queued, running and done per product, one stderr line whenever a count changes."""

    def __init__(self, tasks: list[Task]):
        self.tasks = tasks

    def event(self, task: Task, message: str) -> None:
        mine = [t for t in self.tasks if t.product == task.product]
        counts = ", ".join(f"{sum(t.state == s for t in mine)} {s}" for s in ("queued", "running", "done"))
        print(f"[fleet {task.product}: {counts}] {task.label}: {message}", file=sys.stderr, flush=True)


def rows(tasks: list[Task], passes: tuple[str, ...], impls: tuple[str, ...]) -> list[dict[str, Any]]:
    """Every case × GPU: measured (with the run's status and file), refused (why) or lost (why)."""
    out = []
    for t in tasks:
        outcome = t.outcome or {"lost": "never finished"}
        measured = {(r["impl"], r["pass"]): r for r in outcome.get("summary", {}).get("runs", [])}
        unavailable = outcome.get("summary", {}).get("unavailable", {})
        for case in cases([t.group], passes, impls):
            row: dict[str, Any] = {"product": t.product, "replica": t.replica + 1, "gpu": gpu_of(t.where),
                                   **case.workload.sizes, "axes": case.workload.sizes, "impl": case.impl,
                                   "dtype": case.workload.dtype, "pass": case.timed_pass, "attempts": t.attempts}
            run = measured.get((case.impl, case.timed_pass))
            if run is not None:
                row.update(outcome="measured", status=run["status"], medianNs=run["medianNs"],
                           name=run["name"], file=run["file"])
            elif "refused" in outcome:
                row.update(outcome="refused", reason="; ".join(outcome["refused"]))
            elif "summary" in outcome:
                row.update(outcome="refused", reason=f"not available: {unavailable.get(case.impl) or 'not run'}")
            else:
                row.update(outcome="lost", reason=outcome["lost"])
            out.append(row)
    return out


def lines(table: list[dict[str, Any]]) -> list[str]:
    """One stderr line per case × GPU."""
    out = []
    for r in table:
        axes = " ".join(f"{name} {value}" for name, value in r["axes"].items())
        head = f"{r['product']} #{r['replica']} {axes} {r['dtype']} {r['pass']} {r['impl']}"
        if r["outcome"] == "measured":
            median = f" {r['medianNs'] / 1e6:.4f} ms" if r["medianNs"] is not None else ""
            out.append(f"{head}: measured, {r['status']}{median} on {r['gpu']}")
        else:
            out.append(f"{head}: {r['outcome']} ({r['reason']})")
    return out
