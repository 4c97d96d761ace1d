"""KernelBench's published baseline timings → validated kernelindex documents, timing by timing.

PATH is a KernelBench checkout at one commit (commit and date from git) or a snapshot of
one (from its ``COMMIT`` file). Every timing in ``results/timing/<folder>/baseline_time_<config>.json``
becomes a Reported BenchmarkRun: the GPU from the timing's own ``hardware`` string, the
implementation from the file name (eager PyTorch or a torch.compile variant, at the PyTorch
version ``results/timing/README.md`` states), the workload read from the problem file with
``ast`` (kbshapes: never run), the operation from kernelbench_operations.toml or else the
problem's own. A timing is all or nothing; a problem whose inputs cannot be read, or a
null timing, is one warning line and skipped. Nothing here writes.
"""

from __future__ import annotations

import hashlib
import math
import re
import subprocess
import tomllib
from decimal import ROUND_HALF_EVEN, Decimal
from importlib import resources
from pathlib import Path
from typing import Any

from sitegen.core import gitread
from sitegen.core.digest import document_digest
from sitegen.core.documents import document
from sitegen.core.formatversion import API_VERSION
from sitegen.importers import kbshapes
from sitegen.core import identity
from sitegen.importers.core import Plan, RowError, accept, environment_document, gpu_slug
from sitegen.core.inputfile import read_regular
from sitegen.core.problems import InputError, Problem
from sitegen.core.strictjson import MAX_SAFE_INTEGER, parse_bytes

SOURCE_ID = "kernelbench"
REPOSITORY = "https://github.com/ScalingIntelligence/KernelBench"
LICENSE = "MIT"
KERNELBENCH_SOURCE = {
    "name": "KernelBench baseline timings",
    "url": REPOSITORY,
    "license": LICENSE,
    "citation": f"KernelBench, results/timing/*/baseline_time_*.json, {REPOSITORY} (MIT)",
}
FAMILY = "kernelbench_baseline"
TIMING_DIR = "results/timing"
MAX_FILE_BYTES = 16 * 1024 * 1024
_CONFIG = re.compile(r"^baseline_time_(torch(?:_compile_(?:inductor_[a-z0-9-]+|cudagraphs))?)\.json$")


def read_table() -> dict[str, dict[str, Any]]:
    """kernelbench_operations.toml: problem path → its [[same]] entry (the [[different]] ones are for tests)."""
    data = tomllib.loads(resources.files("sitegen.importers").joinpath("kernelbench_operations.toml").read_text("utf-8"))
    return {entry["problem"]: entry for entry in data.get("same", [])}


def _git_error(exc: Exception) -> str:
    stderr = getattr(exc, "stderr", None)
    lines = stderr.strip().splitlines() if isinstance(stderr, str) else []
    return lines[-1] if lines else str(exc)


def revision(root: Path) -> tuple[str, str, str]:
    """(commit, commit date, subject): from git in a checkout, else from the snapshot's COMMIT file."""
    if (root / ".git").exists():
        # Read as any checkout is (sitegen.core.gitread): its fsmonitor, hooks and filters never run,
        # and nothing is written into it (git status would do both).
        try:
            commit = gitread.head(root) or ""
            out = gitread.git(root, "log", "-1", "--no-show-signature", "--format=%cI%n%s", commit or "HEAD")
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            raise InputError([Problem(str(root), "$", f"cannot read the commit with git: {_git_error(exc)}")]) from None
        date, subject = (out.splitlines() + ["", ""])[:2]
        try:
            dirty = gitread.changed(root, commit, untracked=False) if commit else None
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            raise InputError([Problem(str(root), "$", f"cannot read the checkout's state with git: {_git_error(exc)}")]) from None
        if dirty:
            # The records would cite a commit whose files are not the ones read.
            raise InputError([Problem(str(root), "$", f"tracked files differ from commit {commit[:7]} "
                                                      f"({dirty}); commit or restore them first")])
    else:
        path = root / "COMMIT"
        fields: dict[str, str] = {}
        try:
            text = read_regular(path, 64 * 1024).decode("utf-8")
        except (InputError, UnicodeDecodeError):
            raise InputError([Problem(str(root), "$", "neither a git checkout nor a snapshot with a readable COMMIT file")]) from None
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            fields.setdefault(key, value.strip())
        commit, date, subject = fields.get("commit", ""), fields.get("date", ""), fields.get("subject", "")
    if not re.fullmatch(r"[0-9a-f]{40}", commit) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}([+-]\d{2}:\d{2}|Z)", date):
        raise InputError([Problem(str(root / "COMMIT"), "$", f"no commit id and ISO date (read {commit!r}, {date!r})")])
    return commit, date, subject


