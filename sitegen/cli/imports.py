"""``sitegen import NAME PATH``: bring benchmark results into a registry as Reported records, by any importer.

The group knows no importer by name: ``NAME`` is looked up as plugin.load does (sitegen's own,
an installed ``sitegen.importers`` entry point, or pkg.module:Name) and its command is built
from what the importer declares (summary, PATH kind, options). Every importer then runs the
same way: plan, warnings, the registry check and write in one transaction, the report.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from sitegen.cli.options import CONTEXT, EXIT_HELP, OUTSIDE_LINKS, json_option, report
from sitegen.core.problems import escape


def run_importer(importer, path: Path, out: Path, options: dict[str, Any], as_json: bool) -> None:
    """Plan, print the skipped units' lines, write through the shared core, report; exit 1 on any problem."""
    from sitegen.importers.core import write_plan

    plan = importer.plan(path, options)
    for warning in plan.warnings:
        # A skipped unit's line quotes the file (a benchmark's name, NVBench's skip reason): escaped
        # as problems are, so a name holding a line break or a terminal escape stays one plain line.
        click.echo(escape(warning), err=True)
    problems = list(plan.problems)
    summary = importer.report(plan)
    if plan.imported:
        written, refused = write_plan(out, plan, importer.source(options), importer.published(options),
                                      plan.newest_day, newest_wins=importer.newest_wins)
        summary.update(written)
        problems += refused
    finish(plan, out, summary, problems, importer.units, as_json=as_json)


def finish(plan, out: Path, summary: dict[str, Any], problems: list, what: str, *, as_json: bool) -> None:
    """Print the report (problems, then one summary line on stderr) and exit 1 if anything failed."""
    report(sorted(problems), as_json=as_json, extra=summary)
    click.echo(
        f"imported {plan.imported} of {plan.rows} {what} into {out}: "
        f"{summary.get('written', 0)} file(s) written, {summary.get('unchanged', 0)} unchanged.",
        err=True,
    )
    if problems:
        sys.exit(1)


def importer_command(importer) -> click.Command:
    """The click command of one importer: PATH, its own options, then --out, --allow-outside-links and --json."""
    folder = importer.path_kind == "folder"

    def callback(path: Path, out: Path, as_json: bool, **options: Any) -> None:
        run_importer(importer, path, out, options, as_json)

    params = [
        click.Argument(["path"], metavar=importer.path_name,
                       type=click.Path(path_type=Path, exists=True, file_okay=not folder, dir_okay=folder)),
        *importer.options,
        click.Option(["--out"], type=click.Path(path_type=Path, file_okay=False), default=Path("records"),
                     show_default=True, help="Registry folder to write into."),
    ]
    command = click.Command(importer.name, callback=callback, params=params, context_settings=CONTEXT,
                            epilog=EXIT_HELP, help=f"{importer.summary}\n\n{importer.help}".strip(),
                            short_help=importer.summary)
    # The shared flags as every other command declares them (decorators, so they behave the same).
    return json_option(OUTSIDE_LINKS(command))


class ImportGroup(click.Group):
    """Subcommands are the importers found when asked for, never a fixed list."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        from sitegen.importers.plugin import known

        return list(known())

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        from sitegen.importers.plugin import known, load
        from sitegen.core.problems import InputError

        if name not in known() and ":" not in name:
            return None  # click's own "No such command" usage error (exit 2)
        try:
            return importer_command(load(name))
        except InputError as exc:
            # An importer that cannot be loaded is a usage error naming why, not a traceback.
            raise click.UsageError(exc.problems[0].message, ctx) from None


def _list(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    from sitegen.importers.plugin import known, load
    from sitegen.core.problems import InputError

    if not value or ctx.resilient_parsing:
        return
    for name, target in known().items():
        try:
            summary = load(name).summary
        except InputError as exc:
            summary = f"(cannot be loaded: {exc.problems[0].message})"
        click.echo(f"{name}\t{target}\t{summary}")
    ctx.exit(0)


@click.group("import", cls=ImportGroup, context_settings=CONTEXT, epilog=EXIT_HELP, subcommand_metavar="NAME PATH [OPTIONS]")
@click.option("--list", "list_", is_flag=True, expose_value=False, is_eager=True, callback=_list,
              help="List the importers found (name, pkg.module:Name, what each imports) and exit.")
def import_group() -> None:
    """Import benchmark results into a registry folder as Reported records: `sitegen import NAME PATH`.

    NAME is an importer: one of `sitegen import --list` (sitegen's own and every installed
    `sitegen.importers` entry point) or pkg.module:Name of a sitegen.importers.plugin.Importer
    subclass. `sitegen import NAME -h` shows its options.
    """
