"""--like: the verdict function, resolving a recorded run, and a rerun of a Liger-style record on the CPU."""

import json

import pytest
from click.testing import CliRunner

from sitegen.core.digest import document_digest
from sitegen.core import identity
from sitegen.core.problems import InputError
from sitegen.rerun.plan.like import plan
from sitegen.rerun.outcome.records import path_of, render
from sitegen.rerun.plan.registryscan import scan
from sitegen.rules.verdict import judge


def _verdict(original_product, rerun_product, original_ns, new_ns, tolerance=0.05):
    return judge(rerun_product=rerun_product, original_product=original_product, rerun_value=new_ns,
                 original_value=original_ns, tolerance=tolerance).text


def test_verdict_same_product_within_tolerance():
    assert _verdict("NVIDIA H200", "NVIDIA H200", 1000, 1030) == "reproduced within 5% (3% slower)"


def test_verdict_same_product_beyond_tolerance_says_direction():
    assert _verdict("NVIDIA H200", "NVIDIA H200", 1000, 1200) == "not reproduced (20% slower)"
    assert _verdict("A", "A", 1000, 800) == "not reproduced (20% faster)"


def test_verdict_respects_the_protocol_tolerance():
    assert _verdict("A", "A", 1000, 1080, tolerance=0.10).startswith("reproduced")
    assert _verdict("A", "A", 1000, 1080, tolerance=0.05).startswith("not reproduced")


def test_verdict_other_product_is_not_comparable():
    assert _verdict("NVIDIA B200", "NVIDIA H200", 1000, 1000) == (
        "not comparable (different GPU product: NVIDIA B200 recorded, NVIDIA H200 rerun)")


def liger_registry(root, product="NVIDIA B200"):
    """A Liger-style record (do_bench protocol, B200) of a tiny workload, written like the importer."""
    op = identity.operation_document("jsd")
    workload = identity.jsd_workload_document(4, 64, "fp32")
    impl = identity.implementation_document("jsd", "torch", None)
    protocol = {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "BenchmarkProtocol",
                "metadata": {"name": "liger-bench-do-bench-forward"},
                "spec": {"harness": {"name": "Liger-Kernel benchmark scripts"},
                         "measurement": {"timer": "cuda_events", "primaryStatistic": "median"},
                         "comparability": {"family": "liger_kernel_bench"}}}
    env = {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "ExecutionEnvironment", "metadata": {"name": "b200"},
           "spec": {"hardware": {"vendor": "nvidia", "product": product, "architecture": "sm_100"}, "software": {}}}
    run = {"apiVersion": "kernelindex.dev/v1alpha1", "kind": "BenchmarkRun", "metadata": {"name": "liger-jsd-forward-torch-tiny"},
           "spec": {"implementationDigest": document_digest(impl), "workloadDigest": document_digest(workload),
                    "protocolDigest": document_digest(protocol), "environmentDigest": document_digest(env),
                    "status": "passed", "timing": {"latencyNs": {"median": 9110560}, "primaryStatistic": "median"},
                    "sourceNative": {"source": "liger-kernel-bench", "benchmark": "jsd/forward", "externalId": "x",
                                     "metrics": {"ms_50": 9.11}},
                    "observedAt": "2026-05-27T17:14:29Z"}}
    for doc in (op, workload, impl, protocol, env, run):
        path = root / path_of(doc, "jsd")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(render(doc))
    return document_digest(run)


def test_plan_resolves_workload_pass_impl_and_family(tmp_path):
    digest = liger_registry(tmp_path)
    for run_id in ("liger-jsd-forward-torch-tiny", digest, digest[7:19]):
        p = plan(scan(tmp_path), run_id, str(tmp_path))
        assert (p.workload["tokens"], p.workload["vocab"], p.workload.dtype) == (4, 64, "fp32")
        assert (p.timed_pass, p.impl, p.mode, p.original_product) == ("forward", "torch", "do_bench", "NVIDIA B200")
        assert p.run_digest == digest and p.original_ns == 9110560


def test_plan_unknown_run_is_one_clear_problem(tmp_path):
    liger_registry(tmp_path)
    with pytest.raises(InputError) as err:
        plan(scan(tmp_path), "no-such-run", str(tmp_path))
    assert "no BenchmarkRun named" in err.value.problems[0].message


def test_like_on_cpu_links_the_original_and_says_not_comparable(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("numpy", reason="Triton's interpreter needs numpy")
    from sitegen.cli.main import main
    from sitegen.format.loader import load_paths

    digest = liger_registry(tmp_path)
    result = CliRunner().invoke(main, ["rerun", "--interpret", "--like", "liger-jsd-forward-torch-tiny",
                                       "--records", str(tmp_path), "--out", str(tmp_path), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["verdict"].startswith("not comparable (different GPU product: NVIDIA B200 recorded, ")
    records, problems = load_paths([tmp_path])
    assert problems == []
    (new,) = [r for r in records if r.kind == "BenchmarkRun" and r.model.spec.evidence and r.model.spec.evidence.rerunOf]
    assert new.model.spec.evidence.rerunOf.runDigest == digest
    # Rerun under the record's own protocol: the Liger protocol document, not sitegen's.
    (old,) = [r for r in records if r.kind == "BenchmarkRun" and r.name == "liger-jsd-forward-torch-tiny"]
    assert new.model.spec.protocolDigest == old.model.spec.protocolDigest
    assert new.model.spec.evidence.dryRun is True
