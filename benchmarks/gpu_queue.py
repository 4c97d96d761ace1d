"""The GPU work queue: run the parts of a committed list that this GPU still lacks, within a time budget.

    python3 benchmarks/gpu_queue.py [--list benchmarks/gpu_queue.toml] [--budget 540] [--out $OUT] [--plan]

Each part (benchmarks/gpu_queue.toml) names an operation, its passes, axes, implementations and
dtypes, and the GPU products it is for. On the GPU it lands on (NVML's product name, as the
rerun's ExecutionEnvironment records it) the queue skips every part already in records/ for that
product, then runs the next parts whose estimate fits what is left of --budget, each through
`python3 -m sitegen.rerun` into a scratch copy of records/ (as benchmarks/h200_rerun.sh does), and
packs each finished part into a tar under --out: records/ (only the files the part created, paths
as in the registry) and parts/ID.{log,json,gpu.txt}. A part still running when the budget ends is
killed and leaves no archive (a rerun writes nothing until it has measured everything). The device
tool brings back at most 8 files, so past --max-archives the parts go into one more archive,
and --group-seconds N packs the parts that finish in the same N seconds into one.
On the GPU host, run it through benchmarks/gpu_queue.sh (which installs the carried wheels first).
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import tomllib
from pathlib import Path
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sitegen.core.problems import InputError, Problem, json_path
from sitegen.core.workload import Workload

PASSES = ("forward", "backward", "full")
# A rough per-part cost where the list gives none: the rerun's start (imports, gate, compiles)
# and each case's sampling, read from the H200 logs under benchmarks/results/rerun_h200_issue28*/.
START_S, CASE_S = 45, 12
PACK_S = 10  # left at the end of the budget for packing what finished
clock = time.monotonic  # the budget's clock (tests give a fake one)


class Part(BaseModel):
    """One `sitegen rerun` command of the list, and the GPUs it is for."""

    model_config = ConfigDict(extra="forbid")
    id: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")]
    """Unique name: the part's archive and logs (letters, digits, '.', '_', '-': what the device tool brings back)."""
    operation: str
    """A shipped operation's name (sitegen.operations)."""
    passes: list[str]
    """Timed passes (each one of the operation's)."""
    gpus: list[str] = Field(min_length=1)
    """GPU products it is for, as NVML names them (records/gpus.toml's keys)."""
    axes: dict[str, list[int]] = {}
    """Values of some of the operation's axes; the others take its sweep's."""
    impls: list[str] = []
    """Implementations (the operation's peers); empty: its default peers."""
    dtypes: list[str] = []
    """Element types; empty: the operation's default dtypes."""
    estimate_s: int | None = Field(default=None, gt=0)
    """Expected wall time in seconds; absent: START_S + CASE_S per case."""
    why: str = ""
    """What the part adds (printed in the plan)."""


class QueueList(BaseModel):
    """The committed list, in the order the queue tries its parts."""

    model_config = ConfigDict(extra="forbid")
    part: list[Part]
    """The parts, cheapest and most valuable first."""


class Planned:
    """A part resolved against its operation: its cases, and the ones this GPU still lacks."""

    def __init__(self, part: Part, op):
        self.part, self.op = part, op
        axes = {name: tuple(part.axes.get(name) or op.default_axes[name]) for name in op.axes}
        self.axes = axes
        self.impls = tuple(part.impls or op.default_peers)
        self.dtypes = tuple(part.dtypes or op.default_dtypes)
        self.cases = {(p, impl, w) for w in _workloads(axes, self.dtypes) for p in part.passes for impl in self.impls}
        self.missing = set(self.cases)

    @property
    def estimate_s(self) -> int:
        whole = self.part.estimate_s or START_S + CASE_S * len(self.cases)
        # A part partly present runs only the bounding product of what is missing (narrow()).
        share = len(self.narrow_cases()) / len(self.cases) if self.cases else 1
        return max(1, round(whole * share)) if self.missing else 0

    def narrow(self) -> tuple[tuple[str, ...], tuple[str, ...], dict[str, tuple[int, ...]], tuple[str, ...]]:
        """(passes, impls, axes, dtypes) of the smallest product of the list's values covering what is missing."""
        m = self.missing
        passes = tuple(p for p in self.part.passes if any(c[0] == p for c in m))
        impls = tuple(i for i in self.impls if any(c[1] == i for c in m))
        dtypes = tuple(d for d in self.dtypes if any(c[2].dtype == d for c in m))
        axes = {name: tuple(v for v in values if any(c[2][name] == v for c in m)) for name, values in self.axes.items()}
        return passes, impls, axes, dtypes

    def narrow_cases(self) -> set:
        passes, impls, axes, dtypes = self.narrow()
        return {(p, i, w) for w in _workloads(axes, dtypes) for p in passes for i in impls}

    def args(self) -> list[str]:
        """`python3 -m sitegen.rerun` arguments of what is missing (the registry options added by the runner)."""
        passes, impls, axes, dtypes = self.narrow()
        out = ["--operation", self.op.name, "--pass", ",".join(passes), "--impl", ",".join(impls),
               "--dtype", ",".join(dtypes)]
        for name, values in axes.items():
            out += ["--axis", f"{name}={','.join(map(str, values))}"]
        return out


