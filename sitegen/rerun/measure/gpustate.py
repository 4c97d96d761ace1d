"""The GPU as NVML sees it: static facts, momentary state (clocks, temperature, throttling), processes.

Every function degrades to None where NVML (nvidia-ml-py) or a GPU is missing, so the same
code runs on a CPU-only machine under --interpret.
"""

from __future__ import annotations

import os
from typing import Any

from sitegen.rules.throttling import REASONS, THROTTLING, throttled  # noqa: F401 (read with the state)

_handle_cache: dict[str, Any] = {}


def _nvml():
    try:
        import pynvml
    except ImportError:
        return None
    if "init" not in _handle_cache:
        try:
            pynvml.nvmlInit()
            _handle_cache["init"] = True
        except Exception:
            _handle_cache["init"] = False
    return pynvml if _handle_cache["init"] else None


def handle():
    """The NVML handle of the GPU this process's CUDA device 0 is, or None."""
    nv = _nvml()
    if nv is None:
        return None
    if "handle" not in _handle_cache:
        first = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip() or "0"
        try:
            if first.startswith(("GPU-", "MIG-")):
                _handle_cache["handle"] = nv.nvmlDeviceGetHandleByUUID(first)
            else:
                _handle_cache["handle"] = nv.nvmlDeviceGetHandleByIndex(int(first))
        except Exception:
            _handle_cache["handle"] = None
    return _handle_cache["handle"]


def _try(call, *args):
    try:
        return call(*args)
    except Exception:
        return None


def _text(value):
    return value.decode() if isinstance(value, bytes) else value


def facts() -> dict[str, Any] | None:
    """Static facts of the GPU and driver; None without NVML or GPU. Unknown facts are absent."""
    nv, h = _nvml(), handle()
    if nv is None or h is None:
        return None
    out: dict[str, Any] = {
        "product": _text(_try(nv.nvmlDeviceGetName, h)),
        "uuid": _text(_try(nv.nvmlDeviceGetUUID, h)),
        "driver": _text(_try(nv.nvmlSystemGetDriverVersion)),
    }
    cc = _try(nv.nvmlDeviceGetCudaComputeCapability, h)
    if cc:
        out["architecture"] = f"sm_{cc[0]}{cc[1]}"
    mem = _try(nv.nvmlDeviceGetMemoryInfo, h)
    if mem is not None:
        out["memoryBytes"] = int(mem.total)
    sm = _try(nv.nvmlDeviceGetMaxClockInfo, h, nv.NVML_CLOCK_SM)
    memclk = _try(nv.nvmlDeviceGetMaxClockInfo, h, nv.NVML_CLOCK_MEM)
    if sm or memclk:
        out["maxClocksMHz"] = {k: int(v) for k, v in (("sm", sm), ("memory", memclk)) if v}
    power = _try(nv.nvmlDeviceGetEnforcedPowerLimit, h)
    if power:
        out["powerLimitW"] = round(power / 1000.0, 3)
    ecc = _try(nv.nvmlDeviceGetEccMode, h)
    if ecc is not None:
        out["ecc"] = bool(ecc[0])
    persistence = _try(nv.nvmlDeviceGetPersistenceMode, h)
    if persistence is not None:
        out["persistenceMode"] = bool(persistence)
    return {k: v for k, v in out.items() if v is not None}


def max_sm_mhz(gpu_facts: dict[str, Any] | None) -> int | None:
    """The maximum SM clock among `facts()`, which the throttle rule measures clocks against."""
    return ((gpu_facts or {}).get("maxClocksMHz") or {}).get("sm")


def state() -> dict[str, Any] | None:
    """Clocks, temperature and active throttle reasons now, shaped like the model's GpuState."""
    nv, h = _nvml(), handle()
    if nv is None or h is None:
        return None
    out: dict[str, Any] = {
        "smClockMHz": _try(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_SM),
        "memoryClockMHz": _try(nv.nvmlDeviceGetClockInfo, h, nv.NVML_CLOCK_MEM),
        "temperatureC": _try(nv.nvmlDeviceGetTemperature, h, nv.NVML_TEMPERATURE_GPU),
    }
    getter = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or nv.nvmlDeviceGetCurrentClocksThrottleReasons
    bits = _try(getter, h)
    if bits is not None:
        out["throttleReasons"] = [name for bit, name in sorted(REASONS.items()) if bits & bit]
    return {k: v for k, v in out.items() if v is not None}


def compute_processes() -> int | None:
    """How many processes hold a compute context on the GPU; None when NVML cannot say."""
    nv, h = _nvml(), handle()
    if nv is None or h is None:
        return None
    procs = _try(nv.nvmlDeviceGetComputeRunningProcesses, h)
    return None if procs is None else len(procs)
