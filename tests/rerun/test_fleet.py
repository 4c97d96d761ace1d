"""`sitegen rerun --ray` on a real local Ray cluster whose nodes each advertise one logical GPU of a
made-up product (custom resources), measuring under Triton's interpreter on the CPU.

The driver runs as a subprocess, as a user runs it, so that SIGINT and killed workers are real.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="rerun measures with torch")
pytest.importorskip("triton", reason="the bundled kernel needs triton")
pytest.importorskip("numpy", reason="Triton's interpreter needs numpy")
ray_cluster_utils = pytest.importorskip("ray.cluster_utils", reason="the fleet extra (ray) is not installed")

CASES = ["--interpret", "--tokens", "4", "--vocab", "64", "--dtype", "fp32", "--pass", "forward",
         "--impl", "sitegen,torch"]
NODE = {"num_cpus": 1, "num_gpus": 1, "object_store_memory": 80 * 2**20}


@pytest.fixture(scope="module")
def cluster():
    """A head without GPUs, two nodes of product TESTA and one of TESTB."""
    c = ray_cluster_utils.Cluster(initialize_head=True, head_node_args={
        "num_cpus": 0, "num_gpus": 0, "object_store_memory": 80 * 2**20, "include_dashboard": False})
    nodes = {"TESTA": [c.add_node(**NODE, resources={"accelerator_type:TESTA": 1}) for _ in range(2)],
             "TESTB": [c.add_node(**NODE, resources={"accelerator_type:TESTB": 1})]}
    c.wait_for_nodes()
    yield c, nodes
    c.shutdown()


def driver(args, out: Path, **kw) -> subprocess.Popen:
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    return subprocess.Popen([sys.executable, "-m", "sitegen", "rerun", *args, "--out", str(out), "--records", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, **kw)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def documents(folder: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(folder.rglob("*.json"))]


def comparable(doc: dict) -> dict:
    """A document without what differs between two runs of the same cases: timings, time,
    instance, and the gate's secret seeds with the errors on their inputs."""
    doc = json.loads(json.dumps(doc))
    if doc["kind"] != "BenchmarkRun":
        return doc
    spec = doc["spec"]
    for key in ("timing", "observedAt"):
        spec.pop(key, None)
    correctness = spec.get("correctness") or {}
    for key in ("maxAbsError", "maxRelError"):
        correctness.pop(key, None)
    correctness["cases"] = [{k: c[k] for k in ("shape", "passed", "fullyWritten")} for c in correctness.get("cases", [])]
    evidence = spec["evidence"]
    evidence.pop("instance", None)
    evidence["integrity"] = sorted(c["name"] for c in evidence.get("integrity", []))
    evidence["details"] = sorted(evidence.get("details", {}))  # measured bandwidth and medians
    doc["metadata"]["name"] = doc["metadata"]["title"] + " " + spec["timedPass"]
    return doc


def wait_for_line(proc: subprocess.Popen, needle: str, lines: list[str], limit_s: float = 240) -> str:
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        if needle in line:
            return line
    raise AssertionError(f"no {needle!r} in driver output:\n{''.join(lines)}")