def _workloads(axes: dict[str, tuple[int, ...]], dtypes) -> list[Workload]:
    from sitegen.core.workload import workloads

    return workloads(axes, dtypes)


def load_list(path: Path) -> list[Planned]:
    """The list's parts, each checked against its operation; InputError naming the file and JSON path."""
    from sitegen import operations

    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError([Problem(str(path), "$", f"cannot read the list: {exc}")]) from None
    try:
        parsed = QueueList.model_validate(raw)
    except ValidationError as exc:
        raise InputError([Problem(str(path), json_path(e["loc"]), e["msg"]) for e in exc.errors()]) from None
    problems, planned, seen = [], [], set()
    for k, part in enumerate(parsed.part):
        where = lambda *loc: json_path(("part", k, *loc))  # noqa: E731
        if part.id in seen:
            problems.append(Problem(str(path), where("id"), f"{part.id!r} is used by an earlier part"))
        seen.add(part.id)
        if part.operation not in operations.BUILTIN:
            problems.append(Problem(str(path), where("operation"), f"unknown operation {part.operation!r}; "
                                                                  f"shipped: {', '.join(sorted(operations.BUILTIN))}"))
            continue
        op = operations.load(part.operation)
        for field, given, allowed in (("passes", part.passes, op.passes), ("impls", part.impls, tuple(op.peers)),
                                      ("dtypes", part.dtypes, op.dtypes), ("axes", list(part.axes), op.axes)):
            bad = [v for v in given if v not in allowed]
            if bad or (field == "passes" and not given):
                problems.append(Problem(str(path), where(field), f"{', '.join(bad) or 'none given'}: "
                                                                 f"{op.name} has {', '.join(allowed)}"))
        planned.append(Planned(part, op))
    if problems:
        raise InputError(problems)
    return planned


def present(records: Path, operation: str, product: str) -> set[tuple[str, str, Workload]]:
    """(pass, implementation, workload) of every controlled rerun of `operation` on `product` in records/.

    Read with sitegen's own GPU-side reader (registryscan, no pydantic); a run's implementation is
    the --impl of the command it records, parsed by `sitegen rerun`'s own option parser. Dry runs
    (--interpret), reruns of another record (--like, measured under its protocol) and runs whose status
    is not passed do not count.
    """
    from sitegen.core.identity import operation_name
    from sitegen.cli.rerun import rerun
    from sitegen.rerun.plan.registryscan import scan

    docs: dict[str, dict] = {}
    for folder in (f"runs/{operation_name(operation)}", f"workloads/{operation_name(operation)}", "environments"):
        docs.update(scan(records / folder).by_digest)
    out = set()
    for doc in docs.values():
        spec = doc["spec"]
        evidence = spec.get("evidence") or {}
        # A failed run (out of memory, a harness error) measured nothing: its part runs again.
        if (doc["kind"] != "BenchmarkRun" or doc["metadata"].get("labels", {}).get("harness") != "sitegen-rerun"
                or evidence.get("dryRun") or evidence.get("rerunOf") or spec.get("status") != "passed"):
            continue
        env, load = docs.get(spec.get("environmentDigest")), docs.get(spec.get("workloadDigest"))
        if not env or not load or env["spec"].get("hardware", {}).get("product") != product:
            continue
        words = shlex.split(evidence.get("command", ""))
        if words[:2] != ["sitegen", "rerun"]:
            continue
        try:
            params = rerun.make_context("rerun", words[2:]).params
        except Exception:  # click's usage errors: a command this sitegen no longer parses names no peer
            continue
        if params.get("like_id") or not params.get("impls") or len(params["impls"]) != 1:
            continue
        workload = Workload.of({k: int(v) for k, v in load["spec"]["axes"].items()}, load["spec"]["dtype"])
        out.add((spec.get("timedPass"), params["impls"][0], workload))
    return out


