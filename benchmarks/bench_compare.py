"""What the pre-rendered compare pages cost a build, against the operation pages made in the same loop.

    .venv/bin/python benchmarks/bench_compare.py [--records records] [--repeat 3]

Loads and indexes the registry once (untimed), then, alternating so that load from other
users of a shared machine hits both alike, makes and renders every operation's pages and
every compare page (model, HTML and JSON twin, as sitegen.site.operation_files does) without
writing them. Times are CPU seconds of this process (time.process_time), the best of
--repeat; only the ratio is meaningful across machines. Also prints the bound on the page
count: one compare page per ranked row after a cohort's first, never more than the ranked rows.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from sitegen.registry.config import load_config
from sitegen.registry.folder import open_registry
from sitegen.site.charts.views import sweep_charts
from sitegen.site.pages.compare import cohort_pairs, compare_page
from sitegen.facts.index import build_index
from sitegen.site.text.jsonout import to_json
from sitegen.site.pages.operation_page import operation_pages_with_runs
from sitegen.site.render import Renderer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=Path, default=Path("records"))
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    index = build_index(open_registry(args.records), load_config(args.records))
    renderer = Renderer("bench")

    def operations() -> int:
        made = 0
        for operation in index.operations:
            for page, shown in operation_pages_with_runs(operation, index):
                renderer.render("operation.html", page, sweep_charts=sweep_charts(shown))
                to_json(page)
                made += 1
        return made

    def comparisons() -> int:
        made = 0
        for operation in index.operations:
            for ahead, behind in cohort_pairs(index, operation.name):
                page = compare_page(ahead, behind)
                renderer.render("compare.html", page)
                to_json(page)
                made += 1
        return made

    best = {"operation pages": float("inf"), "compare pages": float("inf")}
    counts = {}
    for _ in range(args.repeat):
        for name, work in (("operation pages", operations), ("compare pages", comparisons)):
            start = time.process_time()
            counts[name] = work()
            best[name] = min(best[name], time.process_time() - start)
    ranked = sum(1 for f in index.runs if f.rank_label is not None)
    print(f"registry {args.records}: {len(index.runs):,} runs, {len(index.cohorts):,} cohorts, {ranked:,} ranked rows")
    for name, seconds in best.items():
        print(f"{name:16} {counts[name]:>7,} pages  {seconds:7.2f} s CPU  {1000 * seconds / max(counts[name], 1):6.2f} ms each")
    print(f"compare / operation pages: {best['compare pages'] / best['operation pages']:.2f}× the CPU time; "
          f"compare pages are {counts['compare pages'] / max(ranked, 1):.2f} of the ranked rows (bound: < 1)")


if __name__ == "__main__":
    main()
