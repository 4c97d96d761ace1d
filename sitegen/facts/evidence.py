"""Evidence levels and rerun verdicts, derived from the records; never declared.

Levels, from weakest: Reported (a source published it), Reproducible (everything needed
to rerun it is published), Verified (a controlled `sitegen rerun` passed its gates),
Replicated (two Verified runs on different GPUs agree). A run gets the highest level whose
conditions it meets. Attestations never enter here.
"""

from __future__ import annotations

from collections import defaultdict
from functools import cache

from sitegen.rules.protocol import AGREEMENT, FAMILY, HARNESS, INTERPRET_FAMILY, protocol_document
from sitegen.core.signing import BAD, OUTSIDE, UNKNOWN_KEY, UNPINNED, UNSIGNED, check_run
from sitegen.facts.runfacts import RunFacts
from sitegen.facts.trustedcode import UNREVIEWED, trusted_code
from sitegen.rules.verdict import Verdict, judge

LEVELS = ("Reported", "Reproducible", "Verified", "Replicated")
PLACED = ("Verified", "Replicated")
"""The levels whose controlled reruns take a place (rank, first place, badge, summary, verdict)."""

# Which integrity check each protocol field promises.
CHECK_OF_FIELD = {
    "roofline": "roofline", "repeatedInputMaxSpeedup": "repeated_input", "throttleCheck": "throttle",
    "exclusiveGpu": "exclusive_gpu", "timedOutputCheck": "timed_output",
}


def agreement(facts: RunFacts) -> float:
    """Relative tolerance within which two medians agree (protocol.integrity.agreement)."""
    integrity = facts.protocol.model.spec.integrity
    if integrity is not None and integrity.agreement is not None:
        return integrity.agreement
    return AGREEMENT


def _promised(spec) -> tuple[str, ...]:
    integrity = spec.integrity.model_dump() if spec.integrity else {}
    checks = [check for field, check in CHECK_OF_FIELD.items() if integrity.get(field)]
    if spec.measurement.hostTimedCrossCheck:
        checks.append("host_timed")
    return tuple(sorted(checks))


@cache
def _own_checks() -> tuple[str, ...]:
    """The checks sitegen's own controlled protocol promises: asked of a rerun under a protocol that promises none."""
    from sitegen.format.model import BenchmarkProtocol
    from sitegen.operations.jsd import JSD

    # The checks a protocol promises are the same for every operation; JSD's document states them.
    return _promised(BenchmarkProtocol.model_validate(protocol_document(
        JSD(), version=None, commit=None, repository=None, interpret=False)).spec)


def required_checks(facts: RunFacts) -> tuple[str, ...]:
    """The integrity checks a Verified run of this protocol must show: those its protocol promises.

    A --like rerun cites a published protocol (Liger's do_bench) that promises no checks;
    it is held to the checks of sitegen's own protocol, so citing another protocol never
    makes Verified cheaper.
    """
    spec = facts.protocol.model.spec
    return _promised(spec) if spec.integrity is not None else _own_checks()


def _has_samples(facts: RunFacts) -> bool:
    timing = facts.run.spec.timing
    return bool(timing and timing.samplesNs)


def reproducible(facts: RunFacts) -> bool:
    """Code revision, concrete tensors, driver and framework, and raw samples published."""
    revision = facts.implementation.model.spec.projectRevision
    software = facts.environment.model.spec.software
    return bool(
        (revision.commit or revision.version)
        and facts.workload.model.spec.tensors
        and software.driver and software.framework
        and _has_samples(facts)
    )


def controlled(facts: RunFacts) -> bool:
    """Measured by `sitegen rerun`: under its own protocol, or under a cited one with --like.

    The harness stays named as the protocol names it (a --like rerun of Liger's do_bench
    record times with do_bench); the integrity checks and the command say sitegen ran it.
    """
    evidence = facts.run.spec.evidence
    if evidence is None or not evidence.integrity:
        return False
    return facts.harness == HARNESS or (evidence.command or "").startswith("sitegen rerun")


def verified(facts: RunFacts, trust: list | None = None, reviewed: list | None = None) -> tuple[bool, str | None]:
    """(Verified?, why not, when only a missing check, its signature or unreviewed code stands in the way).

    A controlled rerun that passed correctness and every integrity check its protocol
    requires, with raw samples and the GPU's UUID, signed by a key of ``trust``
    (sitegen.core.signing.TrustedKey) that was valid when it ran, of code sitegen ships or the
    registry ``reviewed`` (sitegen.registry.config.ReviewedCode; sitegen.facts.trustedcode). Its stated
    figures follow from its samples already: validation refuses any other (sitegen.rules.recompute).
    Sets ``facts.signature`` on every controlled rerun, whatever else it lacks.
    """
    spec = facts.run.spec
    evidence = spec.evidence
    correctness = spec.correctness
    if not controlled(facts) or evidence.dryRun:
        return False, None
    referenced = {r.digest: r for r in (facts.implementation, facts.workload, facts.protocol, facts.environment)}
    facts.signature = check_run(facts.record, referenced, trust or [])
    if not (
        spec.status == "passed"
        and all(check.passed for check in evidence.integrity)
        and correctness is not None and correctness.status == "passed"
        and correctness.cases and all(case.passed for case in correctness.cases)
        and _has_samples(facts)
        and evidence.instance is not None and evidence.instance.gpuUuid
    ):
        return False, None
    ran = {check.name for check in evidence.integrity}
    missing = [check for check in required_checks(facts) if check not in ran]
    if missing:
        family = facts.protocol.model.spec.comparability.family
        plural = len(missing) > 1
        why = "not recorded" if family == FAMILY else f"not run under the {family} protocol"
        return False, f"not Verified: the {', '.join(missing)} check{'s' if plural else ''} {'were' if plural else 'was'} {why}"
    if not facts.signature.valid:
        return False, f"not Verified: {facts.signature.reason()}; Verified needs a valid signature by a key this registry trusts"
    if not trusted_code(facts, reviewed or []):
        return False, UNREVIEWED
    return True, None


