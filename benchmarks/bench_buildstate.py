"""Time two sitegens' incremental paths against each other, step by step alternated, within one run.

    python3 benchmarks/bench_buildstate.py --before /work/wt-base/.venv/bin/python \
        --after .venv/bin/python --runs 10000 --rounds 3 --work /dev/shm/bench-state \
        --out benchmarks/results/buildstate_2core

Each sitegen is named by a Python interpreter that imports it (a virtual environment
of its checkout); commands run from WORK, so neither picks up the other's checkout from
the working folder. For each round, each sitegen gets a fresh copy of the same synthetic
registry (benchmarks/make_registry.py, made once into WORK/pristine-N), an empty cache
folder and no site, then every step is timed for one sitegen and at once for the other,
the one going first alternating by round, so that load from other users of a shared
machine hits both alike:

- cold: ``build --no-search`` into a new folder (an empty cache: every file loaded);
- no-op: the same build again;
- lock: the first ``lock`` after the build (lock's entries not yet made);
- verify: ``verify`` after it (every file's entry made);
- edit lock and edit build: one run's latency changed by 1%, then ``lock`` and ``build``.

Each time is a fresh process's wall seconds (os.wait4). Prints each round's times, the
median of each step per sitegen with the ratio after/before, and the median of each
round's own ratio; only ratios within one run mean anything on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_build import edit_one_run, timed  # noqa: E402
from make_registry import make_registry  # noqa: E402

STEPS = ("cold", "noop", "lock", "verify", "edit_lock", "edit_build")


def _commands(python: str, registry: Path, site: Path) -> dict[str, list[str]]:
    build = [python, "-m", "sitegen", "build", "--records", str(registry), "--out", str(site), "--no-search", "--quiet"]
    lock = [python, "-m", "sitegen", "lock", str(registry)]
    return {"cold": build, "noop": build, "lock": lock, "verify": [python, "-m", "sitegen", "verify", str(registry)],
            "edit_lock": lock, "edit_build": build}


def one_round(pythons: dict[str, str], order: list[str], pristine: Path, work: Path) -> dict[str, dict[str, float]]:
    commands = {}
    for name, python in pythons.items():
        registry, site, cache = work / f"registry-{name}", work / f"site-{name}", work / f"cache-{name}"
        for path in (registry, site, cache):
            shutil.rmtree(path, ignore_errors=True)
        shutil.copytree(pristine, registry)
        commands[name] = (registry, _commands(python, registry, site), cache)
    times: dict[str, dict[str, float]] = {name: {} for name in pythons}
    for step in STEPS:
        for name in order:
            registry, steps, cache = commands[name]
            if step == "edit_lock":
                edit_one_run(registry)
            os.environ["SITEGEN_CACHE_DIR"] = str(cache)
            times[name][step] = timed(steps[step], cwd=work)[0]
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True, help="Python interpreter of the sitegen to compare against")
    parser.add_argument("--after", required=True, help="Python interpreter of the sitegen measured")
    parser.add_argument("--runs", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", type=Path, default=Path("/dev/shm/bench-state"), help="scratch folder (tmpfs)")
    parser.add_argument("--out", type=Path, help="write OUT.txt")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    pristine = args.work / f"pristine-{args.runs}"
    if not pristine.exists():
        make_registry(args.runs, pristine)
    pythons = {"before": args.before, "after": args.after}
    rounds = []
    lines = [f"{platform.node()} · {os.cpu_count()} CPUs · Python {platform.python_version()} · load {os.getloadavg()[0]:.1f}",
             f"command: python3 benchmarks/bench_buildstate.py --before {args.before} --after {args.after} "
             f"--runs {args.runs} --rounds {args.rounds} --work {args.work}", "",
             "| round | sitegen | " + " | ".join(STEPS) + " |", "|---|---|" + "---|" * len(STEPS)]
    for i in range(args.rounds):
        order = ["before", "after"] if i % 2 == 0 else ["after", "before"]
        rounds.append(one_round(pythons, order, pristine, args.work))
        for name in order:
            lines.append(f"| {i + 1} | {name} | " + " | ".join(f"{rounds[-1][name][s]:.2f}" for s in STEPS) + " |")
        print("\n".join(lines[-2:]), file=sys.stderr)
    # Each round's own ratio as well: the two of a round ran next to each other, so the
    # median of those ratios is less moved by load that comes and goes between rounds.
    lines += ["", f"median of {args.rounds} rounds, seconds; after/before of the medians, and the median of each round's ratio:", "",
              "| step | before | after | after/before | median round ratio (min–max) |", "|---|---|---|---|---|"]
    for step in STEPS:
        before = statistics.median(r["before"][step] for r in rounds)
        after = statistics.median(r["after"][step] for r in rounds)
        ratios = [r["after"][step] / r["before"][step] for r in rounds]
        lines.append(f"| {step} | {before:.2f} | {after:.2f} | {after / before:.3f} | "
                     f"{statistics.median(ratios):.3f} ({min(ratios):.2f}–{max(ratios):.2f}) |")
    text = "\n".join(lines) + f"\n\nload average at the end: {os.getloadavg()[0]:.1f}\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.with_suffix(".txt").write_text(text)


if __name__ == "__main__":
    main()
