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
