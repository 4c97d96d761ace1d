"""The reference sections of a record page: Identity, Correctness, Workload, Measurements,
Protocol, Environment, Integrity and Artifacts, as label/value rows."""

from __future__ import annotations

from dataclasses import dataclass

from sitegen.site.text import field_labels as F
from sitegen.site.pages.protocol_pages import is_long, protocol_path
from sitegen.site.text import labels as L
from sitegen.core import units
from sitegen.facts.index import Index, RunFacts
from sitegen.site.text.labels import Row

NO_POLICY = "Marked passed by the source; the correctness policy was not published."


@dataclass(frozen=True)
class CaseRow:
    shape: str
    seed: int
    max_abs: str
    max_rel: str
    fully_written: str
    passed: str


@dataclass(frozen=True)
class Correctness:
    message: str | None
    rows: list[Row]
    cases: list[CaseRow]


def identity(facts: RunFacts, index: Index) -> list[Row]:
    impl = facts.implementation.model.spec
    rows = [
        Row("implementation", impl.name, L.implementation_path(facts.implementation.name)),
        *L.revision_rows(impl.projectRevision),
        Row("workload", L.workload_label(facts.workload)),
        Row("timed pass", facts.timed_pass),
    ]
    if facts.cohort:
        rows.append(Row("comparison key", L.short_digest(facts.cohort), code=True))
    native = facts.run.spec.sourceNative
    if native is not None:
        source = index.config.sources.get(native.source)
        rows.append(Row("source", source.name if source else native.source, source.url if source else None))
        rows.append(Row("external id", native.externalId, code=True))
    rows.append(Row("run digest", facts.digest, code=True))
    outcome = facts.signature
    if outcome is not None:
        # Asked of a controlled rerun that passed every other gate (sitegen.facts.evidence.verified).
        rows.append(Row("signature", f"valid, by {outcome.signer}" if outcome.valid else outcome.reason().removeprefix("the rerun is ")))
    return rows


def correctness(facts: RunFacts) -> Correctness:
    result = facts.run.spec.correctness
    if result is None:
        if facts.run.spec.status == "passed":
            return Correctness(NO_POLICY, [], [])
        return Correctness("No correctness result was published with this run.", [], [])
    rows = [Row("status", result.status), Row("comparator", result.comparator)]
    if result.reference:
        rows.append(Row("reference", result.reference))
    if result.maxAbsError is not None:
        rows.append(Row("max absolute error", f"{result.maxAbsError:.3g}"))
    if result.maxRelError is not None:
        rows.append(Row("max relative error", f"{result.maxRelError:.3g}"))
    if result.notes:
        rows.append(Row("notes", result.notes))
    cases = [
        CaseRow(
            shape="[" + ", ".join(str(n) for n in case.shape) + "]", seed=case.seed,
            max_abs=f"{case.maxAbsError:.3g}", max_rel=f"{case.maxRelError:.3g}",
            fully_written="yes" if case.fullyWritten else "no", passed="passed" if case.passed else "failed",
        )
        for case in result.cases or []
    ]
    return Correctness(None, rows, cases)


def workload(facts: RunFacts) -> list[Row]:
    spec = facts.workload.model.spec
    rows = [Row(key, L.scalar(value)) for key, value in spec.axes.items()]
    for tensor in spec.tensors or []:
        rows.append(Row(tensor.name, f"{tensor.dtype} [{', '.join(str(n) for n in tensor.shape)}]"))
    for key, value in (spec.scalars or {}).items():
        rows.append(Row(key, L.scalar(value)))
    for key, value in (spec.config or {}).items():
        rows.append(Row(f"config {key}", L.scalar(value)))
    if spec.correctness is not None:
        rows.append(Row("definition comparator", spec.correctness.comparator))
        rows += [Row(f"tolerance {k}", v) for k, v in L.flatten(spec.correctness.model_dump(exclude_none=True).get("tolerance", {}))]
    return rows


def measurements(facts: RunFacts) -> list[Row]:
    spec = facts.run.spec
    seen: dict[tuple[str, str], Row] = {}
    if spec.timing is not None:
        for stat, value in spec.timing.latencyNs.model_dump().items():
            if value is not None:
                seen[("latency", stat)] = Row(f"latency · {stat}", units.show(value, "ns"))
    for m in spec.measurements or []:
        seen.setdefault((m.metric, m.statistic), Row(f"{m.metric} · {m.statistic}", units.show(m.value, m.unit)))
    primary_key = (facts.metric, facts.statistic)
    # The primary value first, then the rest in a stable order.
    return sorted(seen.values(), key=lambda r: (r.label != f"{primary_key[0]} · {primary_key[1]}", r.label))


