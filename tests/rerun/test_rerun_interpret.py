"""`sitegen rerun --interpret` end to end at tiny sizes: what it writes validates, locks and verifies."""

import json

import pytest
from click.testing import CliRunner

pytest.importorskip("torch", reason="rerun measures with torch")
pytest.importorskip("triton", reason="the bundled kernel needs triton")
pytest.importorskip("numpy", reason="Triton's interpreter needs numpy")

from sitegen.cli.main import main  # noqa: E402
from sitegen.format.loader import load_paths  # noqa: E402
from sitegen.format.model import BenchmarkRun  # noqa: E402

ARGS = ["rerun", "--interpret", "--tokens", "4", "--vocab", "64", "--dtype", "fp32", "--pass", "forward,full",
        "--impl", "sitegen,torch", "--json"]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("records")
    result = CliRunner().invoke(main, [*ARGS, "--out", str(out), "--records", str(out)])
    assert result.exit_code == 0, result.output
    return out, json.loads(result.stdout)


def runs(out):
    records, problems = load_paths([out])
    assert problems == []
    return [r for r in records if r.kind == "BenchmarkRun"]


def test_writes_one_valid_run_per_case(sweep):
    out, summary = sweep
    found = runs(out)
    cases = {(r.model.spec.timedPass, r.model.metadata.title.split(" · ")[1]) for r in found}
    assert cases == {(p, i) for p in ("forward", "full") for i in ("sitegen", "torch")}
    assert len(summary["runs"]) == 4 and all(row["status"] == "passed" for row in summary["runs"])


def test_validate_lock_verify(sweep):
    out, _ = sweep
    cli = CliRunner()
    assert cli.invoke(main, ["validate", str(out)]).exit_code == 0
    assert cli.invoke(main, ["lock", str(out)]).exit_code == 0
    verified = cli.invoke(main, ["verify", str(out)])
    assert verified.exit_code == 0, verified.output


def test_runs_are_dry_and_carry_gate_samples_and_checks(sweep):
    out, _ = sweep
    for record in runs(out):
        spec: BenchmarkRun = record.model.spec
        assert spec.evidence.dryRun is True
        assert spec.correctness.status == "passed"
        assert len(spec.correctness.cases) == 4 and all(c.fullyWritten and c.passed for c in spec.correctness.cases)
        assert len(spec.timing.processes) == 3
        assert spec.timing.samplesNs == [s for p in spec.timing.processes for s in p.samplesNs]
        assert all(len(p.samplesNs) >= 3 for p in spec.timing.processes)
        names = {c.name for c in spec.evidence.integrity}
        assert {"roofline", "host_timed", "throttle", "exclusive_gpu"} <= names


def test_protocol_and_environment(sweep):
    out, _ = sweep
    records, _ = load_paths([out])
    (protocol,) = [r.model for r in records if r.kind == "BenchmarkProtocol"]
    assert protocol.spec.harness.name == "sitegen rerun"
    assert protocol.spec.measurement.processes == 3
    assert set(protocol.spec.correctness.tolerances) >= {"fp32", "bf16"}
    (env,) = [r.model for r in records if r.kind == "ExecutionEnvironment"]
    # Instance facts stay out of the environment's identity.
    assert "uuid" not in json.dumps(env.spec.model_dump()).lower()


def test_workloads_match_the_catalog(sweep):
    from sitegen.core.digest import document_digest
    from sitegen.core.identity import jsd_workload_document

    out, _ = sweep
    expected = document_digest(jsd_workload_document(4, 64, "fp32"))
    assert {r.model.spec.workloadDigest for r in runs(out)} == {expected}


def test_second_identical_sweep_adds_runs_and_overwrites_nothing(sweep, tmp_path):
    out, _ = sweep
    before = {p: p.read_bytes() for p in out.rglob("*.json")}
    result = CliRunner().invoke(main, [*ARGS, "--pass", "forward", "--impl", "torch", "--processes", "1",
                                       "--out", str(out), "--records", str(out)])
    if result.exit_code != 0:  # the same second as the first sweep: refused, nothing touched
        assert "never overwritten" in result.output
    after = {p: p.read_bytes() for p in out.rglob("*.json")}
    assert all(after[p] == data for p, data in before.items())
    assert len(after) - len(before) in (0, 1, 2)  # a run, and the one-process protocol
