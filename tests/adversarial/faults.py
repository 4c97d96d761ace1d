"""Kill a sitegen command at a write point, or fill the disk there, and check what is left.

Each scenario prepares a registry (and for build, an existing site), runs its command once
uninterrupted on a scratch copy (counting write points and giving the state "after"), then,
for each chosen point, on a fresh copy: runs the command in a subprocess that SIGKILLs
itself there, runs `sitegen verify` (which finishes or undoes the interrupted write), checks
that the registry is byte-identical to "before" or to "after", repeats the command and
checks that it lands at "after". Used by test_faults.py (a sample) and report.py (more).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable

from click.testing import CliRunner

from besides import beside
from helpers import copy_registry, invoke

from sitegen.cli.main import main

HERE = Path(__file__).resolve().parent
FIXTURE = HERE.parent / "fixtures" / "registry-small"
# In the checkout, where tests/importers/sharedinputs.py finds it too.
LIGER_CSV = HERE.parent / "data" / "liger" / "all_benchmark_data.csv"
SEED_RUN = "liger-jsd-forward-liger-nvidia-b200-tokens2048-vocab128256-fp32-2026-05-27-17-14-29"
UNREFERENCED_RUN = "liger-jsd-forward-torch-nvidia-b200-tokens4096-vocab128256-fp32-2026-05-27-17-14-35"
KILLER = HERE / "killer.py"
RERUN_WRITE = HERE / "rerunwrite.py"


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` (hidden ones too: a leftover journal must show)."""
    if not root.exists():
        return {}
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def run_killer(args: list[str], *, kill_at: int = 0, enospc_at: int = 0, count_file: Path | None = None,
               cache: Path | None = None) -> subprocess.CompletedProcess:
    """``cache``: the SITEGEN_CACHE_DIR of this run, when not the session's."""
    env = {**os.environ, "SITEGEN_KILL_AT": str(kill_at), "SITEGEN_ENOSPC_AT": str(enospc_at)}
    if cache:
        env["SITEGEN_CACHE_DIR"] = str(cache)
    if count_file:
        env["SITEGEN_COUNT_FILE"] = str(count_file)
    return subprocess.run([sys.executable, str(KILLER), *args], env=env, capture_output=True, text=True, timeout=120)


def small_csv(path: Path, rows: int) -> Path:
    """The first ``rows`` rows of a Liger-like CSV (the bundled data when present)."""
    lines = LIGER_CSV.read_text(encoding="utf-8").splitlines(keepends=True) if LIGER_CSV.exists() else None
    if lines is None:
        raise FileNotFoundError(LIGER_CSV)
    path.write_text("".join(lines[: rows + 1]), encoding="utf-8")
    return path


@dataclass
class Scenario:
    """A command on a registry: ``prepare`` makes the starting folder, ``args`` the command."""

    name: str
    prepare: Callable[[Path], Path]
    args: Callable[[Path], list[str]]
    repeat_may_refuse: str | None = None
    """Text of the refusal a repeat may give when the first attempt had landed completely."""
    before_verifies: bool = True
    """False where the starting registry fails verify on purpose (lock is run to fix it)."""


_registry = partial(copy_registry, fixture=FIXTURE)  # at tmp/records


def _import_base(tmp: Path) -> Path:
    root = tmp / "records"
    csv = small_csv(tmp / "ten.csv", 10)
    result = CliRunner().invoke(main, ["import", "liger", str(csv), "--out", str(root), "--published", "2026-01-01"])
    assert result.exit_code == 0, result.output
    small_csv(tmp / "more.csv", 25)
    return root


def _stale_lock(tmp: Path) -> Path:
    root = _registry(tmp)
    path = root / "runs" / f"{UNREFERENCED_RUN}.json"
    doc = json.loads(path.read_text())
    doc["spec"]["timing"]["latencyNs"]["median"] += 1
    path.write_text(json.dumps(doc, indent=2))
    return root


SCENARIOS = {
    "import": Scenario("import", _import_base,
                       lambda root: ["import", "liger", str(root.parent / "more.csv"), "--out", str(root), "--published", "2026-01-01"]),
    "attest": Scenario("attest", _registry,
                       lambda root: ["attest", SEED_RUN, "--kind", "reproduced", "--value", "9 ms", "--date", "2026-09-01", "--records", str(root)],
                       repeat_may_refuse="the same note already exists"),
    "lock": Scenario("lock", _stale_lock, lambda root: ["lock", str(root)], before_verifies=False),
    "rerun": Scenario("rerun", _registry, lambda root: ["--rerun-write", str(root)], repeat_may_refuse="never overwritten"),
}


def _invoke(args: list[str]):
    if args[0] == "--rerun-write":
        proc = subprocess.run([sys.executable, str(RERUN_WRITE), args[1]], capture_output=True, text=True, timeout=120)
        return proc.returncode, proc.stderr
    result = invoke(*args)
    return result.exit_code, result.output


def _command(args: list[str]) -> list[str]:
    # The rerun's write call runs through a small driver (a GPU sweep per trial would take minutes).
    return [str(RERUN_WRITE), *args[1:]] if args[0] == "--rerun-write" else args


def _verify(root: Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["verify", str(root)])
    return result.exit_code, result.output


@dataclass
class Trial:
    area: str
    point: int
    ok: bool
    detail: str = ""


def count_points(scenario: Scenario, tmp: Path) -> tuple[tuple[int, int], dict[str, bytes], dict[str, bytes]]:
    """Run once uninterrupted: ((write points, file syncs), state before, state after)."""
    tmp.mkdir(parents=True)
    root = scenario.prepare(tmp)
    before = snapshot(root)
    counter = tmp / "count"
    proc = run_killer(_command(scenario.args(root)), count_file=counter)
    assert proc.returncode == 0, proc.stderr
    points, syncs = counter.read_text().split()
    return (int(points), int(syncs)), before, snapshot(root)


