"""Evidence levels and rerun verdicts, derived from the records; never declared.

Levels, from weakest: Reported (a source published it), Reproducible (everything needed
to rerun it is published), Verified (a controlled `sitegen rerun` passed its gates),
Replicated (two Verified runs on different GPUs agree). A run gets the highest level whose
conditions it meets. Attestations never enter here.
"""

from __future__ import annotations

from collections import defaultdict

from sitegen.rerun.protocol import AGREEMENT, HARNESS
from sitegen.site.index import Index, RunFacts
from sitegen.verdict import Verdict, judge

LEVELS = ("Reported", "Reproducible", "Verified", "Replicated")


def agreement(facts: RunFacts) -> float:
    """Relative tolerance within which two medians agree (protocol.integrity.agreement)."""
    integrity = facts.protocol.model.spec.integrity
    if integrity is not None and integrity.agreement is not None:
        return integrity.agreement
    return AGREEMENT


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


def verified(facts: RunFacts) -> bool:
    """A controlled rerun that passed correctness and every integrity check."""
    spec = facts.run.spec
    evidence = spec.evidence
    correctness = spec.correctness
    return bool(
        spec.status == "passed"
        and facts.harness == HARNESS
        and evidence is not None and not evidence.dryRun
        and evidence.integrity and all(check.passed for check in evidence.integrity)
        and correctness is not None and correctness.status == "passed"
        and correctness.cases and all(case.passed for case in correctness.cases)
        and _has_samples(facts)
        and evidence.instance is not None and evidence.instance.gpuUuid
    )


def _agree(a: float, b: float, tolerance: float) -> bool:
    # Relative to the smaller value, so the test is symmetric and the stricter of the two.
    low = min(a, b)
    return low > 0 and abs(a - b) / low <= tolerance


def assign_levels(index: Index) -> None:
    """Set ``level`` on every run of the index."""
    verified_groups: dict[tuple[str, str], list[RunFacts]] = defaultdict(list)
    for facts in index.runs:
        if verified(facts):
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


def verdict(rerun: RunFacts, original: RunFacts) -> Verdict:
    """The --like verdict of a rerun in this registry against the run it re-measures.

    Within the original's agreement, as --like judges it: the claim under test is the original's.
    """
    return judge(
        rerun_product=rerun.product, original_product=original.product,
        rerun_value=rerun.value, original_value=original.value, tolerance=agreement(original),
        rerun_metric=f"{rerun.metric} ({rerun.unit})", original_metric=f"{original.metric} ({original.unit})",
    )
