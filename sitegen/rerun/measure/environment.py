"""Environment capture: what ran where, split into the environment's identity and the instance.

The ExecutionEnvironment holds what makes two machines interchangeable (GPU product and
its configuration, software versions); the GPU's UUID and the host name go on each run's
evidence.instance, so two H200s with the same software share one environment digest.
"""

from __future__ import annotations

import platform
import socket
from typing import Any


def software_facts() -> dict[str, Any]:
    """Versions of Python, torch, CUDA (as torch was built), triton; torch side, in a worker."""
    import torch

    out: dict[str, Any] = {"python": platform.python_version(), "torch": torch.__version__}
    if torch.version.cuda:
        out["cuda"] = torch.version.cuda
    try:
        import triton

        out["triton"] = triton.__version__
    except ImportError:
        pass
    return out


def device_facts(device: str) -> dict[str, Any]:
    """What torch knows of the device (SM count, architecture); empty off CUDA."""
    if not device.startswith("cuda"):
        return {}
    import torch

    props = torch.cuda.get_device_properties(0)
    return {
        "product": props.name,
        "architecture": f"sm_{props.major}{props.minor}",
        "smCount": props.multi_processor_count,
        "memoryBytes": props.total_memory,
    }


def environment_spec(nvml: dict[str, Any] | None, device: dict[str, Any], software: dict[str, Any],
                     *, interpret: bool) -> dict[str, Any]:
    """The ExecutionEnvironment spec. NVML facts win over torch's where both exist."""
    nvml = nvml or {}
    if interpret or not (nvml or device):
        hardware: dict[str, Any] = {
            "vendor": "cpu",
            "product": platform.processor() or platform.machine() or "unknown CPU",
            "architecture": platform.machine() or "unknown",
            "count": 1,
        }
    else:
        hardware = {
            "vendor": "nvidia",
            "product": nvml.get("product") or device.get("product"),
            "architecture": nvml.get("architecture") or device.get("architecture"),
            "memoryBytes": nvml.get("memoryBytes") or device.get("memoryBytes"),
            "count": 1,
            "smCount": device.get("smCount"),
            "maxClocksMHz": nvml.get("maxClocksMHz"),
            "powerLimitW": nvml.get("powerLimitW"),
            "ecc": nvml.get("ecc"),
            "persistenceMode": nvml.get("persistenceMode"),
        }
    sw: dict[str, Any] = {
        "framework": {"name": "torch", "version": software["torch"]},
        "python": software["python"],
    }
    if nvml.get("driver") and not interpret:
        sw["driver"] = nvml["driver"]
    if software.get("cuda") and not interpret:
        sw["cudaToolkit"] = software["cuda"]
    if software.get("triton"):
        sw["libraries"] = {"triton": software["triton"]}
    spec: dict[str, Any] = {
        "hardware": {k: v for k, v in hardware.items() if v is not None},
        "software": sw,
    }
    if interpret:
        spec["settings"] = {"TRITON_INTERPRET": "1"}
    return spec


def instance(nvml: dict[str, Any] | None, host: str | None = None) -> dict[str, Any]:
    """evidence.instance: the particular GPU and host (`host` where the host name is not enough)."""
    out = {"hostname": host or socket.gethostname() or None}
    if nvml and nvml.get("uuid"):
        out["gpuUuid"] = nvml["uuid"]
    return {k: v for k, v in out.items() if v}