def protocol(facts: RunFacts) -> list[Row]:
    spec = facts.protocol.model.spec
    harness = spec.harness.name + (f" {spec.harness.version}" if spec.harness.version else "")
    rows = [
        Row("Harness", harness, spec.harness.repository),
        Row("Timer", spec.measurement.timer.replace("_", " ")),
        Row("Primary statistic", spec.measurement.primaryStatistic),
        Row("Comparability family", spec.comparability.family, code=True),
    ]
    raw = facts.protocol.raw["spec"]
    shown = {"harness.name", "harness.version", "harness.repository", "measurement.timer",
             "measurement.primaryStatistic", "comparability.family"}
    # A long text ("What is timed") is a wall in a table cell: it reads in sentences on the protocol page.
    where = protocol_path(facts.protocol.name)
    rows += [Row(F.label(key), f"{len(value.split())} words, in sentences on the protocol page", where) if is_long(value)
             else Row(F.label(key), F.value(key, value)) for key, value in F.leaves(raw) if key not in shown]
    rows.append(Row("Every field", f"protocol {facts.protocol.name}", where))
    return rows


def environment(facts: RunFacts) -> list[Row]:
    spec = facts.environment.model.spec
    rows = [Row("GPU", facts.gpu)]
    hardware = facts.environment.raw["spec"]["hardware"]
    for key, value in F.leaves(hardware):
        if key not in {"vendor", "product", "architecture"}:
            rows.append(Row(F.label(key), F.value(key, value)))
    if spec.software.framework is not None:
        rows.append(Row("Framework", f"{spec.software.framework.name} {spec.software.framework.version}"))
    for key, value in F.leaves(facts.environment.raw["spec"]["software"]):
        if not key.startswith("framework."):
            rows.append(Row(F.label(key.removeprefix("libraries.")), F.value(key, value)))
    rows += [Row(F.label(f"settings.{k}"), F.value(k, v)) for k, v in F.leaves(facts.environment.raw["spec"].get("settings") or {})]
    evidence = facts.run.spec.evidence
    if evidence and evidence.instance:
        rows += [Row(F.label(f"instance.{k}"), F.value(k, v)) for k, v in F.leaves(evidence.instance.model_dump(exclude_none=True))]
    return rows


def _check_text(check) -> str:
    """``passed``, ``failed — why``, or ``not checked — why``: a check the machine could not make
    (NVML on a CPU rehearsal) is recorded as not passed, but it found nothing wrong."""
    detail = check.detail or ""
    if not check.passed and detail.startswith("not checked"):
        reason = detail.removeprefix("not checked").lstrip(":— ").strip()
        return "not checked" + (f" — {reason}" if reason else "")
    return ("passed" if check.passed else "failed") + (f" — {detail}" if detail else "")


def integrity(facts: RunFacts) -> list[Row]:
    evidence = facts.run.spec.evidence
    if evidence is None:
        return []
    rows = [Row(F.label(check.name), _check_text(check)) for check in evidence.integrity or []]
    if evidence.dryRun:
        rows.append(Row("Dry run", "yes: a CPU rehearsal, never Verified"))
    for label, state in (("GPU before", evidence.gpuBefore), ("GPU after", evidence.gpuAfter)):
        if state is not None:
            rows.append(Row(label, ", ".join(f"{F.label(k)} {F.value(k, v)}" for k, v in F.leaves(state.model_dump(exclude_none=True)))))
    rows += [Row(F.label(k), F.value(k, v)) for k, v in F.leaves(evidence.details or {})]
    if evidence.command:
        rows.append(Row("Command", evidence.command, code=True))
    return rows


def artifacts(facts: RunFacts) -> list[Row]:
    evidence = facts.run.spec.evidence
    rows = []
    for artifact in (evidence.artifacts if evidence else None) or []:
        detail = " · ".join(x for x in (artifact.mediaType, artifact.digest) if x)
        rows.append(Row(artifact.name, detail or artifact.name, artifact.url))
    return rows
