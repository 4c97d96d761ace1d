"""The record page of one run: a typed model of every section of the seed page, in order."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from urllib.parse import quote, urlencode

from sitegen.rules.protocol import HARNESS
from sitegen.site.text import labels as L
from sitegen.site.pages import record_sections as S
from sitegen.core import units
from sitegen.site.charts.views import ChartView, samples_chart, samples_of
from sitegen.site.pages.citation import Citation, cite_run
from sitegen.facts.evidence import controlled, verdict
from sitegen.site.pages.placement import cohort_href
from sitegen.facts.roofline import roofline
from sitegen.site.charts.trends import trend_charts
from sitegen.site.pages.compare import record_link
from sitegen.facts.ranking import PUBLISHED
from sitegen.facts.uncertainty import REPLICATES
from sitegen.facts.index import Index, RunFacts
from sitegen.facts.perindex import per_index
from sitegen.site.text.labels import Link, Row
from sitegen.site.text.markdown import render_markdown

STATUS_SYMBOL = {"passed": "●", "failed": "✕", "errored": "!", "retracted": "⊘"}


@dataclass(frozen=True)
class Primary:
    value: str
    unit: str
    statistic: str
    metric: str
    spread: str | None
    samples: int | None
    interval: str
    noisy: str | None
    roofline: str | None


@dataclass(frozen=True)
class RankLine:
    rank: str | None
    """The implementation's rank in the cohort: ``1``, ``=2`` or ``noisy``."""
    rank_note: str | None
    rank_reason: str | None
    representative: bool
    represented_by: Link | None
    cohort: Link | None
    comparison: str
    observed: str
    reasons: str | None
    flagged: list[str]
    leader: Link | None
    leader_value: str | None
    dry_run: bool = False
    """A CPU rehearsal: its flags are the checks a CPU cannot make, not a kernel's failures."""


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
class RerunBox:
    """How to measure this record again: the command, or why sitegen cannot."""

    command: str | None
    reason: str | None
    install: str | None = None
    """How to get the sitegen that runs ``command``: a clone of the registry and its ``gpu`` extra
    installed from it. The name ``sitegen`` on PyPI belongs to another project."""


@dataclass(frozen=True)
class RecordPage:
    path: str
    title: str
    implementation: str
    operation: str
    workload: str
    timed_pass: str
    gpu: str
    short_id: str
    status: str
    status_symbol: str
    status_reason: str | None
    level: str
    level_reason: str | None
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
    """The canonical manifest: the page's JSON twin, which the page links rather than prints."""
    samples_file: str | None
    """Site-root-relative path of the run's raw samples (JSON), when it has any."""
    charts: list[ChartView]
    rerun: RerunBox
    citation: Citation
    permalink: str
    digest: str
    issue_url: str
    published: str
    source: Link | None
    source_citation: str | None
    license: str
    all_results: Link
    compare: Link
    """Where to compare this run with another (sitegen.site.pages.compare)."""


SAMPLES_NAME = "samples.json"


def samples_path(name: str) -> str:
    return L.run_dir(name) + SAMPLES_NAME


def has_samples(facts: RunFacts) -> bool:
    """Whether samples_document gives a file, read from the model: no JSON parsed."""
    timing = facts.run.spec.timing
    return bool(timing and (timing.samplesNs or timing.processes))


def samples_document(facts: RunFacts) -> dict | None:
    """The run's raw samples as their own file, so pages stay small: {run, digest, unit, samplesNs | processes}."""
    if not has_samples(facts):
        return None  # decompressing and parsing the raw document is the cost of this function
    timing = facts.record.raw["spec"].get("timing") or {}
    kept = {k: timing[k] for k in ("samplesNs", "processes") if timing.get(k)}
    if not kept:
        return None
    return {"run": facts.name, "digest": facts.digest, "unit": "ns", **kept}


@per_index
def _pretty(index: Index) -> dict[str, str]:
    """Pretty-printed JSON of the shared documents (protocols, environments) of ``index``, by file and
    pointer: made once per document while the index lives, kept here rather than in the facts."""
    return {}


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
        text = _pretty(index).get(cache_key) if key != "run" else None
        if text is None:
            text = json.dumps(record.raw, indent=2, ensure_ascii=False).replace("\n", "\n  ")
            if key != "run":
                _pretty(index)[cache_key] = text
        parts.append(f'  "{key}": {text}')
    return "{\n" + ",\n".join(parts) + "\n}"


def _primary(facts: RunFacts, config) -> Primary | None:
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
    if facts.interval is None:
        interval = "no interval: no raw samples and no published quantiles"
    elif facts.interval.method == "bootstrap":
        interval = (f"95% interval {units.spread(facts.interval.low, facts.interval.high, facts.unit)} "
                    f"({REPLICATES:,} bootstrap resamples of the raw samples)")
    elif facts.interval.method == PUBLISHED:
        interval = f"interval {units.spread(facts.interval.low, facts.interval.high, facts.unit)} (the source's published p20–p80)"
    else:
        interval = (f"95% interval {units.spread(facts.interval.low, facts.interval.high, facts.unit)} "
                    f"({facts.interval.method}: mean ± 1.96 · stdev / √n, from the published mean and standard deviation)")
    figures = roofline(facts, config)
    return Primary(number, unit, facts.statistic, facts.metric, spread, samples, interval, facts.noisy,
                   figures.sentence() if figures else None)


def comparison_kind(facts: RunFacts) -> str:
    if facts.run.spec.sourceNative is not None:
        return "source-native comparison"
    if controlled(facts):
        return "controlled comparison" if facts.harness == HARNESS else f"controlled rerun under the {facts.harness} protocol"
    return "reported comparison"


