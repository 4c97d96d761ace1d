"""The site's index pages that are not listings of runs: Operations and Schemas."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from sitegen.site.text import labels as L
from sitegen.facts.index import Index
from sitegen.site.text.labels import Link, Row
from sitegen.site.pages.listings import CountRow, ListPage

OPERATIONS_INDEX = "operations/index.html"
SCHEMAS_INDEX = "schemas/index.html"


OWN = "sitegen's own measurements"
NO_RUNS = "No runs yet"


@dataclass(frozen=True)
class Family:
    heading: str
    id: str
    items: list[CountRow]


@dataclass(frozen=True)
class SourceGroup:
    """The operations one source has runs of, by family; an operation with runs from two sources is under both."""

    heading: str
    id: str
    operations: int
    runs: int
    families: list[Family]


@dataclass(frozen=True)
class OperationsIndex(ListPage):
    groups: list[SourceGroup] = field(default_factory=list)


def source_of(facts, index: Index) -> str:
    native = facts.run.spec.sourceNative
    if native is None:
        return OWN
    known = index.config.sources.get(native.source)
    return known.name if known else native.source


def _natural(text: str) -> tuple:
    """"L1 · 2 Matmul" before "L1 · 10 Conv": numbers by value, words without case."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part.lower()) for part in re.split(r"(\d+)", text) if part)


def operations_index(index: Index) -> OperationsIndex:
    """Operations grouped by source, then family, so a source of 250 problems does not bury one of 35.

    Sources come in order of how many operations they have, fewest first; families and
    operations by title, numbers by value.
    """
    runs: dict[str, dict[str, int]] = {}
    for op in index.operations:
        counts: dict[str, int] = {}
        for facts in index.runs_of_operation.get(op.name, []):
            source = source_of(facts, index)
            counts[source] = counts.get(source, 0) + 1
        runs[op.name] = counts or {NO_RUNS: 0}
    sources = sorted({s for counts in runs.values() for s in counts},
                     key=lambda s: (s == NO_RUNS, sum(s in c for c in runs.values()), s.lower()))
    groups = []
    for number, source in enumerate(sources, start=1):
        families: dict[str, list[CountRow]] = {}
        for op in sorted(index.operations, key=lambda op: (_natural(L.operation_title(op)), op.name)):
            if source in runs[op.name]:
                families.setdefault(op.model.spec.family, []).append(
                    CountRow(Link(L.operation_title(op), L.operation_path(op.name)), runs[op.name][source]))
        listed = [Family(family, f"source-{number}-family-{n}", items)
                  for n, (family, items) in enumerate(sorted(families.items(), key=lambda kv: kv[0].lower()), start=1)]
        groups.append(SourceGroup(source, f"source-{number}", sum(len(f.items) for f in listed),
                                  sum(runs[op][source] for op in runs if source in runs[op]), listed))
    return OperationsIndex(OPERATIONS_INDEX, "Operations", "Operations", [], [], [], groups=groups)


def schemas_index(folder: str, names: list[str]) -> ListPage:
    """One row per kind, linking its generated JSON Schema under ``folder``."""
    rows = [
        Row(name.removesuffix(".schema.json"), name, folder + name, code=True)
        for name in sorted(names) if name.endswith(".schema.json")
    ]
    return ListPage(SCHEMAS_INDEX, "Schemas", "Schemas of the record format", rows, [], [])
