"""Evidence levels as docs/record-format.md and the README define them, one missing ingredient at a time.

Reproducible: code revision (commit or version), concrete tensors, driver and framework, and raw
samples published. Verified: a controlled `sitegen rerun` that passed its gate and every check,
with raw samples, signed by a trusted key. Replicated: two Verified runs on different GPUs that
agree within the protocol's agreement.
"""

from __future__ import annotations

import pytest

from registry import RuleRegistry, spread

SAMPLES = spread(1_000_000, 0.002)


@pytest.fixture
def registry(tmp_path):
    return RuleRegistry(tmp_path / "records")


def _level(registry, name: str) -> str:
    facts, _ = registry.index()
    return facts[name].level


def test_a_signed_controlled_rerun_with_every_ingredient_is_verified(registry):
    registry.run("full", registry.implementation("impl"), SAMPLES, signed=True)
    assert _level(registry, "full") == "Verified"


def test_the_same_rerun_unsigned_is_reproducible(registry):
    registry.run("unsigned", registry.implementation("impl"), SAMPLES, signed=False)
    assert _level(registry, "unsigned") == "Reproducible"


def test_without_raw_samples_a_run_is_not_reproducible(registry):
    registry.run("no-samples", registry.implementation("impl"), None, controlled=False,
                 stated={"median": 1_000_000, "p20": 990_000, "p80": 1_010_000})
    assert _level(registry, "no-samples") == "Reported"


def test_without_raw_samples_a_signed_controlled_run_is_not_verified_nor_reproducible(registry):
    registry.run("no-samples", registry.implementation("impl"), None, signed=True,
                 stated={"median": 1_000_000, "p20": 990_000, "p80": 1_010_000})
    assert _level(registry, "no-samples") == "Reported"


def test_without_a_code_revision_a_run_is_not_reproducible(registry):
    registry.run("no-revision", registry.implementation("impl", commit=None), SAMPLES, signed=False)
    assert _level(registry, "no-revision") == "Reported"


def test_a_version_stands_for_a_commit(registry):
    registry.run("versioned", registry.implementation("impl", commit=None, version="2.11.0"), SAMPLES, signed=False)
    assert _level(registry, "versioned") == "Reproducible"


def _environment(registry, **software) -> str:
    def change(spec):
        spec["software"].update(software)
        spec["software"] = {k: v for k, v in spec["software"].items() if v is not None}
    return registry.variant("environments", "sitegen-nvidia-h200", "host", change)


@pytest.mark.parametrize("missing", ["driver", "framework"])
def test_without_the_driver_or_framework_a_run_is_not_reproducible(registry, missing):
    registry.run("run", registry.implementation("impl"), SAMPLES, environmentDigest=_environment(registry, **{missing: None}), signed=False)
    assert _level(registry, "run") == "Reported"


def test_without_concrete_tensors_a_run_is_not_reproducible(registry):
    workload = registry.variant("workloads", "jsd-vocab128256-tokens2048-fp32", "no-tensors", lambda s: s.pop("tensors"))
    registry.run("run", registry.implementation("impl"), SAMPLES, workloadDigest=workload, signed=False)
    assert _level(registry, "run") == "Reported"


def test_integrity_results_alone_do_not_make_a_controlled_rerun(registry):
    # Liger's own harness, signed, with raw samples and integrity results that all passed, but
    # neither sitegen's harness nor a `sitegen rerun` command: a published run, not a rerun.
    def liger_protocol(spec):
        spec["integrity"] = {"roofline": True, "exclusiveGpu": True}
    protocol = registry.variant("protocols", "liger-bench-do-bench-forward", "liger-with-checks", liger_protocol)
    registry.run("published", registry.implementation("impl"), SAMPLES, signed=True, protocolDigest=protocol)
    registry.edit("published", lambda s: s["evidence"].update(command="python benchmark/scripts/benchmark_jsd.py"))
    facts, _ = registry.index()
    run = facts["published"]
    assert run.run.spec.evidence.integrity and all(c.passed for c in run.run.spec.evidence.integrity)
    assert run.harness != "sitegen rerun"
    assert run.level == "Reproducible"


def test_a_like_rerun_under_a_cited_protocol_is_controlled_by_its_command(registry):
    def liger_protocol(spec):
        spec["integrity"] = {"roofline": True, "exclusiveGpu": True}
    protocol = registry.variant("protocols", "liger-bench-do-bench-forward", "liger-with-checks", liger_protocol)
    registry.run("like", registry.implementation("impl"), SAMPLES, signed=True, protocolDigest=protocol)
    facts, _ = registry.index()
    assert facts["like"].run.spec.evidence.command.startswith("sitegen rerun")
    assert facts["like"].level == "Verified"


@pytest.mark.parametrize("change", [
    pytest.param(lambda s: s["evidence"]["integrity"][1].update(passed=False), id="a failed check"),
    pytest.param(lambda s: s["correctness"]["cases"][1].update(passed=False), id="a failed gate case"),
    pytest.param(lambda s: s["correctness"].update(status="failed"), id="a failed gate"),
    pytest.param(lambda s: s["evidence"].update(dryRun=True), id="a dry run"),
    pytest.param(lambda s: s["evidence"]["instance"].pop("gpuUuid"), id="no GPU UUID"),
    pytest.param(lambda s: s["evidence"]["integrity"].pop(1), id="a promised check missing"),
])
def test_each_missing_verified_ingredient_keeps_a_signed_rerun_below_verified(registry, change):
    registry.run("run", registry.implementation("impl"), SAMPLES, signed=True)
    registry.edit("run", change)
    # Still everything a rerun needs is published: one level down, not two.
    assert _level(registry, "run") == "Reproducible"


