"""The record page of one run: a typed model of every section of the seed page, in order."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from urllib.parse import quote, urlencode

from sitegen.rerun.protocol import HARNESS
from sitegen.site import labels as L
from sitegen.site import record_sections as S
from sitegen.site import units
from sitegen.site.citation import Citation, cite_run
from sitegen.site.evidence import verdict
from sitegen.site.index import Index, RunFacts
from sitegen.site.labels import Link, Row
from sitegen.site.notes import render_markdown

STATUS_SYMBOL = {"passed": "●", "failed": "✕", "errored": "!", "retracted": "⊘"}


@dataclass(frozen=True)
class Primary:
    value: str
    unit: str
    statistic: str
    metric: str
    spread: str | None
    samples: int | None


@dataclass(frozen=True)
class RankLine:
    rank: int | None
    cohort: Link | None
    comparison: str
    observed: str
    reasons: str | None
    leader: Link | None
    leader_value: str | None


@dataclass(frozen=True)
class VerdictLine:
    relation: str
    run: Link
    outcome: str
    text: str


@dataclass(frozen=True)
class Note:
    kind: str
    value: str | None
    author: str
    date: str
    body_html: str | None
    link: str | None


@dataclass(frozen=True)
class RecordPage:
    path: str
    title: str
    implementation: str
    operation: str
    workload: str
    short_id: str
    status: str
    status_symbol: str
    status_reason: str | None
    level: str
    primary: Primary | None
    rank: RankLine
    source_metrics: list[str]
    identity: list[Row]
    correctness: S.Correctness
    workload_rows: list[Row]
    measurements: list[Row]
    protocol: list[Row]
    environment: list[Row]
    integrity: list[Row]
    artifacts: list[Row]
    verdicts: list[VerdictLine]
    notes: list[Note]
    attest_command: str
    tracker: str
    manifest: str
    citation: Citation
    permalink: str
    digest: str
    issue_url: str
    published: str
    source: Link | None
    source_citation: str | None
    license: str
    all_results: Link


def manifest_text(facts: RunFacts, index: Index) -> str:
    """The canonical manifest {"run", "protocol", "environment"}, each document as published.

    Byte for byte ``json.dumps(manifest, indent=2, ensure_ascii=False)``, composed from
    per-document parts.

    Protocols and environments are shared by many runs, so their text is made once; a
    member nested one level deep is its own dump with every line indented two more spaces
    (JSON strings never hold a raw newline).
    """
    parts = []
    for key, record in (("run", facts.record), ("protocol", facts.protocol), ("environment", facts.environment)):
        cache_key = f"{record.file}#{record.pointer}"
        text = index.pretty.get(cache_key) if key != "run" else None
        if text is None:
            text = json.dumps(record.raw, indent=2, ensure_ascii=False).replace("\n", "\n  ")
            if key != "run":
                index.pretty[cache_key] = text
        parts.append(f'  "{key}": {text}')
    return "{\n" + ",\n".join(parts) + "\n}"


def _primary(facts: RunFacts) -> Primary | None:
    if facts.value is None:
        return None
    number, unit = units.quantity(facts.value, facts.unit)
    spec = facts.run.spec
    known: dict[str, float] = {}
    for m in spec.measurements or []:
        if m.metric == facts.metric and m.unit == facts.unit:
            known[m.statistic] = m.value
    if spec.timing is not None:
        known.update({k: v for k, v in spec.timing.latencyNs.model_dump().items() if v is not None})
    spread = None
    for low, high in (("p20", "p80"), ("min", "max")):
        if low in known and high in known:
            spread = f"{low}–{high} {units.spread(known[low], known[high], facts.unit)}"
            break
    samples = None
    if spec.timing is not None:
        if spec.timing.samplesNs:
            samples = len(spec.timing.samplesNs)
        elif spec.timing.processes:
            samples = sum(len(p.samplesNs) for p in spec.timing.processes)
    return Primary(number, unit, facts.statistic, facts.metric, spread, samples)


def comparison_kind(facts: RunFacts) -> str:
    if facts.run.spec.sourceNative is not None:
        return "source-native comparison"
    if facts.harness == HARNESS:
        return "controlled comparison"
    return "reported comparison"


def _rank(facts: RunFacts) -> RankLine:
    cohort = None
    if facts.cohort:
        cohort = Link("its comparison group", f"{L.operation_path(facts.operation.name)}#{L.cohort_id(facts.cohort)}")
    leader = leader_value = None
    if facts.rank is not None and facts.rank > 1 and facts.leader is not None:
        leader = Link(L.implementation_label(facts.leader.implementation), L.run_path(facts.leader.name))
        leader_value = units.show(facts.leader.value, facts.leader.unit)
    return RankLine(
        rank=facts.rank, cohort=cohort, comparison=comparison_kind(facts), observed=facts.observed,
        reasons="; ".join(facts.reasons) or None, leader=leader, leader_value=leader_value,
    )


def _verdicts(facts: RunFacts, index: Index) -> list[VerdictLine]:
    lines = []
    if facts.rerun_of is not None:
        v = verdict(facts, facts.rerun_of)
        lines.append(VerdictLine("Rerun of", _run_link(facts.rerun_of), v.outcome, v.text))
    elif facts.digest in index.dangling_reruns:
        missing = index.dangling_reruns[facts.digest]
        lines.append(VerdictLine("Rerun of", Link(missing, ""), "not comparable", "original run is not in this registry"))
    for rerun in sorted(facts.reruns, key=lambda f: (f.observed, f.name)):
        v = verdict(rerun, facts)
        lines.append(VerdictLine("Rerun", _run_link(rerun), v.outcome, v.text))
    return lines


def _run_link(facts: RunFacts) -> Link:
    return Link(f"{L.implementation_label(facts.implementation)} on {facts.gpu} · run {L.run_short_id(facts.digest)}…",
                L.run_path(facts.name))


def _notes(facts: RunFacts) -> list[Note]:
    return [
        Note(
            kind=a.model.spec.kind.replace("_", " ").capitalize(), value=a.model.spec.value, author=a.model.spec.author,
            date=a.model.spec.date, body_html=render_markdown(a.model.spec.body) if a.model.spec.body else None,
            link=a.model.spec.link,
        )
        for a in facts.attestations
    ]


def record_page(facts: RunFacts, index: Index) -> RecordPage:
    """Everything the record page shows, computed from the index."""
    site = index.config.site
    base = site.base_url if site.base_url.endswith("/") else site.base_url + "/"
    path = L.run_path(facts.name)
    permalink = base + L.run_dir(facts.name)
    implementation = L.implementation_label(facts.implementation)
    operation = L.operation_title(facts.operation)
    workload = L.workload_label(facts.workload)
    title = f"{implementation} · {operation} · {workload} · {facts.gpu}"
    native = facts.run.spec.sourceNative
    source = index.config.sources.get(native.source) if native else None
    publisher = source.name if source else site.title
    tracker = site.issue_tracker_url.rstrip("/")
    issue = urlencode({
        "title": f"Run {facts.name}",
        "body": f"Record: {permalink}\nDigest: {facts.digest}\n\nWhat is wrong:\n",
    }, quote_via=quote)
    spec = facts.run.spec
    return RecordPage(
        path=path, title=title, implementation=implementation, operation=operation, workload=workload,
        short_id=L.run_short_id(facts.digest), status=spec.status, status_symbol=STATUS_SYMBOL[spec.status],
        status_reason=spec.statusReason, level=f"{facts.level} evidence", primary=_primary(facts),
        rank=_rank(facts),
        source_metrics=[f"{k.replace('_', ' ')} {units.raw_number(v)}" for k, v in (native.metrics.items() if native else [])],
        identity=S.identity(facts, index), correctness=S.correctness(facts), workload_rows=S.workload(facts),
        measurements=S.measurements(facts), protocol=S.protocol(facts), environment=S.environment(facts),
        integrity=S.integrity(facts), artifacts=S.artifacts(facts), verdicts=_verdicts(facts, index),
        notes=_notes(facts),
        # Quoted part by part: the value's unit comes from the record, and a pasted command
        # must never run anything a record put there.
        attest_command=shlex.join([
            "sitegen", "attest", facts.name, "--kind", "reproduced",
            "--value", units.show(facts.value, facts.unit) if facts.value is not None else "…",
            "--note", "What you ran and where",
        ]),
        tracker=tracker, manifest=manifest_text(facts, index),
        citation=cite_run(title=title, site_title=site.title, publisher=publisher, permalink=permalink,
                          digest=facts.digest, observed=facts.observed),
        permalink=permalink, digest=facts.digest, issue_url=f"{tracker}/new?{issue}",
        published=source.published if source else facts.observed,
        source=Link(source.name, source.url or "") if source else None,
        source_citation=source.citation if source else None,
        license=source.license if source else site.license,
        all_results=Link(f"All results for {operation} →", L.operation_path(facts.operation.name)),
    )
