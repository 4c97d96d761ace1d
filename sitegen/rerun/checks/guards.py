"""Checks on untrusted code that runs in the harness's own process: the clock it is timed by and
the judges that decide its results (clock_intact), and threads it leaves running (host_threads).

Isolation chosen: identity. When sitegen.rerun.measure.clock is imported (in a worker, before any
implementation is), snapshot() keeps every function a window reads time through, and each
Python function's code object: time.perf_counter_ns/perf_counter/monotonic,
torch.cuda.synchronize/_sleep, torch.cuda.Event.record/query/synchronize/elapsed_time, and the
harness's own Clock and Window methods and module globals (the clock names them: this module
imports none of the modules it guards). keep() adds the judges, since code that replaces a judge
needs no clock: the gate (gate.check, gate_workload), the timed-output check (TimedCheck.verify
and the methods and functions it reads), integrity's check functions, the worker's result writer
and json.dumps (sitegen.rerun.checks.judges names them; a measuring process keeps them before it
loads the operation, and worker.implementation before it imports one); protect() adds the
operation's reference and input methods once it is loaded. And it keeps this module's own state
(_SNAPSHOT, _BASE_THREADS, _LIBRARY_DIRS, _LIBRARY) by identity, with a digest of what _SNAPSHOT
and _BASE_THREADS hold.
After every window, and after each implementation is imported and built, they are compared by
identity; a change is reported and undone at once, so that nothing else is timed or judged by a
patched function. Which threads are torch's or triton's is kept here (_LIBRARY), never read from
an attribute a thread could set on itself, and only for a start() called from code compiled
from the library's file as it is on disk (not code compiled under its name).

Issue 43: the guard never checks itself through a name it protects. Everything a check calls
is bound as a default argument when this module (or the clock, the gate, the timed check) is
imported, before any implementation is: `guards.changed = lambda *a, **k: []` rebinds a name
nothing calls through, and is seen. Each kept function's code, defaults and keyword defaults are
compared, not only its identity. A second copy of the kept entries is reachable by no module
name, and close() (a measuring process, before it imports any implementation) stops _seal(): a
rewritten _SNAPSHOT resealed to agree with a patch still differs from it. The secret draws
(sitegen.rerun.checks.draws) and torch.linalg.vector_norm are kept too, and the comparisons call
their own bound copies, so a replaced generator or norm neither picks nor judges anything.

This is still beatable, and the evidence rules assume it is (sitegen.facts.trustedcode: outside
code earns Verified only when the registry reviewed it): code in this process has read this file
and can patch what it reads, including these functions' defaults and the containers they keep.

What this cannot see: code that reaches the kept copies through the functions' defaults and
closures (or gc) and rewrites both sides at once; a patch below Python (ctypes writing into a function's machine code, the
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
# A second copy of the kept entries, reachable by no module name (only through the defaults of
# the functions below, which are themselves kept): code that rewrites _SNAPSHOT and reseals it
# (issue 43) still differs from this. Once close() has run (a measuring process, before any
# implementation is imported), _seal() changes neither.
_private: list = []
_closed: list = []


def own() -> list[tuple[object, str, str]]:
    """The guard's own functions and state, for the clock's snapshot (sitegen.rerun.measure.clock
    names them with what a window reads time through, in this order)."""
    from sitegen.rerun.checks import guards

    out = [(guards, name, f"sitegen.rerun.checks.guards.{name}") for name in ("changed", "restore", "os_threads", "Watch",
                                                                         "_foreign_threads", "_library_thread")]
    out += [(guards, name, f"sitegen.rerun.checks.guards.{name}") for name in ("check_build", "keep", "_raw", "_seal",
                                                                         "_started_by_library", "_SNAPSHOT",
                                                                         "_BASE_THREADS", "_LIBRARY_DIRS", "_LIBRARY",
                                                                         "_SEAL")]
    out += [(guards, name, f"sitegen.rerun.checks.guards.{name}") for name in ("close", "_genuine", "_library_code", "_same_state",
                                                                             "_fn_state", "_contents")]
    out += [(guards.Watch, name, f"Watch.{name}") for name in ("after_call", "take", "__init__")]
    return out


def _fn_state(value) -> tuple | None:
    """What a kept function runs and is called with: its code object, defaults and keyword
    defaults (each can be swapped without replacing the function)."""
    value = getattr(value, "__func__", value)  # a bound method (secrets.randbits): its function's
    code = getattr(value, "__code__", None)
    if code is None:
        return None
    kw = getattr(value, "__kwdefaults__", None)
    return code, getattr(value, "__defaults__", None), tuple(kw.items()) if kw else ()


def _same_state(value, state, _fn_state=_fn_state) -> bool:
    if state is None:
        return True
    now = _fn_state(value)
    return (now is not None and now[0] is state[0] and now[1] is state[1] and len(now[2]) == len(state[2])
            and all(a[0] == b[0] and a[1] is b[1] for a, b in zip(now[2], state[2])))


def _raw(owner: object, attr: str) -> object:
    # A class's own entry (the function, not a bound method), else the attribute.
    return vars(owner)[attr] if isinstance(owner, type) and attr in vars(owner) else getattr(owner, attr, None)


def _contents(kept=_SNAPSHOT, base=_BASE_THREADS) -> int:
    # Identity of every kept object and the base thread idents: what a swap inside the containers changes.
    return hash((tuple((id(o), a, id(v), id(c)) for o, a, _, v, c in kept), frozenset(base)))


def _seal(seal=_SEAL, kept=_SNAPSHOT, private=_private, closed=_closed, _contents=_contents) -> None:
    if closed:
        return  # closed: nothing that runs from here on may move what the guard compares against
    seal[:] = [_contents()]
    private[:] = list(kept)


def close(closed=_closed) -> None:
    """No more sealing in this process: called once the operation is protected, before any
    implementation is imported (sitegen.rerun.measure.worker, the self-test)."""
    closed.append(True)


def keep(owners) -> None:
    """Keep these too, as they are now: the judges (sitegen.rerun.checks.judges), an operation's
    (protect). Each (owner, attribute) once; after the clock's snapshot, never before it."""
    if not _SNAPSHOT:
        raise RuntimeError("the guard keeps nothing before its snapshot: import sitegen.rerun.measure.clock first")
    for owner, attr, label in owners:
        if not any(o is owner and a == attr for o, a, *_ in _SNAPSHOT):
            value = _raw(owner, attr)
            _SNAPSHOT.append((owner, attr, label, value, _fn_state(value)))
    _seal()


