"""Page models of the listing pages: operation ("All results for …"), home, implementations, GPUs."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from sitegen.site import labels as L
from sitegen.site import units
from sitegen.site.evidence import LEVELS
from sitegen.site.index import Index, RunFacts
from sitegen.site.labels import Link, Row

NEWEST = 12


@dataclass(frozen=True)
class RunRow:
    run: Link
    operation: Link
    workload: str
    gpu: Link
    timed_pass: str
    metric: str
    value: str
    rank: str
    level: str
    status: str
    observed: str


@dataclass(frozen=True)
class CountRow:
    item: Link
    count: int
    detail: str = ""


@dataclass(frozen=True)
class RankedRow:
    rank: int
    run: Link
    revision: str
    value: str
    ratio: str
    level: str
    observed: str


@dataclass(frozen=True)
class UnrankedRow:
    run: Link
    value: str
    reasons: str


@dataclass(frozen=True)
class CohortView:
    id: str
    heading: str
    key: str
    ranked: list[RankedRow]
    unranked: list[UnrankedRow]


@dataclass(frozen=True)
class CohortGroup:
    heading: str
    gpu: Link
    cohorts: list[CohortView]


@dataclass(frozen=True)
class SweepRow:
    implementation: str
    gpu: str
    timed_pass: str
    dtype: str
    fixed: str
    cells: list[Link | None]


@dataclass(frozen=True)
class SweepTable:
    axis: str
    caption: str
    columns: list[str]
    rows: list[SweepRow]


@dataclass(frozen=True)
class OperationPage:
    path: str
    title: str
    operation: str
    name: str
    family: str
    expression: str | None
    notes: str | None
    run_count: int
    groups: list[CohortGroup]
    not_ranked: list[RunRow]
    sweeps: list[SweepTable]
    history: list[RunRow]


@dataclass(frozen=True)
class ListPage:
    """An implementation or GPU page, or the index of either."""

    path: str
    title: str
    heading: str
    facts: list[Row]
    items: list[CountRow]
    runs: list[RunRow]


@dataclass(frozen=True)
class HomePage:
    path: str
    title: str
    run_count: int
    document_count: int
    operations: list[CountRow]
    sources: list[CountRow]
    gpus: list[CountRow]
    implementations: list[CountRow]
    levels: list[CountRow]
    newest: list[RunRow]


def value_text(facts: RunFacts) -> str:
    return units.show(facts.value, facts.unit) if facts.value is not None else "—"


def run_row(facts: RunFacts) -> RunRow:
    return RunRow(
        run=Link(f"{L.implementation_label(facts.implementation)} · run {L.run_short_id(facts.digest)}", L.run_path(facts.name)),
        operation=Link(L.operation_title(facts.operation), L.operation_path(facts.operation.name)),
        workload=L.workload_label(facts.workload),
        gpu=Link(facts.gpu, L.gpu_path(facts.gpu_slug)), timed_pass=facts.timed_pass,
        metric=f"{facts.metric} · {facts.statistic}" if facts.metric else "—", value=value_text(facts),
        rank=str(facts.rank) if facts.rank is not None else "not ranked", level=facts.level,
        status=facts.run.spec.status, observed=facts.observed,
    )


def _axis_order(value) -> tuple:
    return (0, value, "") if isinstance(value, (int, float)) and not isinstance(value, bool) else (1, 0, str(value))


def _workload_order(facts: RunFacts) -> tuple:
    return tuple((k, _axis_order(v)) for k, v in facts.workload.model.spec.axes.items())


def _cohort_view(key: str, members: list[RunFacts]) -> CohortView:
    first = members[0]
    ranked = [f for f in members if f.rank is not None]
    leader = ranked[0].value if ranked else None
    heading = f"{first.timed_pass} · {first.metric} ({first.statistic}) · {first.protocol.model.spec.comparability.family}"
    return CohortView(
        id=L.cohort_id(key), heading=heading, key=L.short_digest(key),
        ranked=[
            RankedRow(
                rank=f.rank, run=Link(L.implementation_label(f.implementation), L.run_path(f.name)),
                revision=f.implementation.model.spec.projectRevision.version
                or f.implementation.model.spec.projectRevision.commit or "unknown",
                value=value_text(f), ratio=units.ratio(f.value, leader), level=f.level, observed=f.observed,
            )
            for f in ranked
        ],
        unranked=[
            UnrankedRow(Link(L.implementation_label(f.implementation), L.run_path(f.name)), value_text(f), "; ".join(f.reasons))
            for f in members if f.rank is None
        ],
    )


def _sweeps(runs: list[RunFacts]) -> list[SweepTable]:
    """For each axis that varies across the operation's workloads, primary values along it."""
    values: dict[str, set] = {}
    for f in runs:
        for key, value in f.workload.model.spec.axes.items():
            values.setdefault(key, set()).add(value)
    tables = []
    for axis in sorted(k for k, v in values.items() if len(v) > 1):
        columns = sorted(values[axis], key=_axis_order)
        position = {value: i for i, value in enumerate(columns)}
        rows: dict[tuple, dict[int, RunFacts]] = {}
        for f in runs:
            if f.rank is None or axis not in f.workload.model.spec.axes:
                continue
            fixed = " · ".join(f"{k} = {L.scalar(v)}" for k, v in f.workload.model.spec.axes.items() if k != axis)
            key = (L.implementation_label(f.implementation), f.gpu, f.timed_pass, L.dtype_label(f.workload) or "—",
                   fixed, f"{f.metric} ({f.statistic})")
            cells = rows.setdefault(key, {})
            column = position[f.workload.model.spec.axes[axis]]
            # Several runs in one cell (reruns, revisions): show the newest.
            if column not in cells or (f.run.spec.observedAt, f.name) > (cells[column].run.spec.observedAt, cells[column].name):
                cells[column] = f
        for metric in sorted({key[5] for key in rows}):
            selected = sorted(key for key in rows if key[5] == metric)
            tables.append(SweepTable(
                axis=axis, caption=f"{metric} across {axis}", columns=[L.scalar(c) for c in columns],
                rows=[
                    SweepRow(*key[:5], cells=[
                        Link(value_text(rows[key][i]), L.run_path(rows[key][i].name)) if i in rows[key] else None
                        for i in range(len(columns))
                    ])
                    for key in selected
                ],
            ))
    return tables


