"""``sitegen keygen`` and ``sitegen sign``: a key for a machine that reruns, and signatures on existing runs."""

from __future__ import annotations

from pathlib import Path

import click

from sitegen.cli.options import CONTEXT, EXIT_HELP, json_option, report


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
    from sitegen.core.signing import keygen as make

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
    """Sign runs of a registry: by default exactly the runs a `sitegen rerun` wrote into it.

    A rerun journals each file it writes (path and digest, in the registry's hidden
    .sitegen-rerun-journal); by default `sign` signs the unsigned controlled reruns of
    those files whose bytes are unchanged, lists each, and empties the journal. A journalled
    file that changed since is refused, and a rerun that no rerun journalled here (copied in,
    planted) is left unsigned: name a run (RUNS) to sign it after you have read it. The
    signature goes in each run's metadata.signature and covers the digests of the run and of
    every document it references; the run's digest, lock entry and name stay as they were.
    Only the holder of a key the registry trusts should sign: a signature says "this machine
    ran it". A named run is signed again even if it already was.
    """
    from sitegen.trust.registrysigning import sign_registry

    done = sign_registry(records, key, runs)
    names = sorted(r.name for r in done.runs)
    report([], as_json=as_json, extra={"signed": names, "files": done.files, "refused": done.refused,
                                       "left": sorted(done.left)})
    for name in names:
        click.echo(f"signed {name}", err=True)
    for line in done.refused:
        click.echo(line, err=True)
    if done.left:
        click.echo(f"left unsigned: {len(done.left)} controlled rerun(s) that no rerun wrote here "
                   "(name them to sign them)", err=True)
    click.echo(f"signed {len(names)} run(s); {done.files} file(s) changed", err=True)
