"""The operation summary: per GPU × dtype, the leader and runner-up at every workload, answers first.

Each ratio (runner-up over leader) comes with its 95% interval, from ranking's bootstrap of
the two runs' samples (RunFacts.leader_ratio), and a tie mark where the two share a rank;
each row links to its cohort table, the evidence. A sentence above each grid answers
"who is fastest, and by how much" before a reader reads the grid.
"""

from __future__ import annotations

from dataclasses import dataclass

from sitegen.site.text import labels as L
from sitegen.core import units
from sitegen.facts.index import Index, RunFacts, path_slug
from sitegen.site.text.labels import Link
from sitegen.facts.ranking import PASS_ORDER, tally_firsts
from sitegen.site.pages.placement import first as _first, placement, workload_order

RANGE_PREFIX = "range from each run's "


@dataclass(frozen=True)
class SummaryRow:
    """One workload of a summary grid: who leads, who follows, by how much and how sure."""

    workload: str
    """The workload's axes that vary within the grid (all of them when none vary)."""
    leader: Link
    leader_rank: str
    leader_value: str
    runner_up: Link | None
    runner_up_rank: str
    runner_up_value: str
    gap: str
    """``3.79× slower``, or ``—`` without a runner-up."""
    ratio: float | None
    """The runner-up's value over the leader's."""
    interval: str
    """The 95% interval of that ratio (``3.74–3.84×``), what it comes from when not a bootstrap, or ``no interval``."""
    tied: bool
    """The runner-up shares the leader's rank: the gap is within noise or the minimum effect."""
    cohort: Link
    bootstrap: bool = False
    """The interval is the 95% bootstrap interval of the ratio; otherwise it is a range between the runs' own intervals, or none."""
    set_aside: str = ""
    """Implementations set aside (noisy, or flagged by an integrity check) whose runs measured faster than the
    leader: then the leader is first among ranked runs only, and the row is no first place."""
    set_aside_between: str = ""
    """Those that measured between the leader and the runner-up: the gap is then not the leader's lead."""

    @property
    def interval_label(self) -> str:
        """What ``interval`` is, as a phone's card names it: only a bootstrap of the ratio is a 95% interval."""
        if self.bootstrap:
            return "95% bootstrap interval"
        return "Range of the ratio" if self.interval not in ("no interval", "—") else "Interval"


@dataclass(frozen=True)
class SummaryGroup:
    """Per GPU × dtype × protocol family: the headline pass's leader and runner-up at every workload."""

    id: str
    gpu: Link
    dtype: str
    family: str
    timed_pass: str
    answer: str
    """The answer in one sentence: who is fastest at how many workloads, and the runner-up's range of ratios."""
    rows: list[SummaryRow]
    """The rows shown: every workload's, or the first ``limit`` in workload order (see ``workloads``)."""
    workloads: int = 0
    """How many workloads the group has; more than ``len(rows)`` where the page shows only the first."""
    all_at: str | None = None
    """The page that shows every row of the group, where this one shows only the first."""


def _varying(workloads: list) -> list[str]:
    """The axes whose value differs between ``workloads``."""
    seen: dict[str, set] = {}
    for w in workloads:
        for key, value in w.model.spec.axes.items():
            seen.setdefault(key, set()).add(repr(value))
    return [key for key, values in seen.items() if len(values) > 1]


def _ratio_interval_text(facts: RunFacts) -> str:
    if facts.leader_ratio is None:
        return "no interval"
    low, high, how = facts.leader_ratio
    span = units.times_span(low, high)
    # Without samples on both sides the "interval" is the range between the runs' own intervals: say so.
    return span if "bootstrap" in how else f"{span} ({how.removeprefix(RANGE_PREFIX)})"


def _summary_row(key: str, index: Index, varying: list[str], page: str) -> SummaryRow | None:
    ranked = [f for f in index.cohorts[key] if f.rank is not None]
    if not ranked:
        return None
    leader, runner = ranked[0], ranked[1] if len(ranked) > 1 else None
    between = [x for x in runner.faster_set_aside if x not in leader.faster_set_aside] if runner else []
    axes = leader.workload.model.spec.axes
    workload = " · ".join(f"{k} = {L.scalar(axes[k])}" for k in varying) or L.workload_label(leader.workload)
    return SummaryRow(
        workload=workload,
        leader=Link(L.implementation_label(leader.implementation), L.run_path(leader.name)),
        leader_rank=leader.rank_label or "", leader_value=units.show(leader.value, leader.unit),
        runner_up=Link(L.implementation_label(runner.implementation), L.run_path(runner.name)) if runner else None,
        runner_up_rank=(runner.rank_label or "") if runner else "",
        runner_up_value=units.show(runner.value, runner.unit) if runner else "—",
        gap=units.slower(runner.value, leader.value, runner.unit or "ns") if runner else "—",
        ratio=runner.value / leader.value if runner and leader.value else None,
        interval=_ratio_interval_text(runner) if runner else "—",
        tied=bool(runner and runner.rank == leader.rank),
        cohort=Link("evidence", f"{page}#{L.cohort_id(key)}"),
        bootstrap=bool(runner and runner.leader_ratio and "bootstrap" in runner.leader_ratio[2]),
        set_aside=", ".join(leader.faster_set_aside), set_aside_between=", ".join(between),
    )


