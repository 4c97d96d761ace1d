"""`sitegen rerun` as a new user meets it (issue 12): refusals before any work, one line each,
no stray writes, rehearsals kept out of the registry, what "every one available" leaves out.

Missing packages are hidden for real: a sitecustomize on PYTHONPATH puts None in
sys.modules for them, in the command's process and in every process it starts.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sitegen.core.digest import document_digest
from sitegen.core import identity
from sitegen.rerun.outcome.records import path_of, render

REPO = Path(__file__).resolve().parents[2]
TINY = ["--tokens", "4", "--vocab", "64", "--dtype", "fp32", "--pass", "forward", "--processes", "1"]


def sitegen(*args, cwd: Path, hide: tuple[str, ...] = (), tmp: Path | None = None, timeout: int = 300):
    """Run ``python -m sitegen ARGS`` in ``cwd`` with the modules ``hide`` not importable."""
    env = dict(os.environ)
    if hide:
        blocker = (tmp or cwd) / "hide-modules"
        blocker.mkdir(exist_ok=True)
        (blocker / "sitecustomize.py").write_text(
            "import sys\n" + "".join(f"sys.modules[{name!r}] = None\n" for name in hide))
        env = with_path_first(blocker)
    return subprocess.run([sys.executable, "-m", "sitegen", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def with_path_first(folder: Path) -> dict:
    """The environment with `folder` first on PYTHONPATH, before any entry already there (where
    sitegen itself may be installed, as on the GPU machine, which installs with --target)."""
    rest = os.environ.get("PYTHONPATH")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), *([rest] if rest else [])])}


def needs_gpu_extra():
    for name in ("torch", "triton", "numpy"):
        pytest.importorskip(name)


def files_under(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def record_registry(root: Path, impl: str, tokens: int, vocab: int) -> str:
    """A published-looking record of ``impl`` at tokens × vocab (fp32, forward) under sitegen's protocol family."""
    from sitegen.operations.jsd import JSD
    from sitegen.rules import protocol

    op = identity.operation_document("jsd")
    workload = identity.jsd_workload_document(tokens, vocab, "fp32")
    implementation = identity.implementation_document("jsd", impl, "0.8.0" if impl == "liger" else None)
    proto = protocol.protocol_document(JSD(), version="0.1.0", commit=None, repository=None, interpret=False, processes=1)
    env = {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "ExecutionEnvironment", "metadata": {"name": "h200"},
           "spec": {"hardware": {"vendor": "nvidia", "product": "NVIDIA H200", "architecture": "sm_90"}, "software": {}}}
    run = {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "BenchmarkRun", "metadata": {"name": f"big-{impl}"},
           "spec": {"implementationDigest": document_digest(implementation), "workloadDigest": document_digest(workload),
                    "protocolDigest": document_digest(proto), "environmentDigest": document_digest(env),
                    "timedPass": "forward", "status": "passed",
                    "timing": {"latencyNs": {"median": 2_240_000}, "primaryStatistic": "median"},
                    "observedAt": "2026-05-27T17:14:29Z"}}
    for doc in (op, workload, implementation, proto, env, run):
        path = root / path_of(doc, "jsd")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(render(doc))
    return run["metadata"]["name"]


def one_problem_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert "Traceback" not in stderr, stderr
    assert len(lines) == 1, stderr
    return lines[0]


# Finding 1: no torch, and `--interpret` said to be the way out.
@pytest.mark.parametrize("mode", [["--interpret"], [], ["--self-test"], ["--self-test", "--interpret"]],
                         ids=["interpret", "gpu", "self-test", "self-test-interpret"])
def test_without_torch_every_mode_says_how_to_install_it(tmp_path, mode):
    work = tmp_path / "work"
    (work / "records").mkdir(parents=True)
    result = sitegen("rerun", *mode, cwd=work, hide=("torch", "triton"), tmp=tmp_path)
    assert result.returncode == 1
    assert one_problem_line(result.stderr).endswith("needs torch and triton: pip install '.[gpu]' in the sitegen checkout")
    assert "use --interpret" not in result.stderr
    assert files_under(work) == {}


