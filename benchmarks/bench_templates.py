"""Jinja against MiniJinja (Jinja's syntax, a Rust engine) on the record page, the page a build
makes once per run (issue 32, item 4: measure before choosing).

    .venv/bin/python benchmarks/bench_templates.py [--records records] [--runs 600] [--repeat 3]

Loads and indexes the registry and makes the first --runs record page models (untimed), then
renders each with sitegen's Jinja Renderer and with MiniJinja given the same template sources,
settings and globals, alternating them and the page models' making (best of --repeat, CPU
seconds of this process). It prints the share of pages MiniJinja renders to the same bytes, the
first difference or error, and the time per page of the model and of each engine (over the
pages both render). Needs `pip install minijinja`.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from sitegen.registry.config import load_config
from sitegen.registry.folder import open_registry
from sitegen.facts.index import build_index
from sitegen.site.pages.record_page import record_page
from sitegen.site.render import Renderer, _read_templates


def minijinja_renderer(jinja: Renderer):
    import minijinja

    env = minijinja.Environment(templates=_read_templates(), auto_escape_callback=lambda name: True,
                                undefined_behavior="strict", trim_blocks=True, lstrip_blocks=True,
                                keep_trailing_newline=True)
    env.add_function("value_columns", jinja.env.globals["value_columns"])

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
    chosen = index.runs[:: max(1, len(index.runs) // args.runs)][: args.runs]
    pages = [record_page(facts, index) for facts in chosen]
    jinja = Renderer("bench")
    mini = minijinja_renderer(jinja)

    same, same_but_slash, first_problem, rendered = 0, 0, None, []
    for page in pages:
        want = jinja.render("record.html", page)
        try:
            got = mini("record.html", page)
        except Exception as exc:  # the finding is which feature it lacks, not a crash of the benchmark
            first_problem = first_problem or f"{page.path}: {type(exc).__name__}: {str(exc)[:300]}"
            continue
        rendered.append(page)  # only pages both engines render are timed
        if got == want:
            same += 1
            continue
        # MiniJinja's HTML escaping also writes "/" as "&#x2f;" (Jinja's markupsafe leaves it).
        got = got.replace(b"&#x2f;", b"/")
        if got == want:
            same_but_slash += 1
        elif first_problem is None:
            at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
            first_problem = f"{page.path}: differs at byte {at}: jinja {want[at:at + 80]!r} minijinja {got[at:at + 80]!r}"
    print(f"record pages: {len(pages)} of {len(index.runs)} runs; MiniJinja renders {len(rendered)}, the same bytes for "
          f"{same} ({same / len(pages):.0%}), and for {same_but_slash} more once its '&#x2f;' is read as '/'")
    if first_problem:
        print(f"first difference or error: {first_problem}")

    def timed(render) -> float:
        start = time.process_time()
        for page in rendered:
            render("record.html", page)
        return time.process_time() - start

    def models() -> float:
        start = time.process_time()
        for facts in chosen:
            record_page(facts, index)
        return time.process_time() - start

    best = {"model": float("inf"), "jinja": float("inf"), "minijinja": float("inf")}
    for _ in range(args.repeat):
        best["model"] = min(best["model"], models())
        best["jinja"] = min(best["jinja"], timed(jinja.render))
        best["minijinja"] = min(best["minijinja"], timed(mini))
    per = {"model": best["model"] / len(chosen) * 1e3,
           **{k: best[k] / max(1, len(rendered)) * 1e3 for k in ("jinja", "minijinja")}}
    print(f"per record page: page model {per['model']:.3f} ms, jinja {per['jinja']:.3f} ms, minijinja "
          f"{per['minijinja']:.3f} ms (minijinja / jinja = {per['minijinja'] / per['jinja']:.2f}; Jinja's share of "
          f"model + render {per['jinja'] / (per['model'] + per['jinja']):.0%}; best of {args.repeat}, CPU time)")


if __name__ == "__main__":
    main()
