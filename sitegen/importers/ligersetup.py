"""How and where Liger-Kernel's published numbers were taken: protocols and environments.

The CSV records only the GPU's name, so an environment is hardware only (vendor,
product, architecture) and its software is empty. The protocols describe the
benchmark scripts: speed through ``triton.testing.do_bench`` with quantiles
[0.5, 0.2, 0.8]; memory as the peak allocated memory of repeated calls.
"""

from __future__ import annotations

import re
from typing import Any, get_args

from sitegen.core.documents import document
from sitegen.importers.core import environment_document, gpu_slug
from sitegen.core.ligertables import LIGER_REPOSITORY
from sitegen.format.model.definitions import Pass

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
    return document("BenchmarkProtocol", {"name": name, "title": title}, {
        "harness": dict(HARNESS),
        "measurement": {"timer": timer, "primaryStatistic": "median"},
        "comparability": {"notes": notes, "family": FAMILY},
    })


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


def environment(gpu_name: str) -> tuple[dict[str, Any], bool]:
    """The ExecutionEnvironment of a Liger benchmark host, and whether the GPU was known."""
    short = re.sub(r"^NVIDIA\s+", "", gpu_name.strip())
    return environment_document(f"liger-bench-{gpu_slug(gpu_name)}", f"Liger benchmark host · {short}", gpu_name, {})
