"""How and where Liger-Kernel's published numbers were taken: protocols and environments.

The CSV records only the GPU's name, so an environment is hardware only (vendor,
product, architecture) and its software is empty. The protocols describe the
benchmark scripts: speed through ``triton.testing.do_bench`` with quantiles
[0.5, 0.2, 0.8]; memory as the peak allocated memory of repeated calls.
"""

from __future__ import annotations

import re
from typing import Any, get_args

from sitegen.formatversion import API_VERSION
from sitegen.importers.catalog import slug
from sitegen.importers.ligertables import LIGER_REPOSITORY
from sitegen.model.definitions import Pass

FAMILY = "liger_kernel_bench"
HARNESS = {"name": "Liger-Kernel benchmark scripts", "repository": LIGER_REPOSITORY}
PASSES: tuple[str, ...] = get_args(Pass)

_TIMED = {
    "forward": "the module forward pass",
    "backward": "the backward pass alone, from a retained forward graph",
    "full": "the forward and backward passes together",
}
_PASS_TITLE = {"forward": "forward pass", "backward": "backward pass", "full": "forward + backward"}
_CAVEAT = (
    "The upstream CSV records no CUDA, driver, or torch version; the Liger release rides each "
    "run's labels. Comparable only within one kernel, workload, timed pass, and GPU."
)


def _protocol(name: str, title: str, timer: str, notes: str) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "BenchmarkProtocol",
        "metadata": {"name": name, "title": title},
        "spec": {
            "harness": dict(HARNESS),
            "measurement": {"timer": timer, "primaryStatistic": "median"},
            "comparability": {"notes": notes, "family": FAMILY},
        },
    }


def speed_protocol(mode: str) -> dict[str, Any]:
    """The latency protocol of one pass (forward, backward or full)."""
    notes = (
        f"Timed: {_TIMED[mode]}, via triton.testing.do_bench with quantiles 0.5/0.2/0.8 "
        f"(median with p20/p80 spread). {_CAVEAT}"
    )
    return _protocol(f"liger-bench-do-bench-{mode}", f"Liger benchmark harness · {_PASS_TITLE[mode]}", "cuda_events", notes)


def memory_protocol(mode: str) -> dict[str, Any]:
    """The peak-memory protocol of one pass: nothing is timed."""
    notes = (
        f"Measured: peak allocated GPU memory (torch.cuda.max_memory_allocated after "
        f"reset_peak_memory_stats) over repeated calls of {_TIMED[mode]}, in MB of 2^20 bytes, "
        f"summarized by the quantiles 0.5/0.2/0.8 (median with p20/p80 spread); no time is "
        f"measured. {_CAVEAT}"
    )
    return _protocol(
        f"liger-bench-memory-{mode}", f"Liger benchmark harness · peak memory, {_PASS_TITLE[mode]}",
        "none (peak memory: torch.cuda.max_memory_allocated)", notes,
    )


# (pattern, vendor, architecture), first match wins; word boundaries keep A10 from A100.
GPUS: list[tuple[str, str, str]] = [
    (r"\bG?B[12]00\b", "nvidia", "sm_100"),
    (r"\bG?H[128]00\b", "nvidia", "sm_90"),
    (r"\bA[18]00\b", "nvidia", "sm_80"),
    (r"\bRTX 40[6-9]0\b|\bL40S?\b|\bL4\b|\bRTX 6000 Ada\b", "nvidia", "sm_89"),
    (r"\bRTX 30[5-9]0\b|\bA10G?\b|\bA40\b|\bRTX A[456]000\b", "nvidia", "sm_86"),
    (r"\bRTX 50[6-9]0\b", "nvidia", "sm_120"),
    (r"\bV100\b", "nvidia", "sm_70"),
    (r"\bT4\b", "nvidia", "sm_75"),
    (r"\bMI3[02]5?X\b|\bMI300A\b", "amd", "gfx942"),
    (r"\bMI250X?\b|\bMI210\b", "amd", "gfx90a"),
]
_VENDOR_HINTS = [
    (r"nvidia|geforce|tesla|quadro|\brtx\b|\bgtx\b", "nvidia"),
    (r"\bamd\b|radeon|instinct|\bmi\d", "amd"),
    (r"intel|gaudi|\barc\b", "intel"),
]


def gpu_hardware(gpu_name: str) -> tuple[dict[str, str], bool]:
    """Hardware of a GPU name, and whether the name was known (else a guessed vendor)."""
    for pattern, vendor, architecture in GPUS:
        if re.search(pattern, gpu_name, re.IGNORECASE):
            return {"vendor": vendor, "product": gpu_name, "architecture": architecture}, True
    vendor = next((v for p, v in _VENDOR_HINTS if re.search(p, gpu_name, re.IGNORECASE)), "unknown")
    return {"vendor": vendor, "product": gpu_name, "architecture": "unknown"}, False


def gpu_slug(gpu_name: str) -> str:
    """The GPU in names and ids: "NVIDIA B200" → "nvidia-b200"."""
    return slug(gpu_name)


def environment(gpu_name: str) -> tuple[dict[str, Any], bool]:
    """The ExecutionEnvironment of a Liger benchmark host, and whether the GPU was known."""
    hardware, known = gpu_hardware(gpu_name)
    short = re.sub(r"^NVIDIA\s+", "", gpu_name.strip())
    document = {
        "apiVersion": API_VERSION,
        "kind": "ExecutionEnvironment",
        "metadata": {"name": f"liger-bench-{gpu_slug(gpu_name)}", "title": f"Liger benchmark host · {short}"},
        "spec": {"hardware": hardware, "software": {}},
    }
    return document, known