def software(root: Path) -> dict[str, Any]:
    """PyTorch and CUDA versions as results/timing/README.md states them."""
    path = root / TIMING_DIR / "README.md"
    try:
        text = read_regular(path, 1024 * 1024, str(path)).decode("utf-8", "replace")
    except InputError as exc:
        raise InputError(exc.problems) from None
    torch = re.search(r"PyTorch\s+`([^`\s]+)`", text)
    if torch is None:
        raise InputError([Problem(str(path), "$", "states no PyTorch version (PyTorch `x.y.z`)")])
    cuda = re.search(r"CUDA\s+`([^`\s]+)`", text)
    result: dict[str, Any] = {"framework": {"name": "torch", "version": torch.group(1)}}
    if cuda:
        result["cudaToolkit"] = cuda.group(1)
    return result


def implementation_of(config: str) -> tuple[str, str]:
    """(name, torch.compile call) of a config: "torch" → eager; "torch_compile_inductor_default" → inductor, default."""
    if config == "torch":
        return "torch eager", "eager"
    rest = config.removeprefix("torch_compile_")
    if rest == "cudagraphs":
        return "torch.compile (cudagraphs)", "torch.compile(backend='cudagraphs')"
    mode = rest.removeprefix("inductor_")
    return f"torch.compile (inductor, {mode})", f"torch.compile(backend='inductor', mode='{mode}')"


def _ns(value: Any, key: str) -> int:
    # From the decimal the file prints (repr of the float), half-even: 0.386 ms is 386000 ns, not 385999.
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise RowError(f"{key}: {value!r} is not a finite, non-negative number of ms")
    ns = Decimal(repr(value)) * 1_000_000
    if ns > MAX_SAFE_INTEGER:
        raise RowError(f"{key}: {value!r} ms is too large")
    return int(ns.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))


def _scalar(value: Any) -> Any:
    return value if isinstance(value, (int, float, str, bool)) else "×".join(str(v) for v in value) if all(
        isinstance(v, (int, float)) for v in value) else repr(value)