# What a reader is told, in one line, of a rerun whose signature does not make it Verified.
_SIGNATURE_SHORT = {
    UNSIGNED: "unsigned",
    UNKNOWN_KEY: "signed by a key this registry does not trust",
    BAD: "its signature does not match its documents",
}


def unplaced(facts: RunFacts, reviewed: list | None = None) -> str | None:
    """Why a run that stands as a controlled rerun takes no place in its cohort; None when it may.

    Only evidence nobody can type in takes a place: a controlled rerun ranks (and leads, holds a
    badge, counts in a summary or a compare verdict) only when Verified or Replicated. Samples and
    figures that agree with each other prove nothing about who measured them; the signature of a
    trusted key on code sitegen ships or the registry reviewed does. A run under sitegen's own
    protocol families without a rerun's evidence is held to the same rule: it claims the harness.
    A failed or flagged rerun already says why it holds no place, and a flagged one may still
    count as set aside (ranking.SLOWING_CHECKS): it is left to those rules when its signature and
    code are trusted, since only then is its flag a fact.
    """
    if facts.level in PLACED:
        return None
    if not controlled(facts):
        family = facts.protocol.model.spec.comparability.family
        if family in (FAMILY, INTERPRET_FAMILY):
            return "not Verified: no record of a controlled rerun, though it names sitegen's controlled protocol"
        evidence = facts.run.spec.evidence
        if evidence is not None and evidence.integrity:
            # Only a rerun records integrity checks: a --like rerun stripped of its command is still one.
            return "not Verified: it carries a rerun's integrity checks but no record of the command that ran them"
        return None
    if facts.dry_run:
        return None  # "dry run (CPU rehearsal)" says it
    outcome = facts.signature
    if outcome is not None and not outcome.valid:
        if outcome.status in (OUTSIDE, UNPINNED):
            return f"not Verified: {outcome.reason()}"
        return f"not Verified: {_SIGNATURE_SHORT[outcome.status]}"
    if not trusted_code(facts, reviewed or []):
        return "not Verified: outside code not reviewed by this registry"
    if facts.reasons:
        return None
    return facts.level_reason or "not Verified: a controlled rerun needs a passed gate, raw samples and the GPU's UUID"


def _agree(a: float, b: float, tolerance: float) -> bool:
    # Relative to the smaller value, so the test is symmetric and the stricter of the two.
    low = min(a, b)
    return low > 0 and abs(a - b) / low <= tolerance


def assign_levels(runs: list[RunFacts], trust: list | None = None, reviewed: list | None = None) -> None:
    """Set ``level`` (and ``level_reason``) on every run; ``trust``: the registry's trusted keys (sitegen.core.signing);
    ``reviewed``: the outside code it vouches for (sitegen.registry.config.ReviewedCode)."""
    verified_groups: dict[tuple[str, str], list[RunFacts]] = defaultdict(list)
    for facts in runs:
        ok, reason = verified(facts, trust, reviewed)
        facts.level_reason = reason
        if ok:
            facts.level = "Verified"
            if facts.cohort:
                verified_groups[(facts.cohort, facts.run.spec.implementationDigest)].append(facts)
        elif reproducible(facts):
            facts.level = "Reproducible"
        else:
            facts.level = "Reported"
    for group in verified_groups.values():
        # Groups are one implementation in one cohort: a handful of runs, so pairs are cheap.
        for facts in group:
            uuid = facts.run.spec.evidence.instance.gpuUuid
            if any(
                other.run.spec.evidence.instance.gpuUuid != uuid
                and _agree(facts.value, other.value, agreement(facts))
                for other in group
            ):
                facts.level = "Replicated"
    for facts in runs:
        why = unplaced(facts, reviewed)
        if why is not None:
            facts.reasons.append(why)


def verdict(rerun: RunFacts, original: RunFacts) -> Verdict:
    """The --like verdict of a rerun in this registry against the run it re-measures.

    Within the original's agreement, as --like judges it: the claim under test is the original's.
    """
    return judge(
        rerun_product=rerun.product, original_product=original.product,
        rerun_value=rerun.value, original_value=original.value, tolerance=agreement(original),
        rerun_metric=f"{rerun.metric} ({rerun.unit})", original_metric=f"{original.metric} ({original.unit})",
    )
