"""How documents are named on pages, and where each page lives.

Paths are relative to the site root and always end in ``index.html`` (or a file name),
so links work from a plain folder (file://) as well as from any static host.
"""

from __future__ import annotations

import re

from dataclasses import dataclass
from typing import Any

from sitegen.format.loader import Record
from sitegen.format.model.definitions import ProjectRevision


@dataclass(frozen=True)
class Link:
    """A link: ``href`` is site-root-relative, or absolute (http/https) for external pages."""

    text: str
    href: str


@dataclass(frozen=True)
class Row:
    """One label/value line of a definition list."""

    label: str
    value: str
    href: str | None = None
    code: bool = False


@dataclass(frozen=True)
class ImageRow(Row):
    """A row that shows an image before its value (an implementation's badge); a subclass, so the
    twins of the site's other rows carry no empty image field."""

    image: str = ""


def run_dir(name: str) -> str:
    """The run's folder, the form its permalink takes."""
    return f"runs/{name}/"


def run_path(name: str) -> str:
    return run_dir(name) + "index.html"


def operation_path(name: str) -> str:
    return f"operations/{name}/index.html"


def operation_gpu_path(operation: str, gpu_slug: str) -> str:
    """An operation's page for one GPU, when it was measured on several."""
    return f"operations/{operation}/{gpu_slug}/index.html"


def implementation_path(name: str) -> str:
    return f"implementations/{name}/index.html"


BADGES_PATH = "badges/index.html"



def gpu_path(slug: str) -> str:
    return f"gpus/{slug}/index.html"


def compare_group_path(cohort_page: str) -> str:
    """The comparisons of the neighbouring rows of every cohort table on ``cohort_page`` (an operation,
    GPU or pass page), at its place under compare/: operations/<op>/<gpu>/ -> compare/<op>/<gpu>/.
    One page per operation page rather than one per pair, which was 13,724 files (and 87 MB) of the
    bundled registry's site; the operation pages are already cut to size, so these are too."""
    return "compare/" + cohort_page.removeprefix("operations/")


def pair_id(ahead_digest: str, behind_digest: str) -> str:
    """The anchor of one pair on its comparisons page. Digest prefixes, not names: two names of up to
    200 characters would make an unwieldy fragment."""
    return f"pair-{ahead_digest.removeprefix('sha256:')[:16]}--{behind_digest.removeprefix('sha256:')[:16]}"


def compare_path(compare_page: str, ahead_digest: str, behind_digest: str) -> str:
    """The pre-rendered comparison of two neighbours of a cohort table, on ``compare_page``
    (sitegen.site.pages.compare_layout, sitegen.site.pages.compare_groups)."""
    return f"{compare_page}#{pair_id(ahead_digest, behind_digest)}"


def cohort_id(key: str) -> str:
    return "cohort-" + key.removeprefix("sha256:")[:16]


def short_digest(digest: str) -> str:
    return digest[: len("sha256:") + 16] + "…"


def run_short_id(digest: str) -> str:
    """First 12 hex digits of the run digest."""
    return digest.removeprefix("sha256:")[:12]


def operation_title(operation: Record) -> str:
    return operation.model.metadata.title or operation.name


def implementation_label(implementation: Record) -> str:
    return implementation.model.spec.name


def revision_rows(revision: ProjectRevision) -> list[Row]:
    """Project, revision, version and source digest of a ProjectRevision.

    "revision" is the commit, the only thing that pins code; a release version is shown
    beside it, never in its place (the seed shows "unknown" for a versioned Liger run).
    """
    rows = [
        Row("project", revision.project, revision.repository),
        Row("revision", revision.commit or "unknown", code=bool(revision.commit)),
    ]
    if revision.version:
        rows.append(Row("version", revision.version))
    if revision.sourceDigest:
        # What tells two revisions of code outside any repository apart (a rerun's plugin).
        rows.append(Row("source digest", revision.sourceDigest, code=True))
    return rows


def dtype_label(workload: Record) -> str | None:
    spec = workload.model.spec
    if spec.dtype:
        return spec.dtype
    dtypes = sorted({t.dtype for t in spec.tensors or []})
    return "/".join(dtypes) or None


def scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def workload_label(workload: Record) -> str:
    """``vocab = 128256 · tokens = 2048 · fp32``: axes in published order, then the dtype."""
    parts = [f"{key} = {scalar(value)}" for key, value in workload.model.spec.axes.items()]
    dtype = dtype_label(workload)
    if dtype:
        parts.append(dtype)
    return " · ".join(parts) or workload.name


def flatten(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    """Nested JSON → ("a.b", "text") rows in document order; lists of scalars joined."""
    if isinstance(value, dict):
        rows = []
        for key, item in value.items():
            rows += flatten(item, f"{prefix}.{key}" if prefix else key)
        return rows
    if isinstance(value, list):
        if all(not isinstance(item, (dict, list)) for item in value):
            return [(prefix, ", ".join(scalar(item) for item in value))]
        rows = []
        for i, item in enumerate(value):
            rows += flatten(item, f"{prefix}[{i}]")
        return rows
    return [(prefix, scalar(value))]
