"""The home page's model: counts, who leads where, and the newest runs, in a page that stays small.

A source of hundreds of operations (KernelBench's 250 problems on ten GPUs) would make a
row per operation and GPU thousands of rows long; such a source gets one row per GPU that
says which implementation leads most of its operations, and its operations are listed, by
family, on the operations index.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from sitegen.site.text import labels as L
from sitegen.site.pages.directory_pages import OPERATIONS_INDEX, operations_index, source_of
from sitegen.facts.evidence import LEVELS
from sitegen.facts.index import Index, RunFacts
from sitegen.site.text.labels import Link
from sitegen.site.pages.listings import CountRow, RunRow, by_newest, gpu_items, implementation_items
from sitegen.facts.ranking import headline_pass, tally_firsts

NEWEST = 12
LISTED_OPERATIONS = 50
"""A source with more operations than this gets one leaders row per GPU, not per operation."""


@dataclass(frozen=True)
class LeaderRow:
    operation: Link
    gpu: str
    timed_pass: str
    leader: str
    detail: str


@dataclass(frozen=True)
class HomePage:
    path: str
    title: str
    run_count: int
    document_count: int
    operations: list[CountRow]
    """One row per source: its operations are listed on the operations index."""
    sources: list[CountRow]
    gpus: list[CountRow]
    implementations: list[CountRow]
    """One row per project, with how many implementations (one per operation and revision) it has."""
    levels: list[CountRow]
    leaders: list[LeaderRow]
    newest: list[RunRow]


def _headline_firsts(runs: list[RunFacts], index: Index) -> dict[str, tuple[str, list[tuple[str, bool]], int]]:
    """Per GPU slug: (GPU, [(leader label, first alone)] one a first place, headline cohorts) of ``runs``' headline latency cohorts."""
    headline = headline_pass(runs)
    out: dict[str, tuple[str, list[tuple[str, bool]], int]] = {}
    for key in sorted({f.cohort for f in runs if f.cohort}):
        members = index.cohorts[key]
        first = members[0]
        # A cohort where one implementation alone is ranked has no leader: nobody was beaten.
        if first.timed_pass != headline or first.metric != "latency" or len({f.implementation.name for f in members if f.rank is not None}) < 2:
            continue
        gpu, firsts, total = out.get(first.gpu_slug, (first.gpu, [], 0))
        # A first that a faster run set aside (noisy or flagged) undercuts is no first (RunFacts.leads).
        firsts.extend((L.implementation_label(f.implementation), f.rank_label == "1") for f in members if f.leads)
        out[first.gpu_slug] = (gpu, firsts, total + 1)
    return out


def _most_firsts(counts: dict[str, list[int]]) -> tuple[list[str], int, int]:
    """Who is first alone most often (then shared firsts break the tie), with those counts; a tie
    on both is named as one ("Liger and torch"), never settled by the names' order."""
    best = max((alone, shared) for alone, shared in counts.values())
    names = sorted(name for name, firsts in counts.items() if tuple(firsts) == best)
    return names, best[0], best[1]


def _detail(alone: int, shared: int, total: int, noun: str, tied: bool = False) -> str:
    """``first alone in 4 of 6 workloads, shared first in 1 more``; a leader never first alone is
    ``shared first in 6 of 6 workloads`` (it read "first alone in 0 of 6 workloads, shared first in 6 more")."""
    each, nouns = "each " if tied else "", f"{noun}{'s' if total > 1 else ''}"
    if not alone:
        return f"{each}shared first in {shared} of {total} {nouns}"
    return f"{each}first alone in {alone} of {total} {nouns}" + (f", shared first in {shared} more" if shared else "")


def leader_rows(index: Index) -> list[LeaderRow]:
    """Per operation and GPU, who leads the headline pass's latency cohorts (full when there is one)
    of two or more ranked implementations; for a source of more than LISTED_OPERATIONS operations,
    per GPU across them."""
    sources: dict[str, set[str]] = defaultdict(set)
    for f in index.runs:
        sources[source_of(f, index)].add(f.operation.name)
    large = {source for source, names in sources.items() if len(names) > LISTED_OPERATIONS}
    in_small = {name for source, names in sources.items() if source not in large for name in names}
    anchors = {group.heading: group.id for group in operations_index(index).groups}
    rows = []
    for operation in index.operations:
        if operation.name not in in_small:
            continue
        for gpu_slug, (gpu, firsts, total) in sorted(_headline_firsts(index.runs_of_operation.get(operation.name, []), index).items()):
            if firsts:
                names, alone, shared = _most_firsts(tally_firsts(firsts))
                rows.append(LeaderRow(Link(L.operation_title(operation), L.operation_path(operation.name)), gpu,
                                      headline_pass(index.runs_of_operation[operation.name]) or "", " and ".join(names),
                                      _detail(alone, shared, total, "workload", len(names) > 1)))
    of_source: dict[tuple[str, str], list[RunFacts]] = defaultdict(list)
    for f in index.runs:
        source = source_of(f, index)
        if source in large:
            of_source[(source, f.operation.name)].append(f)
    for source in sorted(large):
        tally: dict[str, tuple[str, list[tuple[str, bool]], list[int]]] = {}
        passes = set()
        for name in sorted(sources[source]):
            of_operation = of_source[(source, name)]
            passes.add(headline_pass(of_operation) or "")
            for gpu_slug, (gpu, firsts, total) in _headline_firsts(of_operation, index).items():
                _, merged, cohorts = tally.setdefault(gpu_slug, (gpu, [], [0]))
                cohorts[0] += total
                merged.extend(firsts)
        link = Link(f"{source}: {len(sources[source]):,} operations", f"{OPERATIONS_INDEX}#{anchors.get(source, '')}")
        for gpu_slug, (gpu, merged, cohorts) in sorted(tally.items()):
            if merged:
                names, alone, shared = _most_firsts(tally_firsts(merged))
                rows.append(LeaderRow(link, gpu, " / ".join(sorted(passes)), " and ".join(names),
                                      _detail(alone, shared, cohorts[0], "cohort", len(names) > 1)))
    return rows


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
    projects: dict[str, list[int]] = {}
    for item in implementation_items(index):
        tally = projects.setdefault(item.detail, [0, 0])
        tally[0] += 1
        tally[1] += item.count
    levels = Counter(f.level for f in index.runs)
    return HomePage(
        path="index.html", title=index.config.site.title, run_count=len(index.runs),
        document_count=len(index.registry.records),
        operations=[CountRow(Link(group.heading, f"{OPERATIONS_INDEX}#{group.id}"), group.runs,
                             f"{group.operations:,} operation{'s' if group.operations != 1 else ''}")
                    for group in operations_index(index).groups],
        sources=source_rows,
        # The home page lists them without the index pages' detail column.
        gpus=[CountRow(item.item, item.count) for item in gpu_items(index)],
        implementations=[CountRow(Link(project, "implementations/index.html"), runs,
                                  f"{count:,} implementation{'s' if count != 1 else ''}")
                         for project, (count, runs) in sorted(projects.items(), key=lambda kv: kv[0].lower())],
        levels=[CountRow(Link(f"{level} evidence", ""), levels.get(level, 0)) for level in LEVELS],
        leaders=leader_rows(index),
        newest=by_newest(index.runs, NEWEST),
    )
