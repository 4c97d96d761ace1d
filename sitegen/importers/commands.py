"""``sitegen import``: bring published benchmark data into a registry as Reported records."""

from __future__ import annotations

from pathlib import Path

import click

from sitegen.cliparts import CONTEXT, EXIT_HELP, OUTSIDE_LINKS, json_option


def _day(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    from sitegen.model.common import _day as check_day

    if value is None:
        return None
    try:
        check_day(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date like 2026-08-18") from None
    return value


@click.group("import", context_settings=CONTEXT, epilog=EXIT_HELP)
def import_group() -> None:
    """Import published benchmark data into a registry folder as Reported records."""


@import_group.command("liger", context_settings=CONTEXT, epilog=EXIT_HELP)
@click.argument("csv_file", metavar="CSV", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=Path("records"), show_default=True,
              help="Registry folder to write into.")
@click.option("--published", callback=_day, metavar="YYYY-MM-DD",
              help="Publication date for sources/liger-kernel-bench.toml (default: the existing file's, "
                   "else the date of the CSV's newest timestamp).")
@OUTSIDE_LINKS
@json_option
def liger(csv_file: Path, out: Path, published: str | None, as_json: bool) -> None:
    """Import Liger-Kernel's all_benchmark_data.csv: one BenchmarkRun per row.

    Writes operations/, workloads/, implementations/, protocols/, environments/, runs/,
    sources/liger-kernel-bench.toml and adds the written documents to digests.lock. Files
    whose bytes are unchanged are not rewritten, so importing the same CSV twice changes
    nothing. The registry is checked first (against its digests.lock, if it has one): if
    anything is wrong, nothing is written and every problem is listed. A row that cannot
    be mapped is reported as `CSV: line N: reason`; the other rows still import, and the
    exit code is 1.
    """
    from sitegen.importers.core import finish, write_plan
    from sitegen.importers.liger import LIGER_SOURCE, SOURCE_ID, plan_import

    plan = plan_import(csv_file)
    for warning in plan.warnings:
        click.echo(warning, err=True)
    problems = list(plan.problems)
    summary = {"rows": plan.rows, "imported": plan.imported, "failed": plan.rows - plan.imported}
    if plan.imported:
        written, refused = write_plan(out, plan, (SOURCE_ID, LIGER_SOURCE), published, plan.newest_day)
        summary.update(written)
        problems += refused
    finish(plan, out, summary, problems, "row(s)", as_json=as_json)


@import_group.command("kernelbench", context_settings=CONTEXT, epilog=EXIT_HELP)
@click.argument("path", metavar="PATH", type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=Path("records"), show_default=True,
              help="Registry folder to write into.")
@OUTSIDE_LINKS
@json_option
def kernelbench(path: Path, out: Path, as_json: bool) -> None:
    """Import KernelBench's baseline timings from PATH: one BenchmarkRun per timing.

    PATH is a KernelBench checkout at one commit (commit and date from git) or a snapshot
    of one (from its COMMIT file). Every results/timing/*/baseline_time_*.json timing is
    imported: the GPU from its `hardware` string, the shapes read from the problem file
    as it is in PATH (parsed, never run), the PyTorch version from
    results/timing/README.md. A problem whose inputs cannot be read statically, and a null
    timing, are skipped with one line each. Writes as `import liger` does: checked first,
    only changed files, digests.lock in the same transaction; sources/kernelbench.toml is
    dated by the newest commit imported. Importing the same PATH twice changes nothing.
    """
    from sitegen.importers.core import finish, write_plan
    from sitegen.importers.kernelbench import KERNELBENCH_SOURCE, SOURCE_ID, plan_import

    plan, day = plan_import(path)
    for warning in plan.warnings:
        click.echo(warning, err=True)
    problems = list(plan.problems)
    summary = {"timings": plan.rows, "imported": plan.imported, "notices": len(plan.warnings)}
    if plan.imported:
        written, refused = write_plan(out, plan, (SOURCE_ID, KERNELBENCH_SOURCE), None, day, newest_wins=True)
        summary.update(written)
        problems += refused
    finish(plan, out, summary, problems, "timing(s)", as_json=as_json)
