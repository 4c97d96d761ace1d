"""``sitegen import``: bring published benchmark data into a registry as Reported records."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from sitegen.cli import CONTEXT, EXIT_HELP, json_option, report


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
    from sitegen.importers.liger import LIGER_SOURCE, SOURCE_ID, plan_import
    from sitegen.importers.registrywrite import check_target, source_file, write_files, write_lock
    from sitegen.loader import LOCK_NAME
    from sitegen.problems import InputError
    from sitegen.transaction import registry_transaction

    plan = plan_import(csv_file)
    for warning in plan.warnings:
        click.echo(warning, err=True)
    problems = list(plan.problems)
    summary = {"rows": plan.rows, "imported": plan.imported, "failed": plan.rows - plan.imported}
    target = None
    if plan.imported:
        # One transaction under the registry's writer lock: the check, the documents and
        # the lock land together or not at all, and no other writer slips in between.
        with registry_transaction(out) as txn:
            try:
                # Before any write: a registry that is already wrong (or would be, with
                # these documents) is reported and left exactly as it was.
                target = check_target(out, plan.documents)
            except InputError as exc:
                problems += exc.problems
            if target is not None:
                source_path, source_bytes = source_file(out, SOURCE_ID, LIGER_SOURCE, published, plan.newest_day)
                result = write_files(txn, {**plan.files, source_path: source_bytes})
                lock_changed = write_lock(txn, target.lock)
                summary.update(written=len(result.written), unchanged=result.unchanged, lockChanged=lock_changed)
        if target is not None and target.unlocked:
            click.echo(f"{out}: warning: {target.unlocked} document(s) this import did not write are not in "
                       f"{LOCK_NAME}; review them, then run `sitegen lock {out}`", err=True)
    report(sorted(problems), as_json=as_json, extra=summary)
    click.echo(
        f"imported {plan.imported} of {plan.rows} row(s) into {out}: "
        f"{summary.get('written', 0)} file(s) written, {summary.get('unchanged', 0)} unchanged.",
        err=True,
    )
    if problems:
        sys.exit(1)
