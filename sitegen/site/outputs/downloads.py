"""Tables to download: each operation's runs as one CSV beside its JSON.

A cohort table links its operation's CSV, whose comparison_key column picks its rows: a CSV per
cohort was 4,038 more files for the bundled registry (issue 49), each a copy of those rows.

For a spreadsheet or pandas rather than a JSON reader: one row per run, raw numbers in the
run's own unit (ns for times), never the rounded text the pages show. COLUMNS is the one
list of columns and what each holds; docs/downloads.md documents the same list (a test
checks that they agree).

Text from records (names, reasons) is untrusted: a cell that starts with = + - @, a tab or a
line break would be read as a formula by a spreadsheet, so it gets a leading apostrophe
(OWASP's advice for CSV injection), and so does each line of a cell that holds line breaks,
for a reader that splits there; a cell holding \r or \n is quoted, so it stays one cell.
Numbers are written as numbers.
"""

from __future__ import annotations

import csv
import io
import re

from sitegen.site.text import labels as L
from sitegen.site.pages.cohort_table import rank_text
from sitegen.facts.runfacts import RunFacts

COLUMNS: tuple[tuple[str, str], ...] = (
    ("run", "The run's name (its page is runs/<run>/)."),
    ("implementation", "The implementation's display name."),
    ("implementation_id", "The implementation document's name (its page is implementations/<id>/)."),
    ("version", "The implementation's release version, or its commit when it has none."),
    ("gpu", "The GPU product."),
    ("timed_pass", "forward, backward or full (forward + backward)."),
    ("dtype", "The workload's data type."),
    ("workload", "The workload's axes, as the pages write them."),
    ("metric", "The primary metric (latency for times)."),
    ("statistic", "The statistic of the primary metric (median, mean)."),
    ("value", "The primary value, in unit."),
    ("unit", "The primary value's unit (ns for times)."),
    ("interval_low", "Low end of the value's 95% interval, in unit (empty without one)."),
    ("interval_high", "High end of the value's 95% interval, in unit."),
    ("interval_method", "Where the interval comes from: bootstrap, published p20–p80, or normal approximation."),
    ("rank", "The implementation's rank in its cohort (1 = fastest; shared ranks repeat; empty when not ranked)."),
    ("rank_label", "The rank as the pages write it: 1, =2, noisy, not ranked, flagged: …"),
    ("ratio_to_leader", "value over the cohort leader's value (1 for the leader)."),
    ("ratio_low", "Low end of that ratio's interval: the 95% bootstrap interval when both runs have raw samples, else the range between the runs' own intervals; empty for the leader."),
    ("ratio_high", "High end of that ratio's interval (as ratio_low); empty for the leader."),
    ("evidence_level", "Reported, Reproducible, Replicated or Verified."),
    ("noisy", "Why the run is too noisy to rank, or empty."),
    ("not_eligible", "Why the run is out of every ranking (failed, flagged, dry run), or empty."),
    ("observed_at", "When the run was measured (UTC, ISO 8601)."),
    ("comparison_key", "The cohort's key: runs with the same key are compared with each other."),
)
OPERATION_CSV = "runs.csv"


def operation_csv_path(operation: str) -> str:
    """Every run of the operation, beside operations/<op>/index.json."""
    return f"operations/{operation}/{OPERATION_CSV}"


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\n")
_AFTER_BREAK = re.compile(r"(?<=[\r\n])(?=[=+\-@\t])")


def _text(value: str) -> str:
    value = _AFTER_BREAK.sub("'", value)
    return "'" + value if value.startswith(_FORMULA_START) else value


def _number(value) -> str:
    return "" if value is None else repr(float(value)) if not isinstance(value, int) else str(value)


def _version(f: RunFacts) -> str:
    revision = f.implementation.model.spec.projectRevision
    return revision.version or revision.commit or ""


def _row(f: RunFacts) -> list[str]:
    shown = f.ranked_as
    ranked = not f.reasons and not f.noisy and shown.rank is not None
    leader = shown.leader
    ratio = f.value / leader.value if ranked and leader is not None and leader.value and f.value is not None else None
    interval = f.interval
    spread = shown.leader_ratio if ranked and shown is f else None
    # The leader's ratio to itself is 1 by definition, not a measured interval: its ratio_low/high stay empty.
    cells = [
        f.name, L.implementation_label(f.implementation), f.implementation.name, _version(f), f.product, f.timed_pass,
        L.dtype_label(f.workload) or "", L.workload_label(f.workload), f.metric or "", f.statistic or "",
    ]
    texts = [_text(c) for c in cells]
    return texts + [
        _number(f.value), _text(f.unit or ""),
        _number(interval.low if interval else None), _number(interval.high if interval else None),
        _text(interval.method if interval else ""),
        _number(shown.rank if ranked else None), _text(rank_text(f)),
        _number(ratio), _number(spread[0] if spread else None), _number(spread[1] if spread else None),
        f.level, _text(f.noisy or ""), _text("; ".join(f.reasons)), f.run.spec.observedAt, _text(f.cohort or ""),
    ]


def _order(f: RunFacts) -> tuple:
    rank = f.ranked_as.rank if not f.reasons and not f.noisy and f.ranked_as.rank is not None else 1 << 30
    return (f.product, f.timed_pass, L.dtype_label(f.workload) or "", f.cohort or "~", rank,
            f.value if f.value is not None else float("inf"), f.name)


def table(runs: list[RunFacts]) -> bytes:
    """The runs as CSV (header first), in GPU, pass, dtype, cohort, rank order: the same runs, the same bytes."""
    out = io.StringIO()
    # The writer quotes a cell holding a character of its line terminator: with "\n" alone, a
    # bare "\r" went out unquoted and split the row. Each row's "\r\n" then becomes "\n" as before.
    writer = csv.writer(out, lineterminator="\r\n")
    lines = []
    for row in ([name for name, _ in COLUMNS], *(_row(f) for f in sorted(runs, key=_order))):
        writer.writerow(row)
        lines.append(out.getvalue().removesuffix("\r\n") + "\n")
        out.seek(0)
        out.truncate()
    return "".join(lines).encode()
