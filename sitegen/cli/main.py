"""The ``sitegen`` command line: thin click commands over plain functions.

Exit codes: 0 success, 1 invalid input (each problem printed as one line
``FILE: JSON-PATH: REASON`` on stderr), 2 usage error.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from sitegen.cli import options as cliparts
from sitegen.cli.options import (CONTEXT, EXIT_HELP, OUTSIDE_LINKS, PATHS, UNLOCKED, hold_until_exit, json_option, report,
                              warn_unlocked)
from sitegen.cli.check import check
from sitegen.cli.imports import import_group
from sitegen.core.problems import InputError, Problem
from sitegen.cli.rerun import rerun
from sitegen.cli.sign import keygen, sign
from sitegen.cli.site import attest, build, serve

class Group(click.Group):
    """Turns InputError from any command into its lines and exit code 1, never a traceback.

    An OSError that reaches here is a path the user gave that cannot be used (an output
    under a file, a read-only folder): it gets the same one-line treatment.
    """

    def main(self, args=None, *rest, **options):
        """As click's; run from the process's own command line, a command that held its heap exits at once.

        Freeing a 60,000-run registry object by object took 3 s of a 35 s rebuild. When
        the command line is the process's own (``args`` None, as the ``sitegen`` script
        and ``python -m sitegen`` run it, never CliRunner) and a command held its heap
        (hold_until_exit: ``build`` and ``lock``), output is flushed and the process ends
        with os._exit, leaving the memory to the system.
        """
        if args is not None:
            return super().main(args, *rest, **options)
        cliparts.OWN_PROCESS = True
        try:
            return super().main(args, *rest, **options)
        except SystemExit as exc:
            # A profiler or a coverage tool writes its results at exit: then exit as usual.
            if not cliparts.HELD or not (exc.code is None or isinstance(exc.code, int)) or sys.getprofile() or sys.gettrace():
                raise
            code = exc.code or 0
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)

    def invoke(self, ctx: click.Context):
        from sitegen.core.inputfile import allow_outside_links

        # Off unless this command's --allow-outside-links turns it on (in-process callers run many commands).
        allow_outside_links(False)
        try:
            return super().invoke(ctx)
        except InputError as exc:
            problems = exc.problems
        except OSError as exc:
            where = exc.filename if exc.filename is not None else "<filesystem>"
            problems = [Problem(str(where), "$", exc.strerror or str(exc))]
        # --json is known only once the subcommand has parsed its options.
        report(problems, as_json=bool(ctx.obj and ctx.obj.get("json")))
        ctx.exit(1)


@click.group(cls=Group, context_settings=CONTEXT, epilog=EXIT_HELP)
@click.version_option(package_name="sitegen")
def main() -> None:
    """Build a static registry of GPU-kernel benchmark records, and re-measure them."""


@main.command(context_settings=CONTEXT, epilog=EXIT_HELP)
@PATHS
@OUTSIDE_LINKS
@json_option
def validate(paths: tuple[Path, ...], as_json: bool) -> None:
    """Check manifest files or folders (default: records/) one document at a time.

    Every problem is reported, one line each, before exiting.
    """
    from sitegen.format.loader import load_paths

    paths = tuple(paths) or (Path("records"),)
    records, problems = load_paths(list(paths))
    if not records and not problems:
        # "0 document(s) valid" and exit 0 read as a pass where a wrong or empty folder was named.
        from sitegen.core.problems import Problem

        problems = [Problem(str(path), "$", "no manifest documents (*.json) found") for path in paths]
    report(problems, as_json=as_json, extra={"documents": len(records)})
    if problems:
        sys.exit(1)
    click.echo(f"{len(records)} document(s) valid.", err=True)


@main.command(context_settings=CONTEXT, epilog=EXIT_HELP)
@PATHS
@UNLOCKED
@OUTSIDE_LINKS
@click.option("--full", is_flag=True,
              help="Parse, validate and digest every document, ignoring this machine's build state "
                   "(use it where the cache folder is not yours alone, as in CI).")
@click.option("--trust", type=click.Path(path_type=Path, dir_okay=False),
              help="Check run signatures against the [[trust]] keys of this file instead of each registry's "
                   "sitegen.toml (in CI: the base branch's, which a pull request cannot edit).")
@click.option("--strict", is_flag=True,
              help="Also report every controlled rerun that carries no signature (it holds no place on the "
                   "site); reads every document in full, as --full does.")
@json_option
def verify(paths: tuple[Path, ...], unlocked: bool, full: bool, trust: Path | None, strict: bool, as_json: bool) -> None:
    """Check every digest and reference of a registry (default: records/).

    References must resolve, names must be unique, and each document's digest must
    match the one in the folder's digests.lock: a one-byte change to any spec fails.
    A folder without digests.lock is refused unless --unlocked is given. Files whose
    exact bytes this sitegen already checked on this machine are taken from its build
    state; --full recomputes everything. Every run signature must be valid and by a key
    the trust list holds, valid when the run was observed; unsigned runs are no problem,
    except under --strict for a run that claims to be a controlled rerun.
    """
    from sitegen.registry.config import load_config, load_trust
    from sitegen.core.forkpool import default_jobs
    from sitegen.state.opening import open_cached
    from sitegen.trust.registrysigning import unsigned_reruns
    from sitegen.core.signing import signature_problems

    total = 0
    problems: list[Problem] = []
    trusted = load_trust(trust) if trust else None  # a bad trust file is named before any registry is read
    for root in list(paths) or [Path("records")]:
        if unlocked:
            warn_unlocked(root)
        try:
            registry = open_cached(root, require_lock=not unlocked, cached=not (full or strict), jobs=default_jobs())
            total += len(registry.records)
            problems += signature_problems(registry, load_config(root).trust if trusted is None else trusted)
            if strict:
                problems += unsigned_reruns(registry)
        except InputError as exc:
            problems += exc.problems
    report(problems, as_json=as_json, extra={"documents": total})
    if problems:
        sys.exit(1)
    click.echo(f"{total} document(s) verified.", err=True)


@main.command(context_settings=CONTEXT, epilog=EXIT_HELP)
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@json_option
def digest(files: tuple[Path, ...], as_json: bool) -> None:
    """Print each document's digest, kind and name, one line per document.

    The digest is sha256 over RFC 8785 canonical JSON of {apiVersion, kind, spec},
    so anyone can check a record by hand with any JCS implementation.
    """
    from sitegen.format.loader import load_paths

    records, problems = load_paths(list(files))
    if problems:
        raise InputError(problems)
    if as_json:
        rows = [{"digest": r.digest, "kind": r.kind, "name": r.name, "file": r.file, "pointer": r.pointer} for r in records]
        report([], as_json=True, extra={"documents": rows})
        return
    for record in records:
        click.echo(f"{record.digest}  {record.kind}  {record.name}")


def _write(path: Path, data: bytes) -> None:
    """write_atomic, with an unwritable path (a file where a folder should be) as a Problem."""
    from sitegen.core.atomicwrite import write_atomic

    try:
        write_atomic(path, data)
    except OSError as exc:
        raise InputError([Problem(str(path), "$", f"cannot write: {exc.strerror or exc}")]) from None


SCHEMA_FOLDER = Path("sitegen/format/schemas")


@main.command(context_settings=CONTEXT, epilog=EXIT_HELP)
@click.option("--out", type=click.Path(path_type=Path),
              help=f"Folder to write <Kind>.schema.json files into [default: {SCHEMA_FOLDER}, where a sitegen "
                   "checkout commits them; it must exist].")
@click.option("--check", is_flag=True, help="Exit 1 if the schemas shipped with sitegen differ from the models.")
@json_option
def schema(out: Path | None, check: bool, as_json: bool) -> None:
    """Write the JSON Schema of every kind, generated from the record models."""
    from sitegen.format.jsonschema import committed_schema_files, schema_files

    files = schema_files()
    if check:
        if committed_schema_files() != files:
            raise InputError([Problem("sitegen/format/schemas", "$", "committed schemas differ from the models; run `sitegen schema` in the checkout")])
        report([], as_json=as_json, extra={"schemas": sorted(files)})
        click.echo("schemas match the models.", err=True)
        return
    if out is None:
        if not SCHEMA_FOLDER.is_dir():
            # Outside a checkout the default would scatter a sitegen/ folder into wherever we are.
            raise InputError([Problem(str(SCHEMA_FOLDER), "$", "no such folder here: run in a sitegen checkout, or give --out DIR")])
        out = SCHEMA_FOLDER
    for name, data in files.items():
        _write(out / name, data)
    report([], as_json=as_json, extra={"schemas": sorted(files), "out": str(out)})
    click.echo(f"wrote {len(files)} schema(s) to {out}", err=True)


@main.command(context_settings=CONTEXT, epilog=EXIT_HELP)
@click.argument("root", required=False, type=click.Path(path_type=Path, file_okay=False), default=Path("records"))
@OUTSIDE_LINKS
@json_option
def lock(root: Path, as_json: bool) -> None:
    """Record the digest of every document of a registry in its digests.lock.

    Run it after reviewing a change; `verify` and `build` then catch any later edit.
    Before writing, it prints the documents added, changed and removed since the previous
    lock, one line each (a count for more than 20 of a kind); --json lists them all.
    Files whose exact bytes this sitegen already digested are taken from this machine's
    build state, so after a small edit only the changed files are read in full.
    """
    from sitegen.core.forkpool import default_jobs
    from sitegen.registry.lockfile import LOCK_NAME
    from sitegen.registry.lockfile import change_lines, lock_changes, read_lock
    from sitegen.registry.folder import checked_lock_bytes, lock_key
    from sitegen.state.opening import open_cached
    from sitegen.registry.transaction import registry_transaction

    if not root.is_dir():
        raise InputError([Problem(str(root), "$", "no such registry folder")])
    with registry_transaction(root) as txn:
        registry = open_cached(root, check_lock_file=False, cached=True, jobs=default_jobs())
        current = {lock_key(r): r.digest for r in registry.records}
        data = checked_lock_bytes(root, current)
        try:
            previous = read_lock(root) or {}
        except InputError:
            previous = {}  # the lock being replaced may be the broken one: then every document is added
        changes = lock_changes(previous, current)
        for line in change_lines(changes):
            click.echo(line, err=True)
        if txn.read(LOCK_NAME) != data:
            txn.write(LOCK_NAME, data)
    report([], as_json=as_json, extra={"documents": len(registry.records), "lock": str(root / LOCK_NAME), **changes})
    click.echo(f"locked {len(registry.records)} document(s) in {root / LOCK_NAME}", err=True)
    hold_until_exit(registry)


# Commands of the other subsystems register themselves here.
for command in (build, attest, serve, import_group, check, rerun, keygen, sign):
    main.add_command(command)