def protect(op) -> None:
    """Keep the loaded operation's judges too: its reference, inputs and what the gate reads of it
    (its methods are the contract; outside code that replaces them picks its own answers)."""
    cls = type(op)
    owners = []
    for attr in ("reference", "make_inputs", "make_grad_output", "gate_workloads", "output_shape",
                 "liger_script_inputs", "differentiable", "writable_inputs", "tolerances"):
        owner = next((k for k in cls.__mro__ if attr in vars(k)), None)
        if owner is not None:
            owners.append((owner, attr, f"{cls.__name__}.{attr}"))
    keep(owners)


_CODES: dict[str, frozenset] = {}


def _library_code(path: str, cache=_CODES) -> frozenset:
    """(name, first line, bytecode) of every code object compiled from the file at ``path`` as
    it is on disk."""
    import types

    if path not in cache:
        found: set = set()
        try:
            with open(path, "rb") as f:
                todo = [compile(f.read(), path, "exec", dont_inherit=True)]
        except (OSError, SyntaxError, ValueError):
            todo = []
        while todo:
            code = todo.pop()
            found.add((code.co_name, code.co_firstlineno, code.co_code))
            todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        cache[path] = frozenset(found)
    return cache[path]


def _genuine(code, _library_code=_library_code) -> bool:
    """Whether ``code`` is compiled from the file it names: code compiled by anyone under a
    library's file name (compile(src, "…/torch/x.py", …)) is not that file's code."""
    return (code.co_name, code.co_firstlineno, code.co_code) in _library_code(code.co_filename)


def _started_by_library(frame, _genuine=_genuine) -> bool:
    """Whether the nearest caller outside the standard library is torch's or triton's own code."""
    stdlib = os.path.dirname(threading.__file__) + os.sep
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith(stdlib) and name != __file__:
            return name.startswith(_LIBRARY_DIRS) and _genuine(frame.f_code)
        frame = frame.f_back
    return False


