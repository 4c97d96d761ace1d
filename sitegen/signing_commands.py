"""``sitegen keygen`` and ``sitegen sign``: a key for a machine that reruns, and signatures on existing runs."""

from __future__ import annotations

import json
from pathlib import Path

import click

from sitegen.cli import CONTEXT, EXIT_HELP, json_option, report
from sitegen.problems import InputError, Problem


@click.command(context_settings=CONTEXT, epilog=EXIT_HELP)
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--comment", default="sitegen rerun key", show_default=True, help="Comment after the public key.")
@json_option
def keygen(path: Path, comment: str, as_json: bool) -> None:
    """Make an Ed25519 key: PATH (private, mode 0600, OpenSSH format) and PATH.pub.

    Keep PATH on the machine that reruns, outside any registry; put the line of PATH.pub
    in a registry's sitegen.toml as a [[trust]] key. An existing `ssh-keygen -t ed25519`
    key works the same way.
    """
    from sitegen.signing import keygen as make

    line = make(path, comment)
    report([], as_json=as_json, extra={"private": str(path), "public": f"{path}.pub", "key": line})
    click.echo(line)
    click.echo(f"wrote {path} (keep it private) and {path}.pub", err=True)


@click.command(context_settings=CONTEXT, epilog=EXIT_HELP)
@click.argument("runs", nargs=-1)
@click.option("--key", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="OpenSSH Ed25519 private key (sitegen keygen, ssh-keygen -t ed25519).")
@click.option("--records", type=click.Path(path_type=Path, file_okay=False), default=Path("records"), show_default=True,
              help="Registry holding the runs.")
@json_option
def sign(runs: tuple[str, ...], key: Path, records: Path, as_json: bool) -> None:
    """Sign runs of a registry (default: every controlled rerun that is not a dry run).

    RUNS are run names. The signature goes in each run's metadata.signature and covers the
    digests of the run and of every document it references; the run's digest, lock entry
    and name stay as they were. Only the holder of a key the registry trusts should sign:
    a signature says "this machine ran it".
    """
    from sitegen.layout import render
    from sitegen.signing import load_private_key, sign_run
    from sitegen.transaction import registry_transaction
    from sitegen.registry import open_registry

    private = load_private_key(key)
    if not records.is_dir():
        raise InputError([Problem(str(records), "$", "no such registry folder")])
    with registry_transaction(records) as txn:
        registry = open_registry(records)
        chosen = _chosen(registry, runs, records)
        files: dict[str, dict] = {}
        for record in chosen:
            relative = Path(record.file).relative_to(records).as_posix()
            doc = files.setdefault(relative, json.loads(txn.read(relative)))
            target = doc["run"] if record.pointer == "$.run" else doc
            target["metadata"]["signature"] = sign_run(record, registry.by_digest, private)
        changed = 0
        for relative, doc in sorted(files.items()):
            # A bundle keeps the shape it was written in; a single document the registry's layout.
            data = (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode() if "kind" not in doc else render(doc)
            if txn.read(relative) != data:
                txn.write(relative, data)
                changed += 1
    report([], as_json=as_json, extra={"signed": sorted(r.name for r in chosen), "files": changed})
    click.echo(f"signed {len(chosen)} run(s); {changed} file(s) changed", err=True)


def _chosen(registry, runs: tuple[str, ...], records: Path) -> list:
    all_runs = registry.of_kind("BenchmarkRun")
    if runs:
        by_name = {r.name: r for r in all_runs}
        missing = [name for name in runs if name not in by_name]
        if missing:
            raise InputError([Problem(str(records), "$", f"no BenchmarkRun named {name!r}") for name in missing])
        return [by_name[name] for name in runs]
    return [r for r in all_runs if _controlled(r.model.spec)]


def _controlled(spec) -> bool:
    evidence = spec.evidence
    return bool(evidence and evidence.integrity and not evidence.dryRun
                and (evidence.command or "").startswith("sitegen rerun"))
