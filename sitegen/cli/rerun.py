"""`sitegen rerun`: controlled reruns of an operation's implementations on the local GPU."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from sitegen.core.problems import InputError
from sitegen.core import workload
from sitegen.rerun.plan import request as planner
from sitegen.rules.protocol import PROCESSES

CONTEXT = {"help_option_names": ["-h", "--help"]}
EPILOG = "\b\nExit codes: 0 ok, 1 invalid input or a refused run, 2 usage error."


def _ints(ctx, param, value):
    if value is None:
        return None
    try:
        items = workload.split_list(value, int)
    except ValueError:
        raise click.BadParameter("expected comma-separated positive integers") from None
    if not items or any(i <= 0 for i in items):
        raise click.BadParameter("expected comma-separated positive integers")
    return items


def _choices(allowed):
    def check(ctx, param, value):
        if value is None:
            return None
        items = workload.split_list(value)
        bad = [i for i in items if i not in allowed]
        if bad or not items:
            raise click.BadParameter(f"unknown {', '.join(bad) or 'value'}; choose from {', '.join(allowed)}")
        return items
    return check


def _axes(ctx, param, values):
    """--axis NAME=V,V,... (repeatable) → {NAME: (V, ...)}."""
    out: dict[str, tuple[int, ...]] = {}
    for value in values or ():
        name, sep, numbers = value.partition("=")
        if not sep or not name.strip():
            raise click.BadParameter(f"{value!r}: expected NAME=V[,V...]")
        out[name.strip()] = _ints(ctx, param, numbers)
    return out


def cohort_table(rows: list[dict], *, dry_run: bool = False) -> list[str]:
    """Lines of 'axes dtype pass: impl median ms (rank) …', ranks dense by median within a cohort.

    A dry run (a CPU rehearsal) is never ranked, on the site or here: its lines list the medians
    fastest first, with no rank, and say so."""
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((tuple(r["axes"].items()), r["dtype"], r["pass"]), []).append(r)
    lines = []
    for (axes, dtype, timed_pass), members in sorted(groups.items()):
        timed = sorted((r for r in members if r["medianNs"] is not None), key=lambda r: r["medianNs"])
        ranks, last, rank = {}, None, 0
        for r in timed:
            if r["medianNs"] != last:
                rank, last = rank + 1, r["medianNs"]
            ranks[r["impl"]] = rank
        cells = [f"{r['impl']} {r['medianNs'] / 1e6:.4f} ms" + ("" if dry_run else f" (#{ranks[r['impl']]})") for r in timed]
        cells += [f"{r['impl']} {r['status']}" for r in members if r["medianNs"] is None]
        label = " ".join(f"{name} {value}" for name, value in axes)
        lines.append(f"{label} {dtype} {timed_pass}: " + " | ".join(cells) + (" (dry run: not ranked)" if dry_run else ""))
    return lines


@click.command(context_settings=CONTEXT, epilog=EPILOG)
@click.option("--operation", default="jsd", show_default=True,
              help="Operation to rerun: a name sitegen or an installed distribution's sitegen.operations entry point "
                   "registers, or pkg.module:Name.")
@click.option("--axis", "axes", multiple=True, callback=_axes, metavar="NAME=V,V",
              help="Comma-separated values of one of the operation's axes (repeatable) [default: the operation's sweep; "
                   "--interpret: its tiny sizes].")
@click.option("--tokens", callback=_ints, help="Same as --axis tokens=... (JSD: 1024,2048,4096,8192; --interpret: 8,16).")
@click.option("--vocab", callback=_ints, help="Same as --axis vocab=... (JSD: 128256; --interpret: 100).")
@click.option("--dtype", "dtypes", callback=_choices(workload.DTYPES), help="Comma-separated element types [default: the operation's, fp32,bf16].")
@click.option("--pass", "passes", callback=_choices(("forward", "backward", "full")),
              help="Comma-separated timed passes [default: forward,backward,full].")
@click.option("--impl", "impls", callback=lambda ctx, param, value: workload.split_list(value) if value else None,
              help="Comma-separated implementations: the operation's peers, installed sitegen.implementations entry "
                   "points, or pkg.module:Name [default: the operation's peers that are installed (some left out "
                   "under --interpret); what is left out is named on stderr].")
@click.option("--like", "like_id", metavar="RUN_ID",
              help="Rerun this run (name or digest in --records) under its own protocol family "
                   "(--interpret: at the interpreter's sizes, with no verdict).")
@click.option("--records", type=click.Path(path_type=Path, file_okay=False), default=Path("records"), show_default=True,
              help="Registry to find --like runs in.")
@click.option("--out", type=click.Path(path_type=Path, file_okay=False),
              help="Registry to write runs and their shared documents into, never overwriting "
                   "[default: records; --interpret: a new scratch folder, named on stderr].")
@click.option("--interpret", is_flag=True, help="Dry run on the CPU under Triton's interpreter at tiny sizes (never Verified).")
@click.option("--processes", type=click.IntRange(1, 16), default=PROCESSES, show_default=True,
              help="Processes the measurement is repeated in, for each implementation apart (--like: as the record's "
                   "protocol says).")
@click.option("--self-test", "self_test", is_flag=True, help="Check that planted cheating implementations are rejected, then exit (writes nothing).")
@click.option("--quiet", is_flag=True, help="No progress display and no per-case log lines on stderr.")
@click.option("--json", "as_json", is_flag=True, help="Print a machine-readable summary on stdout.")
@click.option("--ray", "ray_address", metavar="ADDRESS",
              help="Run on a Ray cluster's GPUs: 'auto' (a running cluster), 'local' (start one here) or its address.")
@click.option("--gpus", "products", callback=lambda ctx, param, value: workload.split_list(value) if value else None,
              metavar="PRODUCTS", help="With --ray: comma-separated GPU products, e.g. H100,H200 [default: every one the cluster has].")
@click.option("--replicas", type=click.IntRange(1, 64), default=1, show_default=True,
              help="With --ray: distinct GPUs of each product that measure every case.")
@click.option("--key", type=click.Path(path_type=Path, dir_okay=False),
              help="Sign every run written with this OpenSSH Ed25519 private key (sitegen keygen, ssh-keygen -t ed25519); "
                   "a registry shows a rerun as Verified only when a key its sitegen.toml trusts signed it.")
def rerun(**options):
    """Time an operation's implementations (default: JSD, the bundled kernel and its peers) on the
    local GPU under a published protocol.

    Every implementation first passes a correctness gate against a float64 reference; each
    case is timed with CUDA events (L2 flushed, fresh inputs) in several processes; integrity
    checks refuse implausible times. One BenchmarkRun per case and implementation is written
    into --out, only if at least one case was measured; progress goes to stderr.
    """
    as_json, quiet = options.pop("as_json"), options.pop("quiet")
    try:
        _rerun(planner.RerunRequest(**options), as_json=as_json, quiet=quiet)
    except InputError as exc:
        # Here, not only in sitegen.cli.main's group: `python -m sitegen.rerun` runs this command alone.
        for problem in exc.problems:
            click.echo(problem.line(), err=True)
        if as_json:
            click.echo(json.dumps({"ok": False, "problems": [p.as_dict() for p in exc.problems]}, indent=2, sort_keys=True))
        sys.exit(1)


def _say(line: str) -> None:
    click.echo(line, err=True)


def _rerun(request: planner.RerunRequest, *, as_json: bool, quiet: bool) -> None:
    """Plan (sitegen.rerun.plan.request), run (sitegen.rerun.sweep, or the fleet), print."""
    started = planner.start(request)
    if request.self_test:
        from sitegen.rerun.selftest.run import run_apart

        report = run_apart(interpret=request.interpret)
        for line in report["lines"]:
            _say(line)
        if as_json:
            click.echo(json.dumps(report, indent=2, sort_keys=True))
        sys.exit(0 if report["ok"] else 1)

    from sitegen.core.progress import Progress, wanted
    from sitegen.rerun.sweep import run

    try:
        planned = planner.plan(request, started, say=_say)
    except planner.UsageProblem as exc:
        raise click.UsageError(str(exc)) from None
    if request.ray_address:
        _fleet(request.ray_address, planned.options(planned.fleet_out()), request.products, request.replicas, as_json)
    if not request.interpret:
        planner.require_cuda()
    with Progress(enabled=wanted(quiet)) as progress:
        summary = run(planned.options(planned.local_out(), progress=progress, quiet=quiet))
    summary["leftOut"] = planned.left_out
    for line in cohort_table(summary["runs"], dry_run=request.interpret):
        _say(line)
    for impl, reason in sorted(summary["unavailable"].items()):
        _say(f"{impl}: not available ({reason})")
    if "implementationNote" in summary:
        _say(summary["implementationNote"])
    if "verdict" in summary:
        _say(f"verdict vs {planned.like.run_name}: {summary['verdict']}")
    where = f"{summary['out']}, a scratch folder (--out chooses another)" if summary["scratch"] else summary["out"]
    _say(f"wrote {summary['written']} file(s) into {where} in {summary['elapsedS']} s")
    if summary["scratch"]:
        _say(f"see them with: sitegen build --records {summary['out']} --out {summary['out']}-site")
    if as_json:
        click.echo(json.dumps(summary, indent=2, sort_keys=True))


def _fleet(address, opts, products, replicas, as_json) -> None:
    from sitegen.rerun.fleet import report as fleetreport
    from sitegen.rerun.fleet.driver import run_fleet

    try:
        summary = run_fleet(address, opts, products, replicas)
    except KeyboardInterrupt:
        click.echo(f"cancelled: outstanding tasks stopped; nothing written into {opts.out}", err=True)
        sys.exit(130)
    for line in fleetreport.lines(summary["cases"]):
        click.echo(line, err=True)
    for gpu, verdict in sorted(summary.get("verdicts", {}).items()):
        click.echo(f"verdict on {gpu}: {verdict}", err=True)
    click.echo(f"wrote {summary['written']} file(s) into {opts.out} in {summary['elapsedS']} s", err=True)
    if as_json:
        click.echo(json.dumps(summary, indent=2, sort_keys=True))
    sys.exit(0 if summary["ok"] else 1)