def _tracing_start(real, _started_by_library=_started_by_library, library=_LIBRARY):
    def start(self, *args, **kwargs):
        import sys

        # Who started it, not what it runs: a pool the implementation feeds runs stdlib code.
        if _started_by_library(sys._getframe(1)):
            library.add(self)
        return real(self, *args, **kwargs)

    start.__wrapped__ = real
    return start


def snapshot(owners) -> None:
    """Keep ``owners`` ((owner, attribute, label) each: the clock functions and the guard's own,
    sitegen.rerun.measure.clock's list) as they are now, once, when the clock module is imported;
    the judges join them later (keep), before any implementation is imported."""
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
    for owner, attr, label in owners:
        value = _raw(owner, attr)
        _SNAPSHOT.append((owner, attr, label, value, _fn_state(value)))
    _BASE_THREADS.update(t.ident for t in threading.enumerate())
    _seal()


# Everything the checks call is bound as a default when this module is imported, before any
# implementation is: `guards.changed = lambda *a, **k: []` replaces a name no check calls
# through (issue 43), and is itself seen. The containers too: a module global swapped for an
# empty list is seen by the identity entry for it, not iterated in its place.
def changed(kept=_SNAPSHOT, seal=_SEAL, private=_private, _raw=_raw, _same_state=_same_state,
            _contents=_contents) -> list[str]:
    """Labels of the clock functions and judges that are no longer what snapshot() kept."""
    out = []
    for owner, attr, label, value, state in private or kept:
        now = _raw(owner, attr)
        if now is not value or not _same_state(value, state):
            out.append(label)
    moved = private and (len(kept) != len(private) or any(a is not b for a, b in zip(kept, private)))
    if moved or (seal and seal[0] != _contents()):
        out.append("sitegen.rerun.checks.guards state (its kept functions or base threads)")
    return out


def restore(kept=_SNAPSHOT, private=_private, _raw=_raw, _same_state=_same_state) -> None:
    for owner, attr, _, value, state in private or kept:
        if _raw(owner, attr) is not value:
            setattr(owner, attr, value)
        if not _same_state(value, state):
            func = getattr(value, "__func__", value)
            func.__code__, func.__defaults__ = state[0], state[1]
            func.__kwdefaults__ = dict(state[2]) or None
    if private and (len(kept) != len(private) or any(a is not b for a, b in zip(kept, private))):
        kept[:] = private


def os_threads() -> set[str]:
    """This process's OS threads (Linux /proc; empty where there is none)."""
    try:
        return set(os.listdir("/proc/self/task"))
    except OSError:
        return set()


def _library_thread(t: threading.Thread, library=_LIBRARY) -> bool:
    """A thread torch or triton started (their compile pools): judged by who called start(),
    the nearest caller outside the standard library whose code is compiled from the library's
    own file (threading.Thread.start is wrapped at snapshot(); a thread started otherwise is not
    the library's, whatever it sets on itself)."""
    return t in library


def _foreign_threads(base=_BASE_THREADS, _enumerate=threading.enumerate, _library_thread=_library_thread) -> list:
    return [t for t in _enumerate() if t.ident not in base and t.is_alive() and not _library_thread(t)]


def check_build(threads_before: set[int], _changed=changed, _restore=restore, _foreign_threads=_foreign_threads) -> str | None:
    """After importing and building an implementation: why it is refused (clock_intact,
    host_threads), or None."""
    labels = _changed()
    if labels:
        _restore()
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

    def after_call(self, tasks_before: set[str], *, strict: bool, _changed=changed, _restore=restore,
                   _foreign_threads=_foreign_threads, _os_threads=os_threads) -> None:
        """After a window: the clock intact, no thread of the implementation's still running;
        ``strict`` (timed calls): no OS thread started during the call outlives it."""
        labels = _changed()
        if labels:
            _restore()
            self.violations.setdefault("clock_intact", f"{', '.join(labels)} replaced while the implementation ran "
                                                       "(undone before anything else was timed)")
        left = [t for t in _foreign_threads() if self.blamed.setdefault(t.ident, self.subject) == self.subject]
        if left:
            self.violations.setdefault("host_threads", f"Python thread {left[0].name!r} the implementation started was "
                                                       "still running when its call's window closed")
        elif strict:
            new = _os_threads() - tasks_before
            if new:
                self.violations.setdefault("host_threads", f"{len(new)} OS thread(s) started during a timed call were "
                                                           "still running when its window closed")


del _private, _closed  # reachable only through the kept functions' defaults
