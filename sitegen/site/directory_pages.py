"""The site's index pages that are not listings of runs: Operations and Schemas."""

from __future__ import annotations

from sitegen.site import labels as L
from sitegen.site.index import Index
from sitegen.site.labels import Link, Row
from sitegen.site.listings import CountRow, ListPage

OPERATIONS_INDEX = "operations/index.html"
SCHEMAS_INDEX = "schemas/index.html"


def operations_index(index: Index) -> ListPage:
    items = [
        CountRow(Link(L.operation_title(op), L.operation_path(op.name)), len(index.runs_of_operation.get(op.name, [])),
                 op.model.spec.family)
        for op in sorted(index.operations, key=lambda op: (L.operation_title(op).lower(), op.name))
    ]
    return ListPage(OPERATIONS_INDEX, "Operations", "Operations", [], items, [])


def schemas_index(folder: str, names: list[str]) -> ListPage:
    """One row per kind, linking its generated JSON Schema under ``folder``."""
    rows = [
        Row(name.removesuffix(".schema.json"), name, folder + name, code=True)
        for name in sorted(names) if name.endswith(".schema.json")
    ]
    return ListPage(SCHEMAS_INDEX, "Schemas", "Schemas of the record format", rows, [], [])
