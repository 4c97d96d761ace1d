"""Record pages rendered by forked worker processes while the parent renders the rest.

Workers are forked once the index is built, so they share it copy-on-write instead of
rebuilding or pickling it. Each renders a contiguous slice of the runs straight into the
staging folder and sends back only the paths it wrote. A page depends on the index alone,
so the bytes are those of a one-process build (tests/site/test_parallel_build.py).
"""

from __future__ import annotations

import multiprocessing
import os
from typing import Callable

# What forked workers inherit: (index, renderer, writer, write_runs). Set only while a
# pool is alive; a module global because fork shares it without pickling.
_shared: tuple | None = None
SLICES_PER_WORKER = 4


def default_jobs() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _render_slice(bounds: tuple[int, int]) -> list[str]:
    index, renderer, writer, write_runs = _shared
    before = len(writer.files)
    write_runs(index, renderer, writer, index.runs[bounds[0]:bounds[1]])
    return writer.files[before:]


def render_in_workers(index, renderer, writer, write_runs: Callable, write_rest: Callable[[], None], jobs: int) -> None:
    """``write_runs`` over every run, in ``jobs`` workers where possible, and ``write_rest`` here."""
    runs = len(index.runs)
    if jobs <= 1 or runs < 2 or "fork" not in multiprocessing.get_all_start_methods():
        write_runs(index, renderer, writer, index.runs)
        write_rest()
        return
    count = min(runs, jobs * SLICES_PER_WORKER)
    edges = [runs * i // count for i in range(count + 1)]
    global _shared
    _shared = (index, renderer, writer, write_runs)
    try:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            pending = pool.map_async(_render_slice, list(zip(edges, edges[1:])))
            write_rest()
            for paths in pending.get():
                writer.adopt(paths)
    finally:
        _shared = None
