"""Count sitegen's import graph: circles, the modules sitegen/ holds flat, and each module's fan-out.

    python3 benchmarks/import_graph.py [--limit 20] > benchmarks/results/import_graph.txt

Every import counts, function-level ones included (grimp's graph, the one import-linter checks the
layer contracts on). Prints the import circles between modules (strongly connected components of
more than one module), the modules sitegen/ holds outside packages, and the modules that import the
most sitegen modules. Exits 1 if there is a circle, more than --flat flat modules, or a module
importing more than --limit sitegen modules (issue 46's bounds).
"""

from __future__ import annotations

import argparse
import sys

import grimp


def circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=20, help="most sitegen modules one module may import")
    ap.add_argument("--flat", type=int, default=5, help="most modules sitegen/ may hold outside packages")
    ap.add_argument("--top", type=int, default=15, help="modules listed by fan-out")
    args = ap.parse_args()
    graph = grimp.build_graph("sitegen", include_external_packages=False)
    modules = sorted(graph.modules)
    packages = {m.rpartition(".")[0] for m in modules if "." in m}
    flat = [m for m in modules if m.count(".") == 1 and m not in packages]
    fan_out = sorted(((len(graph.find_modules_directly_imported_by(m)), m) for m in modules), reverse=True)
    found = circles(graph)

    print(f"sitegen: {len(modules)} modules, {sum(len(graph.find_modules_directly_imported_by(m)) for m in modules)} imports between them")
    print(f"\nimport circles: {len(found)}")
    for component in found:
        print("  " + " <-> ".join(component))
    print(f"\nmodules directly in sitegen/ (not packages): {len(flat)}")
    for m in flat:
        print(f"  {m}")
    print(f"\nmost sitegen modules imported by one module (limit {args.limit}):")
    for count, m in fan_out[:args.top]:
        print(f"  {count:3d}  {m}")
    over = [m for count, m in fan_out if count > args.limit]
    ok = not found and len(flat) <= args.flat and not over
    print(f"\n{'ok' if ok else 'NOT ok'}: {len(found)} circle(s), {len(flat)} flat module(s) (at most {args.flat}), "
          f"{len(over)} module(s) over {args.limit} imports")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
