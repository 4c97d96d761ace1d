"""What the command modules share: options, the one-line problem report, and the heap a command
leaves to the process's exit. Its own module, so command modules import it and sitegen.cli.main
imports them, with no circle between the two."""

from __future__ import annotations

import json
from pathlib import Path

import click

from sitegen.core.problems import Problem

CONTEXT = {"help_option_names": ["-h", "--help"]}
EXIT_HELP = "\b\nExit codes: 0 ok, 1 invalid input, 2 usage error."


def report(problems: list[Problem], *, as_json: bool, extra: dict | None = None) -> None:
    """Print problems one per line on stderr (and as JSON on stdout with --json)."""
    for problem in problems:
        click.echo(problem.line(), err=True)
    if problems:
        click.echo(f"{len(problems)} problem(s) found.", err=True)
    if as_json:
        payload = {"ok": not problems, "problems": [p.as_dict() for p in problems], **(extra or {})}
        click.echo(json.dumps(payload, indent=2, sort_keys=True))


# What a command leaves to be freed by the process's exit rather than object by object
# (see Group.main); filled only when sitegen runs as its own process.
HELD: list = []
OWN_PROCESS = False


def hold_until_exit(heap: object) -> None:
    """Keep ``heap`` (a built site's registry and index) alive until the process ends, when sitegen is the process."""
    if OWN_PROCESS:
        HELD.append(heap)


def json_option(func):
    def remember(ctx: click.Context, _param, value: bool) -> bool:
        # Group.invoke reads the flag from the root context when a command raises
        # InputError; a subcommand's own ctx.obj never reaches the root.
        ctx.find_root().ensure_object(dict)["json"] = value
        return value

    return click.option("--json", "as_json", is_flag=True, callback=remember, expose_value=True,
                        help="Print a machine-readable result on stdout.")(func)


PATHS = click.argument("paths", nargs=-1, type=click.Path(path_type=Path))


def _outside_links(_ctx: click.Context, _param, value: bool) -> bool:
    from sitegen.core.inputfile import allow_outside_links

    allow_outside_links(value)
    return value


OUTSIDE_LINKS = click.option(
    "--allow-outside-links", is_flag=True, expose_value=False, is_eager=True, callback=_outside_links,
    help="Read registry files that are links to files outside the registry (refused by default: "
         "a registry built from a pull request would publish whatever file its link names).")


UNLOCKED = click.option("--unlocked", is_flag=True,
                        help="Accept a registry without digests.lock (edits to specs then go unnoticed).")


def warn_unlocked(root: Path) -> None:
    from sitegen.registry.lockfile import LOCK_NAME

    if root.is_dir() and not (root / LOCK_NAME).exists():
        click.echo(f"{root}: warning: no {LOCK_NAME}; --unlocked, so an edited spec cannot be detected", err=True)