def _rank(facts: RunFacts, index: Index) -> RankLine:
    cohort = None
    if facts.cohort:
        cohort = Link("its comparison group", cohort_href(facts, index))
    shown = facts.ranked_as if not facts.reasons else None
    leader = leader_value = None
    if shown is not None and shown.leader is not None and shown.leader is not shown:
        leader = Link(L.implementation_label(shown.leader.implementation), L.run_path(shown.leader.name))
        leader_value = units.show(shown.leader.value, shown.leader.unit)
    represented_by = None
    if shown is not None and facts.representative is not None:
        represented_by = Link(f"run {L.run_short_id(shown.digest)}… ({units.show(shown.value, shown.unit)}, {shown.level})",
                              L.run_path(shown.name))
    return RankLine(
        rank=shown.rank_label if shown else None, rank_note=shown.rank_note if shown else None,
        rank_reason=shown.rank_reason if shown else None, representative=shown is facts,
        represented_by=represented_by, cohort=cohort, comparison=comparison_kind(facts), observed=facts.observed,
        reasons="; ".join(r for r in facts.reasons if not r.startswith("flagged: ")) or None, flagged=facts.flagged,
        leader=leader, leader_value=leader_value, dry_run=facts.dry_run,
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


def install_command(repository_url: str) -> str:
    """Clone the registry and install the sitegen it holds, with its ``gpu`` extra (torch, Triton, NVML), in a virtual environment."""
    folder = repository_url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git") or "registry"
    return (f"git clone {shlex.quote(repository_url)} && cd {shlex.quote(folder)} && python3 -m venv .venv && "
            ". .venv/bin/activate && python3 -m pip install '.[gpu]'")


def _rerun_box(facts: RunFacts, repository_url: str) -> RerunBox:
    """The `sitegen rerun --like` command, when sitegen's harness can measure this record again.

    The conditions are the ones ``sitegen.rerun.plan.like.plan`` checks (sitegen.operations.harnessed), read from the same
    documents, so the page never offers a command that refuses the run.
    """
    from sitegen.operations.harnessed import MODES, impl_of

    spec = facts.workload.model.spec
    if not (isinstance(spec.axes.get("tokens"), int) and isinstance(spec.axes.get("vocab"), int) and spec.dtype):
        return RerunBox(None, "sitegen rerun measures the bundled JSD kernel and its peers on tokens × vocab workloads; this workload is not one.")
    if facts.timed_pass not in ("forward", "backward", "full"):
        return RerunBox(None, f"The run names no timed pass sitegen can rerun (it has {facts.timed_pass!r}).")
    if impl_of(facts.implementation.raw)[0] is None:
        return RerunBox(None, f"sitegen rerun has no harness for the implementation {L.implementation_label(facts.implementation)}.")
    if facts.protocol.model.spec.comparability.family not in MODES:
        return RerunBox(None, "sitegen rerun has no harness for this run's protocol family.")
    return RerunBox(f"sitegen rerun --like {shlex.quote(facts.name)}", None, install_command(repository_url))


def record_page(facts: RunFacts, index: Index) -> RecordPage:
    """Everything the record page shows, computed from the index."""
    site = index.config.site
    base = site.base_url if site.base_url.endswith("/") else site.base_url + "/"
    path = L.run_path(facts.name)
    permalink = base + L.run_dir(facts.name)
    implementation = L.implementation_label(facts.implementation)
    operation = L.operation_title(facts.operation)
    workload = L.workload_label(facts.workload)
    # The pass is in the title: forward, backward and full runs of one workload read alike without it.
    title = f"{implementation} · {operation} · {workload} · {facts.timed_pass} pass · {facts.gpu}"
    native = facts.run.spec.sourceNative
    source = index.config.sources.get(native.source) if native else None
    publisher = source.name if source else site.title
    tracker = site.issue_tracker_url.rstrip("/")
    issue = urlencode({
        "title": f"Run {facts.name}",
        "body": f"Record: {permalink}\nDigest: {facts.digest}\n\nWhat is wrong:\n",
    }, quote_via=quote)
    spec = facts.run.spec
    manifest = manifest_text(facts, index)
    sampled = bool(samples_of(facts))
    return RecordPage(
        path=path, title=title, implementation=implementation, operation=operation, workload=workload,
        timed_pass=facts.timed_pass, gpu=facts.gpu,
        short_id=L.run_short_id(facts.digest), status=spec.status, status_symbol=STATUS_SYMBOL[spec.status],
        status_reason=spec.statusReason, level=f"{facts.level} evidence", level_reason=facts.level_reason,
        primary=_primary(facts, index.config), rank=_rank(facts, index),
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
        tracker=tracker, manifest=manifest,
        samples_file=samples_path(facts.name) if sampled else None,
        charts=[c for c in (samples_chart(facts),) if c is not None] + trend_charts(facts, index),
        rerun=_rerun_box(facts, str(site.repository_url)),
        citation=cite_run(title=title, site_title=site.title, publisher=publisher, permalink=permalink,
                          digest=facts.digest, observed=facts.observed),
        permalink=permalink, digest=facts.digest, issue_url=f"{tracker}/new?{issue}",
        published=source.published if source else facts.observed,
        source=Link(source.name, source.url or "") if source else None,
        source_citation=source.citation if source else None,
        license=source.license if source else site.license,
        all_results=Link(f"All results for {operation} →", L.operation_path(facts.operation.name)),
        compare=record_link(facts, index),
    )
