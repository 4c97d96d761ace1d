"""What the parent and a measuring process exchange: the plan it is given (WorkerPlan) and the
result it writes (WorkerResult), each as one JSON file with a format version the receiver checks.

The parent (sitegen.rerun.sweep) writes plan.json and starts ``python -m sitegen.rerun.measure.worker
plan.json result.json``; the worker reads the plan, measures, and writes result.json. A plan or
result of another format is refused in one line (the worker exits with that line on stderr; the
parent refuses the rerun), not read field by field until a key is missing.

The result is written by a process that ran outside code, which can rewrite the file: the
parent checks what it reads (from_json: types, and ranges where a number has one) and, past that,
keeps only what the process may say of its own implementation (sweep._own). Stdlib only: workers
and the parent run on GPU hosts without pydantic.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

FORMAT = 1
"""The plan's and the result's format; raised whenever a field changes meaning or is added or removed."""


class Unreadable(ValueError):
    """A plan or result that is not of this sitegen's format, or not what its format says (the message is one line)."""


def _check_format(raw: Any, what: str) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise Unreadable(f"the {what} is {type(raw).__name__}, not a JSON object")
    got = raw.get("format")
    if got != FORMAT or isinstance(got, bool):
        raise Unreadable(f"the {what} is of format {got!r}; this sitegen reads format {FORMAT} "
                         "(the parent and the measuring process must be the same sitegen)")
    return raw


def _int(value: Any, where: str, *, low: int | None = 0, none: bool = False) -> int | None:
    if value is None and none:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or (low is not None and value < low):
        bound = "" if low is None else f" >= {low}"
        raise Unreadable(f"{where} is {value!r}, not an integer{bound}" + (" or null" if none else ""))
    return value


def _number(value: Any, where: str, *, positive: bool = False, none: bool = False) -> float | None:
    if value is None and none:
        return None
    if (not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value)
            or (positive and value <= 0)):
        raise Unreadable(f"{where} is {value!r}, not a finite{' positive' if positive else ''} number")
    return value


def _str(value: Any, where: str, *, none: bool = False) -> str | None:
    if value is None and none:
        return None
    if not isinstance(value, str):
        raise Unreadable(f"{where} is {value!r}, not a string" + (" or null" if none else ""))
    return value