def operation_page(operation, index: Index) -> OperationPage:
    runs = index.runs_of_operation.get(operation.name, [])
    groups: dict[tuple, list[str]] = {}
    for key in sorted({f.cohort for f in runs if f.cohort}):
        first = index.cohorts[key][0]
        groups.setdefault((_workload_order(first), first.workload.name, first.gpu), []).append(key)
    group_views = []
    for (_, _, gpu), keys in sorted(groups.items()):
        first = index.cohorts[keys[0]][0]
        cohorts = sorted((_cohort_view(k, index.cohorts[k]) for k in keys), key=lambda c: (c.heading, c.id))
        group_views.append(CohortGroup(
            heading=f"{L.workload_label(first.workload)} on {gpu}",
            gpu=Link(gpu, L.gpu_path(first.gpu_slug)), cohorts=cohorts,
        ))
    semantics = operation.model.spec.semantics
    title = L.operation_title(operation)
    return OperationPage(
        path=L.operation_path(operation.name), title=f"All results for {title}", operation=title,
        name=operation.name, family=operation.model.spec.family,
        expression=semantics.expression if semantics else None, notes=semantics.notes if semantics else None,
        run_count=len(runs), groups=group_views,
        not_ranked=[run_row(f) for f in runs if f.cohort is None],
        sweeps=_sweeps(runs),
        history=[run_row(f) for f in sorted(runs, key=lambda f: (f.run.spec.observedAt, f.name), reverse=True)],
    )


