"""catalog.json, a small index, and the JSON Lines shards it points at (one per operation, one per kind)."""

from __future__ import annotations

from json.encoder import encode_basestring as _string

from sitegen.core.formatversion import API_VERSION
from sitegen.site.text import labels as L
from sitegen.site.charts.views import samples_of
from sitegen.site.pages.cohort_table import rank_text
from sitegen.facts.index import Index
from sitegen.site.text.jsonout import to_json, twin
from sitegen.site.pages.record_page import samples_path


CATALOG = "catalog.json"


def _catalog_row(f) -> dict:
    return {
        "name": f.name, "digest": f.digest, "url": L.run_dir(f.name), "json": twin(L.run_path(f.name)),
        "operation": f.operation.name, "implementation": f.implementation.name,
        "workload": f.workload.name, "environment": f.environment.name, "protocol": f.protocol.name,
        "gpu": f.product, "timedPass": f.timed_pass,
        "status": f.run.spec.status, "evidenceLevel": f.level, "observedAt": f.run.spec.observedAt,
        "primary": None if f.value is None else {"metric": f.metric, "statistic": f.statistic, "value": f.value, "unit": f.unit},
        # A noisy run holds no rank, even where another run of its implementation carries one
        # (rankLabel then says so); a run that is not its implementation's representative shows
        # the rank that stands for the implementation, as the cohort table does.
        "comparisonKey": f.cohort, "rank": None if f.reasons or f.noisy else f.ranked_as.rank,
        "rankLabel": rank_text(f), "rankReason": None if f.reasons else f.ranked_as.rank_reason,
        "interval": None if f.interval is None else {"low": f.interval.low, "high": f.interval.high, "method": f.interval.method},
        "noisy": f.noisy, "notEligible": f.reasons or None,
        "samples": samples_path(f.name) if samples_of(f) else None,
    }


def _document_line(record) -> str:
    """to_json({"kind", "name", "digest"}) of one document, spelled out: json.dumps' own pass over a
    dict, 66,000 times at 60,000 runs, took 0.5 s of every build (tests/site compare the bytes)."""
    return f'{{"digest":{_string(record.digest)},"kind":{_string(record.kind)},"name":{_string(record.name)}}}\n'


PART_BYTES = 1_000_000
"""A document shard's most bytes: static hosts and CDNs cap a file (issue 49 asks none over 2 MB),
and BenchmarkRun.jsonl alone was 2.5 MB for the bundled registry. Half the cap leaves room for
longer names before a shard splits again."""


def document_part_path(kind: str, number: int) -> str:
    """A kind's documents, in registry order, split where the next line would pass PART_BYTES:
    catalog/documents/<Kind>.jsonl, then <Kind>.2.jsonl, <Kind>.3.jsonl… (docs/hosting.md)."""
    return f"catalog/documents/{kind}.jsonl" if number == 1 else f"catalog/documents/{kind}.{number}.jsonl"


def _parts(lines):
    part: list[bytes] = []
    size = 0
    for line in lines:
        if part and size + len(line) > PART_BYTES:
            yield part
            part, size = [], 0
        part.append(line)
        size += len(line)
    yield part


RUN_PART_ROWS = 500
"""An operation's run shard's most lines. Split by count, not bytes, so catalog.json (written
site-wide) names an operation's parts from its run count alone, without the rows its shards
(written with the operation's pages) are made of. A row is at most about 2 KB (1.5 KB on average
at 60,000 runs, where the unsplit fused-neighborhood-attention shard was 3.95 MB): a part stays
near 1 MB, under the 2 MB a host is asked to take."""


def run_shard_paths(operation: str, runs: int) -> list[str]:
    """catalog/runs/<operation>.jsonl, then <operation>.2.jsonl, <operation>.3.jsonl… (docs/hosting.md)."""
    count = max(1, -(-runs // RUN_PART_ROWS))
    return [f"catalog/runs/{operation}.jsonl" if n == 1 else f"catalog/runs/{operation}.{n}.jsonl" for n in range(1, count + 1)]


def run_shards(operation: str, runs: list):
    """One operation's runs, one JSON line each, in parts of RUN_PART_ROWS lines, as (path, bytes)."""
    for number, path in enumerate(run_shard_paths(operation, len(runs))):
        part = runs[number * RUN_PART_ROWS:(number + 1) * RUN_PART_ROWS]
        yield path, b"".join(to_json(_catalog_row(f)) for f in part)


def catalog(index: Index):
    """catalog.json, a small index, and the document shards it points at, as (path, bytes).

    One shard per operation holds its runs (run_shards, written with the operation's pages), in
    parts of at most RUN_PART_ROWS lines; one per kind holds the documents (kind, name, digest), in
    parts of at most PART_BYTES. Each entry's "shards" lists its parts in order ("shard" is the
    first, as before parts). A reader fetches only
    the operations it needs, and no file grows with the whole registry. Made one shard at
    a time, so the rows of a large registry are never all held at once.
    """
    operations = []
    for name, runs in sorted(index.runs_of_operation.items()):
        parts = run_shard_paths(name, len(runs))
        operations.append({"operation": name, "runs": len(runs), "shard": parts[0], "shards": parts})
    documents: dict[str, list] = {}
    for r in index.registry.records:
        documents.setdefault(r.kind, []).append(r)
    kinds = []
    for kind in sorted(documents):
        parts = []
        for number, lines in enumerate(_parts(_document_line(r).encode() for r in documents[kind]), start=1):
            parts.append(document_part_path(kind, number))
            yield parts[-1], b"".join(lines)
        kinds.append({"kind": kind, "documents": len(documents[kind]), "shard": parts[0], "shards": parts})
    yield CATALOG, to_json({
        "apiVersion": API_VERSION, "runs": len(index.runs), "documents": len(index.registry.records),
        "runShards": operations, "documentShards": kinds,
    })
