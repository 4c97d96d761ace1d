"""Writes tests/fixtures/registry-small/, the small registry the site tests build.

Regenerate (then review the diff, and regenerate the golden site):
    .venv/bin/python tests/site/fixture_registry.py && .venv/bin/sitegen lock tests/fixtures/registry-small
    (the controlled reruns are signed with tests/fixtures/keys/fixture_ed25519, which its sitegen.toml trusts)
    SITEGEN_UPDATE_GOLDEN=1 .venv/bin/pytest tests/site/test_golden.py

The runs resemble the seed record (Liger's JSD forward on a B200, 9.11 ms median, rank 2
behind torch at 4.97 ms) but reference documents that exist in this registry. The seed
bundle's protocol and environment are reused verbatim.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from sitegen.core.digest import document_digest
from sitegen.rules.stats import summary
from sitegen.trust.registrysigning import sign_registry

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "registry-small"
SEED = Path(__file__).resolve().parents[1] / "fixtures" / "valid" / "seed-manifest.json"
FIXTURE_KEY = Path(__file__).resolve().parents[1] / "fixtures" / "keys" / "fixture_ed25519"
API = "kernelindex.dev/v1alpha1"


def doc(kind: str, name: str, spec: dict, **metadata) -> dict:
    return {"apiVersion": API, "kind": kind, "metadata": {"name": name, **metadata}, "spec": spec}


def write(relative: str, document: dict) -> str:
    path = ROOT / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return document_digest(document) if "kind" in document else ""


def liger_run(name, impl, workload, protocol, environment, *, median_ms, observed, provider, tokens, status="passed", reason=None):
    stamp = observed.replace(":", "-").replace("T", "-")[:19]
    external = f"jsd/forward/{provider}/nvidia-b200/tokens{tokens}-vocab128256-fp32/{stamp}"
    spec = {
        "implementationDigest": impl, "workloadDigest": workload, "protocolDigest": protocol,
        "environmentDigest": environment, "status": status, "observedAt": observed,
    }
    if status == "passed":
        ns = round(median_ms * 1e6)
        spec["timing"] = {"latencyNs": {"median": ns}, "primaryStatistic": "median"}
        spec["measurements"] = [
            {"unit": "ns", "value": ns, "metric": "latency", "statistic": "p20"},
            {"unit": "ns", "value": ns, "metric": "latency", "statistic": "p80"},
        ]
        metrics = {"ms_20": median_ms, "ms_50": median_ms, "ms_80": median_ms}
    else:
        spec["statusReason"] = reason
        metrics = {}
    spec["sourceNative"] = {"source": "liger-kernel-bench", "metrics": metrics, "benchmark": "jsd/forward", "externalId": external}
    return doc("BenchmarkRun", name, spec, title=f"Jensen-Shannon divergence loss · {provider} · forward",
               labels={"liger_version": "0.8.0"})


def controlled_run(name, impl, workload, protocol, environment, *, samples_ms, uuid, observed, rerun_of=None, dry=False):
    samples = [round(ms * 1e6) for ms in samples_ms]
    # As the harness states them, which is what validate recomputes (sitegen.rules.recompute).
    stated = summary(samples)
    evidence = {
        "integrity": [
            {"name": "roofline", "passed": True, "detail": "above the 0.74 ms copy floor"},
            {"name": "exclusive_gpu", "passed": True},
        ],
        "instance": {"gpuUuid": uuid, "hostname": "gpu-host"},
        "command": f"sitegen rerun --implementation {name.split('-')[0]}",
    }
    if rerun_of:
        evidence["rerunOf"] = rerun_of
    if dry:
        evidence["dryRun"] = True
    spec = {
        "implementationDigest": impl, "workloadDigest": workload, "protocolDigest": protocol,
        "environmentDigest": environment, "timedPass": "forward", "status": "passed",
        "correctness": {
            "status": "passed", "comparator": "allclose", "reference": "sitegen.kernels.reference (float64)",
            "maxAbsError": 2.1e-7, "maxRelError": 3.4e-6,
            "cases": [
                {"shape": [2048, 128256], "seed": 0, "maxAbsError": 2.1e-7, "maxRelError": 3.4e-6, "fullyWritten": True, "passed": True},
                {"shape": [3, 1000], "seed": 1, "maxAbsError": 1.2e-7, "maxRelError": 1.1e-6, "fullyWritten": True, "passed": True},
            ],
        },
        "timing": {
            "latencyNs": {key: stated[key] for key in ("median", "min", "max", "p20", "p80")},
            "primaryStatistic": "median", "samplesNs": samples,
        },
        "evidence": evidence, "observedAt": observed,
    }
    return doc("BenchmarkRun", name, spec, title=f"Jensen-Shannon divergence loss · {name} · forward")


def main() -> None:
    if ROOT.exists():
        shutil.rmtree(ROOT)
    seed = json.loads(SEED.read_text(encoding="utf-8"))
    operation = write("operations/jensen-shannon-divergence.json", doc("OperationSpec", "jensen-shannon-divergence", {
        "family": "loss",
        "axes": [{"name": "vocab", "description": "vocabulary size"}, {"name": "tokens", "description": "batch × sequence length"}],
        "inputs": [{"name": "student_log_probs", "shape": ["tokens", "vocab"]}, {"name": "teacher_log_probs", "shape": ["tokens", "vocab"]}],
        "outputs": [{"name": "loss", "shape": []}],
        "parameters": {"beta": "mixture weight between forward and reverse KL"},
        "semantics": {"expression": "JSD_β(P‖Q) = β·KL(P‖M) + (1−β)·KL(Q‖M), M = β·P + (1−β)·Q, averaged over tokens"},
    }, title="Jensen-Shannon divergence loss"))
    workloads = {}
    for tokens in (2048, 4096):
        workloads[tokens] = write(f"workloads/jsd-vocab128256-tokens{tokens}-fp32.json", doc("WorkloadCase", f"jsd-vocab128256-tokens{tokens}-fp32", {
            "operationSpecDigest": operation, "axes": {"vocab": 128256, "tokens": tokens}, "dtype": "fp32",
            "tensors": [{"name": "student_log_probs", "dtype": "fp32", "shape": [tokens, 128256]},
                        {"name": "teacher_log_probs", "dtype": "fp32", "shape": [tokens, 128256]}],
            "scalars": {"beta": 0.5},
            "correctness": {"comparator": "not_asserted"},
        }))
    impl = {}
    impl["liger"] = write("implementations/liger.json", doc("ImplementationRevision", "liger", {
        "name": "Liger", "projectRevision": {"project": "Liger-Kernel", "repository": "https://github.com/linkedin/Liger-Kernel"},
        "operation": {"specDigest": operation}, "callable": {"module": "liger_kernel.transformers", "name": "LigerJSD"},
        "licensing": {"license": "BSD-2-Clause"},
    }))
    impl["torch"] = write("implementations/torch.json", doc("ImplementationRevision", "torch", {
        "name": "torch", "projectRevision": {"project": "PyTorch", "repository": "https://github.com/pytorch/pytorch", "version": "2.11.0"},
        "operation": {"specDigest": operation}, "callable": {"module": "torch.nn.functional", "name": "kl_div", "variant": "eager"},
        "licensing": {"license": "BSD-3-Clause"},
    }))
    impl["sitegen"] = write("implementations/sitegen-triton.json", doc("ImplementationRevision", "sitegen-triton", {
        "name": "sitegen Triton JSD", "projectRevision": {"project": "sitegen", "repository": "https://github.com/kernelindex/sitegen", "commit": "1917bb0aa1b2c3d4"},
        "operation": {"specDigest": operation}, "callable": {"module": "sitegen.kernels.jsd", "name": "jsd_loss"},
        "licensing": {"license": "BSD-2-Clause"},
    }))
    protocol = write("protocols/liger-bench-do-bench-forward.json", seed["protocol"])
    b200 = write("environments/liger-bench-nvidia-b200.json", seed["environment"])
    controlled = write("protocols/sitegen-rerun-forward.json", doc("BenchmarkProtocol", "sitegen-rerun-forward", {
        "harness": {"name": "sitegen rerun", "version": "0.1.0", "repository": "https://github.com/kernelindex/sitegen"},
        "measurement": {"timer": "cuda_events", "primaryStatistic": "median", "warmup": {"minIterations": 10},
                        "minSamples": 5, "l2Flush": True, "inputs": "fresh-random-rotated"},
        "correctness": {"reference": "sitegen.kernels.reference (float64)", "comparator": "allclose",
                        "tolerances": {"fp32": {"rtol": 1e-5, "atol": 1e-6}}},
        "integrity": {"roofline": True, "exclusiveGpu": True, "agreement": 0.05},
        "comparability": {"family": "sitegen_controlled", "notes": "Forward pass with gradient, L2 flushed, fresh inputs."},
    }, title="sitegen controlled rerun · forward"))
    h200 = write("environments/sitegen-nvidia-h200.json", doc("ExecutionEnvironment", "sitegen-nvidia-h200", {
        "hardware": {"vendor": "nvidia", "product": "NVIDIA H200", "architecture": "sm_90", "memoryBytes": 150754820096, "count": 1},
        "software": {"driver": "580.65.06", "cudaToolkit": "13.0", "framework": {"name": "torch", "version": "2.11.0+cu130"},
                     "libraries": {"triton": "3.6.0"}, "python": "3.11.9"},
    }, title="sitegen rerun host · H200"))
    liger_2048 = liger_run("liger-jsd-forward-liger-nvidia-b200-tokens2048-vocab128256-fp32-2026-05-27-17-14-29",
                           impl["liger"], workloads[2048], protocol, b200, median_ms=9.110560417175293,
                           observed="2026-05-27T17:14:29.000Z", provider="liger", tokens=2048)
    seed_digest = write(f"runs/{liger_2048['metadata']['name']}.json", liger_2048)
    for run in (
        liger_run("liger-jsd-forward-torch-nvidia-b200-tokens2048-vocab128256-fp32-2026-05-27-17-14-31", impl["torch"], workloads[2048],
                  protocol, b200, median_ms=4.971583843231201, observed="2026-05-27T17:14:31.000Z", provider="torch", tokens=2048),
        liger_run("liger-jsd-forward-liger-nvidia-b200-tokens4096-vocab128256-fp32-2026-05-27-17-14-33", impl["liger"], workloads[4096],
                  protocol, b200, median_ms=0, observed="2026-05-27T17:14:33.000Z", provider="liger", tokens=4096,
                  status="failed", reason="CUDA out of memory while allocating the gradient"),
        liger_run("liger-jsd-forward-torch-nvidia-b200-tokens4096-vocab128256-fp32-2026-05-27-17-14-35", impl["torch"], workloads[4096],
                  protocol, b200, median_ms=9.80224609375, observed="2026-05-27T17:14:35.000Z", provider="torch", tokens=4096),
    ):
        write(f"runs/{run['metadata']['name']}.json", run)
    rerun = controlled_run("liger-h200-tokens2048-rerun-2026-08-20", impl["liger"], workloads[2048], controlled, h200,
                           samples_ms=[2.25, 2.24, 2.23, 2.26, 2.24], uuid="GPU-1111aaaa", observed="2026-08-20T10:00:00Z",
                           rerun_of={"runDigest": seed_digest, "runName": liger_2048["metadata"]["name"]})
    write(f"runs/{rerun['metadata']['name']}.json", rerun)
    first = controlled_run("sitegen-h200-tokens2048-2026-08-20", impl["sitegen"], workloads[2048], controlled, h200,
                           samples_ms=[0.81, 0.80, 0.80, 0.82, 0.81], uuid="GPU-1111aaaa", observed="2026-08-20T10:05:00Z")
    first_digest = write(f"runs/{first['metadata']['name']}.json", first)
    for run in (
        controlled_run("sitegen-h200-tokens2048-2026-08-21", impl["sitegen"], workloads[2048], controlled, h200,
                       samples_ms=[0.82, 0.81, 0.81, 0.83, 0.82], uuid="GPU-2222bbbb", observed="2026-08-21T09:00:00Z",
                       rerun_of={"runDigest": first_digest, "runName": first["metadata"]["name"]}),
        controlled_run("sitegen-h200-tokens2048-dry-2026-08-19", impl["sitegen"], workloads[2048], controlled, h200,
                       samples_ms=[95.0, 96.0, 94.0], uuid="cpu-interpreter", observed="2026-08-19T08:00:00Z", dry=True),
    ):
        write(f"runs/{run['metadata']['name']}.json", run)
    write("attestations/liger-b200-tokens2048-note.json", doc("Attestation", "liger-b200-tokens2048-note", {
        "run": seed_digest, "kind": "reproduced", "value": "9.2 ms", "author": "A. Tester", "date": "2026-08-22",
        "body": ("Reproduced on **our own B200** with Liger 0.8.0.\n\n"
                 "[tracker](https://example.org/jsd) · [click me](javascript:alert(1)) · "
                 "<a href=\"javascript:alert(2)\">raw link</a>\n\n"
                 "<script>alert('x')</script><img src=x onerror=alert(3)>\n\n"
                 "- median 9.2 ms\n- same driver\n"),
        "link": "https://example.org/jsd-repro",
    }))
    (ROOT / "sources").mkdir(parents=True, exist_ok=True)
    (ROOT / "sources" / "liger-kernel-bench.toml").write_text(
        'name = "Liger-Kernel benchmarks"\n'
        'url = "https://github.com/linkedin/Liger-Kernel/tree/main/benchmark"\n'
        'license = "BSD-2-Clause"\n'
        'published = "2026-08-18"\n'
        'citation = "LinkedIn, Liger-Kernel benchmark data (benchmark/data/all_benchmark_data.csv)"\n',
        encoding="utf-8")
    (ROOT / "sitegen.toml").write_text(
        '[site]\n'
        'title = "sitegen registry"\n'
        'base_url = "https://registry.example.org/"\n'
        'repository_url = "https://github.com/kernelindex/registry"\n'
        'issue_tracker_url = "https://github.com/kernelindex/registry/issues"\n'
        'license = "CC-BY-4.0"\n'
        '\n'
        '# The fixtures\' throw-away key (tests/fixtures/keys/README.md): no real registry trusts it.\n'
        '[[trust]]\n'
        'name = "sitegen test fixtures"\n'
        f'key = "{" ".join(FIXTURE_KEY.with_suffix(".pub").read_text().split()[:2])}"\n', encoding="utf-8")
    # The controlled reruns are signed as `sitegen rerun --key` signs them, so they can earn Verified.
    controlled = [p.stem for p in sorted((ROOT / "runs").glob("*.json"))
                  if (e := json.loads(p.read_text())["spec"].get("evidence")) and e.get("integrity") and not e.get("dryRun")]
    sign_registry(ROOT, FIXTURE_KEY, tuple(controlled))


if __name__ == "__main__":
    main()
