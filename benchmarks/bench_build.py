"""Time ``sitegen build`` against Hugo on registries of N runs, all within one run.

    python3 benchmarks/bench_build.py --runs 10000 60000 --work /dev/shm/bench \
        --out benchmarks/results/build
    python3 benchmarks/bench_build.py --sizes records --work /dev/shm/bench --out benchmarks/results/sizes

--sizes RECORDS builds that registry once, with search, and prints only what a static host is
asked to take (issue 49): files and MB per top-level folder and per 1,000 runs, the largest
files, each target met or missed. Nothing else runs.

For each N: make a synthetic registry (benchmarks/make_registry.py, untimed) and a Hugo
site of the same page count (one Markdown page per run page with similar front matter
and a 15-field table), then time, alternating the two tools so that load from other
users of a shared machine hits both alike:

- cold: ``sitegen build`` into a new folder, then ``hugo`` into a new folder;
- no-op: ``sitegen build`` again over the site it built;
- cold with search: ``sitegen build`` with Pagefind into another new folder;
- one edit: one run's latency changed by 1%, then ``sitegen lock`` plus ``sitegen build``.
  Before the edit, an untimed ``sitegen lock`` of the unchanged registry fills the digest
  cache, as the lock that recorded the registry before the edit would have (each N gets a
  cache folder of its own under WORK, emptied first).

The registry of N runs is made once into WORK/pristine-N (reused by later runs) and
copied for each run, since the one-edit step changes it.

Each time is a fresh process, measured with os.wait4: wall seconds and the peak resident
memory of the largest process (with worker processes, the largest one; their pages are
shared copy-on-write). Only ratios measured in the same run are meaningful on a shared
machine; absolute seconds depend on the machine's load. Beside the times, what a static host
is asked to take (issue 49): the site's files and bytes with and without search, per run, and
its largest file. Prints a table, the ratios and
the log-log slope of cold build time between the smallest and largest N; writes
OUT.txt and OUT.json.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_registry import make_registry  # noqa: E402

SITEGEN = [sys.executable, "-m", "sitegen"]
HUGO_CONFIG = 'baseURL = "https://example.org/"\ntitle = "bench"\ndisableKinds = ["taxonomy", "term", "RSS", "sitemap"]\n'
HUGO_SINGLE = """<!doctype html><html><head><title>{{ .Title }}</title></head><body>
<h1>{{ .Title }}</h1><p>{{ .Params.implementation }} · {{ .Params.operation }} · {{ .Params.gpu }}</p>
{{ .Content }}</body></html>
"""
HUGO_LIST = """<!doctype html><html><head><title>{{ .Title }}</title></head><body><h1>{{ .Title }}</h1>
<ul>{{ range .Pages }}<li><a href="{{ .RelPermalink }}">{{ .Title }}</a></li>{{ end }}</ul></body></html>
"""
FIELDS = ("implementation", "operation", "workload", "gpu", "pass", "status", "level", "median", "p20", "p80",
          "protocol", "environment", "observed", "digest", "source")


def timed(command: list[str], cwd: Path | None = None) -> tuple[float, int]:
    """Wall seconds and peak RSS (bytes) of one command; exit on failure."""
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    error = process.stderr.read().decode(errors="replace")
    process.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(map(str, command))} failed:\n{error}")
    return wall, usage.ru_maxrss * 1024


def hugo_site(registry: Path, pages: int, folder: Path) -> None:
    """A Hugo project of ``pages`` Markdown pages shaped like sitegen's run pages."""
    (folder / "layouts" / "_default").mkdir(parents=True)
    (folder / "hugo.toml").write_text(HUGO_CONFIG)
    (folder / "layouts" / "_default" / "single.html").write_text(HUGO_SINGLE)
    (folder / "layouts" / "_default" / "list.html").write_text(HUGO_LIST)
    runs = sorted((registry / "runs").rglob("*.json"))
    for i in range(pages):
        run = json.loads(runs[i % len(runs)].read_bytes())
        spec, name = run["spec"], run["metadata"]["name"] + (f"-{i // len(runs)}" if i >= len(runs) else "")
        section = folder / "content" / runs[i % len(runs)].parent.name
        section.mkdir(parents=True, exist_ok=True)
        latency = (spec.get("timing") or {}).get("latencyNs", {})
        values = [name, runs[i % len(runs)].parent.name, spec["workloadDigest"][7:19], spec["environmentDigest"][7:19],
                  spec.get("timedPass", "forward"), spec["status"], "Reported", latency.get("median", "—"),
                  latency.get("p20", "—"), latency.get("p80", "—"), spec["protocolDigest"][7:19],
                  spec["environmentDigest"][7:19], spec["observedAt"], spec["implementationDigest"], "bench"]
        table = "| field | value |\n|---|---|\n" + "".join(f"| {k} | {v} |\n" for k, v in zip(FIELDS, values))
        front = (f'---\ntitle: "{name}"\ndate: {spec["observedAt"]}\nimplementation: "{values[0]}"\n'
                 f'operation: "{values[1]}"\ngpu: "{values[3]}"\n---\n\n')
        (section / f"{name}.md").write_text(front + table)


