"""Jinja against MiniJinja (Jinja's syntax, a Rust engine) on the record page, the page a build
makes once per run (issue 32, item 4: measure before choosing).

    .venv/bin/python benchmarks/bench_templates.py [--records records] [--runs 600] [--repeat 3]

Loads and indexes the registry and makes the first --runs record page models (untimed), then
renders each with sitegen's Jinja Renderer and with MiniJinja given the same template sources,
settings and globals, alternating the two (best of --repeat, CPU seconds of this process). It
prints the share of pages MiniJinja renders to the same bytes, the first difference or error,
and the time per page of each, with the ratio. Needs `pip install minijinja`.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from sitegen.config import load_config
from sitegen.registry import open_registry
from sitegen.site.index import build_index
from sitegen.site.record_page import record_page
from sitegen.site.render import Renderer, _read_templates


def minijinja_renderer(jinja: Renderer):
    import minijinja

    env = minijinja.Environment(templates=_read_templates(), auto_escape_callback=lambda name: True,
                                undefined_behavior="strict", trim_blocks=True, lstrip_blocks=True,
                                keep_trailing_newline=True)
    for name, value in jinja.env.globals.items():
        if callable(value) and name == "value_columns":
            env.add_function(name, value)

    def render(template: str, page) -> bytes:
        root = "../" * page.path.count("/")
        return env.render_template(
            template, page=page, root=root, url=lambda href: href if href.startswith(("http://", "https://", "#")) else root + href,
            site_title=jinja.site_title, nav_pages=jinja.nav, search=jinja.search,
            feed=None, description=None, sweep_charts=[], where=None).encode("utf-8")

    return render


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=Path, default=Path("records"))
    parser.add_argument("--runs", type=int, default=600)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    index = build_index(open_registry(args.records), load_config(args.records))
    pages = [record_page(facts, index) for facts in index.runs[:: max(1, len(index.runs) // args.runs)][: args.runs]]
    jinja = Renderer("bench")
    mini = minijinja_renderer(jinja)

    same, same_but_slash, first_problem = 0, 0, None
    for page in pages:
        want = jinja.render("record.html", page)
        try:
            got = mini("record.html", page)
        except Exception as exc:  # the finding is which feature it lacks, not a crash of the benchmark
            first_problem = first_problem or f"{page.path}: {type(exc).__name__}: {str(exc)[:300]}"
            continue
        if got == want:
            same += 1
            continue
        # MiniJinja's HTML escaping also writes "/" as "&#x2f;" (Jinja's markupsafe leaves it).
        got = got.replace(b"&#x2f;", b"/")
        if got == want:
            same_but_slash += 1
        elif first_problem is None:
            at = next(i for i, (a, b) in enumerate(zip(got, want)) if a != b) if len(got) != len(want) or got != want else 0
            first_problem = f"{page.path}: differs at byte {at}: jinja {want[at:at + 80]!r} minijinja {got[at:at + 80]!r}"
    print(f"record pages: {len(pages)} of {len(index.runs)} runs; MiniJinja gives the same bytes for {same} "
          f"({same / len(pages):.0%}), and for {same_but_slash} more once its '&#x2f;' is read as '/'")
    if first_problem:
        print(f"first difference or error: {first_problem}")

    def timed(render) -> float:
        start = time.process_time()
        for page in pages:
            try:
                render("record.html", page)
            except Exception:
                pass
        return time.process_time() - start

    best = {"jinja": float("inf"), "minijinja": float("inf")}
    for _ in range(args.repeat):
        best["jinja"] = min(best["jinja"], timed(jinja.render))
        best["minijinja"] = min(best["minijinja"], timed(mini))
    per = {k: v / len(pages) * 1e3 for k, v in best.items()}
    print(f"per record page: jinja {per['jinja']:.3f} ms, minijinja {per['minijinja']:.3f} ms "
          f"(minijinja / jinja = {per['minijinja'] / per['jinja']:.2f}; best of {args.repeat}, CPU time)")


if __name__ == "__main__":
    main()
