"""Record pages rendered by forked worker processes while the parent renders the rest.

Workers are forked once the index is built, so they share it copy-on-write instead of
rebuilding or pickling it. Each renders a contiguous slice of the runs straight into the
staging folder and sends back only the paths it wrote. A page depends on the index alone,
so the bytes are those of a one-process build (tests/site/test_incremental_build.py).
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Callable

from sitegen.problems import InputError, Problem

# What forked workers inherit: (index, renderer, writer, write_runs, runs). Set only while a
# pool is alive; a module global because fork shares it without pickling.
_shared: tuple | None = None
SLICES_PER_WORKER = 4


def default_jobs() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def _nothing() -> None:
    pass


def _render_slice(bounds: tuple[int, int]) -> list[str]:
    index, renderer, writer, write_runs, todo = _shared
    before = len(writer.files)
    # The parent's progress display is not this process's to draw on.
    write_runs(index, renderer, writer, todo[bounds[0]:bounds[1]], _nothing)
    return writer.files[before:]


def render_in_workers(index, renderer, writer, write_runs: Callable, write_rest: Callable[[], None], jobs: int,
                      progress, todo: list | None = None) -> None:
    """``write_runs`` over the runs ``todo`` (default: every run), in ``jobs`` workers where possible, and ``write_rest`` here.

    ``write_runs(index, renderer, writer, runs, advance)`` calls ``advance()`` after each run.
    """
    todo = index.runs if todo is None else todo
    runs = len(todo)
    if jobs <= 1 or runs < 2 or "fork" not in multiprocessing.get_all_start_methods():
        progress.stage("record pages", total=runs)
        write_runs(index, renderer, writer, todo, progress.advance)
        write_rest()
        return
    count = min(runs, jobs * SLICES_PER_WORKER)
    edges = [runs * i // count for i in range(count + 1)]
    global _shared
    _shared = (index, renderer, writer, write_runs, todo)
    # An executor, not multiprocessing.Pool: when a worker dies (the OOM killer, a signal)
    # the pool would wait for its slice for ever; the executor fails the build instead.
    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"))
    try:
        slices = [pool.submit(_render_slice, bounds) for bounds in zip(edges, edges[1:])]
        write_rest()
        progress.stage("record pages", total=runs)
        # In run order, whatever the timing, so the files are adopted in the same order.
        for done, low, high in zip(slices, edges, edges[1:]):
            writer.adopt(done.result())
            progress.advance(high - low)
    except BrokenProcessPool:
        raise InputError([Problem(str(writer.out), "$", "a process rendering record pages died (out of memory?); "
                                  "nothing was changed; try fewer --jobs")]) from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        _shared = None
