"""Checks on untrusted code that runs in the harness's own process: the clock it is timed by and
the judges that decide its results (clock_intact), and threads it leaves running (host_threads).

Isolation chosen: identity. When sitegen.rerun.measure.clock is imported (in a worker, before any
implementation is), snapshot() keeps every function a window reads time through, and each
Python function's code object: time.perf_counter_ns/perf_counter/monotonic,
torch.cuda.synchronize/_sleep, torch.cuda.Event.record/query/synchronize/elapsed_time, and the
harness's own Clock and Window methods and module globals. It keeps the judges too, since code
that replaces a judge needs no clock: the gate (gate.check, gate_workload), the timed-output
check (TimedCheck.verify and the methods and functions it reads), integrity's check functions,
the worker's result writer and json.dumps; protect() adds the operation's reference and input
methods once it is loaded. And it keeps this module's own state (_SNAPSHOT, _BASE_THREADS,
_LIBRARY_DIRS, _LIBRARY) by identity, with a digest of what _SNAPSHOT and _BASE_THREADS hold.
After every window, and after each implementation is imported and built, they are compared by
identity; a change is reported and undone at once, so that nothing else is timed or judged by a
patched function. Which threads are torch's or triton's is kept here (_LIBRARY), never read from
an attribute a thread could set on itself.

This is still beatable, and the evidence rules assume it is (sitegen.site.facts.trustedcode: outside
code earns Verified only when the registry reviewed it): code in this process has read this file
and can patch what it reads, including these functions' defaults and the containers they keep.

What this cannot see: a patch below Python (ctypes writing into a function's machine code, the
CUDA driver's or libc's clocks, LD_PRELOAD); a patch made and undone inside one call (the
window reads no clock between its start mark and the call's return, so such a patch changes
nothing it reads); code objects rewritten in place through ctypes; a thread started before the
clock module was imported; and a native thread the implementation started outside any timed
window (before timing began) and fed work through memory afterwards, which only the checks of
its results (timed_output, host_timed) can see.
"""

from __future__ import annotations

import os
import threading
import time

import weakref

_SNAPSHOT: list[tuple[object, str, str, object, object]] = []
_BASE_THREADS: set[int] = set()
_LIBRARY_DIRS: tuple[str, ...] = ()
# Threads the wrapped Thread.start judged torch's or triton's; a thread cannot add itself by an attribute.
_LIBRARY: weakref.WeakSet = weakref.WeakSet()
# [digest of _SNAPSHOT's and _BASE_THREADS' contents], taken when snapshot() or protect() ends.
_SEAL: list[int] = []


def _owners() -> list[tuple[object, str, str]]:
    import torch

    from sitegen.rerun.measure import clock

    from sitegen.rerun.checks import guards

    out = [(time, name, f"time.{name}") for name in ("perf_counter_ns", "perf_counter", "monotonic")]
    out += [(torch.cuda, name, f"torch.cuda.{name}") for name in ("synchronize", "_sleep")]
    out += [(torch.cuda.Event, name, f"torch.cuda.Event.{name}") for name in ("record", "query", "synchronize", "elapsed_time")]
    out += [(clock.Clock, name, f"Clock.{name}") for name in ("window", "_mark", "sync", "empty", "base_ns", "hidden_ns",
                                                              "timed", "_events")]
    out += [(clock.Window, "stream_ns", "Window.stream_ns")]
    out += [(clock, name, f"sitegen.rerun.measure.clock.{name}") for name in ("time", "torch", "guards", "Window")]
    out += [(guards, name, f"sitegen.rerun.checks.guards.{name}") for name in ("changed", "restore", "os_threads", "Watch",
                                                                         "_foreign_threads", "_library_thread")]
    out += [(guards, name, f"sitegen.rerun.checks.guards.{name}") for name in ("check_build", "_owners", "_raw", "_seal",
                                                                         "_started_by_library", "_SNAPSHOT",
                                                                         "_BASE_THREADS", "_LIBRARY_DIRS", "_LIBRARY",
                                                                         "_SEAL")]
    out += [(threading.Thread, "start", "threading.Thread.start"), (threading, "enumerate", "threading.enumerate")]
    return out + _judges()