def children(pid: int) -> set[int]:
    try:
        return {int(c) for t in Path(f"/proc/{pid}/task").iterdir() for c in (t / "children").read_text().split()}
    except (FileNotFoundError, ProcessLookupError):
        return set()


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def test_two_products_write_what_a_local_rerun_writes(cluster, tmp_path):
    c, _ = cluster
    fleet_out, local_out = tmp_path / "fleet", tmp_path / "local"
    proc = driver([*CASES, "--ray", c.address, "--gpus", "TESTA,TESTB", "--json"], fleet_out)
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr
    local = driver(CASES, local_out)
    _, local_err = local.communicate(timeout=600)
    assert local.returncode == 0, local_err

    summary = json.loads(stdout)
    assert summary["ok"] and summary["products"] == ["TESTA", "TESTB"]
    assert sorted((r["product"], r["impl"], r["outcome"]) for r in summary["cases"]) == [
        (p, i, "measured") for p in ("TESTA", "TESTB") for i in ("sitegen", "torch")]
    assert "[fleet TESTA: 0 queued, 0 running, 1 done]" in stderr and "[fleet TESTB:" in stderr

    fleet_docs, local_docs = documents(fleet_out), documents(local_out)
    fleet_runs = [d for d in fleet_docs if d["kind"] == "BenchmarkRun"]
    assert len(fleet_runs) == 4  # each case once per product
    # Two products' runs are two instances: they differ in instance (and so in name) only.
    assert len({json.dumps(d["spec"]["evidence"]["instance"]) for d in fleet_runs}) == 2
    by_kind = lambda docs: sorted(json.dumps(comparable(d), sort_keys=True) for d in docs)  # noqa: E731
    assert by_kind(fleet_docs) == sorted(by_kind(local_docs) + by_kind(d for d in local_docs if d["kind"] == "BenchmarkRun"))
    # Same layout: every fleet file lies where a local run puts a document of its kind.
    assert {str(p.parent.relative_to(fleet_out)) for p in fleet_out.rglob("*.json")} == \
           {str(p.parent.relative_to(local_out)) for p in local_out.rglob("*.json")}
    assert not (fleet_out / "sitegen.lock").exists()
    verify = subprocess.run([sys.executable, "-m", "sitegen", "validate", str(fleet_out)], capture_output=True, text=True)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def task_started(proc, lines: list[str]) -> tuple[str, int, list[int]]:
    """The first task's "running on" line, its pid, and its measuring processes once it has any
    (empty after 120 s)."""
    line = wait_for_line(proc, ": running on ", lines)
    pid = int(line.rsplit("pid ", 1)[1].rstrip(")\n"))
    end = time.monotonic() + 120
    while not (measuring := children(pid)) and time.monotonic() < end:
        time.sleep(0.2)
    return line, pid, measuring


def test_a_killed_worker_is_retried_on_another_gpu_of_its_product(cluster, tmp_path):
    c, _ = cluster
    out = tmp_path / "out"
    proc = driver([*CASES, "--ray", c.address, "--gpus", "TESTA", "--json"], out)
    lines: list[str] = []
    first, pid, measuring = task_started(proc, lines)
    os.kill(pid, signal.SIGKILL)
    assert measuring, "the task never started a measuring process"
    stdout, rest = proc.communicate(timeout=600)
    stderr = "".join(lines) + rest
    assert proc.returncode == 0, stderr
    assert "lost (" in stderr and "retrying on another GPU of TESTA" in stderr
    summary = json.loads(stdout)
    assert {r["outcome"] for r in summary["cases"]} == {"measured"}
    assert {r["attempts"] for r in summary["cases"]} == {2}
    killed_on = first.split("running on ", 1)[1].split(" (", 1)[0]
    assert {r["gpu"] for r in summary["cases"]} != {killed_on}
    # Nothing half-written: every file is a whole document, no temporary file is left.
    # No transaction leftovers; the rerun journal is meant to stay (sitegen sign reads it).
    assert not [p for p in out.rglob("*") if p.name.startswith(".") and p.name != ".sitegen-rerun-journal"]
    assert len([d for d in documents(out) if d["kind"] == "BenchmarkRun"]) == 2
    # Ray ends a dead worker's children: the lost GPU is not left busy with an orphan.
    assert not any(alive(p) for p in measuring)


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


