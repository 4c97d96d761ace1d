"""Sweep tables: each implementation's primary value along an axis that varies across workloads."""

from __future__ import annotations

from dataclasses import dataclass

from sitegen.site.text import labels as L
from sitegen.site.pages.cohort_table import value_text
from sitegen.facts.runfacts import RunFacts


@dataclass(frozen=True)
class SweepCell:
    """An implementation's representative value at one point of the sweep, linked to its run."""

    text: str
    href: str
    noisy: bool
    """Marked apart from the value, so the marker may take a line of its own in a narrow column."""


@dataclass(frozen=True)
class SweepRow:
    implementation: str
    gpu: str
    timed_pass: str
    dtype: str
    fixed: str
    cells: list[SweepCell | None]


@dataclass(frozen=True)
class SweepTable:
    axis: str
    caption: str
    columns: list[str]
    rows: list[SweepRow]


def _axis_order(value) -> tuple:
    return (0, value, "") if isinstance(value, (int, float)) and not isinstance(value, bool) else (1, 0, str(value))


def _cell(facts: RunFacts) -> SweepCell:
    return SweepCell(value_text(facts), L.run_path(facts.name), bool(facts.noisy))


def sweeps(runs: list[RunFacts]) -> list[SweepTable]:
    """For each axis that varies across the runs' workloads, representative values along it.

    A row is one implementation on one GPU, pass, dtype and value of the other axes; a cell
    is the implementation's representative run in that cohort (the one its rank stands on).
    Rows with a single value show no trend and are left out, and so are columns left empty.
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
            if f.rank_label is None or axis not in f.workload.model.spec.axes:
                continue
            fixed = " · ".join(f"{k} = {L.scalar(v)}" for k, v in f.workload.model.spec.axes.items() if k != axis)
            key = (f"{f.metric} ({f.statistic})", f.gpu, f.timed_pass, L.dtype_label(f.workload) or "—", fixed,
                   L.implementation_label(f.implementation))
            cells = rows.setdefault(key, {})
            column = position[f.workload.model.spec.axes[axis]]
            # Two revisions of one implementation name in one cell: show the newer.
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
                        _cell(rows[key][i]) if i in rows[key] else None for i in used
                    ])
                    for key in selected
                ],
            ))
    return tables