def _answer(rows: list[SummaryRow]) -> str:
    # A win needs someone beaten: where one implementation alone is ranked, it is not "fastest".
    # Nor is a leader first where a run set aside (noisy or flagged) measured faster.
    undercut = sum(1 for r in rows if r.set_aside)
    firsts = tally_firsts((r.leader.text, not r.tied) for r in rows if r.runner_up is not None and not r.set_aside)
    alone = tally_firsts((r.leader.text, True) for r in rows if r.runner_up is None and not r.set_aside)
    n = len(rows)
    most = sorted(((name, k) for name, (k, _) in firsts.items() if k), key=lambda item: (-item[1], item[0]))
    lone = "".join(f"; {name} is the only ranked implementation at {k} of {n}" for name, (k, _) in sorted(alone.items()))
    if not most:
        text = f"No implementation leads alone at any of the {n} workload{'s' if n > 1 else ''}"
    elif most[0][1] == n:
        text = f"{most[0][0]} is fastest at {'every one of the ' + str(n) + ' workloads' if n > 1 else 'the one workload'}"
    else:
        text = "; ".join(f"{name} is fastest alone at {k} of {n} workloads" for name, k in most[:2])
    text += lone
    if undercut:
        text += (f"; at {undercut} of {n} a run set aside (noisy or flagged) measured faster than the leader, "
                 "which is first among ranked runs only there")
    ratios = sorted(r.ratio for r in rows if r.ratio is not None and r.ratio > 1 and not r.tied
                    and not r.set_aside and not r.set_aside_between)
    if ratios:
        low, high = units.times(ratios[0]), units.times(ratios[-1])
        text += f"; the runner-up is {low} slower" if low == high else f"; the runner-up is {low.removesuffix('×')}–{high} slower"
    return text + "."


def summary(keys: list[str], index: Index, headline: str | None, limit: int | None = None,
            all_at=None) -> list[SummaryGroup]:
    """Per GPU × dtype × family: leader and runner-up of the headline latency cohort at every workload
    (the headline pass where the GPU has it ranked, else that GPU's first ranked pass in PASS_ORDER).

    ``limit``: show at most that many rows per group, the first in workload order, on a page whose
    ``all_at(gpu_slug)`` shows them all (the answer sentence still counts every workload)."""
    ranked = [(k, f) for k in keys if (f := _first(index, k)).metric == "latency"
              and any(m.rank is not None for m in index.cohorts[k])]
    # A GPU with no ranked cohort of the headline pass (KL divergence's forward and backward alone on
    # the H100) is summarized by its own first pass in PASS_ORDER, not left out as if nothing ranked.
    passes: dict[str, set[str]] = {}
    for _, f in ranked:
        passes.setdefault(f.gpu, set()).add(f.timed_pass)
    shown = {gpu: headline if headline in present else next(p for p in (*PASS_ORDER, *sorted(present)) if p in present)
             for gpu, present in passes.items()}
    groups: dict[tuple, list[str]] = {}
    for key, f in ranked:
        if f.timed_pass == shown[f.gpu]:
            groups.setdefault((f.gpu, L.dtype_label(f.workload) or "—", f.protocol.model.spec.comparability.family), []).append(key)
    result = []
    for (gpu, dtype, family), members in sorted(groups.items()):
        members.sort(key=lambda k: (workload_order(_first(index, k)), k))
        varying = _varying([_first(index, k).workload for k in members])
        rows = [row for k in members if (row := _summary_row(k, index, varying, placement(index).pages[k]))]
        first = _first(index, members[0])
        cut = limit is not None and len(rows) > limit
        result.append(SummaryGroup(
            id=f"summary-{path_slug(first.gpu_slug)}-{path_slug(dtype) or 'any'}-{path_slug(family)}", gpu=Link(gpu, placement(index).pages[members[0]]),
            dtype=dtype, family=family, timed_pass=shown[gpu], answer=_answer(rows), rows=rows[:limit] if cut else rows,
            workloads=len(rows), all_at=all_at(first.gpu_slug) if cut else None))
    return result


def interval_note(groups: list[SummaryGroup]) -> str:
    """The summary's footnote on its interval column, naming only the methods its rows use: a range
    between published p20–p80 is no 95% interval and is not called one."""
    intervals = [r for g in groups for r in g.rows if r.runner_up is not None and r.interval != "no interval"]
    boot = any(r.bootstrap for r in intervals)
    ranged = any(not r.bootstrap for r in intervals)
    said = []
    if boot:
        said.append("the 95% bootstrap interval of that ratio where both runs publish raw samples")
    if ranged:
        said.append("the range between the two runs' own intervals where either lacks raw samples (marked with what "
                    "those are, such as published p20–p80), which is no confidence interval of the ratio")
    text = "Each ratio is the runner-up's time over the leader's"
    return text + (", with " + "; and ".join(said) if said else "") + "."