# "ignored": as a shell starts a job with `&` in a script (or when this suite runs in the
# background), SIGINT is ignored in the driver from its start; Ctrl-C must cancel all the same.
@pytest.mark.parametrize("inherited", ["default", "ignored"])
def test_sigint_to_the_driver_leaves_out_as_it_was_and_stops_the_measuring(cluster, tmp_path, inherited):
    c, _ = cluster
    out = tmp_path / "out"
    out.mkdir()
    (out / "sitegen.toml").write_text('[site]\ntitle = "kept"\n')
    before = snapshot(out)
    # Each case starts from a known state, whatever this test process inherited.
    start = _ignore_sigint if inherited == "ignored" else (lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    proc = driver([*CASES, "--ray", c.address], out, preexec_fn=start)
    lines: list[str] = []
    _, task_pid, measuring = task_started(proc, lines)
    assert measuring, "the task never started a measuring process"
    proc.send_signal(signal.SIGINT)
    try:
        _, stderr = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()  # a driver that ignored Ctrl-C must not outlive the test
        proc.communicate()
        raise AssertionError(f"the driver ignored SIGINT (started with it {inherited})") from None
    assert proc.returncode == 130, "".join(lines) + stderr
    assert "nothing written" in stderr
    assert snapshot(out) == before
    end = time.monotonic() + 30
    while any(alive(pid) for pid in measuring) and time.monotonic() < end:
        time.sleep(0.2)
    assert not any(alive(pid) for pid in measuring), "a measuring process outlived the cancelled task"


def test_replicas_measure_on_distinct_gpus_and_too_few_gpus_are_refused(cluster, tmp_path):
    c, _ = cluster
    out = tmp_path / "out"
    proc = driver([*CASES, "--impl", "sitegen", "--ray", c.address, "--gpus", "TESTA,TESTB", "--replicas", "2", "--json"], out)
    stdout, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 1 and stdout, stderr  # not every case was measured
    rows = json.loads(stdout)["cases"]
    a = [r for r in rows if r["product"] == "TESTA"]
    assert [r["outcome"] for r in a] == ["measured", "measured"]
    assert len({r["gpu"] for r in a}) == 2
    b = [r for r in rows if r["product"] == "TESTB"]
    assert [(r["outcome"], r["reason"]) for r in b] == [
        ("refused", "--replicas 2 needs 2 GPUs of TESTB; the cluster has 1")] * 2
    assert "TESTB #1 tokens 4 vocab 64 fp32 forward sitegen: refused (--replicas 2 needs 2 GPUs" in stderr
    assert sorted(r["file"] for r in a) == sorted(str(p.relative_to(out)) for p in out.glob("runs/jsd/*.json"))


def test_the_driver_needs_no_torch_and_names_a_missing_product(cluster, tmp_path):
    c, _ = cluster
    blocker = tmp_path / "block"
    blocker.mkdir()
    for name in ("torch", "triton"):
        (blocker / f"{name}.py").write_text("raise ImportError('blocked for this test')\n")
    result = subprocess.run([sys.executable, "-m", "sitegen", "rerun", *CASES, "--ray", c.address, "--gpus", "H900",
                             "--out", str(tmp_path / "out")],
                            env={**os.environ, "PYTHONPATH": str(blocker)}, capture_output=True, text=True)
    assert result.returncode == 1
    assert "--gpus: $: no GPU of product H900 in the cluster (it has TESTA, TESTB)\n" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_gpus_and_replicas_need_ray(tmp_path):
    from click.testing import CliRunner

    from sitegen.cli.main import main

    result = CliRunner().invoke(main, ["rerun", *CASES, "--gpus", "H100", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "--gpus and --replicas need --ray" in result.output


def test_an_address_nothing_listens_on_is_one_clear_line(tmp_path):
    from click.testing import CliRunner

    from sitegen.cli.main import main

    result = CliRunner().invoke(main, ["rerun", *CASES, "--ray", "127.0.0.1:1", "--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert result.output.startswith("--ray 127.0.0.1:1: $: cannot reach a Ray cluster there (")
    assert not (tmp_path / "out").exists()


def test_key_signs_on_the_driver_what_the_fleet_measured(cluster, tmp_path):
    c, _ = cluster
    out, key = tmp_path / "out", tmp_path / "driver-key"
    made = subprocess.run([sys.executable, "-m", "sitegen", "keygen", str(key)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    proc = driver([*CASES, "--impl", "torch", "--ray", c.address, "--gpus", "TESTB", "--key", str(key)], out)
    _, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr
    runs = [d for d in documents(out) if d["kind"] == "BenchmarkRun"]
    assert runs and all(run["metadata"].get("signature") for run in runs)
    trust = tmp_path / "trust.toml"
    trust.write_text(f'[[trust]]\nname = "driver"\nkey = "{made.stdout.strip()}"\n')
    # A dry run's lock: --ray writes none, so verify it unlocked.
    checked = subprocess.run([sys.executable, "-m", "sitegen", "verify", "--unlocked", "--trust", str(trust), str(out)],
                             capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
