"""What `sitegen rerun` was asked (RerunRequest, typed, built from its options) and what it will
measure (RerunPlan), decided before any measuring process starts.

The click command (sitegen.cli.rerun) only parses options, calls start() and plan() here, runs
the plan (sitegen.rerun.sweep, or sitegen.rerun.fleet with --ray) and prints. No click and no
pydantic here: `python -m sitegen.rerun` runs on GPU hosts without pydantic. Lines meant for
stderr while planning (a --like rehearsal's sizes, what "every implementation" left out) go
through ``say``, in the order they are decided, so that a refusal that follows comes after them.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sitegen.core import workload as C
from sitegen.core.problems import InputError, Problem
from sitegen.rules.protocol import PROCESSES

if TYPE_CHECKING:
    from sitegen.rerun.plan.like import LikePlan
    from sitegen.rerun.sweep import Options

DEFAULT_RECORDS = Path("records")


class UsageProblem(Exception):
    """Options that do not go together (the command's usage error, exit code 2), not invalid input."""


@dataclass(frozen=True)
class RerunRequest:
    """`sitegen rerun`'s options, as parsed: nothing looked up, nothing run."""

    operation: str = "jsd"
    """An operation's name, an entry point's, or pkg.module:Name."""
    axes: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    """--axis NAME=V,V,... values."""
    tokens: tuple[int, ...] | None = None
    vocab: tuple[int, ...] | None = None
    dtypes: tuple[str, ...] | None = None
    passes: tuple[str, ...] | None = None
    impls: tuple[str, ...] | None = None
    like_id: str | None = None
    """--like: a run's name or digest in ``records``."""
    records: Path = DEFAULT_RECORDS
    out: Path | None = None
    interpret: bool = False
    processes: int = PROCESSES
    self_test: bool = False
    ray_address: str | None = None
    products: tuple[str, ...] | None = None
    replicas: int = 1
    key: Path | None = None

    @property
    def command(self) -> str:
        """The command as refusals name it."""
        return "sitegen rerun" + (" --self-test" if self.self_test else " --interpret" if self.interpret else "")


@dataclass(frozen=True)
class RerunPlan:
    """What a rerun measures: the operation (described, for a plugin), workloads, passes and
    implementations, with the --like record it reruns and the out folder's journal as it was
    read before any plugin's code ran."""

    request: RerunRequest
    op: Any  # sitegen.operations.base.Operation (a plugin's: opfacts.Described)
    loads: list[C.Workload]
    passes: tuple[str, ...]
    impls: list  # sitegen.rerun.plan.plugins.ImplRef
    like: LikePlan | None = None
    verdict: bool = True
    """False when --interpret cut a --like workload to its own sizes (a rehearsal: no verdict)."""
    left_out: dict[str, str] = field(default_factory=dict)
    """Implementation → why "every one available" left it out."""
    journal: dict[str, str] = field(default_factory=dict)

    def options(self, out: Path | None, **more) -> Options:
        """The sweep's options for this plan, writing into ``out``."""
        from sitegen.rerun.sweep import Options

        r = self.request
        return Options(op=self.op, loads=self.loads, passes=self.passes, impls=self.impls, out=out, records=r.records,
                       interpret=r.interpret, processes=r.processes, like=self.like, verdict=self.verdict, key=r.key,
                       journal=self.journal, **more)

    def local_out(self) -> Path | None:
        """Where a local rerun writes: --out, else records (--interpret: None, a scratch folder made when writing)."""
        r = self.request
        return r.out if r.out or r.interpret else DEFAULT_RECORDS

    def fleet_out(self) -> Path:
        """Where a --ray rerun writes: the driver writes once every task has ended, so it needs its folder now."""
        r = self.request
        return r.out or (Path(tempfile.mkdtemp(prefix="sitegen-dry-run-")) if r.interpret else DEFAULT_RECORDS)


def start(request: RerunRequest) -> dict[str, str]:
    """What is settled before anything else, self-test included: the signing key read (refused now,
    rather than after the measurement), Triton's interpreter chosen before anything imports
    triton, the out folder's journal read and the GPU extra required. Returns the journal."""
    from sitegen.rerun.plan import selection

    if request.key is not None:
        from sitegen.core.signing import load_private_key

        load_private_key(request.key)
    if request.interpret:
        os.environ["TRITON_INTERPRET"] = "1"  # before anything imports triton
    from sitegen.registry import journal

    # Read before any plugin's code runs (an operation plugin is described by a process running
    # its module): an entry added after this is not kept, so `sign` never signs a planted run.
    target = request.out or (None if request.interpret else DEFAULT_RECORDS)
    started = journal.read(target) if target else {}
    selection.require_gpu_extra(request.command, interpret=request.interpret)
    return started


def plan(request: RerunRequest, started: dict[str, str], say: Callable[[str], None] = lambda line: None) -> RerunPlan:
    """The operation, workloads, passes and implementations ``request`` asks for (or its --like
    record's), each refused in one line where it cannot run; trusted code checked by its bytes."""
    from sitegen.rerun.plan import like as like_mod
    from sitegen.rerun.plan import opfacts, selection
    from sitegen.rerun.plan.owncode import require_shipped
    from sitegen.rerun.plan.registryscan import scan

    like_plan, verdict, left_out = None, True, {}
    if request.like_id:
        like_plan = like_mod.plan(scan(request.records), request.like_id, str(request.records))
        op = like_plan.op
        selection.require_like_impl(op, like_plan.run_name, like_plan.impl)
        workload = like_plan.workload
        if request.interpret:
            workload = selection.interpreter_workload(op, like_plan.workload)
            if workload != like_plan.workload:
                verdict = False
                shown = " × ".join(f"{n} {v}" for n, v in workload.axes)
                record = " × ".join(str(v) for _, v in like_plan.workload.axes)
                say(f"--like under --interpret runs at the interpreter's sizes: {shown} {workload.dtype}, not the "
                    f"record's {record}; a rehearsal, so no verdict and no link to the record")
        loads, passes = [workload], (like_plan.timed_pass,)
        impls = selection.resolve(op, (like_plan.impl,))
    else:
        op = opfacts.load(request.operation)  # a plugin's: read from a process of its own, never run here
        loads = C.workloads(sweep_axes(op, request), request.dtypes or op.default_dtypes)
        passes = request.passes or op.passes
        unknown = [p for p in passes if p not in op.passes]
        if unknown:
            raise InputError([Problem("--pass", "$", f"{op.name} has no pass {', '.join(unknown)}; it has {', '.join(op.passes)}")])
        choice = selection.choose(op, request.impls, interpret=request.interpret)
        impls, left_out = choice.impls, choice.left_out
        for impl, why in left_out.items():
            say(f"{impl}: left out ({why})")
    if (request.products or request.replicas > 1) and not request.ray_address:
        raise UsageProblem("--gpus and --replicas need --ray")
    require_shipped(impls, interpret=request.interpret)  # trusted code is known by its bytes, before any work
    op = opfacts.describe_workloads(op, loads)
    return RerunPlan(request=request, op=op, loads=loads, passes=passes, impls=impls, like=like_plan, verdict=verdict,
                     left_out=left_out, journal=started)


def sweep_axes(op, request: RerunRequest) -> dict[str, tuple[int, ...]]:
    """Each of the operation's axes: the values asked for, else its sweep's (--interpret: its tiny one)."""
    asked = dict(request.axes)
    for name, values in (("tokens", request.tokens), ("vocab", request.vocab)):
        if values:
            asked[name] = values
    unknown = [name for name in asked if name not in op.axes]
    if unknown:
        raise InputError([Problem("--axis", "$", f"{op.name} has no axis {', '.join(unknown)}; its axes: {', '.join(op.axes)}")])
    default = op.interpret_axes if request.interpret else op.default_axes
    return {name: asked.get(name) or tuple(default[name]) for name in op.axes}


def require_cuda() -> None:
    """Refused where no CUDA GPU is visible, asked through NVML so that this process creates no
    CUDA context (the GPU must stay free of the parent)."""
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    import torch  # imported lazily: `sitegen --help` never pays for it

    if not torch.cuda.is_available():
        raise InputError([Problem("GPU", "$", "no CUDA GPU visible; use --interpret for a CPU dry run")])
