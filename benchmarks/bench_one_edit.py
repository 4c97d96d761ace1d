"""One edit of the bundled registry (`sitegen lock` + `sitegen build` after one run file changed)
against a cold build, for this checkout and optionally a base one, alternated within one run.

    python3 benchmarks/bench_one_edit.py --base /dev/shm/base-src --edits 5 --work /dev/shm/bench-edit \
        --out benchmarks/results/one_edit

``--base`` is the root of another sitegen's source (say ``git archive BASE sitegen | tar -x -C DIR``),
run as ``PYTHONPATH=DIR python -m sitegen``; without it only this checkout is timed. Each side
gets its own copy of records/, build state (SITEGEN_CACHE_DIR) and site, as bench_build's one-edit
step does: a cold build (empty state, new folder), an untimed lock, then per edit one run's latency
scaled by 1% (bench_build.edit_one_run), a timed ``lock`` and a timed ``build --no-search``, the
sides taking turns so that load from other users of a shared machine hits both alike. At the end
each side's edited registry is built cold again into a new folder with an empty state: its files
must be byte for byte those of the incrementally built site (sitegen's own .sitegen-* lists aside).

Prints the cold builds, each edit's lock and build seconds, their medians, one edit as a share of
the mean cold build, and the load average (uptime) before and after; writes OUT.txt and OUT.json.
Modules are compiled once first, as pip installs them (bench_attest.as_installed).
"""

from __future__ import annotations

import argparse
import filecmp
import json
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_attest import as_installed  # noqa: E402
from bench_build import edit_one_run, timed  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SITEGEN = [sys.executable, "-m", "sitegen"]


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def same_site(a: Path, b: Path) -> list[str]:
    """Files (relative) that differ between two sites or exist in one only, sitegen's own lists left out."""
    def files(root: Path) -> set[str]:
        return {p.relative_to(root).as_posix() for p in root.rglob("*")
                if p.is_file() and not p.relative_to(root).parts[0].startswith(".sitegen")}

    left, right = files(a), files(b)
    differ = sorted(left ^ right)
    differ += sorted(f for f in left & right if not filecmp.cmp(a / f, b / f, shallow=False))
    return differ


class Side:
    def __init__(self, name: str, source: Path | None, work: Path):
        self.name, self.source = name, source
        self.registry, self.site, self.cache = work / f"registry-{name}", work / f"site-{name}", work / f"cache-{name}"
        self.locks: list[float] = []
        self.builds: list[float] = []
        self.cold: list[float] = []

    def run(self, *args: str) -> float:
        # Through env(1): bench_build.timed runs a command in this process's environment.
        where = [f"PYTHONPATH={self.source}"] if self.source is not None else ["-u", "PYTHONPATH"]
        return timed(["env", *where, f"SITEGEN_CACHE_DIR={self.cache}", *SITEGEN, *args])[0]

    def build(self, site: Path) -> float:
        return self.run("build", "--records", str(self.registry), "--out", str(site), "--no-search", "--quiet")

    def cold_build(self, site: Path) -> float:
        shutil.rmtree(self.cache, ignore_errors=True)
        shutil.rmtree(site, ignore_errors=True)
        seconds = self.build(site)
        self.cold.append(seconds)
        return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, help="another sitegen's source root, timed beside this checkout")
    parser.add_argument("--edits", type=int, default=5)
    parser.add_argument("--work", type=Path, default=Path("/dev/shm/sitegen-bench-edit"))
    parser.add_argument("--out", type=Path, help="write OUT.txt and OUT.json")
    args = parser.parse_args()
    as_installed()
    if args.base is not None:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(args.base / "sitegen")], check=True)
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    sides = ([Side("base", args.base.resolve(), args.work)] if args.base is not None else []) + [Side("new", None, args.work)]
    lines = [f"command: python3 benchmarks/bench_one_edit.py {' '.join(sys.argv[1:])}", f"before: {uptime()}"]
    for side in sides:
        shutil.copytree(ROOT / "records", side.registry, ignore=shutil.ignore_patterns(".*"))
    for side in sides:
        lines.append(f"{side.name}: cold build {side.cold_build(side.site):.2f} s")
        side.run("lock", str(side.registry))  # as the lock that recorded the registry before the edit
    for n in range(args.edits):
        for side in sides:
            edit_one_run(side.registry)
            side.locks.append(side.run("lock", str(side.registry)))
            side.builds.append(side.build(side.site))
            lines.append(f"{side.name}: edit {n + 1}: lock {side.locks[-1]:.2f} s  build {side.builds[-1]:.2f} s")
    results = []
    for side in sides:
        cold_site = args.work / f"cold-{side.name}"
        lines.append(f"{side.name}: cold build of the edited registry {side.cold_build(cold_site):.2f} s")
        differ = same_site(side.site, cold_site)
        cold = statistics.mean(side.cold)
        lock, build = statistics.median(side.locks), statistics.median(side.builds)
        results.append({"side": side.name, "cold_s": side.cold, "lock_s": side.locks, "build_s": side.builds,
                        "one_edit_pct": 100 * (lock + build) / cold, "differing_files": differ})
        lines.append(f"{side.name}: median lock {lock:.2f} s + median build {build:.2f} s = {lock + build:.2f} s"
                     f" = {100 * (lock + build) / cold:.1f}% of the mean cold build {cold:.2f} s;"
                     f" incremental site {'byte-identical to' if not differ else f'differs in {len(differ)} files from'} a cold one")
    lines.append(f"after: {uptime()}")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.with_suffix(".txt").write_text(text)
        args.out.with_suffix(".json").write_text(json.dumps(results, indent=1) + "\n")
    if any(r["differing_files"] for r in results):
        raise SystemExit("an incremental site differs from a cold build")


if __name__ == "__main__":
    main()