def test_interpret_without_numpy_says_how_to_install_it(tmp_path):
    needs_gpu_extra()
    result = sitegen("rerun", "--interpret", *TINY, cwd=tmp_path, hide=("numpy",))
    assert result.returncode == 1
    assert one_problem_line(result.stderr) == (
        "sitegen rerun --interpret: $: needs numpy for Triton's interpreter: pip install '.[gpu]' in the sitegen checkout")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["hide-modules"]


def test_without_torch_the_rerun_module_refuses_in_one_line_too(tmp_path):
    """`python -m sitegen.rerun` runs the command outside sitegen's CLI group; same refusal."""
    env = with_path_first(_blocker(tmp_path, "torch"))
    result = subprocess.run([sys.executable, "-m", "sitegen.rerun", "--interpret", "--json"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert one_problem_line(result.stderr) == "sitegen rerun --interpret: $: needs torch and triton: pip install '.[gpu]' in the sitegen checkout"
    assert json.loads(result.stdout)["ok"] is False


def test_hidden_torch_is_really_unimportable(tmp_path):
    """The blocker the tests above rely on: torch cannot be imported, in-process or in a child."""
    result = subprocess.run([sys.executable, "-c", "import subprocess, sys\n"
                             "try:\n    import torch\nexcept ImportError:\n    print('parent blocked')\n"
                             "subprocess.run([sys.executable, '-c', 'import torch'])"],
                            env=with_path_first(_blocker(tmp_path, "torch")),
                            capture_output=True, text=True, timeout=120)
    assert "parent blocked" in result.stdout and "ModuleNotFoundError" in result.stderr


def _blocker(tmp: Path, name: str) -> Path:
    folder = tmp / "blocker"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(f"import sys\nsys.modules[{name!r}] = None\n")
    return folder


# Finding 4: an implementation asked for by name that is not installed.
def test_impl_not_installed_is_refused_before_any_work_and_writes_nothing(tmp_path):
    needs_gpu_extra()
    out = tmp_path / "out"
    result = sitegen("rerun", "--interpret", "--impl", "liger", "--out", out, *TINY, cwd=tmp_path,
                     hide=("liger_kernel",))
    assert result.returncode == 1
    line = one_problem_line(result.stderr)
    assert line == "--impl: $: liger cannot run here: liger_kernel is not installed: pip install liger-kernel"
    assert not out.exists()


# Finding 3 (first half): --like of a Liger record without Liger.
def test_like_needs_its_implementation_installed(tmp_path):
    needs_gpu_extra()
    registry = tmp_path / "registry"
    name = record_registry(registry, "liger", 2048, 128256)
    before = files_under(registry)
    result = sitegen("rerun", "--interpret", "--like", name, "--records", registry, "--out", registry,
                     cwd=tmp_path, hide=("liger_kernel",))
    assert result.returncode == 1
    line = one_problem_line(result.stderr)
    assert line.startswith(f"{name}: $.spec.implementationDigest: --like needs the implementation liger, which is not installed")
    assert files_under(registry) == before


# Finding 3 (second half): --like under --interpret at the interpreter's sizes, not 2048 × 128256.
def test_like_under_interpret_runs_at_the_interpreters_sizes(tmp_path):
    needs_gpu_extra()
    from sitegen.format.loader import load_paths

    registry = tmp_path / "registry"
    name = record_registry(registry, "torch", 2048, 128256)
    out = tmp_path / "out"
    result = sitegen("rerun", "--interpret", "--like", name, "--records", registry, "--out", out, "--json",
                     cwd=tmp_path, timeout=240)
    assert result.returncode == 0, result.stderr
    assert "--like under --interpret runs at the interpreter's sizes: tokens 16 × vocab 100 fp32" in result.stderr
    summary = json.loads(result.stdout)
    assert "verdict" not in summary
    [row] = summary["runs"]
    assert (row["tokens"], row["vocab"], row["dtype"], row["pass"], row["impl"]) == (16, 100, "fp32", "forward", "torch")
    records, problems = load_paths([out])
    [run] = [r for r in records if r.kind == "BenchmarkRun"]
    assert problems == [] and run.model.spec.evidence.dryRun and run.model.spec.evidence.rerunOf is None


# Findings 2, 5 and the Done-when: a rehearsal in a fresh checkout leaves records/ alone.
def test_rehearsal_in_a_fresh_checkout_leaves_records_untouched_and_the_build_working(tmp_path):
    needs_gpu_extra()
    if shutil.which("git") is None:
        pytest.skip("needs git")
    checkout = tmp_path / "checkout"
    shutil.copytree(REPO / "records", checkout / "records")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "records"]):
        subprocess.run([*git, *args], cwd=checkout, check=True, capture_output=True)

    result = sitegen("rerun", "--interpret", *TINY, "--json", cwd=checkout, hide=("liger_kernel",), tmp=tmp_path)
    assert result.returncode == 0, result.stderr
    status = subprocess.run(["git", "status", "--porcelain"], cwd=checkout, capture_output=True, text=True, check=True)
    assert status.stdout == ""
    summary = json.loads(result.stdout)
    scratch = Path(summary["out"])
    assert summary["scratch"] and not scratch.is_relative_to(checkout)
    assert f"into {scratch}, a scratch folder" in result.stderr
    # Into a pipe: the worker's log lines as they are, and no progress display.
    assert "[process 1/1" in result.stderr and "ETA" not in result.stderr and "\x1b[" not in result.stderr
    # Finding 5: every implementation the default leaves out is named, with why.
    assert "liger: left out (liger_kernel is not installed: pip install liger-kernel)" in result.stderr
    assert "torch-compile: left out (under --interpret, inductor compiles C++" in result.stderr
    assert {row["impl"] for row in summary["runs"]} == {"sitegen", "torch"}
    assert set(summary["leftOut"]) == {"liger", "torch-compile"}
    # The scratch folder is a registry of its own that verifies and builds.
    assert sitegen("verify", scratch, cwd=tmp_path).returncode == 0
    # A dry run written into the registry on purpose still leaves it buildable.
    into = sitegen("rerun", "--interpret", *TINY, "--impl", "torch", "--out", "records", cwd=checkout)
    assert into.returncode == 0, into.stderr
    built = sitegen("build", "--records", "records", "--out", tmp_path / "site", cwd=checkout)
    assert built.returncode == 0, built.stderr
    assert sitegen("verify", "records", cwd=checkout).returncode == 0
    shutil.rmtree(scratch)


# Finding 4 (second half): a rerun that measured nothing writes nothing and exits 1.
def test_nothing_measured_writes_nothing(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from sitegen.cli.main import main
    from sitegen.rerun.plan import selection
    from sitegen.rerun import sweep

    def spawn(plan, workdir, k, interpret, **_):
        # A worker whose every implementation turned out not to import.
        return {"software": {"python": "3.11", "torch": "2.13.0"}, "device": {}, "processCount": None,
                "processCountAfter": None, "copyBytesPerS": 1e9, "gate": {}, "timings": {},
                "availability": {i["name"]: {"ok": False, "reason": "ImportError: broken"} for i in plan["impls"]}}

    monkeypatch.setattr(selection, "require_gpu_extra", lambda command, **_: None)
    monkeypatch.setattr(selection, "missing", lambda impl: None)
    monkeypatch.setattr(sweep, "_spawn", spawn)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["rerun", "--interpret", "--impl", "torch", *TINY, "--out", str(out)])
    assert result.exit_code == 1
    assert "no case was measured (torch not available: ImportError: broken); nothing written" in result.output
    assert not out.exists()
