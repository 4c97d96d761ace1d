"""Mutation testing of the modules that hold published rules, with mutmut (issue 30).

    nice -n 19 .venv/bin/python benchmarks/mutation.py [MODULE ...] [--changed] [--base main]

Each module runs on its own, in a scratch copy of the checkout (tracked and untracked files, so
uncommitted work counts; the checkout itself is never edited), against only the test files that
MODULES names for it, with one worker (the machine is shared). Results are merged into
benchmarks/results/mutation.md: per module killed/total and every survivor with its diff and the
reason benchmarks/mutation_explained.toml gives for it (a survivor without one reads UNEXPLAINED).

--changed runs only the modules the branch changes against --base, or whose test files it
changes: the fast subset a developer runs before stopping (a module takes 1-10 minutes).

mutmut records which tests reach each function in the test process. Code the tests reach only
through a subprocess would read "no tests" and survive, so the scratch copy's mutants/ folder is
put first on PYTHONPATH: a subprocess (a CLI run, a forked worker) imports the mutated module
too, and MUTANT_UNDER_TEST, which mutmut sets in the environment, selects the mutant there.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REPORT = REPO / "benchmarks" / "results" / "mutation.md"
EXPLAINED = REPO / "benchmarks" / "mutation_explained.toml"
SCRATCH = Path(os.environ.get("SITEGEN_MUTATION_SCRATCH", "/tmp/sitegen-mutation"))

RULES = "tests/rules/"
# module -> the test files meant for its rules (never the whole suite: hours on two cores).
MODULES: dict[str, list[str]] = {
    # The rules' own tests: each builds an index of a few runs (a fraction of a second), where
    # the site tests build whole sites (seconds each, 5-10 s a mutant on two shared cores).
    # The pairwise verdicts (separation, ratio_interval) and the tally of first places are read
    # by the compare pages, trends and the operation summary: their claims' tests, fast ones.
    "sitegen/facts/ranking.py": [RULES + "test_ranks.py", "tests/site/test_compare_claims.py", "tests/site/test_trends.py",
                                "tests/site/test_summary_claims.py"],
    "sitegen/facts/uncertainty.py": [RULES + "test_intervals.py", RULES + "test_ranks.py"],
    "sitegen/facts/evidence.py": [RULES + "test_evidence_levels.py", RULES + "test_places.py"],
    # sign's default set (the rerun journal) and verify --strict.
    "sitegen/trust/registrysigning.py": ["tests/trust/test_sign_journal.py", "tests/trust/test_signatures.py"],
    "sitegen/facts/roofline.py": [RULES + "test_roofline.py", "tests/foundation/test_roofline_fields.py"],
    "sitegen/rerun/checks/gate.py": [RULES + "test_gate.py", RULES + "test_gate_outputs.py", "tests/rerun/test_untrusted.py"],
    "sitegen/importers/table.py": ["tests/importers/test_table.py"],
    "sitegen/importers/tritonbench.py": ["tests/importers/test_tritonbench.py"],
    "sitegen/rerun/checks/handover.py": ["tests/rerun/test_judge_process.py"],
    "sitegen/rerun/checks/judging.py": [RULES + "test_gate.py", RULES + "test_gate_outputs.py", "tests/rerun/test_judge_process.py"],
    "sitegen/rules/stats.py": [RULES + "test_sampling_stats.py", "tests/rerun/test_checks.py", "tests/foundation/test_properties.py"],
    # Not test_evidence.py: it runs kernels under Triton's interpreter, tens of seconds a mutant
    # on a CPU; nor test_liger_losses.py (30 s a mutant of the gate's check), nor, for timedcheck,
    # test_untrusted.py (whole timed cases, seconds a mutant). They stay in CI.
    "sitegen/rerun/checks/timedcheck.py": ["tests/rerun/test_timedcheck_output.py", "tests/rerun/test_timedcheck_rules.py"],
    # Not test_untrusted.py for these two: it runs every check through whole timed cases, 6 s a
    # mutant (over half an hour for integrity.py); test_rerun_checks.py states the same rules on numbers.
    "sitegen/rules/integrity.py": [RULES + "test_rerun_thresholds.py", RULES + "test_rerun_checks.py",
                                   "tests/rerun/test_checks.py", "tests/rerun/test_throttleguard.py"],
    # Which NVML reasons count as throttling, moved out of the NVML module so that integrity (a rule)
    # reads no GPU code (issue 46): the same tests as integrity's.
    "sitegen/rules/throttling.py": [RULES + "test_rerun_thresholds.py", RULES + "test_rerun_checks.py",
                                    "tests/rerun/test_checks.py", "tests/rerun/test_throttleguard.py"],
    "sitegen/rerun/outcome/assemble.py": [RULES + "test_rerun_thresholds.py", RULES + "test_rerun_checks.py",
                                  "tests/rerun/test_checks.py"],
    "sitegen/rules/protocol.py": ["tests/rerun/test_protocol_settings.py", "tests/rerun/test_protocol_documents.py",
                                  "tests/rerun/test_passes.py", RULES + "test_gate.py"],
    # test_faults.py kills whole commands at every write point: minutes a mutant; it stays in CI.
    "sitegen/registry/transaction.py": [RULES + "test_registry_transaction.py", RULES + "test_crash_safety.py", "tests/adversarial/test_lock_after_kill.py"],
    "sitegen/site/engine/swap.py": [RULES + "test_site_swap.py", RULES + "test_crash_safety.py", "tests/adversarial/test_swap_fallback.py"],
    # test_outside_links.py runs sitegen in a subprocess whose working folder is a tmp folder:
    # there mutmut's recording finds no settings and the subprocess fails (the stats run stops).
    # test_input_files.py holds the same rules in process.
    "sitegen/core/inputfile.py": [RULES + "test_input_files.py", "tests/foundation/test_bad_corpus.py"],
    "sitegen/core/strictjson.py": ["tests/foundation/test_rfc8785.py", "tests/foundation/test_bad_corpus.py",
                              "tests/foundation/test_strictjson_limits.py"],
    "sitegen/core/digest.py": ["tests/foundation/test_rfc8785.py", "tests/foundation/test_canonical_fast.py"],
    # A build and a lock trust a file's stat only within these rules (issue 32).
    "sitegen/state/filestats.py": ["tests/foundation/test_filestats.py"],
    # The Liger importer's value parsing (extra_benchmark_config_str, x_value, sizes) is
    # ligercases.py; ligertables.py is data whose one function runs at import, which mutmut
    # cannot measure ("Unable to force test failures").
    "sitegen/importers/ligercases.py": ["tests/importers/test_liger_values.py", "tests/importers/test_mapping.py", "tests/importers/test_import.py"],
    # test_kernelbench.py imports all nine snapshots (a minute and a half a mutant); it stays in CI.
    # test_kernelbench_values.py checks a subset's documents against records/ byte for byte.
    "sitegen/importers/kernelbench.py": ["tests/importers/test_kernelbench_values.py", "tests/importers/test_kernelbench_mapping.py"],
}
# Folders the tests read besides sitegen/ and tests/ (mutmut copies those two itself).
ALSO_COPY = ["kernels", "templates", "records", "benchmarks"]
STATUS_KILLED = {"killed", "timeout", "segfault", "caught by type check"}


def _checkout_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, check=True,
                         capture_output=True).stdout.decode()
    return [p for p in out.split("\0") if p and (REPO / p).is_file()]


def _scratch(module: str) -> Path:
    """A copy of the checkout with mutmut's settings for this one module written in."""
    root = SCRATCH / re.sub(r"[^A-Za-z0-9]+", "-", module.removesuffix(".py"))
    if root.exists():
        shutil.rmtree(root)
    for rel in _checkout_files():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, target)
    settings = (root / "pyproject.toml").read_text()
    settings = re.sub(r"\n\[tool\.mutmut\].*?(?=\n\[|\Z)", "", settings, flags=re.S)
    quoted = lambda items: "[" + ", ".join(f'"{i}"' for i in items) + "]"  # noqa: E731
    settings += (
        "\n[tool.mutmut]\n"
        'source_paths = ["sitegen"]\n'
        f"only_mutate = {quoted([module])}\n"
        f"also_copy = {quoted(ALSO_COPY)}\n"
        f"pytest_add_cli_args_test_selection = {quoted(MODULES[module])}\n"
        'pytest_add_cli_args = ["-p", "no:cacheprovider"]\n'
    )
    (root / "pyproject.toml").write_text(settings)
    # Made now, not by mutmut: Python caches a PYTHONPATH entry that does not exist at start as
    # unusable, and sitegen would then be imported from the checkout, unmutated.
    (root / "mutants").mkdir()
    return root


