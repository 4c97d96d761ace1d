"""Worker processes forked from the parent, for work spread over every core.

Forked, not spawned: a worker starts with the parent's memory (a loaded registry, its
index) shared copy-on-write, so nothing has to be pickled to it or rebuilt there. The
task is a module global set before the fork, so it may be any callable, closures included.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager

from sitegen.core.problems import InputError, Problem

_task: Callable | None = None
_PR_SET_PDEATHSIG = 1


def _prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (AttributeError, OSError):
        return None


_PRCTL = _prctl()


def default_jobs() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def _run(argument):
    return _task(argument)


def _die_with(parent: int) -> None:
    # A worker holds what the parent held when it forked: a registry's write lock, the
    # staging folder's flock, the output pipes. Orphaned (the parent killed, say by the
    # OOM killer), it would keep them, and the registry locked, for as long as it lived.
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before the request took hold
        os._exit(1)


@contextmanager
def forked_pool(task: Callable, jobs: int, *, where: str, doing: str, advice: str = "") -> Iterator[Callable[[object], Future]]:
    """``submit(argument)``, which runs ``task(argument)`` in one of ``jobs`` processes forked on entry.

    An executor, not multiprocessing.Pool: when a worker dies (the OOM killer, a signal)
    the pool would wait for its task for ever; here the caller gets one InputError naming
    ``where`` and what the process was ``doing``, then ``advice``. Workers die with the
    process that forked them.
    """
    global _task
    _task = task
    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"),
                               initializer=_die_with, initargs=(os.getpid(),))
    try:
        yield lambda argument: pool.submit(_run, argument)
    except BrokenProcessPool:
        raise InputError([Problem(where, "$", f"a process {doing} died (out of memory?); nothing was changed{advice}")]) from None
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        _task = None


def forked_map(task: Callable, items: list, jobs: int, *, where: str, doing: str, advice: str = "") -> Iterator:
    """``task(item)`` of each item, in order, run by ``jobs`` forked processes where there are two or more of each.

    Items are handed out in the order given (put the longest first), one at a time, so a
    process that finishes early takes the next; each result is yielded as soon as it and
    those before it are done, so the caller can use it while the rest are made. The
    processes end when the last result is taken: consume every one.
    """
    if jobs <= 1 or len(items) < 2 or not can_fork():
        yield from (task(item) for item in items)
        return
    with forked_pool(task, min(jobs, len(items)), where=where, doing=doing, advice=advice) as submit:
        pending = deque(submit(item) for item in items)
        while pending:
            # Popped first: a future holds its result, which the caller may want freed once used.
            yield pending.popleft().result()
