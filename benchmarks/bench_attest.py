"""One `attest` on the bundled registry: the rebuild it costs against a cold build, in one run.

    python3 benchmarks/bench_attest.py --work /dev/shm/bench-attest --repeat 3 \
        --out benchmarks/results/attest_2core

Copies records/ into WORK (untimed), then per repeat: a cold ``sitegen build`` into a new
folder, a no-op build over it, one ``sitegen attest`` of a run (a different run each
repeat) and the build after it; with and without search. Each time is a fresh process
(os.wait4, wall seconds). Only ratios from the same run mean anything on a shared machine.
Issue 32's target: rebuild after one attest at most 25% of a cold build and at most 3 s.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(command: list[str]) -> float:
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, _ = os.wait4(process.pid, 0)
    if status:
        raise SystemExit(f"failed: {' '.join(command)}\n{process.stderr.read().decode()}")
    return time.perf_counter() - start


def as_installed() -> None:
    """Time sitegen as pip installs it, its modules compiled once (pip writes the .pyc files at
    install), not compiled again by every timed command as a checkout run under
    PYTHONDONTWRITEBYTECODE does (about 115 modules, 0.2-0.3 s a command on 2 cores)."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "sitegen")], check=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--work", type=Path, default=Path("/dev/shm/bench-attest"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--search", choices=("both", "on", "off"), default="both")
    args = parser.parse_args()
    as_installed()
    shutil.rmtree(args.work, ignore_errors=True)
    records = args.work / "records"
    shutil.copytree(ROOT / "records", records, ignore=shutil.ignore_patterns(".*"))
    sitegen = [sys.executable, "-m", "sitegen"]
    runs = sorted(p.stem for p in (records / "runs").rglob("*.json"))
    rows = []
    for search in {"both": (False, True), "on": (True,), "off": (False,)}[args.search]:
        flag = [] if search else ["--no-search"]
        for n in range(args.repeat):
            site = args.work / f"site-{search}-{n}"
            build = [*sitegen, "build", "--records", str(records), "--out", str(site), "--quiet", *flag]
            cold = timed(build)
            noop = timed(build)
            run = runs[(n * 997 + search * 31) % len(runs)]
            attest = timed([*sitegen, "attest", run, "--kind", "reproduced", "--note", f"repeat {n}",
                            "--date", "2026-12-01", "--records", str(records)])
            rebuild = timed(build)
            rows.append({"search": search, "cold_s": cold, "noop_s": noop, "attest_s": attest, "rebuild_s": rebuild})
            print(f"search={'on ' if search else 'off'} cold {cold:6.1f} s  no-op {noop:5.2f} s ({noop / cold:5.1%})"
                  f"  attest {attest:4.2f} s  rebuild {rebuild:5.2f} s ({rebuild / cold:5.1%})", flush=True)
    lines = ["search  cold_s  noop_s  noop/cold  attest_s  rebuild_s  rebuild/cold"]
    for r in rows:
        lines.append(f"{'on' if r['search'] else 'off':6} {r['cold_s']:7.1f} {r['noop_s']:7.2f} {r['noop_s'] / r['cold_s']:9.1%}"
                     f" {r['attest_s']:9.2f} {r['rebuild_s']:10.2f} {r['rebuild_s'] / r['cold_s']:12.1%}")
    text = "\n".join(lines) + f"\n(cpus: {os.cpu_count()}; registry: records/ with {len(runs):,} runs)\n"
    print(text)
    if args.out:
        args.out.with_suffix(".txt").write_text(text)
        args.out.with_suffix(".json").write_text(json.dumps(rows, indent=1) + "\n")
    shutil.rmtree(args.work, ignore_errors=True)


if __name__ == "__main__":
    main()