def _judges() -> list[tuple[object, str, str]]:
    """What decides a run's outcome, as opposed to its time: replaced, it passes anything."""
    import json

    from sitegen.rerun.checks import gate, integrity, timedcheck
    from sitegen.rerun.measure import passes, worker

    out = [(gate, name, f"sitegen.rerun.checks.gate.{name}") for name in ("check", "gate_workload", "checked_shapes", "_poison",
                                                                          "_errors", "_CHUNK_ELEMENTS", "math", "aliasing",
                                                                          "foreign", "modes")]
    out += [(timedcheck.TimedCheck, name, f"TimedCheck.{name}") for name in (
        "verify", "record", "record_loss", "record_foreign", "record_inputs", "output", "pick", "_output_error",
        "_digests", "__init__")]
    out += [(timedcheck, name, f"sitegen.rerun.checks.timedcheck.{name}") for name in (
        "digest", "modes", "foreign", "aliasing", "as_matrix", "_loss_copy", "TimedCheck", "DIGEST_SLACK")]
    out += [(passes, name, f"sitegen.rerun.measure.passes.{name}") for name in ("TimedCheck", "aliasing", "foreign", "modes")]
    out += [(integrity, name, f"sitegen.rerun.checks.integrity.{name}") for name in (
        "roofline", "timed_output", "repeated_input", "host_timed", "guard", "calm", "throttle", "exclusive",
        "floor_ns", "GUARDS")]
    out += [(worker, name, f"sitegen.rerun.measure.worker.{name}") for name in ("main", "run", "implementation", "write_atomic",
                                                                        "json")]
    out += [(json, "dumps", "json.dumps")]
    return out


def protect(op) -> None:
    """Keep the loaded operation's judges too: its reference, inputs and what the gate reads of it
    (its methods are the contract; outside code that replaces them picks its own answers)."""
    cls = type(op)
    for attr in ("reference", "make_inputs", "make_grad_output", "gate_workloads", "output_shape",
                 "liger_script_inputs", "differentiable", "writable_inputs", "tolerances"):
        owner = next((k for k in cls.__mro__ if attr in vars(k)), None)
        if owner is not None and not any(o is owner and a == attr for o, a, *_ in _SNAPSHOT):
            value = vars(owner)[attr]
            _SNAPSHOT.append((owner, attr, f"{cls.__name__}.{attr}", value, getattr(value, "__code__", None)))
    _seal()


def _contents() -> int:
    # Identity of every kept object and the base thread idents: what a swap inside the containers changes.
    return hash((tuple((id(o), a, id(v), id(c)) for o, a, _, v, c in _SNAPSHOT), frozenset(_BASE_THREADS)))


def _seal() -> None:
    _SEAL[:] = [_contents()]


def _started_by_library(frame) -> bool:
    """Whether the nearest caller outside the standard library is torch's or triton's."""
    stdlib = os.path.dirname(threading.__file__) + os.sep
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith(stdlib) and name != __file__:
            return name.startswith(_LIBRARY_DIRS)
        frame = frame.f_back
    return False


def _tracing_start(real):
    def start(self, *args, **kwargs):
        import sys

        # Who started it, not what it runs: a pool the implementation feeds runs stdlib code.
        if _started_by_library(sys._getframe(1)):
            _LIBRARY.add(self)
        return real(self, *args, **kwargs)

    start.__wrapped__ = real
    return start


def _raw(owner: object, attr: str) -> object:
    # A class's own entry (the function, not a bound method), else the attribute.
    return vars(owner)[attr] if isinstance(owner, type) and attr in vars(owner) else getattr(owner, attr, None)