def edit_one_run(registry: Path) -> None:
    """Scale one timed run's latencies by 1%: a real spec change that keeps quantile order."""
    for path in sorted((registry / "runs").rglob("*.json")):
        run = json.loads(path.read_bytes())
        timing = run["spec"].get("timing")
        if timing and "samplesNs" not in timing:
            timing["latencyNs"] = {k: round(v * 1.01) for k, v in timing["latencyNs"].items()}
            for m in run["spec"].get("measurements") or []:
                if m["metric"] == "latency":
                    m["value"] = round(m["value"] * 1.01)
            path.write_text(json.dumps(run, indent=2, ensure_ascii=False) + "\n")
            return
    raise SystemExit(f"{registry}: no timed run to edit")


def _lock_readable(registry: Path) -> bool:
    """Whether this sitegen reads the registry's lock (before issue 11, none over 4 MiB).

    If not, the builds run without a lock, and the one-edit step still times `sitegen
    lock`, then sets its lock aside: the table marks such rows.
    """
    from sitegen.core.problems import InputError
    from sitegen.registry.folder import read_lock

    try:
        read_lock(registry)
    except InputError:
        return False
    return True


def footprint(site: Path) -> dict:
    """What a host is asked to take: files, bytes (apparent sizes) and the largest file, with sitegen's own
    bookkeeping (.sitegen-*, which a deploy may leave out) counted apart."""
    files = bytes_ = own_files = own_bytes = 0
    biggest = (0, "")
    for path in site.rglob("*"):
        if path.is_file():
            size, name = path.stat().st_size, path.relative_to(site).as_posix()
            if name.startswith(".sitegen"):
                own_files, own_bytes = own_files + 1, own_bytes + size
                continue
            files, bytes_ = files + 1, bytes_ + size
            biggest = max(biggest, (size, name))
    return {"files": files, "bytes": bytes_, "own_files": own_files, "own_bytes": own_bytes,
            "largest": biggest[1], "largest_bytes": biggest[0]}


def largest(site: Path) -> tuple[str, int]:
    sizes = [(p.stat().st_size, p.relative_to(site).as_posix()) for p in site.rglob("*") if p.is_file()]
    size, name = max(sizes)
    return name, size


def by_folder(site: Path) -> dict[str, dict]:
    """Files and bytes (apparent sizes) per top-level folder ("/" for files at the root), less sitegen's own lists."""
    folders: dict[str, dict] = {}
    for path in site.rglob("*"):
        if path.is_file():
            parts = path.relative_to(site).parts
            if parts[0].startswith(".sitegen"):
                continue  # sitegen's own lists, which a deploy leaves out (footprint counts them apart)
            top = parts[0] + "/" if len(parts) > 1 else "/"
            entry = folders.setdefault(top, {"files": 0, "bytes": 0})
            entry["files"] += 1
            entry["bytes"] += path.stat().st_size
    return dict(sorted(folders.items(), key=lambda item: -item[1]["bytes"]))


