"""Make a large, valid synthetic registry of N runs from the bundled records.

    python3 benchmarks/make_registry.py --runs 60000 --out /tmp/reg60k

Copy 0 is the bundled registry itself. Copy k > 0 re-measures every bundled run on a
new workload: the operation's swept axis (the one with the most distinct values) grows
by k/16 of its value, rounded to a multiple of 64 as real sweeps are, and tensor shapes
follow it. Times, memory and source-native metrics scale with the size times a lognormal
jitter (sigma 3%), keeping every quantile order; observation dates move k weeks later.
Implementations, protocols and environments are shared, as they would be for one lab
adding sweeps: so operation, implementation and GPU pages grow with N, as in real use.
The last copy is cut short so the registry holds exactly N runs. Deterministic: the
same N gives the same bytes. Writes digests.lock with sitegen's own digests.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import random
import shutil
import sys
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path

from sitegen.format.model.common import Short
from sitegen.core.digest import document_digest
from sitegen.registry.folder import lock_bytes
from sitegen.rules import integrity
from sitegen.rules.stats import ci_half_width_rel, spread_rel, summary

BUNDLED = Path(__file__).resolve().parents[1] / "records"
SCALED_NS = ("median", "p20", "p80", "min", "max", "mean", "stdev")


def _load(folder: Path) -> list[tuple[Path, dict]]:
    return [(p, json.loads(p.read_bytes())) for p in sorted(folder.rglob("*.json")) if p.name != "digests.lock"]


def _dump(document: dict) -> bytes:
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode()


def _swept_axes(workloads: list[dict]) -> dict[str, str]:
    """Per operation digest, the numeric axis with the most distinct values."""
    values: dict[str, dict[str, set]] = defaultdict(lambda: defaultdict(set))
    for w in workloads:
        for axis, value in w["spec"]["axes"].items():
            if isinstance(value, int) and not isinstance(value, bool):
                values[w["spec"]["operationSpecDigest"]][axis].add(value)
    return {op: max(sorted(axes), key=lambda a: len(axes[a])) for op, axes in values.items()}


def _grown(value: int, copy_number: int) -> int:
    if value < 64:
        return value + copy_number
    return max(64, round((value + value * copy_number / 16) / 64) * 64)


def _step(value: int) -> int:
    return 64 if value >= 64 else 1


def _new_workload(w: dict, axis: str | None, k: int, taken: set[str]) -> tuple[dict, float]:
    """Copy ``k`` of workload ``w``, its swept axis grown past any identity in ``taken``."""
    new, factor = _sized_workload(w, axis, k, None)
    while document_digest(new) in taken:
        # Another workload's sweep already reached this size: take the next size up.
        new, factor = _sized_workload(w, axis, k, new["spec"]["axes"][axis] + _step(new["spec"]["axes"][axis]))
    taken.add(document_digest(new))
    return new, factor


def _sized_workload(w: dict, axis: str | None, k: int, size: int | None) -> tuple[dict, float]:
    new = copy.deepcopy(w)
    suffix = f"-s{k}"
    new["metadata"]["name"] = w["metadata"]["name"] + suffix
    if axis is None or axis not in w["spec"]["axes"]:
        # Nothing to sweep: a repeat of the workload under another name would share its
        # digest, so a scalar marks it as a distinct case.
        new["spec"].setdefault("scalars", {})["repeat"] = k
        if "title" in new["metadata"]:
            new["metadata"]["title"] = _fit(new["metadata"]["title"] + f" · repeat {k}")
        return new, 1.0
    old = w["spec"]["axes"][axis]
    value = _grown(old, k) if size is None else size
    new["spec"]["axes"][axis] = value
    for tensor in new["spec"].get("tensors", []):
        tensor["shape"] = [value if d == old else d for d in tensor.get("shape", [])]
    if "title" in new["metadata"]:
        new["metadata"]["title"] = _fit(new["metadata"]["title"].replace(f"{axis} = {old}", f"{axis} = {value}"))
    return new, value / old


def _fit(title: str) -> str:
    """A title within the schema's limit: KernelBench's longest are near it before a suffix."""
    limit = Short.__metadata__[0].max_length
    return title if len(title) <= limit else title[:limit - 1] + "…"


def _scale_int(value: int, factor: float) -> int:
    return max(0, round(value * factor))


def _restate(spec: dict) -> None:
    """The figures a scaled rerun states, from its scaled samples as the harness states them
    (validation recomputes them: sitegen.rules.recompute)."""
    timing = spec["timing"]
    stated = summary(timing["samplesNs"])
    timing["latencyNs"] = {key: stated[key] for key in timing["latencyNs"]}
    for process in timing.get("processes", []):
        process["medianNs"] = summary(process["samplesNs"])["median"]
    details = (spec.get("evidence") or {}).get("details") or {}
    if "ciHalfWidthRel" in details:
        details["ciHalfWidthRel"] = round(ci_half_width_rel(timing["samplesNs"]), 5)
    if "processSpreadRel" in details and timing.get("processes"):
        details["processSpreadRel"] = round(spread_rel([p["medianNs"] for p in timing["processes"]]), 5)
    for check in (spec.get("evidence") or {}).get("integrity") or []:
        figures = integrity.ROOFLINE_FIGURES.match(check.get("detail") or "") if check["name"] == "roofline" else None
        if figures:
            check["detail"] = f"median {stated['median']} ns" + check["detail"][len(f"median {figures[1]} ns"):]


def _new_run(run: dict, workload_digest: str, k: int, factor: float) -> dict:
    new = copy.deepcopy(run)
    new["metadata"]["name"] = run["metadata"]["name"] + f"-s{k}"
    new["metadata"].pop("signature", None)  # a copy is no rerun anyone signed
    spec = new["spec"]
    spec["workloadDigest"] = workload_digest
    timing = spec.get("timing")
    if timing:
        for key in SCALED_NS:
            if key in timing["latencyNs"]:
                timing["latencyNs"][key] = _scale_int(timing["latencyNs"][key], factor)
        if "samplesNs" in timing:
            timing["samplesNs"] = [_scale_int(s, factor) for s in timing["samplesNs"]]
        for process in timing.get("processes", []):
            process["medianNs"] = _scale_int(process["medianNs"], factor)
            process["samplesNs"] = [_scale_int(s, factor) for s in process["samplesNs"]]
        if timing.get("samplesNs"):
            _restate(spec)
    for m in spec.get("measurements") or []:
        m["value"] = _scale_int(m["value"], factor) if isinstance(m["value"], int) else m["value"] * factor
    native = spec.get("sourceNative")
    if native and native.get("metrics"):
        native["metrics"] = {key: v * factor if isinstance(v, float) else v for key, v in native["metrics"].items()}
        if native.get("externalId"):
            native["externalId"] += f"/s{k}"
    observed = datetime.strptime(spec["observedAt"][:19], "%Y-%m-%dT%H:%M:%S") + timedelta(weeks=k)
    spec["observedAt"] = observed.strftime("%Y-%m-%dT%H:%M:%S") + spec["observedAt"][19:]
    evidence = spec.get("evidence")
    if evidence and evidence.get("rerunOf"):
        del evidence["rerunOf"]  # the original of a copy would be a run of another workload
    return new


def make_registry(runs: int, out: Path, seed: int = 14) -> int:
    if out.exists():
        raise SystemExit(f"{out}: exists; choose a new folder")
    shutil.copytree(BUNDLED, out, ignore=shutil.ignore_patterns("digests.lock"))
    documents = _load(BUNDLED)
    bundled_runs = [(p, d) for p, d in documents if d.get("kind") == "BenchmarkRun"]
    workloads = {document_digest(d): (p, d) for p, d in documents if d.get("kind") == "WorkloadCase"}
    axes = _swept_axes([d for _, d in workloads.values()])
    rng = random.Random(seed)
    lock = {f"{d['kind']}/{d['metadata']['name']}": document_digest(d) for _, d in documents if "kind" in d}
    taken = set(lock.values())
    count, k = len(bundled_runs), 0
    while count < runs:
        k += 1
        new_workloads: dict[str, tuple[str, float]] = {}
        for digest, (path, w) in workloads.items():
            new, factor = _new_workload(w, axes.get(w["spec"]["operationSpecDigest"]), k, taken)
            target = out / path.relative_to(BUNDLED).with_name(new["metadata"]["name"] + ".json")
            target.write_bytes(_dump(new))
            new_digest = document_digest(new)
            lock[f"WorkloadCase/{new['metadata']['name']}"] = new_digest
            new_workloads[digest] = (new_digest, factor)
        for path, run in bundled_runs:
            if count >= runs:
                break
            workload_digest, size = new_workloads[run["spec"]["workloadDigest"]]
            new = _new_run(run, workload_digest, k, size * math.exp(rng.gauss(0, 0.03)))
            target = out / path.relative_to(BUNDLED).with_name(new["metadata"]["name"] + ".json")
            target.write_bytes(_dump(new))
            lock[f"BenchmarkRun/{new['metadata']['name']}"] = document_digest(new)
            count += 1
    (out / "digests.lock").write_bytes(lock_bytes(lock))
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, required=True, help="runs in the registry (at least the bundled count)")
    parser.add_argument("--out", type=Path, required=True, help="new folder to write")
    parser.add_argument("--seed", type=int, default=14)
    args = parser.parse_args()
    made = make_registry(args.runs, args.out, args.seed)
    print(f"{args.out}: {made} runs", file=sys.stderr)


if __name__ == "__main__":
    main()
