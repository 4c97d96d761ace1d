"""What makes runs one trend (sitegen.site.charts.trends draws it, sitegen.gate judges its newest
change): the comparison group and the implementation across revisions, ordered by the instant."""

from __future__ import annotations

from datetime import datetime, timezone

from sitegen.facts.runfacts import RunFacts


def trend_key(facts: RunFacts) -> tuple:
    """The comparison group and the implementation across revisions: name, project, callable variant."""
    spec = facts.implementation.model.spec
    return (facts.cohort, spec.name, spec.projectRevision.project, spec.callable.variant if spec.callable else None)


def moment(observed_at: str) -> datetime:
    """observedAt as a time: ``Z``, ``+05:00`` and fractions of a second all order by the instant."""
    parsed = datetime.fromisoformat(observed_at.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)