class _Importer:
    def __init__(self, root: Path, commit: str, date: str, software: dict[str, Any]):
        self.root, self.commit, self.date, self.software = root, commit, date, software
        self.plan = Plan()
        self.table = read_table()
        self.problems: dict[str, kbshapes.Problem | str] = {}
        self.warned: set[str] = set()

    def warn(self, key: str, message: str) -> None:
        if key not in self.warned:
            self.warned.add(key)
            self.plan.warnings.append(message)

    def problem(self, level: str, file: str) -> kbshapes.Problem | str:
        """The problem's static reading, or why it has none (cached: every config and GPU reads it)."""
        key = f"{level}/{file}"
        if key not in self.problems:
            path = self.root / "KernelBench" / level / file
            try:
                text = read_regular(path, 1024 * 1024, str(path)).decode("utf-8")
                self.problems[key] = kbshapes.read_problem(text)
            except InputError as exc:
                self.problems[key] = exc.problems[0].message
            except UnicodeDecodeError:
                self.problems[key] = "not UTF-8 text"
            except kbshapes.Unreadable as exc:
                # The expression that stopped the reader can be a whole file's line: one short line.
                reason = str(exc) if len(str(exc)) <= 200 else str(exc)[:199] + "…"
                self.problems[key] = f"inputs not readable without running the file: {reason}"
        return self.problems[key]

    def operation(self, level: str, file: str, problem: kbshapes.Problem) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """(OperationSpec, the table entry it matched or None)."""
        key = f"{level}/{file}"
        entry = self.table.get(key)
        if entry is not None:
            kinds = [[t.dtype, len(t.shape)] if isinstance(t, kbshapes.Tensor) else None for t in problem.inputs]
            if problem.forward == entry["forward"] and kinds == entry["inputs"]:
                return identity.operation_document(entry["operation"]), entry
            self.warn(f"table/{key}", f"{self.root / 'KernelBench' / key}: warning: no longer computes "
                      f"{entry['operation']} as kernelbench_operations.toml says; imported as its own operation")
        stem = file.removesuffix(".py")
        number, _, words = stem.partition("_")
        path = f"KernelBench/{level}/{file}"
        spec = {
            "family": f"KernelBench {level.replace('level', 'level ')}",
            "axes": [],
            "semantics": {
                "expression": problem.model_source,
                "notes": f"The Model class of {path} (docstrings left out); its forward, on what get_inputs() builds, is what KernelBench times.",
            },
        }
        metadata = {
            "name": identity.name_slug(f"kernelbench-{level}-{stem}") + "-" + problem.model_digest[:8],
            "title": f"KernelBench {level.replace('level', 'L')} · {number} {words.replace('_', ' ').strip()}",
            "sourceRefs": [{"name": "KernelBench", "url": REPOSITORY, "path": path, "license": LICENSE}],
        }
        return document("OperationSpec", metadata, spec), None

    def workload(self, operation: dict[str, Any], entry: dict[str, Any] | None, problem: kbshapes.Problem) -> dict[str, Any]:
        tensors = [t for t in problem.inputs if isinstance(t, kbshapes.Tensor)]
        floats = sorted({t.dtype for t in tensors if t.dtype.startswith(("fp", "bf"))})
        dtype = floats[0] if len(floats) == 1 else None
        if entry is not None:
            axes = {axis: problem.inputs[i].shape[d] for axis, (i, d) in entry["axes"].items()}
            kernel = entry["operation"]
            return identity.workload_document(kernel, axes, dtype=dtype, operation=operation)
        names = [f"input{i}" for i in range(len(problem.inputs))]
        spec: dict[str, Any] = {"operationSpecDigest": document_digest(operation), "axes": {}}
        for name, value in problem.constants.items():
            if isinstance(value, tuple):
                spec["axes"].update({f"{name}.{i}": _scalar(v) for i, v in enumerate(value)})
            else:
                spec["axes"][name] = value
        if dtype:
            spec["dtype"] = dtype
        spec["tensors"] = [{"name": n, "dtype": t.dtype, "shape": list(t.shape)}
                           for n, t in zip(names, problem.inputs) if isinstance(t, kbshapes.Tensor)]
        scalars = {n: v for n, v in zip(names, problem.inputs) if not isinstance(v, kbshapes.Tensor)}
        if scalars:
            spec["scalars"] = scalars
        if problem.init:
            spec["config"] = {f"init{i}": _scalar(v) for i, v in enumerate(problem.init)}
        spec["correctness"] = {"comparator": "not_asserted"}
        digest = document_digest({"apiVersion": API_VERSION, "kind": "WorkloadCase", "spec": spec})
        label = identity.axes_label(spec["axes"], dtype) or "no constants"
        return document(
            "WorkloadCase",
            {"name": f"{operation['metadata']['name']}-{digest.removeprefix('sha256:')[:8]}",
             "title": label if len(label) <= 300 else label[:299] + "…"},
            spec,
        )

    def implementation(self, operation: dict[str, Any], config: str, level: str, file: str) -> dict[str, Any]:
        shown, variant = implementation_of(config)
        version = self.software["framework"]["version"]
        op_name = operation["metadata"]["name"]
        return document(
            "ImplementationRevision",
            {"name": identity.name_slug(f"kernelbench-{config}-{version}-{op_name}"),
             "title": f"{shown} {version} · {operation['metadata'].get('title', op_name)}"},
            {
                "name": shown,
                "projectRevision": {"project": "PyTorch", "repository": "https://github.com/pytorch/pytorch", "version": version},
                "operation": {"specDigest": document_digest(operation)},
                "callable": {"module": f"KernelBench/{level}/{file}", "name": "Model", "variant": variant},
            },
        )

    def protocol(self, trials: int) -> dict[str, Any]:
        return document(
            "BenchmarkProtocol",
            {"name": "kernelbench-baseline-timing" + ("" if trials == 100 else f"-{trials}-trials"),
             "title": "KernelBench baseline timing (3 warm-ups, mean of CUDA-event times)"},
            {
                "harness": {"name": "KernelBench scripts/generate_baseline_time.py", "repository": REPOSITORY},
                "measurement": {
                    "timer": "cuda_events", "primaryStatistic": "mean",
                    "warmup": {"minIterations": 3, "notes": "3 untimed calls of the model before the trials"},
                    "minSamples": trials,
                },
                "comparability": {
                    "family": FAMILY, "minEffect": 0.01,
                    "notes": (
                        f"Timed: the Model's forward on get_inputs(), {trials} trials each timed by CUDA events after "
                        "3 warm-ups; published as mean, std, min and max in ms, with 3 significant digits, and no raw "
                        f"samples. Interval: the mean ± 1.96 · std / √{trials} (a normal approximation of the mean's "
                        "95% interval, labelled so on every page), which assumes the trials independent; the 1% "
                        "minimum effect also covers the rounding to 3 significant digits (at most 0.5% on each side). "
                        "Comparable only within one problem, shapes and GPU; the commit date stands for when it was measured."
                    ),
                },
            },
        )

    def environment(self, hardware: str) -> tuple[dict[str, Any], bool]:
        version = self.software["framework"]["version"]
        short = re.sub(r"^NVIDIA\s+", "", hardware.strip())
        return environment_document(identity.name_slug(f"kernelbench-{gpu_slug(hardware)}-torch-{version}"),
                                    f"KernelBench host · {short} · torch {version}", hardware, dict(self.software))

    def timing(self, folder: str, config: str, level: str, file: str, timing: dict[str, Any]) -> dict[str, dict[str, Any]] | None:
        if not isinstance(timing, dict):
            raise RowError(f"a timing is an object, not {type(timing).__name__}")
        missing = [k for k in ("mean", "std", "min", "max", "num_trials", "hardware") if k not in timing]
        if missing:
            raise RowError(f"no {', '.join(missing)}")
        hardware, trials = timing["hardware"], timing["num_trials"]
        if not isinstance(hardware, str) or not hardware.strip() or len(hardware) > 200:
            raise RowError(f"hardware: {hardware!r} is not a GPU name")
        if isinstance(trials, bool) or not isinstance(trials, int) or trials < 1:
            raise RowError(f"num_trials: {trials!r} is not a positive integer")
        stats = {k: _ns(timing[k], k) for k in ("mean", "std", "min", "max")}
        problem = self.problem(level, file)
        if isinstance(problem, str):
            self.warn(f"problem/{level}/{file}", f"{self.root / 'KernelBench' / level / file}: skipped: {problem}")
            return None
        operation, entry = self.operation(level, file, problem)
        environment, known = self.environment(hardware)
        if not known:
            self.warn(f"gpu/{hardware}", f"{folder}: warning: unknown GPU {hardware!r}: architecture 'unknown'")
        docs = {
            "operation": operation,
            "workload": self.workload(operation, entry, problem),
            "implementation": self.implementation(operation, config, level, file),
            "protocol": self.protocol(trials),
            "environment": environment,
        }
        timing_path = f"{TIMING_DIR}/{folder}/baseline_time_{config}.json"
        problem_path = f"KernelBench/{level}/{file}"
        external = f"{self.commit[:7]}/{folder}/{config}/{level}/{file.removesuffix('.py')}"
        name = identity.name_slug("kernelbench-" + external.replace("/", "-"))
        if len(name) > 200:
            name = name[:191].rstrip("-.") + "-" + hashlib.sha256(external.encode()).hexdigest()[:8]
        spec: dict[str, Any] = {
            "implementationDigest": document_digest(docs["implementation"]),
            "workloadDigest": document_digest(docs["workload"]),
            "protocolDigest": document_digest(docs["protocol"]),
            "environmentDigest": document_digest(docs["environment"]),
            "timedPass": "forward",
            "status": "passed",
            "timing": {"latencyNs": {"mean": stats["mean"], "min": stats["min"], "max": stats["max"], "stdev": stats["std"]},
                       "primaryStatistic": "mean"},
            "sourceNative": {
                "source": SOURCE_ID, "benchmark": f"{level}/{file.removesuffix('.py')}"[:300], "externalId": external[:300],
                "metrics": {"mean_ms": timing["mean"], "std_ms": timing["std"], "min_ms": timing["min"],
                            "max_ms": timing["max"], "num_trials": trials},
            },
            "evidence": {"details": {"timingFolder": folder[:300]}},
            "observedAt": self.date,
        }
        blob = f"{REPOSITORY}/blob/{self.commit}"
        metadata = {
            "name": name,
            "title": f"{operation['metadata']['title']} · {implementation_of(config)[0]} · {hardware}",
            "sourceRefs": [
                {"name": "KernelBench timing", "url": f"{blob}/{timing_path}", "commit": self.commit, "path": timing_path, "license": LICENSE},
                {"name": "KernelBench problem", "url": f"{blob}/{problem_path}", "commit": self.commit, "path": problem_path, "license": LICENSE},
            ],
        }
        docs["run"] = document("BenchmarkRun", metadata, spec)
        return docs

    def timing_file(self, path: Path) -> None:
        folder, match = path.parent.name, _CONFIG.match(path.name)
        shown = str(path)
        if match is None:
            self.plan.problems.append(Problem(shown, "$", "not a baseline_time_torch[_compile_…].json file name"))
            return
        try:
            data = parse_bytes(read_regular(path, MAX_FILE_BYTES, shown), shown)
        except InputError as exc:
            self.plan.problems.extend(exc.problems)
            return
        if not isinstance(data, dict):
            self.plan.problems.append(Problem(shown, "$", "not an object of levels"))
            return
        for level in sorted(data):
            problems = data[level]
            if not re.fullmatch(r"level[1-9]", level) or not isinstance(problems, dict):
                self.plan.problems.append(Problem(shown, f"$.{level}", "not a level (level1..level9) of problem timings"))
                continue
            for file in sorted(problems, key=_problem_order):
                where = f"$.{level}['{file}']"
                if problems[file] is None:
                    self.plan.warnings.append(f"{shown}: {where}: skipped: null timing")
                    continue
                self.plan.rows += 1
                if not re.fullmatch(r"[0-9]+_[A-Za-z0-9_]+\.py", file):
                    self.plan.problems.append(Problem(shown, where, "not a problem file name like 23_Softmax.py"))
                    continue
                try:
                    docs = self.timing(folder, match.group(1), level, file, problems[file])
                    if docs is None:
                        continue
                    group = docs["operation"]["metadata"]["name"]
                    accept(self.plan, f"{shown} {where}", docs, group)
                except (RowError, ValueError, ArithmeticError) as exc:
                    self.plan.problems.append(Problem(shown, where, str(exc) or type(exc).__name__))
                    continue
                self.plan.imported += 1
        self.plan.seen_day(self.date[:10])