def mark_present(planned: list[Planned], records: Path, product: str) -> None:
    """Take from each part for `product` the cases records/ already holds for it."""
    found: dict[str, set] = {}
    for p in planned:
        if product not in p.part.gpus:
            continue
        have = found.setdefault(p.op.name, present(records, p.op.name, product))
        # Workloads compare by axis values, whatever order the workload document lists them in.
        have_keys = {(ps, impl, w.key) for ps, impl, w in have}
        p.missing = {c for c in p.cases if (c[0], c[1], c[2].key) not in have_keys}


def gpu_product() -> str | None:
    """This host's GPU product as the rerun records it (NVML), else as nvidia-smi prints it."""
    try:
        from sitegen.rerun.measure import gpustate

        facts = gpustate.facts()
        if facts and facts.get("product"):
            return facts["product"]
    except Exception:  # no NVML binding: ask nvidia-smi
        pass
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    names = out.stdout.strip().splitlines()
    return names[0].strip() if out.returncode == 0 and names else None


class Packer:
    """Archives under `out`: one per finished part, or per --group-seconds window, and past
    `max_archives` one more holding every later part. Each archive is rewritten whole from the
    parts' staged folders and renamed into place, so a file under `out` is always a whole tar."""

    def __init__(self, out: Path, stage: Path, *, max_archives: int, group_s: float):
        self.out, self.stage, self.max, self.group_s = out, stage, max_archives, group_s
        self.t0 = clock()
        self.members: dict[str, list[str]] = {}  # archive name -> part ids, in the order they finished

    def add(self, part_id: str) -> Path:
        key = f"queue-{int((clock() - self.t0) // self.group_s) + 1:02d}" if self.group_s else part_id
        if key not in self.members and len(self.members) >= self.max - 1 and self.max > 0:
            key = "queue-more"
        self.members.setdefault(key, []).append(part_id)
        target = self.out / f"{key}.tar"
        partial = self.out / f"{key}.tar.partial"
        written: set[str] = set()
        with tarfile.open(partial, "w") as tar:
            for pid in self.members[key]:
                root = self.stage / pid
                for path in sorted(p for p in root.rglob("*") if p.is_file()):
                    name = path.relative_to(root).as_posix()
                    if name not in written:  # a shared document two parts wrote: the same bytes
                        written.add(name)
                        tar.add(path, arcname=name)
        os.replace(partial, target)
        return target


def stage_part(stage: Path, part_id: str, registry: Path, before: set[str], start: set[str], log: Path, summary: Path,
               gpu: str) -> int:
    """Copy into stage/part_id the runs the part created (the registry's files not in `before`), every other
    document the queue's parts created (not in `start`: an environment or protocol an earlier part wrote
    first, so that each archive stands alone), its log, summary and GPU; returns the files copied."""
    root = stage / part_id
    now = files(registry) - {"digests.lock"}
    new = sorted((now - before) | {rel for rel in now - start if not rel.startswith("runs/")})
    for rel in new:
        dest = root / "records" / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(registry / rel, dest)
    (root / "parts").mkdir(parents=True, exist_ok=True)
    shutil.copy2(log, root / "parts" / f"{part_id}.log")
    shutil.copy2(summary, root / "parts" / f"{part_id}.json")
    (root / "parts" / f"{part_id}.gpu.txt").write_text(gpu + "\n")
    return len(new)


def files(root: Path) -> set[str]:
    """Registry-relative paths of its files, hidden ones left out (the rerun's transaction journal)."""
    rels = (p.relative_to(root) for p in root.rglob("*") if p.is_file())
    return {r.as_posix() for r in rels if not any(part.startswith(".") for part in r.parts)}


