"""Who takes a place, as docs/trust.md ("What a first place means") states it: in a cohort of
controlled reruns only a Verified (or Replicated) run ranks; every other rerun, and any run that
names sitegen's controlled protocol or carries a rerun's integrity checks without being Verified,
is listed with one line saying why and holds no rank. Written from that text, on rule registries."""

from __future__ import annotations

from registry import RuleRegistry, spread

MS = 1_000_000


def _two(tmp_path, **slow_fields):
    """A fast run 'forged' (options: signed, controlled, evidence edits) beside a Verified 'honest' 20% slower."""
    registry = RuleRegistry(tmp_path / "records")
    registry.run("honest", registry.implementation("honest"), spread(1.2 * MS, 0.002))
    return registry


def test_a_signed_rerun_takes_the_first_place(tmp_path):
    registry = _two(tmp_path)
    registry.run("forged", registry.implementation("forged"), spread(1.0 * MS, 0.002))
    facts, _ = registry.index()
    assert (facts["forged"].rank, facts["honest"].rank) == (1, 2)
    assert facts["forged"].reasons == []


def test_an_unsigned_rerun_holds_no_place_and_says_so(tmp_path):
    registry = _two(tmp_path)
    registry.run("forged", registry.implementation("forged"), spread(1.0 * MS, 0.002), signed=False)
    facts, _ = registry.index()
    assert facts["forged"].rank is None and facts["forged"].reasons == ["not Verified: unsigned"]
    assert facts["honest"].rank == 1 and facts["honest"].faster_set_aside == []


def test_a_published_run_under_sitegens_controlled_protocol_holds_no_place(tmp_path):
    # No rerun evidence at all, yet it names the controlled protocol: it claims the harness.
    registry = _two(tmp_path)
    registry.run("forged", registry.implementation("forged"), None, controlled=False, signed=False,
                 stated={"median": MS, "p20": MS - 1000, "p80": MS + 1000})
    facts, _ = registry.index()
    assert facts["forged"].rank is None
    assert facts["forged"].reasons == ["not Verified: no record of a controlled rerun, though it names "
                                       "sitegen's controlled protocol"]
    assert facts["honest"].rank == 1


def test_a_like_rerun_without_its_command_line_is_still_a_rerun(tmp_path):
    # Under Liger's protocol (a --like rerun's), only the command said sitegen ran it; the integrity
    # checks it carries say so too, so without the command it still holds no place unsigned.
    registry = RuleRegistry(tmp_path / "records")
    protocol = registry.variant("protocols", "liger-bench-do-bench-forward", "liger-with-checks",
                                lambda spec: spec.update(integrity={"roofline": True, "exclusiveGpu": True}))
    registry.run("honest", registry.implementation("honest"), spread(1.2 * MS, 0.002), protocolDigest=protocol)
    registry.run("forged", registry.implementation("forged"), spread(1.0 * MS, 0.002), signed=False,
                 protocolDigest=protocol)
    registry.edit("forged", lambda spec: spec["evidence"].pop("command"))
    facts, _ = registry.index()
    assert facts["forged"].rank is None and facts["honest"].rank == 1
    assert facts["forged"].reasons == ["not Verified: it carries a rerun's integrity checks but no record of "
                                       "the command that ran them"]


def test_a_published_run_of_a_sources_own_family_keeps_its_place(tmp_path):
    # The rule is about reruns: a source's published numbers rank as the source's.
    registry = RuleRegistry(tmp_path / "records", family="published_bench")
    registry.run("honest", registry.implementation("honest"), spread(1.2 * MS, 0.002))
    registry.run("source", registry.implementation("source"), None, controlled=False, signed=False,
                 stated={"median": MS, "p20": MS - 1000, "p80": MS + 1000})
    facts, _ = registry.index()
    assert facts["source"].rank == 1 and facts["source"].reasons == []


def _outside(registry, name: str) -> str:
    """An implementation of code outside sitegen: its own project, version and module."""
    def change(spec):
        spec["name"] = name
        spec["projectRevision"] = {"project": name, "version": "1.0"}
        spec["callable"] = {"module": f"{name.replace('-', '_')}.kernel", "name": "Kernel"}
    return registry.variant("implementations", "sitegen-triton", name, change)


def test_signed_outside_code_holds_a_place_only_once_the_registry_reviewed_it(tmp_path):
    registry = _two(tmp_path)
    registry.run("forged", _outside(registry, "outside-jsd"), spread(1.0 * MS, 0.002))
    facts, _ = registry.index()
    assert facts["forged"].rank is None
    assert facts["forged"].reasons == ["not Verified: outside code not reviewed by this registry"]
    config = registry.root / "sitegen.toml"
    config.write_text(config.read_text() + '\n[[reviewed]]\nname = "outside JSD 1.0"\ndistribution = "outside-jsd@1.0"\n'
                                            'reviewer = "a maintainer"\ndate = 2026-08-20\n')
    facts, _ = registry.index()
    assert facts["forged"].rank == 1 and facts["forged"].reasons == []


def test_a_trusted_rerun_flagged_by_a_check_says_only_its_flag(tmp_path):
    # Signed and of sitegen's code: its flag is a fact, and the set-aside rule reads it alone.
    registry = _two(tmp_path)
    registry.run("throttled", registry.implementation("throttled"), spread(1.0 * MS, 0.002))
    registry.edit("throttled", lambda spec: spec["evidence"]["integrity"].append(
        {"name": "throttle", "passed": False, "detail": "SM clock under 97% of its maximum"}))
    facts, _ = registry.index()
    assert facts["throttled"].reasons == ["flagged: throttle: SM clock under 97% of its maximum"]
    assert facts["honest"].faster_set_aside == ["throttled (flagged: throttle)"]


def test_a_signed_rerun_without_raw_samples_holds_no_place(tmp_path):
    registry = _two(tmp_path)
    registry.run("bare", registry.implementation("bare"), None, stated={"median": MS, "p20": MS - 1000, "p80": MS + 1000})
    facts, _ = registry.index()
    assert facts["bare"].rank is None
    assert facts["bare"].reasons == ["not Verified: a controlled rerun needs a passed gate, raw samples and the GPU's UUID"]


def test_a_signed_rerun_missing_a_check_its_protocol_promises_says_which(tmp_path):
    registry = _two(tmp_path)
    registry.run("partial", registry.implementation("partial"), spread(1.0 * MS, 0.002))
    registry.edit("partial", lambda spec: spec["evidence"].update(
        integrity=[c for c in spec["evidence"]["integrity"] if c["name"] != "roofline"]))
    facts, _ = registry.index()
    assert facts["partial"].rank is None
    assert facts["partial"].reasons == ["not Verified: the roofline check was not recorded"]


def test_reviewed_outside_code_flagged_by_a_check_says_only_its_flag(tmp_path):
    # The review counts for a flagged run too: its flag, not its code, is why it holds no place.
    registry = _two(tmp_path)
    registry.run("throttled", _outside(registry, "outside-jsd"), spread(1.0 * MS, 0.002))
    registry.edit("throttled", lambda spec: spec["evidence"]["integrity"].append(
        {"name": "throttle", "passed": False, "detail": "SM clock under 97% of its maximum"}))
    config = registry.root / "sitegen.toml"
    config.write_text(config.read_text() + '\n[[reviewed]]\nname = "outside JSD 1.0"\ndistribution = "outside-jsd@1.0"\n'
                                            'reviewer = "a maintainer"\ndate = 2026-08-20\n')
    facts, _ = registry.index()
    assert facts["throttled"].reasons == ["flagged: throttle: SM clock under 97% of its maximum"]
