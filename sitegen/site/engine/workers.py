"""Record pages rendered by forked worker processes while the parent renders the rest.

Workers are forked once the index is built, so they share it copy-on-write instead of
rebuilding or pickling it. Each renders a contiguous slice of the runs straight into the
staging folder and sends back only the paths it wrote. A page depends on the index alone,
so the bytes are those of a one-process build (tests/site/test_incremental_build.py).
"""

from __future__ import annotations

from typing import Callable

from sitegen.core.forkpool import can_fork, forked_pool

SLICES_PER_WORKER = 4


def _nothing() -> None:
    pass


def render_in_workers(index, renderer, writer, write_runs: Callable, write_rest: Callable[[], None], jobs: int,
                      progress, todo: list | None = None) -> None:
    """``write_runs`` over the runs ``todo`` (default: every run), in ``jobs`` workers where possible, and ``write_rest`` here.

    ``write_runs(index, renderer, writer, runs, advance)`` calls ``advance()`` after each run.
    """
    todo = index.runs if todo is None else todo
    runs = len(todo)
    if jobs <= 1 or runs < 2 or not can_fork():
        progress.stage("record pages", total=runs)
        write_runs(index, renderer, writer, todo, progress.advance)
        write_rest()
        return
    count = min(runs, jobs * SLICES_PER_WORKER)
    edges = [runs * i // count for i in range(count + 1)]

    def render_slice(bounds: tuple[int, int]) -> list[str]:
        before = writer.mark()
        # The parent's progress display is not this process's to draw on.
        write_runs(index, renderer, writer, todo[bounds[0]:bounds[1]], _nothing)
        return writer.since(before)

    with forked_pool(render_slice, jobs, where=str(writer.out), doing="rendering record pages",
                     advice="; try fewer --jobs") as submit:
        slices = [submit(bounds) for bounds in zip(edges, edges[1:])]
        write_rest()
        progress.stage("record pages", total=runs)
        # In run order, whatever the timing, so the files are adopted in the same order.
        for done, low, high in zip(slices, edges, edges[1:]):
            writer.adopt(done.result())
            progress.advance(high - low)