def sizes(records: Path, work: Path, top: int = 10) -> str:
    """Issue 49's targets for one registry, built once with search: files and MB per folder, per run
    and per 1,000 runs, the largest files. Sizes do not depend on the machine's load; no times."""
    site = work / "site-sizes"
    shutil.rmtree(site, ignore_errors=True)
    timed([*SITEGEN, "build", "--records", str(records), "--out", str(site), "--quiet"])
    runs = sum(1 for p in (site / "runs").iterdir() if (p / "index.html").is_file())
    folders = by_folder(site)
    total = footprint(site)
    cap_mb, cap_for = (1000, "60,000 runs") if runs >= 60000 else (300, "the bundled registry")
    lines = [f"sitegen build --records {records} (with search): {runs:,} run pages", "",
             "| folder | files | MB | files per 1,000 runs | MB per 1,000 runs |", "|---|---|---|---|---|"]
    for name, f in folders.items():
        lines.append(f"| {name} | {f['files']:,} | {f['bytes'] / 1e6:.1f} | {1000 * f['files'] / runs:,.0f} | {1000 * f['bytes'] / runs / 1e6:.1f} |")
    lines.append(f"| **total** | **{total['files']:,}** | **{total['bytes'] / 1e6:.1f}** | "
                 f"**{1000 * total['files'] / runs:,.0f}** | **{1000 * total['bytes'] / runs / 1e6:.1f}** |")
    biggest = sorted(((p.stat().st_size, p.relative_to(site).as_posix()) for p in site.rglob("*")
                      if p.is_file() and not p.relative_to(site).as_posix().startswith(".sitegen")), reverse=True)[:top]
    lines += ["", f"sitegen's own lists (.sitegen-*, not deployed): {total['own_files']} files, {total['own_bytes'] / 1e6:.1f} MB",
              "", "largest files: " + ", ".join(f"{name} {size / 1e6:.2f} MB" for size, name in biggest), "",
              "issue 49's targets:",
              # Issue 49: the bundled registry at most 300 MB, a 60,000-run one at most 1 GB.
              f"- at most {cap_mb:,} MB ({cap_for}): {total['bytes'] / 1e6:.1f} MB, {'met' if total['bytes'] <= cap_mb * 1e6 else 'missed'}",
              f"- at most 4 files per run: {total['files'] / runs:.2f}, {'met' if total['files'] <= 4 * runs else 'missed'}",
              f"- no file over 2 MB: largest {total['largest']} {total['largest_bytes'] / 1e6:.2f} MB, "
              f"{'met' if total['largest_bytes'] <= 2e6 else 'missed'}"]
    shutil.rmtree(site, ignore_errors=True)
    return "\n".join(lines)


def bench(runs: int, work: Path) -> dict:
    registry, hugo, site = work / f"registry-{runs}", work / f"hugo-{runs}", work / f"site-{runs}"
    for path in (registry, hugo, site):
        shutil.rmtree(path, ignore_errors=True)
    pristine = work / f"pristine-{runs}"
    if not pristine.exists():
        # Kept between runs of the benchmark: making 60k runs takes minutes, and the same
        # N gives the same bytes.
        make_registry(runs, pristine)
    shutil.copytree(pristine, registry)
    cache = work / f"cache-{runs}"
    shutil.rmtree(cache, ignore_errors=True)
    os.environ["SITEGEN_CACHE_DIR"] = str(cache)
    lock_readable = _lock_readable(registry)
    if not lock_readable:
        (registry / "digests.lock").unlink()
    # Hugo indexes nothing for search, so neither does sitegen here; a build without a lock
    # must say so (issue 11).
    build = [*SITEGEN, "build", "--records", str(registry), "--out", str(site), "--no-search",
             *([] if lock_readable else ["--unlocked"])]
    cold, cold_rss = timed(build)
    pages = sum(1 for p in site.rglob("*.html"))
    plain = footprint(site)
    # The same registry with search on, into its own folder: what a host gets, Pagefind's files included.
    searched_site = work / f"site-search-{runs}"
    shutil.rmtree(searched_site, ignore_errors=True)
    at = build.index("--out")
    searched, searched_rss = timed([*build[:at + 1], str(searched_site), *[a for a in build[at + 2:] if a != "--no-search"]])
    size_search = footprint(searched_site)
    shutil.rmtree(searched_site, ignore_errors=True)
    hugo_site(registry, pages, hugo)
    hugo_s, hugo_rss = timed(["hugo", "--quiet", "-d", str(work / f"hugo-public-{runs}")], cwd=hugo)
    files_before = sum(1 for p in site.rglob("*") if p.is_file())
    noop, noop_rss = timed(build)
    lock_full, _ = timed([*SITEGEN, "lock", str(registry)])
    edit_one_run(registry)
    lock, _ = timed([*SITEGEN, "lock", str(registry)])
    if not lock_readable:
        (registry / "digests.lock").unlink()
    edit, edit_rss = timed(build)
    name, size = largest(site)
    html_name, html_size = max(
        ((p.stat().st_size, p.relative_to(site).as_posix()) for p in site.rglob("*.html")), default=(0, ""))[::-1]
    shutil.rmtree(work / f"hugo-public-{runs}", ignore_errors=True)
    return {
        "runs": runs, "lock_checked": lock_readable, "pages": pages, "files": files_before, "cold_s": cold, "cold_rss": cold_rss,
        "hugo_s": hugo_s, "hugo_rss": hugo_rss, "ratio": cold / hugo_s,
        "noop_s": noop, "noop_pct": 100 * noop / cold, "lock_uncached_s": lock_full, "lock_s": lock, "edit_build_s": edit,
        "edit_pct": 100 * (lock + edit) / cold, "peak_rss": max(cold_rss, noop_rss, edit_rss),
        "cold_search_s": searched, "cold_search_rss": searched_rss, "search_ratio": searched / hugo_s,
        "site": plain, "site_search": size_search,
        "largest_file": name, "largest_file_bytes": size, "largest_html": html_name, "largest_html_bytes": html_size,
    }