def _problem_order(file: str) -> tuple[int, int, str, str]:
    """Numbered files in their numbers' order, then the rest by name.

    Numbers compare as digit strings (shorter first, leading zeros dropped), exact at any length
    without int(), which refuses past 4,300 digits and raises on digits that are not ASCII
    ("²".isdigit() is true)."""
    number = file.split("_", 1)[0]
    if number.isascii() and number.isdigit():
        digits = number.lstrip("0")
        return (0, len(digits), digits, file)
    return (1, 0, "", file)


def plan_import(root: Path) -> tuple[Plan, str | None]:
    """Read every timing file of the checkout or snapshot at ``root``; nothing is written.

    Returns the plan and the commit date's day (the source file's date), None if unreadable.
    """
    plan = Plan()
    try:
        commit, date, _subject = revision(root)
        found = software(root)
    except InputError as exc:
        plan.problems.extend(exc.problems)
        return plan, None
    files = sorted((root / TIMING_DIR).glob("*/baseline_time_*.json"))
    if not files:
        plan.problems.append(Problem(str(root / TIMING_DIR), "$", "no */baseline_time_*.json timing files"))
        return plan, None
    importer = _Importer(root, commit, date, found)
    for path in files:
        importer.timing_file(path)
    return importer.plan, date[:10]