def run_part(cmd: list[str], log: Path, summary: Path, timeout: float) -> int | None:
    """Exit code of the rerun, or None when it outlived `timeout` (then its whole process group is killed)."""
    with log.open("w") as err, summary.open("w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, start_new_session=True)
        try:
            return proc.wait(timeout=max(timeout, 0))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return None


def plan_lines(planned: list[Planned], product: str) -> list[str]:
    lines = []
    for p in planned:
        if product not in p.part.gpus:
            lines.append(f"{p.part.id}: not for {product} (for {', '.join(p.part.gpus)})")
        elif not p.missing:
            lines.append(f"{p.part.id}: in records/ already ({len(p.cases)} runs)")
        else:
            lines.append(f"{p.part.id}: to run, {len(p.missing)} of {len(p.cases)} runs missing, ~{p.estimate_s} s: "
                         + " ".join(shlex.quote(a) for a in p.args()) + (f"  ({p.part.why})" if p.part.why else ""))
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--list", type=Path, default=Path(__file__).with_suffix(".toml"), help="the parts (TOML)")
    ap.add_argument("--records", type=Path, default=Path("records"), help="the registry the parts are looked up in")
    ap.add_argument("--budget", type=float, default=540, help="seconds the queue may take, packing included")
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "gpu-queue-out")), help="where archives go")
    ap.add_argument("--gpu", help="GPU product to plan for [default: this host's, from NVML or nvidia-smi]")
    ap.add_argument("--plan", action="store_true", help="print what would run and exit")
    ap.add_argument("--max-archives", type=int, default=7, help="archives at most (the device tool brings back 8 files)")
    ap.add_argument("--group-seconds", type=float, default=0, help="one archive per this many seconds (0: one per part)")
    ap.add_argument("--scratch", type=Path, default=Path("/tmp/gpu-queue"), help="scratch folder (emptied)")
    ap.add_argument("--rerun", default=f"{sys.executable} -m sitegen.rerun", help="the rerun command (tests give a fake)")
    args = ap.parse_args(argv)
    t0 = clock()
    try:
        planned = load_list(args.list)
        product = args.gpu or gpu_product()
        if not product:
            raise InputError([Problem("GPU", "$", "no GPU found (NVML, nvidia-smi); --gpu names one to plan for")])
        mark_present(planned, args.records, product)
    except InputError as exc:
        for problem in exc.problems:
            print(problem.line(), file=sys.stderr)
        return 1
    print(f"gpu_queue: {product}, budget {args.budget:.0f} s, list {args.list}", flush=True)
    for line in plan_lines(planned, product):
        print("  " + line, flush=True)
    todo = [p for p in planned if product in p.part.gpus and p.missing]
    if args.plan or not todo:
        return 0
    shutil.rmtree(args.scratch, ignore_errors=True)
    registry, stage, logs = args.scratch / "records", args.scratch / "stage", args.scratch / "logs"
    shutil.copytree(args.records, registry)
    logs.mkdir(parents=True)
    args.out.mkdir(parents=True, exist_ok=True)
    initial = files(registry)
    packer = Packer(args.out, stage, max_archives=args.max_archives, group_s=args.group_seconds)
    rc = 0
    for p in todo:
        left = args.budget - (clock() - t0) - PACK_S
        if p.estimate_s > left:
            print(f"{p.part.id}: not started, ~{p.estimate_s} s needed, {max(left, 0):.0f} s left", flush=True)
            continue
        before, start = files(registry), clock()
        log, summary = logs / f"{p.part.id}.log", logs / f"{p.part.id}.json"
        cmd = shlex.split(args.rerun) + p.args() + ["--records", str(registry), "--out", str(registry), "--json"]
        code = run_part(cmd, log, summary, timeout=left)
        took = clock() - start
        if code is None:
            print(f"{p.part.id}: cut off at the budget after {took:.0f} s; no archive", flush=True)
            rc = 1
            break
        wrote = stage_part(stage, p.part.id, registry, before, initial, log, summary, product)
        tar = packer.add(p.part.id)
        print(f"{p.part.id}: exit {code}, {took:.0f} s (estimate {p.estimate_s}), {wrote} file(s) -> {tar.name}", flush=True)
        tail = log.read_text(errors="replace").strip().splitlines()[-3:]
        for line in tail:
            print("    " + line, flush=True)
        rc = rc or (code != 0)
    return rc


if __name__ == "__main__":
    sys.exit(main())
