"""The operation page ("All results for …"): cohorts ranked, sweeps along varying axes, history."""

from __future__ import annotations

from dataclasses import dataclass

from sitegen.site import labels as L
from sitegen.site import units
from sitegen.site.index import Index, RunFacts
from sitegen.site.labels import Link
from sitegen.site.listings import RunRow, by_newest, run_row, value_text


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
    """For each axis that varies across the operation's workloads, primary values along it.

    A row is one implementation on one GPU, pass, dtype and value of the other axes; rows
    with a single value show no trend and are left out, and so are columns left empty.
    Rows of one GPU, pass and fixed axes sit together, so implementations compare at a glance.
    """
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
            key = (f"{f.metric} ({f.statistic})", f.gpu, f.timed_pass, L.dtype_label(f.workload) or "—", fixed,
                   L.implementation_label(f.implementation))
            cells = rows.setdefault(key, {})
            column = position[f.workload.model.spec.axes[axis]]
            # Several runs in one cell (reruns, revisions): show the newest.
            if column not in cells or (f.run.spec.observedAt, f.name) > (cells[column].run.spec.observedAt, cells[column].name):
                cells[column] = f
        rows = {key: cells for key, cells in rows.items() if len(cells) > 1}
        for metric in sorted({key[0] for key in rows}):
            selected = sorted(key for key in rows if key[0] == metric)
            used = sorted({i for key in selected for i in rows[key]})
            tables.append(SweepTable(
                axis=axis, caption=f"{metric} across {axis}", columns=[L.scalar(columns[i]) for i in used],
                rows=[
                    SweepRow(implementation=key[5], gpu=key[1], timed_pass=key[2], dtype=key[3], fixed=key[4], cells=[
                        Link(value_text(rows[key][i]), L.run_path(rows[key][i].name)) if i in rows[key] else None
                        for i in used
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
        history=by_newest(runs),
    )