def _bool(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise Unreadable(f"{where} is {value!r}, not true or false")
    return value


def _dict(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise Unreadable(f"{where} is not a JSON object")
    return value


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise Unreadable(f"{where} is not a JSON list")
    return value


def _need(raw: dict[str, Any], key: str, what: str) -> Any:
    if key not in raw:
        raise Unreadable(f"the {what} has no {key}")
    return raw[key]


@dataclass(frozen=True)
class PlannedImpl:
    """One implementation a measuring process imports: its name in the records and its class."""

    name: str
    target: str  # pkg.module:Name


@dataclass(frozen=True)
class WorkerPlan:
    """What one measuring process does: which implementation, operation, workloads and passes,
    under which protocol settings (sitegen.rules.protocol.settings), as which of the rerun's processes."""

    operation: str
    """The operation's target (pkg.module:Name), loaded in the measuring process."""
    device: str  # "cuda" or "cpu" (--interpret)
    interpret: bool
    workloads: tuple[dict[str, Any], ...]  # Workload.as_json() each
    passes: tuple[str, ...]
    mode: str  # "controlled", or a --like record's own ("do_bench")
    impls: tuple[PlannedImpl, ...]
    process: int  # this process's index, 0-based, among ...
    processes: int  # ... the processes each implementation is measured in
    gate: bool  # the first process of each implementation runs the correctness gate
    skip: tuple[str, ...]  # "impl|workload key": failed the gate in the first process
    seed: int
    repeated_probe: bool
    min_samples: int
    min_time_ms: float
    max_time_ms: float | None
    warmup: tuple[int, float]  # (calls after the first, ms)
    rtol: dict[str, float]  # dtype → the gate's and timed check's bound
    max_sm_mhz: float | None = None  # the GPU's top SM clock (sitegen.rerun.measure.throttleguard)
    pool: int | None = None  # input sets (None: as many as fit)
    progress_events: bool = False  # report progress on stderr (sitegen.rerun.measure.watch)
    format: int = FORMAT

    def to_json(self) -> dict[str, Any]:
        return {
            "format": self.format, "operation": self.operation, "device": self.device, "interpret": self.interpret,
            "workloads": list(self.workloads), "passes": list(self.passes), "mode": self.mode,
            "impls": [asdict(ref) for ref in self.impls], "process": self.process, "processes": self.processes,
            "gate": self.gate, "skip": list(self.skip), "seed": self.seed, "repeatedProbe": self.repeated_probe,
            "minSamples": self.min_samples, "minTimeMs": self.min_time_ms, "maxTimeMs": self.max_time_ms,
            "warmup": list(self.warmup), "rtol": dict(self.rtol), "maxSmMHz": self.max_sm_mhz, "pool": self.pool,
            "progressEvents": self.progress_events,
        }

    @classmethod
    def from_json(cls, raw: Any) -> WorkerPlan:
        """The plan the parent wrote, checked; Unreadable (one line) if it is not of this format."""
        raw = _check_format(raw, "plan")

        def need(key: str) -> Any:
            return _need(raw, key, "plan")

        impls = []
        for k, ref in enumerate(_list(need("impls"), "plan.impls")):
            ref = _dict(ref, f"plan.impls[{k}]")
            impls.append(PlannedImpl(_str(_need(ref, "name", "implementation"), f"plan.impls[{k}].name"),
                                     _str(_need(ref, "target", "implementation"), f"plan.impls[{k}].target")))
        warmup = _list(need("warmup"), "plan.warmup")
        if len(warmup) != 2:
            raise Unreadable(f"plan.warmup is {warmup!r}, not [calls, ms]")
        rtol = {dtype: _number(v, f"plan.rtol.{dtype}", positive=True) for dtype, v in _dict(need("rtol"), "plan.rtol").items()}
        return cls(
            operation=_str(need("operation"), "plan.operation"), device=_str(need("device"), "plan.device"),
            interpret=_bool(need("interpret"), "plan.interpret"),
            workloads=tuple(_dict(w, "plan.workloads[]") for w in _list(need("workloads"), "plan.workloads")),
            passes=tuple(_str(p, "plan.passes[]") for p in _list(need("passes"), "plan.passes")),
            mode=_str(need("mode"), "plan.mode"), impls=tuple(impls),
            process=_int(need("process"), "plan.process"), processes=_int(need("processes"), "plan.processes", low=1),
            gate=_bool(need("gate"), "plan.gate"),
            skip=tuple(_str(s, "plan.skip[]") for s in _list(need("skip"), "plan.skip")),
            seed=_int(need("seed"), "plan.seed", low=None), repeated_probe=_bool(need("repeatedProbe"), "plan.repeatedProbe"),
            min_samples=_int(need("minSamples"), "plan.minSamples", low=1),
            min_time_ms=_number(need("minTimeMs"), "plan.minTimeMs"),
            max_time_ms=_number(raw.get("maxTimeMs"), "plan.maxTimeMs", none=True),
            warmup=(_int(warmup[0], "plan.warmup[0]"), _number(warmup[1], "plan.warmup[1]")), rtol=rtol,
            max_sm_mhz=_number(raw.get("maxSmMHz"), "plan.maxSmMHz", positive=True, none=True),
            pool=_int(raw.get("pool"), "plan.pool", low=1, none=True),
            progress_events=_bool(raw.get("progressEvents", False), "plan.progressEvents"),
        )


@dataclass(frozen=True)
class WorkerResult:
    """What one measuring process measured: the facts of its process and GPU, each
    implementation's availability, its gate outcomes per workload and its timed cases.

    gate and timings hold what sitegen.rerun.outcome.assemble reads; from_json checks the parts
    the parent reads itself (availability, gate status, samples, process counts, bandwidth)."""

    software: dict[str, Any]
    device: dict[str, Any]
    process_count: int | None  # compute processes on the GPU before measuring (None: no NVML)
    process_count_after: int | None
    copy_bytes_per_s: float
    availability: dict[str, dict[str, Any]] = field(default_factory=dict)  # impl → {"ok", "version", "reason"}
    gate: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)  # impl → workload key → outcome
    timings: dict[str, dict[str, Any]] = field(default_factory=dict)  # case key → samples and cross-checks, or error
    format: int = FORMAT

    def to_json(self) -> dict[str, Any]:
        return {"format": self.format, "software": self.software, "device": self.device,
                "processCount": self.process_count, "availability": self.availability, "gate": self.gate,
                "timings": self.timings, "copyBytesPerS": self.copy_bytes_per_s,
                "processCountAfter": self.process_count_after}

    @classmethod
    def from_json(cls, raw: Any) -> WorkerResult:
        """The result a measuring process wrote, checked; Unreadable (one line) where it is not
        of this format or holds what no measuring process writes."""
        raw = _check_format(raw, "result")
        availability = {}
        for name, avail in _dict(_need(raw, "availability", "result"), "result.availability").items():
            avail = _dict(avail, f"result.availability.{name}")
            _bool(_need(avail, "ok", f"availability of {name}"), f"result.availability.{name}.ok")
            _str(avail.get("version"), f"result.availability.{name}.version", none=True)
            _str(avail.get("reason"), f"result.availability.{name}.reason", none=True)
            availability[name] = avail
        gate = {}
        for name, per in _dict(_need(raw, "gate", "result"), "result.gate").items():
            per = _dict(per, f"result.gate.{name}")
            for key, outcome in per.items():
                outcome = _dict(outcome, f"result.gate.{name}.{key}")
                _str(_need(outcome, "status", f"gate outcome of {name} at {key}"), f"result.gate.{name}.{key}.status")
            gate[name] = per
        timings = {}
        for key, out in _dict(_need(raw, "timings", "result"), "result.timings").items():
            out = _dict(out, f"result.timings.{key}")
            if "error" in out:
                _str(out["error"], f"result.timings.{key}.error")
            else:
                samples = _list(_need(out, "samplesNs", f"timing of {key}"), f"result.timings.{key}.samplesNs")
                if not samples:
                    raise Unreadable(f"result.timings.{key}.samplesNs is empty")
                for s in samples:
                    _int(s, f"a sample of result.timings.{key}")
            timings[key] = out
        return cls(
            software=_dict(_need(raw, "software", "result"), "result.software"),
            device=_dict(_need(raw, "device", "result"), "result.device"),
            process_count=_int(_need(raw, "processCount", "result"), "result.processCount", none=True),
            process_count_after=_int(raw.get("processCountAfter"), "result.processCountAfter", none=True),
            copy_bytes_per_s=_number(_need(raw, "copyBytesPerS", "result"), "result.copyBytesPerS", positive=True),
            availability=availability, gate=gate, timings=timings,
        )