def _mutmut(root: Path, *args: str, timeout: float | None = None) -> subprocess.CompletedProcess:
    # One OpenMP thread: mutmut forks a test process per mutant from a parent that has imported
    # torch, and a fork of a process with a live OpenMP pool hangs until mutmut's timeout. Those
    # hangs read "timeout", which counts as killed: gate.py's first run had 101 of them.
    env = dict(os.environ, PYTHONPATH=str(root / "mutants"), PYTHONDONTWRITEBYTECODE="1", OMP_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-c", "from mutmut.__main__ import cli; cli()", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=timeout)


def measure(module: str) -> dict:
    root = _scratch(module)
    t0 = time.monotonic()
    run = _mutmut(root, "run", "--max-children", "1")
    seconds = time.monotonic() - t0
    listing = _mutmut(root, "results", "--all", "true").stdout
    statuses = dict(re.findall(r"^\s*(\S+__mutmut_\d+): (.+?)\s*$", listing, flags=re.M))
    if run.returncode != 0 or not statuses or all(s == "not checked" for s in statuses.values()):
        # The spinner's frames are carriage-return noise; the lines after them say what went wrong.
        tail = "\n".join(line for line in (run.stdout + run.stderr).splitlines() if "⠋" not in line and line.strip())[-3000:]
        return {"module": module, "error": f"mutmut produced no results (exit {run.returncode}):\n{tail}", "seconds": seconds}
    alive = [name for name, status in sorted(statuses.items(), key=lambda item: _order(item[0])) if status not in STATUS_KILLED]
    diffs = _diffs(root, alive)
    survivors = [{"name": name, "status": statuses[name], "diff": _trim(diffs[name])} for name in alive]
    killed = sum(s in STATUS_KILLED for s in statuses.values())
    timeouts = sum(s == "timeout" for s in statuses.values())
    return {"module": module, "killed": killed, "timeouts": timeouts, "total": len(statuses), "survivors": survivors,
            "seconds": seconds, "tests": MODULES[module]}


# `mutmut show` for many mutants in one process: a process each cost longer than the run itself.
_SHOW = """
import json, sys
from mutmut.__main__ import find_mutant
from mutmut.mutation.diff_apply import get_diff_for_mutant
out = {}
for name in json.load(sys.stdin):
    out[name] = get_diff_for_mutant(name, path=find_mutant(name).path)
print(json.dumps(out))
"""


def _diffs(root: Path, names: list[str]) -> dict[str, str]:
    if not names:
        return {}
    env = dict(os.environ, PYTHONPATH=str(root / "mutants"))
    shown = subprocess.run([sys.executable, "-c", _SHOW], cwd=root, env=env, input=json.dumps(names),
                           capture_output=True, text=True, check=True)
    return json.loads(shown.stdout.strip().splitlines()[-1])


def _order(name: str) -> tuple:
    base, _, number = name.rpartition("__mutmut_")
    return base, int(number)


def _trim(diff: str) -> str:
    """The diff's changed lines only: the function header and the -/+ pair say what the mutant did."""
    lines = [line for line in diff.splitlines() if line.startswith(("-", "+")) and not line.startswith(("---", "+++"))]
    return "\n".join(lines)


def _explanations() -> list[dict]:
    if not EXPLAINED.exists():
        return []
    return tomllib.loads(EXPLAINED.read_text()).get("survivor", [])


def _reason(module: str, diff: str, explained: list[dict], name: str = "") -> str:
    """The committed reason for a survivor: entries match by module and a line of the mutant's
    diff (`match`), or by the start of the mutant's name (`mutant`: every mutant of one function,
    such as a CUDA-only one), or by both where an entry gives both."""
    for entry in explained:
        if entry["module"] != module:
            continue
        if "mutant" in entry and not name.startswith(entry["mutant"]):
            continue
        if all(part in diff for part in entry.get("match", [])):
            return entry["reason"]
    return "UNEXPLAINED"


def _read_report() -> dict[str, str]:
    """Sections of the committed report by module, so a partial run keeps the others' results."""
    if not REPORT.exists():
        return {}
    sections = re.split(r"^## ", REPORT.read_text(), flags=re.M)[1:]
    return {section.split("\n", 1)[0].split(" ")[0].strip("`"): "## " + section.rstrip() + "\n" for section in sections}


_BULLET = re.compile(r"^- `(?P<name>[^`]+)` \((?P<status>[^)]+)\): (?P<reason>.*)\n  ```diff\n(?P<diff>(?:  (?!```).*\n)*)  ```",
                     flags=re.M)


def _refresh(module: str, section: str, explained: list[dict]) -> str:
    """A committed section with each survivor's reason looked up again (after an edit of EXPLAINED)."""
    def again(found: re.Match) -> str:
        diff = "\n".join(line[2:] for line in found["diff"].splitlines())
        reason = _reason(module, diff, explained, found["name"])
        return found[0].replace(f"({found['status']}): {found['reason']}", f"({found['status']}): {reason}", 1)
    return _BULLET.sub(again, section)


def _write_report(sections: dict[str, str], explained: list[dict]) -> None:
    sections = {m: _refresh(m, text, explained) for m, text in sections.items()}
    REPORT.write_text(_summary(sections) + "\n".join(sections[m] for m in MODULES if m in sections))


def _section(result: dict, explained: list[dict]) -> str:
    module = result["module"]
    if "error" in result:
        return f"## `{module}`\n\nnot measured: {result['error']}\n"
    share = result["killed"] / result["total"] if result["total"] else 1.0
    lines = [f"## `{module}`", "",
             f"{result['killed']} of {result['total']} killed ({share:.0%}"
             f"{', %d by timeout' % result['timeouts'] if result.get('timeouts') else ''}), {result['seconds']:.0f} s, "
             f"tests: {', '.join(result['tests'])}", ""]
    for survivor in result["survivors"]:
        lines += [f"- `{survivor['name']}` ({survivor['status']}): {_reason(module, survivor['diff'], explained, survivor['name'])}",
                  "  ```diff", *("  " + line for line in survivor["diff"].splitlines()), "  ```"]
    return "\n".join(lines) + "\n"


def _summary(sections: dict[str, str]) -> str:
    rows, killed, total = [], 0, 0
    for module in MODULES:
        text = sections.get(module)
        found = re.search(r"^(\d+) of (\d+) killed", text or "", flags=re.M)
        if found:
            k, t = int(found[1]), int(found[2])
            killed, total = killed + k, total + t
            unexplained = (text or "").count("UNEXPLAINED")
            rows.append(f"| `{module}` | {k}/{t} | {k / t:.0%} | {unexplained} |")
        else:
            rows.append(f"| `{module}` | not yet measured | | |")
    overall = f"{killed}/{total} = {killed / total:.1%}" if total else "none measured"
    return ("# Mutation testing (mutmut)\n\n"
            "Written by `nice -n 19 .venv/bin/python benchmarks/mutation.py [MODULE ...]`; each module against its own\n"
            "test files (MODULES in the script), one worker. Survivors' reasons come from\n"
            "benchmarks/mutation_explained.toml. The rerun modules are measured on a CPU host after issue 28's\n"
            "rewrite of sitegen/rerun/: their CUDA-only paths are explained, not killed. Killed counts include\n"
            "timeouts; \"no tests\" survivors are code no selected test reaches (on a CPU host: GPU-only paths).\n\n"
            f"Overall over the measured modules: {overall} killed.\n\n"
            "| module | killed | share | unexplained survivors |\n| --- | --- | --- | --- |\n" + "\n".join(rows) + "\n\n")


def _changed(base: str) -> list[str]:
    out = subprocess.run(["git", "diff", "--name-only", base, "--"], cwd=REPO, check=True, capture_output=True, text=True).stdout
    touched = set(out.split()) | set(subprocess.run(["git", "ls-files", "-mo", "--exclude-standard"], cwd=REPO, check=True,
                                                    capture_output=True, text=True).stdout.split())
    return [m for m, tests in MODULES.items() if m in touched or touched & set(tests)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="modules to measure (default: all, in the order of MODULES)")
    parser.add_argument("--changed", action="store_true", help="only the modules (or their tests) the branch changes")
    parser.add_argument("--base", default="main", help="what --changed compares with (default main)")
    parser.add_argument("--report-only", action="store_true", help="only look the survivors' reasons up again in the report")
    args = parser.parse_args()
    unknown = [m for m in args.modules if m not in MODULES]
    if unknown:
        parser.error(f"not a measured module: {', '.join(unknown)} (see MODULES)")
    explained = _explanations()
    if args.report_only:
        _write_report(_read_report(), explained)
        return 0
    modules = _changed(args.base) if args.changed else (args.modules or list(MODULES))
    for module in modules:
        print(f"{module}: running", file=sys.stderr, flush=True)
        result = measure(module)
        sections = _read_report()
        sections[module] = _section(result, explained)
        _write_report(sections, explained)
        done = f"{result['killed']}/{result['total']} killed" if "killed" in result else "not measured (see the report)"
        print(f"{module}: {done} in {result['seconds']:.0f} s", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