def _by_newest(runs: list[RunFacts]) -> list[RunRow]:
    return [run_row(f) for f in sorted(runs, key=lambda f: (f.run.spec.observedAt, f.name), reverse=True)]


def implementation_pages(index: Index) -> list[ListPage]:
    pages, items = [], []
    for record in sorted(index.registry.of_kind("ImplementationRevision"), key=lambda r: r.name):
        spec = record.model.spec
        revision = spec.projectRevision
        runs = index.runs_of_implementation.get(record.name, [])
        facts = [Row("project", revision.project, revision.repository),
                 Row("revision", revision.commit or revision.version or "unknown", code=bool(revision.commit))]
        if revision.version and revision.commit:
            facts.append(Row("version", revision.version))
        if spec.callable:
            facts.append(Row("callable", f"{spec.callable.module}.{spec.callable.name}"
                             + (f" ({spec.callable.variant})" if spec.callable.variant else ""), code=True))
        if spec.licensing:
            facts.append(Row("license", spec.licensing.license))
        facts.append(Row("digest", record.digest, code=True))
        label = f"{spec.name} · {revision.version or revision.commit or record.name}"
        path = L.implementation_path(record.name)
        pages.append(ListPage(path, label, label, facts, [], _by_newest(runs)))
        items.append(CountRow(Link(label, path), len(runs), revision.project))
    index_page = ListPage("implementations/index.html", "Implementations", "Implementations", [], items, [])
    return [index_page, *pages]


def gpu_pages(index: Index) -> list[ListPage]:
    pages, items = [], []
    for slug_ in sorted(index.runs_of_gpu):
        runs = index.runs_of_gpu[slug_]
        env = runs[0].environment.model.spec.hardware
        facts = [Row("product", env.product), Row("architecture", env.architecture), Row("vendor", env.vendor)]
        if env.memoryBytes:
            facts.append(Row("memory", units.byte_size(env.memoryBytes)))
        path = L.gpu_path(slug_)
        pages.append(ListPage(path, env.product, env.product, facts, [], _by_newest(runs)))
        items.append(CountRow(Link(env.product, path), len(runs), env.architecture))
    index_page = ListPage("gpus/index.html", "GPUs", "GPUs", [], items, [])
    return [index_page, *pages]


def home_page(index: Index) -> HomePage:
    sources: Counter = Counter()
    for f in index.runs:
        native = f.run.spec.sourceNative
        sources[native.source if native else f"harness:{f.harness}"] += 1
    source_rows = []
    for key, count in sorted(sources.items()):
        if key.startswith("harness:"):
            source_rows.append(CountRow(Link(key.removeprefix("harness:"), ""), count, "harness"))
        else:
            source = index.config.sources.get(key)
            source_rows.append(CountRow(Link(source.name if source else key, source.url or "" if source else ""), count,
                                        source.license if source else ""))
    levels = Counter(f.level for f in index.runs)
    impl_counts = Counter(f.implementation.name for f in index.runs)
    return HomePage(
        path="index.html", title=index.config.site.title, run_count=len(index.runs),
        document_count=len(index.registry.records),
        operations=[CountRow(Link(L.operation_title(op), L.operation_path(op.name)), len(index.runs_of_operation.get(op.name, [])))
                    for op in index.operations],
        sources=source_rows,
        gpus=[CountRow(Link(index.gpu_names[s], L.gpu_path(s)), len(index.runs_of_gpu[s])) for s in sorted(index.runs_of_gpu)],
        implementations=[
            CountRow(Link(f"{r.model.spec.name} · {r.model.spec.projectRevision.version or r.model.spec.projectRevision.commit or r.name}",
                          L.implementation_path(r.name)), impl_counts.get(r.name, 0))
            for r in sorted(index.registry.of_kind("ImplementationRevision"), key=lambda r: r.name)
        ],
        levels=[CountRow(Link(f"{level} evidence", ""), levels.get(level, 0)) for level in LEVELS],
        newest=_by_newest(index.runs)[:NEWEST],
    )