def kill_trial(scenario: Scenario, tmp: Path, point: int, before, after) -> Trial:
    tmp.mkdir(parents=True)
    root = scenario.prepare(tmp)
    proc = run_killer(_command(scenario.args(root)), kill_at=point)
    if proc.returncode != -9:
        return Trial(scenario.name, point, False, f"not killed (exit {proc.returncode}): {proc.stderr[-300:]}")
    # verify first finishes or undoes the interrupted write, then checks every digest.
    code, output = _verify(root)
    state = snapshot(root)
    expected = 0 if state == after or scenario.before_verifies else 1
    if code != expected:
        return Trial(scenario.name, point, False, f"verify after kill gave exit {code}: {output[-300:]}")
    if state not in (before, after):
        changed = sorted(set(state) ^ set(before) | {k for k in state if k in before and state[k] != before[k]})
        return Trial(scenario.name, point, False, f"neither before nor after: {changed[:3]}")
    code, output = _invoke(scenario.args(root))
    refused_ok = state == after and scenario.repeat_may_refuse and scenario.repeat_may_refuse in output
    if code != 0 and not refused_ok:
        return Trial(scenario.name, point, False, f"repeat failed: {output[-300:]}")
    if snapshot(root) != after:
        return Trial(scenario.name, point, False, "repeat did not land at the uninterrupted result")
    return Trial(scenario.name, point, True)


def enospc_trial(scenario: Scenario, tmp: Path, point: int, before, after) -> Trial:
    """A full disk at ``point``: exit 1 with a line naming a path, registry as before or after."""
    tmp.mkdir(parents=True)
    root = scenario.prepare(tmp)
    proc = run_killer(_command(scenario.args(root)), enospc_at=point)
    state = snapshot(root)
    if "Traceback" in proc.stderr:
        return Trial(scenario.name + " (full disk)", point, False, proc.stderr[-300:])
    if proc.returncode == 0:
        ok = state == after
    else:
        ok = state == before and "No space left on device" in proc.stderr and str(root) in proc.stderr
    return Trial(scenario.name + " (full disk)", point, ok, "" if ok else proc.stderr[-300:])


def spread(n: int, samples: int) -> list[int]:
    """``samples`` write points spread evenly over 1..n, first and last included."""
    if n <= samples:
        return list(range(1, n + 1))
    return sorted({1 + round(i * (n - 1) / (samples - 1)) for i in range(samples)})


def registry_trials(name: str, tmp: Path, samples: int) -> list[Trial]:
    scenario = SCENARIOS[name]
    (n, syncs), before, after = count_points(scenario, tmp / "count")
    trials = [kill_trial(scenario, tmp / f"kill-{p}", p, before, after) for p in spread(n, samples)]
    trials += [enospc_trial(scenario, tmp / f"full-{p}", p, before, after) for p in spread(syncs, max(2, samples // 2))]
    return trials


# --- build -----------------------------------------------------------------------------

def build_trials(tmp: Path, samples: int) -> list[Trial]:
    """Kill a build that replaces an existing site; --out must hold the old or the new site."""
    tmp.mkdir(parents=True, exist_ok=True)
    root = _registry(tmp)
    old_out, new_out = tmp / "old" / "site", tmp / "new" / "site"
    # The build's caches (documents, rankings, row tokens) as the first build left them, a
    # copy for each run below: a run that fills them has fewer write points left for the next.
    first = tmp / "cache"
    assert CliRunner().invoke(main, ["build", "--records", str(root), "--out", str(old_out)],
                              env={"SITEGEN_CACHE_DIR": str(first)}).exit_code == 0
    (root / "sitegen.toml").write_text('[site]\ntitle = "Renamed registry"\n')
    counter = tmp / "count"
    shutil.copytree(old_out.parent, new_out.parent, dirs_exist_ok=True)
    proc = run_killer(["build", "--records", str(root), "--out", str(new_out)], count_file=counter,
                      cache=shutil.copytree(first, tmp / "cache-count"))
    assert proc.returncode == 0, proc.stderr
    old, new, n = snapshot(old_out), snapshot(new_out), int(counter.read_text().split()[0])
    trials = []
    for point in spread(n, samples):
        work = tmp / f"kill-{point}"
        shutil.copytree(old_out.parent, work)
        out = work / "site"
        proc = run_killer(["build", "--records", str(root), "--out", str(out)], kill_at=point,
                          cache=shutil.copytree(first, tmp / f"cache-{point}"))
        if proc.returncode != -9:
            trials.append(Trial("build", point, False, f"not killed: {proc.stderr[-200:]}"))
            continue
        if snapshot(out) not in (old, new):
            trials.append(Trial("build", point, False, "--out holds neither the old nor the new site"))
            continue
        again = CliRunner().invoke(main, ["build", "--records", str(root), "--out", str(out)])
        leftovers = [n for n in beside(work) if n not in ("site", ".site.standby-*")]
        rebuilt = snapshot(out)
        ok = again.exit_code == 0 and rebuilt == new and not leftovers
        differ = sorted(k for k in set(rebuilt) | set(new) if rebuilt.get(k) != new.get(k))[:3]
        trials.append(Trial("build", point, ok, "" if ok else f"rebuild exit {again.exit_code}, leftovers {leftovers}, "
                            f"differs from the new site in {differ}: {again.output[-300:]}"))
    return trials