def table(results: list[dict]) -> str:
    lines = [
        "| runs | pages | sitegen cold s | peak RSS MiB | Hugo s | sitegen / Hugo | no-op % | one-edit (lock+build) % | largest HTML KB | largest file KB |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['runs']:,}{'' if r['lock_checked'] else ' (no lock)'} | {r['pages']:,} | {r['cold_s']:.2f} | {r['peak_rss'] / 2**20:.0f} | {r['hugo_s']:.2f} | "
            f"{r['ratio']:.2f}× | {r['noop_pct']:.1f} | {r['edit_pct']:.1f} | {r['largest_html_bytes'] / 1000:.0f} "
            f"({r['largest_html']}) | {r['largest_file_bytes'] / 1000:.0f} ({r['largest_file']}) |"
        )
    lines += [
        "",
        "| runs | files (no search) | MB | files with search | MB with search | files per run | KB per run | largest file KB | sitegen with search s | with search / Hugo |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        plain, full = r["site"], r["site_search"]
        lines.append(
            f"| {r['runs']:,} | {plain['files']:,} | {plain['bytes'] / 1e6:.1f} | {full['files']:,} | {full['bytes'] / 1e6:.1f} | "
            f"{full['files'] / r['runs']:.2f} | {full['bytes'] / r['runs'] / 1e3:.1f} | {full['largest_bytes'] / 1e3:.0f} ({full['largest']}) | "
            f"{r['cold_search_s']:.2f} | {r['search_ratio']:.2f}× |"
        )
    lines.append("\nfiles and MB: apparent sizes of what a host serves; sitegen's own lists (.sitegen-*) are left out: "
                 + ", ".join(f"{r['site_search']['own_files']} files, {r['site_search']['own_bytes'] / 1e6:.1f} MB at {r['runs']:,}" for r in results))
    if len(results) > 1:
        a, b = results[0], results[-1]
        slope = math.log(b["cold_s"] / a["cold_s"]) / math.log(b["runs"] / a["runs"])
        if not all(r["lock_checked"] for r in results):
            lines.append("\n(no lock): the sitegen measured (before issue 11) refused a digests.lock over 4 MiB, so those builds ran without one")
        lines.append(f"\nlog-log slope of cold build time {a['runs']:,} -> {b['runs']:,} runs: {slope:.3f}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, nargs="+", default=[10000, 60000])
    parser.add_argument("--work", type=Path, default=Path("/dev/shm/sitegen-bench"), help="scratch folder (tmpfs)")
    parser.add_argument("--out", type=Path, help="write OUT.txt and OUT.json")
    parser.add_argument("--sizes", type=Path, metavar="RECORDS",
                        help="only build RECORDS once with search and print files and MB per folder against issue 49's targets")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.sizes:
        text = f"command: python3 benchmarks/bench_build.py --sizes {args.sizes}\n\n" + sizes(args.sizes, args.work) + "\n"
        print(text)
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            args.out.with_suffix(".txt").write_text(text)
        return
    hugo = subprocess.run(["hugo", "version"], capture_output=True, text=True).stdout.strip()
    results = []
    for runs in sorted(args.runs):
        results.append(bench(runs, args.work))
        print(json.dumps(results[-1]), file=sys.stderr)
    header = (f"{platform.node()} · {os.cpu_count()} CPUs · Python {platform.python_version()} · {hugo}\n"
              f"command: python3 benchmarks/bench_build.py --runs {' '.join(map(str, args.runs))}\n")
    text = header + "\n" + table(results) + "\n"
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.with_suffix(".txt").write_text(text)
        args.out.with_suffix(".json").write_text(json.dumps({"hugo": hugo, "results": results}, indent=1) + "\n")


if __name__ == "__main__":
    main()
