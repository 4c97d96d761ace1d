"""``sitegen check CANDIDATE``: new results against a registry, as a Markdown table for a pull request, and a CI gate.

The verdicts are sitegen.gate.regression's (the ranking rule's own test); this module only reads the
options, prints and picks the exit code. Exit 1 means one thing only, a regression, so a CI job
can tell it from a broken input (2).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from sitegen.cli.options import CONTEXT, OUTSIDE_LINKS, json_option

EXIT = ("\b\nExit codes: 0 no regression; 1 a run slower than its implementation's previous run\n"
        "beyond --threshold (an interval excluding a tie); 2 usage error or unreadable input.")
ORDER = {"slower": 0, "more": 1, "faster": 2, "less": 3, "tie": 4, "not comparable": 5}


def _cell(text: str | None) -> str:
    return (text or "—").replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown(verdicts, against: Path, threshold: float) -> str:
    """The table a pull-request comment shows: regressions first, then every other verdict, each with why."""
    rows = sorted(verdicts, key=lambda v: (not v.regression, ORDER[v.verdict], v.run))
    regressions = [v for v in verdicts if v.regression]
    counts = {name: sum(v.verdict == name for v in verdicts) for name in ORDER}
    lines = [
        f"### sitegen check: {len(verdicts)} run(s) against `{against}`",
        "",
        ", ".join(f"{n} {name}" for name, n in counts.items() if n) + ".",
        (f"**{len(regressions)} regression(s)**: slower than the implementation's previous run by at least "
         f"{threshold:g}% with an interval that excludes a tie." if regressions else "No regression."),
        "",
        "| Verdict | Run | Implementation | Operation · workload · GPU | Compared with | Why | Fastest other implementation |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for v in rows:
        verdict = f"**{v.verdict}** (regression)" if v.regression else v.verdict
        lines.append("| " + " | ".join(_cell(x) for x in (
            verdict, f"`{v.run}`", v.implementation, f"{v.operation} · {v.workload} · {v.gpu}", v.previous, v.why,
            v.versus_fastest)) + " |")
    return "\n".join(lines) + "\n"


@click.command("check", context_settings=CONTEXT, epilog=EXIT)
@click.argument("candidate", metavar="CANDIDATE", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--against", type=click.Path(path_type=Path, file_okay=False, exists=True), default=Path("records"),
              show_default=True, help="The registry whose cohorts the candidate's runs are compared with.")
@click.option("--threshold", type=click.FloatRange(min=0), default=0, show_default=True, metavar="PCT",
              help="Fail only on a slowdown of at least PCT percent (a slower verdict already needs the protocol's "
                   "minimum effect, 1% unless it says otherwise, and an interval that excludes a tie).")
@OUTSIDE_LINKS
@json_option
def check(candidate: Path, against: Path, threshold: float, as_json: bool) -> None:
    """Compare each run in CANDIDATE (a folder of new results: imported or rerun) with its cohort in the registry.

    Each run is compared, by the ranking rule's own statistics (the 95% ratio interval and the
    protocol's minimum effect), with its implementation's previous run in the same cohort, and
    with the fastest run of another implementation there: faster, slower, tie, or not comparable
    and why (no cohort in the registry, no earlier run, a noisy run, no interval, failed or flagged).
    Never a verdict across cohorts or on a noisy run. Prints a Markdown table for a pull-request
    comment (JSON with --json).
    """
    from sitegen.core.problems import InputError
    from sitegen.gate.regression import compare, load

    try:
        index, ours, theirs = load(candidate, against)
    except InputError as exc:
        for problem in exc.problems:
            click.echo(problem.line(), err=True)
        sys.exit(2)
    verdicts = compare(index, ours, theirs, threshold / 100)
    regressions = [v.run for v in verdicts if v.regression]
    if as_json:
        click.echo(json.dumps({"ok": not regressions, "against": str(against), "thresholdPct": threshold,
                               "regressions": regressions, "runs": [v.as_dict() for v in verdicts]}, indent=2, sort_keys=True))
    else:
        click.echo(markdown(verdicts, against, threshold), nl=False)
    click.echo(f"checked {len(verdicts)} run(s) against {against}: {len(regressions)} regression(s)", err=True)
    sys.exit(1 if regressions else 0)