@pytest.mark.parametrize("second_gpu, second_median, level", [
    pytest.param("GPU-2", 1_040_000, "Replicated", id="another GPU, 4% apart: within the protocol's 5%"),
    pytest.param("GPU-1", 1_000_000, "Verified", id="the same GPU, identical"),
    pytest.param("GPU-2", 1_060_000, "Verified", id="another GPU, 6% apart"),
])
def test_two_verified_runs_are_replicated_only_on_different_gpus_within_the_agreement(registry, second_gpu, second_median, level):
    impl = registry.implementation("impl")
    registry.run("first", impl, spread(1_000_000, 0.002), uuid="GPU-1", signed=True)
    registry.run("second", impl, spread(second_median, 0.002), uuid=second_gpu, signed=True, observedAt="2026-08-21T00:00:00Z")
    facts, _ = registry.index()
    assert (facts["first"].level, facts["second"].level) == (level, level)


def _facts(registry, name):
    facts, _ = registry.index()
    return facts[name]


def test_a_missing_promised_check_is_named_as_the_reason(registry):
    registry.run("run", registry.implementation("impl"), SAMPLES, signed=True)
    registry.edit("run", lambda s: s["evidence"]["integrity"].pop(1))  # exclusive_gpu
    assert _facts(registry, "run").level_reason == "not Verified: the exclusive_gpu check was not recorded"


def test_a_like_rerun_under_a_protocol_promising_no_checks_is_held_to_sitegens_own(registry):
    # Liger's protocol promises no integrity checks; a --like rerun under it must still show
    # every check sitegen's own protocol promises, so citing another protocol is never cheaper.
    protocol = registry.amend("protocols", "liger-bench-do-bench-forward", lambda spec: spec.pop("integrity", None))
    registry.run("like", registry.implementation("impl"), SAMPLES, signed=True, protocolDigest=protocol)
    run = _facts(registry, "like")
    assert run.level == "Reproducible"
    assert run.level_reason == ("not Verified: the host_timed, repeated_input, throttle, timed_output checks "
                                "were not run under the liger_kernel_bench protocol")


def test_an_unsigned_rerun_says_verified_needs_a_trusted_signature(registry):
    registry.run("run", registry.implementation("impl"), SAMPLES, signed=False)
    reason = _facts(registry, "run").level_reason
    assert reason.startswith("not Verified: ") and reason.endswith("; Verified needs a valid signature by a key this registry trusts")


@pytest.mark.parametrize("agreement, second_median, level", [
    pytest.param(0.10, 1_080_000, "Replicated", id="the protocol's 10%: 8% apart agree"),
    pytest.param(None, 1_080_000, "Verified", id="no stated agreement: 5%, so 8% apart do not"),
    pytest.param(None, 1_040_000, "Replicated", id="no stated agreement: 5%, 4% apart agree"),
])
def test_replication_agrees_within_the_protocols_agreement_else_5_percent(registry, agreement, second_median, level):
    def change(spec):
        spec["integrity"].pop("agreement", None)
        if agreement is not None:
            spec["integrity"]["agreement"] = agreement
    registry.amend("protocols", "sitegen-rerun-forward", change)
    impl = registry.implementation("impl")
    registry.run("first", impl, spread(1_000_000, 0.002), uuid="GPU-1", signed=True)
    registry.run("second", impl, spread(second_median, 0.002), uuid="GPU-2", signed=True)
    facts, _ = registry.index()
    assert (facts["first"].level, facts["second"].level) == (level, level)


def test_two_missing_checks_are_named_together(registry):
    registry.run("run", registry.implementation("impl"), SAMPLES, signed=True)
    registry.edit("run", lambda s: s["evidence"].update(integrity=[{"name": "throttle", "passed": True}]))
    assert _facts(registry, "run").level_reason == "not Verified: the exclusive_gpu, roofline checks were not recorded"


def test_a_protocol_promising_the_host_timed_cross_check_requires_it(registry):
    registry.amend("protocols", "sitegen-rerun-forward", lambda spec: spec["measurement"].update(hostTimedCrossCheck=True))
    registry.run("run", registry.implementation("impl"), SAMPLES, signed=True)
    assert _facts(registry, "run").level_reason == "not Verified: the host_timed check was not recorded"


def test_agreement_includes_its_bound(registry):
    # Exactly 25% apart under a stated 25% agreement (exact in binary): they agree.
    registry.amend("protocols", "sitegen-rerun-forward", lambda spec: spec["integrity"].update(agreement=0.25))
    impl = registry.implementation("impl")
    registry.run("first", impl, spread(1_000_000, 0.002), uuid="GPU-1", signed=True)
    registry.run("second", impl, spread(1_250_000, 0.002), uuid="GPU-2", signed=True)
    facts, _ = registry.index()
    assert (facts["first"].value, facts["second"].value) == (1_000_000, 1_250_000)
    assert facts["first"].level == facts["second"].level == "Replicated"


@pytest.mark.parametrize("rerun_median, outcome, text", [
    (1_040_000, "reproduced", "reproduced within 5% (4% slower)"),
    (900_000, "not reproduced", "not reproduced (10% faster)"),
])
def test_a_rerun_is_judged_against_the_run_it_remeasures_within_the_originals_agreement(registry, rerun_median, outcome, text):
    from sitegen.facts.evidence import verdict

    impl = registry.implementation("impl")
    registry.run("original", impl, spread(1_000_000, 0.002))
    registry.run("rerun", impl, spread(rerun_median, 0.002), observedAt="2026-08-21T00:00:00Z")
    facts, _ = registry.index()
    judged = verdict(facts["rerun"], facts["original"])
    assert (judged.outcome, judged.text) == (outcome, text)
