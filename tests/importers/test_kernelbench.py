"""`sitegen import kernelbench` end to end, on the nine real snapshots and on a git checkout.

The expected values below were read by hand from the snapshots' files (timing JSON,
problem sources, COMMIT), not from the importer's output.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from sitegen.cli.main import main
from sitegen.core.digest import document_digest
from sitegen.core import identity
from kernelbenchdata import KERNELBENCH, SNAPSHOTS, require_kernelbench

# The nine snapshots' timings, less the 14 that are null.
TOTAL_TIMINGS = 8486


def _import(path: Path, out: Path, *extra: str):
    return CliRunner().invoke(main, ["import", "kernelbench", str(path), "--out", str(out), *extra])


def _snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(root.rglob("*")) if p.is_file()}


def _doc(root: Path, relative: str) -> dict:
    return json.loads((root / relative).read_text(encoding="utf-8"))


def _by_digest(root: Path) -> dict[str, dict]:
    found = {}
    for path in root.rglob("*.json"):
        document = json.loads(path.read_text(encoding="utf-8"))
        found[document_digest(document)] = document
    return found


@pytest.fixture(scope="module")
def registry(tmp_path_factory) -> Path:
    """All nine snapshots imported, one command each, into one registry; the tests only read it."""
    require_kernelbench()
    out = tmp_path_factory.mktemp("kernelbench") / "records"
    for snapshot in SNAPSHOTS:
        result = _import(KERNELBENCH / snapshot, out)
        assert result.exit_code == 0, f"{snapshot}: {result.output}"
    return out


@pytest.fixture(scope="module")
def digests(registry) -> dict[str, dict]:
    return _by_digest(registry)


def _run(registry: Path, name: str) -> dict:
    found = list(registry.glob(f"runs/*/{name}.json"))
    assert len(found) == 1, f"{name}: {found}"
    return json.loads(found[0].read_text(encoding="utf-8"))


def test_every_timing_of_the_nine_snapshots_is_one_run(registry):
    runs = list(registry.glob("runs/*/*.json"))
    assert len(runs) == TOTAL_TIMINGS
    result = CliRunner().invoke(main, ["verify", str(registry), "--full"])
    assert result.exit_code == 0, result.output


def test_a_timing_keeps_mean_std_min_max_and_the_gpu_of_its_own_hardware_string(registry, digests):
    # fcc5b17/results/timing/A10G_modal/baseline_time_torch.json, level2 1_Conv2D_ReLU_BiasAdd.py:
    # mean 0.167, std 0.00514, min 0.162, max 0.197 ms on "NVIDIA A10" (the folder says A10G).
    run = _run(registry, "kernelbench-fcc5b17-a10g-modal-torch-level2-1-conv2d-relu-biasadd")
    assert run["spec"]["timing"] == {
        "latencyNs": {"mean": 167000, "min": 162000, "max": 197000, "stdev": 5140}, "primaryStatistic": "mean"}
    environment = digests[run["spec"]["environmentDigest"]]
    assert environment["spec"]["hardware"]["product"] == "NVIDIA A10"
    assert environment["spec"]["software"]["framework"] == {"name": "torch", "version": "2.5.0+cu124"}
    # The date is the commit's, as COMMIT gives it.
    assert run["spec"]["observedAt"] == "2025-01-21T13:03:28-08:00"
    # Shapes from the problem at that commit: randn(batch_size, in_channels, height, width) with
    # `height, width = 32, 32`; the init arguments in_channels, out_channels, kernel_size, bias_shape.
    workload = digests[run["spec"]["workloadDigest"]]["spec"]
    assert workload["tensors"] == [{"name": "input0", "dtype": "fp32", "shape": [128, 3, 32, 32]}]
    assert workload["dtype"] == "fp32"
    assert workload["axes"]["height"] == 32 and workload["axes"]["batch_size"] == 128
    assert workload["config"] == {"init0": 3, "init1": 16, "init2": 3, "init3": "16×1×1"}
    refs = {ref["name"]: ref for ref in run["metadata"]["sourceRefs"]}
    assert refs["KernelBench problem"]["url"] == (
        "https://github.com/ScalingIntelligence/KernelBench/blob/fcc5b17953834ab482ae8493fa2682def759af8f/"
        "KernelBench/level2/1_Conv2D_ReLU_BiasAdd.py")
    assert refs["KernelBench timing"]["license"] == "MIT"


def test_a_folder_that_mixes_two_gpus_files_each_timing_under_its_own(registry, digests):
    # 47f78d7 A100_modal/baseline_time_torch.json: 245 timings on A100-SXM4-40GB, 5 on -80GB,
    # among them level3 31_VisionAttention.py (mean 60.1 ms).
    run = _run(registry, "kernelbench-47f78d7-a100-modal-torch-level3-31-visionattention")
    assert run["spec"]["timing"]["latencyNs"]["mean"] == 60_100_000
    assert digests[run["spec"]["environmentDigest"]]["spec"]["hardware"]["product"] == "NVIDIA A100-SXM4-80GB"
    products = {}
    for path in registry.glob("runs/*/kernelbench-47f78d7-a100-modal-torch-level*.json"):
        spec = json.loads(path.read_text(encoding="utf-8"))["spec"]
        product = digests[spec["environmentDigest"]]["spec"]["hardware"]["product"]
        products[product] = products.get(product, 0) + 1
    assert products == {"NVIDIA A100-SXM4-40GB": 245, "NVIDIA A100-SXM4-80GB": 5}


def test_shapes_with_arithmetic_on_literals_and_a_problem_of_its_own(registry, digests):
    # 1f8d20f H100_Modal eager, level1 98_KLDivLoss.py: mean 3.86 ms; `batch_size = 8192 * 2`,
    # `input_shape = (8192 * 2,)`, two inputs torch.rand(batch_size, *input_shape)…softmax.
    run = _run(registry, "kernelbench-1f8d20f-h100-modal-torch-level1-98-kldivloss")
    assert run["spec"]["timing"]["latencyNs"]["mean"] == 3_860_000
    assert run["spec"]["observedAt"] == "2025-12-31T09:28:01-08:00"
    workload = digests[run["spec"]["workloadDigest"]]
    assert [t["shape"] for t in workload["spec"]["tensors"]] == [[16384, 16384], [16384, 16384]]
    operation = digests[workload["spec"]["operationSpecDigest"]]
    # KernelBench's KL takes probabilities and applies the log itself: not Liger's kl_div.
    assert operation["metadata"]["name"].startswith("kernelbench-level1-98-kldivloss-")
    assert operation["spec"]["family"] == "KernelBench level 1"
    assert "torch.log(predictions)" in operation["spec"]["semantics"]["expression"]


def test_a_problem_that_is_a_registry_operation_joins_it(registry, digests):
    # a147f37 B200_together inductor default, level1 95_CrossEntropyLoss.py: mean 0.177 ms;
    # batch_size = 4096, num_classes = 10 at that commit.
    run = _run(registry, "kernelbench-a147f37-b200-together-torch-compile-inductor-default-level1-95-crossentropyloss")
    assert run["spec"]["timing"]["latencyNs"]["mean"] == 177_000
    workload = digests[run["spec"]["workloadDigest"]]
    assert workload["spec"]["operationSpecDigest"] == document_digest(identity.operation_document("cross_entropy"))
    assert workload["spec"]["axes"] == {"vocab": 10, "tokens": 4096}
    implementation = digests[run["spec"]["implementationDigest"]]["spec"]
    assert implementation["name"] == "torch.compile (inductor, default)"
    assert implementation["callable"]["variant"] == "torch.compile(backend='inductor', mode='default')"
    assert implementation["projectRevision"]["version"] == "2.5.0+cu124"
    # 1f8d20f H100_Modal eager, 23_Softmax.py: mean 8.52 ms; batch_size = 4096, dim = 393216.
    softmax = _run(registry, "kernelbench-1f8d20f-h100-modal-torch-level1-23-softmax")
    assert softmax["spec"]["timing"]["latencyNs"]["mean"] == 8_520_000
    assert digests[softmax["spec"]["workloadDigest"]]["spec"]["axes"] == {"hidden": 393216, "tokens": 4096}
    assert digests[softmax["spec"]["implementationDigest"]]["spec"]["name"] == "torch eager"


def test_the_protocol_says_how_kernelbench_timed(registry, digests):
    protocols = {document_digest(d): d for d in digests.values() if d["kind"] == "BenchmarkProtocol"}
    assert len(protocols) == 1
    spec = next(iter(protocols.values()))["spec"]
    assert spec["measurement"]["warmup"]["minIterations"] == 3
    assert spec["measurement"]["minSamples"] == 100
    assert spec["measurement"]["timer"] == "cuda_events"
    assert spec["measurement"]["primaryStatistic"] == "mean"
    assert "1.96" in spec["comparability"]["notes"]


def test_reimporting_a_snapshot_changes_nothing(registry):
    before = _snapshot(registry)
    result = _import(KERNELBENCH / "a147f37", registry)
    assert result.exit_code == 0, result.output
    assert "0 file(s) written" in result.output
    assert _snapshot(registry) == before


def test_a_git_checkout_gives_its_commit_and_date_from_git(tmp_path):
    require_kernelbench()
    if shutil.which("git") is None:
        pytest.fail("git is needed to make the checkout", pytrace=False)
    checkout = tmp_path / "KernelBench"
    shutil.copytree(KERNELBENCH / "752dd45", checkout, ignore=shutil.ignore_patterns("COMMIT"))
    day = "2025-02-03T04:05:06+00:00"
    env = {**os.environ, "GIT_AUTHOR_DATE": day, "GIT_COMMITTER_DATE": day, "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "snapshot"]):
        subprocess.run(["git", "-C", str(checkout), *command], check=True, env=env, capture_output=True)
    commit = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], check=True, env=env,
                            capture_output=True, text=True).stdout.strip()
    out = tmp_path / "records"
    result = _import(checkout, out)
    assert result.exit_code == 0, result.output
    # 752dd45 holds one file: L40S_matx3/baseline_time_torch_compile_cudagraphs.json, 250 timings.
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in out.glob("runs/*/*.json")]
    assert len(runs) == 250
    assert {r["spec"]["observedAt"] for r in runs} == {day}
    assert {ref["commit"] for r in runs for ref in r["metadata"]["sourceRefs"]} == {commit}
    assert all(r["metadata"]["name"].startswith(f"kernelbench-{commit[:7]}-l40s-matx3-torch-compile-cudagraphs-") for r in runs)
    assert (out / "sources" / "kernelbench.toml").read_text(encoding="utf-8").count('published = "2025-02-03"') == 1


def test_lookalikes_the_table_calls_different_get_operations_of_their_own(registry, digests):
    import tomllib
    from importlib import resources

    table = tomllib.loads(resources.files("sitegen.importers").joinpath("kernelbench_operations.toml").read_text("utf-8"))
    for entry in table["different"]:
        level, file = entry["problem"].split("/")
        stem = identity.name_slug(file.removesuffix(".py"))
        runs = list(registry.glob(f"runs/*/kernelbench-*-{level}-{stem}.json"))
        assert runs, entry["problem"]
        liger = document_digest(identity.operation_document(entry["operation"]))
        for path in runs:
            workload = digests[json.loads(path.read_text(encoding="utf-8"))["spec"]["workloadDigest"]]
            assert workload["spec"]["operationSpecDigest"] != liger, path.name
            assert digests[workload["spec"]["operationSpecDigest"]]["metadata"]["name"].startswith(f"kernelbench-{level}-{stem}-")


def test_a_checkout_with_uncommitted_edits_is_refused_in_one_line(tmp_path):
    require_kernelbench()
    checkout = tmp_path / "KernelBench"
    shutil.copytree(KERNELBENCH / "752dd45", checkout, ignore=shutil.ignore_patterns("COMMIT"))
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "snapshot"]):
        subprocess.run(["git", "-C", str(checkout), *command], check=True, env=env, capture_output=True)
    problem = checkout / "KernelBench" / "level1" / "23_Softmax.py"
    problem.write_text(problem.read_text(encoding="utf-8").replace("dim = 16384", "dim = 32768"), encoding="utf-8")
    out = tmp_path / "records"
    result = _import(checkout, out)
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if "differ from commit" in line]
    assert len(lines) == 1 and "23_Softmax.py" in lines[0]
    assert not out.exists()