def snapshot() -> None:
    """Keep the clock functions and judges as they are now (once, when the clock module is imported)."""
    global _LIBRARY_DIRS
    if _SNAPSHOT:
        return
    dirs = []
    import torch

    dirs.append(os.path.dirname(torch.__file__))
    try:
        import triton

        dirs.append(os.path.dirname(triton.__file__))
    except Exception:  # triton is optional on a CPU
        pass
    _LIBRARY_DIRS = tuple(d + os.sep for d in dirs)
    threading.Thread.start = _tracing_start(threading.Thread.start)
    for owner, attr, label in _owners():
        value = _raw(owner, attr)
        _SNAPSHOT.append((owner, attr, label, value, getattr(value, "__code__", None)))
    _BASE_THREADS.update(t.ident for t in threading.enumerate())
    _seal()


# The containers are bound as defaults when this module is imported: a module global swapped for
# an empty list is seen by the identity entry for it, not iterated in its place.
def changed(kept=_SNAPSHOT, seal=_SEAL) -> list[str]:
    """Labels of the clock functions and judges that are no longer what snapshot() kept."""
    out = []
    for owner, attr, label, value, code in kept:
        now = _raw(owner, attr)
        if now is not value or (code is not None and getattr(value, "__code__", None) is not code):
            out.append(label)
    if seal and seal[0] != _contents():
        out.append("sitegen.rerun.checks.guards state (its kept functions or base threads)")
    return out


def restore(kept=_SNAPSHOT) -> None:
    for owner, attr, _, value, code in kept:
        if _raw(owner, attr) is not value:
            setattr(owner, attr, value)
        if code is not None and getattr(value, "__code__", None) is not code:
            value.__code__ = code


def os_threads() -> set[str]:
    """This process's OS threads (Linux /proc; empty where there is none)."""
    try:
        return set(os.listdir("/proc/self/task"))
    except OSError:
        return set()


def _library_thread(t: threading.Thread) -> bool:
    """A thread torch or triton started (their compile pools): judged by who called start(),
    the nearest caller outside the standard library (threading.Thread.start is wrapped at
    snapshot(); a thread started otherwise is not the library's, whatever it sets on itself)."""
    return t in _LIBRARY


def _foreign_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.ident not in _BASE_THREADS and t.is_alive() and not _library_thread(t)]


def check_build(threads_before: set[int]) -> str | None:
    """After importing and building an implementation: why it is refused (clock_intact,
    host_threads), or None."""
    labels = changed()
    if labels:
        restore()
        return f"refused by clock_intact: importing or building it replaced {', '.join(labels)}"
    left = [t for t in _foreign_threads() if t.ident not in threads_before]
    if left:
        return f"refused by host_threads: importing or building it left thread {left[0].name!r} running"
    return None


def thread_ids() -> set[int]:
    return {t.ident for t in threading.enumerate()}


class Watch:
    """What the windows of one case saw: {check name: the first reason it failed}."""

    def __init__(self):
        self.violations: dict[str, str] = {}
        # Whose calls are being watched (an implementation's name), and each thread already
        # charged to one: a thread another implementation left behind is not this one's.
        self.subject = ""
        self.blamed: dict[int, str] = {}

    def take(self) -> dict[str, str]:
        seen, self.violations = self.violations, {}
        return seen

    def after_call(self, tasks_before: set[str], *, strict: bool) -> None:
        """After a window: the clock intact, no thread of the implementation's still running;
        ``strict`` (timed calls): no OS thread started during the call outlives it."""
        labels = changed()
        if labels:
            restore()
            self.violations.setdefault("clock_intact", f"{', '.join(labels)} replaced while the implementation ran "
                                                       "(undone before anything else was timed)")
        left = [t for t in _foreign_threads() if self.blamed.setdefault(t.ident, self.subject) == self.subject]
        if left:
            self.violations.setdefault("host_threads", f"Python thread {left[0].name!r} the implementation started was "
                                                       "still running when its call's window closed")
        elif strict:
            new = os_threads() - tasks_before
            if new:
                self.violations.setdefault("host_threads", f"{len(new)} OS thread(s) started during a timed call were "
                                                           "still running when its window closed")
