"""`sitegen check`: runs planted against a registry imported from pytest-benchmark's real output.

The registry is tests/importers/data/pytest-benchmark/topk.json imported as it is; each candidate
is the same file a day later with every round time scaled (a planted change), so a verdict can
only come from the scale and the ranking rule's intervals. The two `sorted` benchmarks have
intervals of a few percent; the two `heapq` ones are noisy (p80/p20 over 1.5×).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sitegen.cli.main import main

SOURCE = Path(__file__).resolve().parents[1] / "importers" / "data" / "pytest-benchmark" / "topk.json"
LIGER_CSV = Path(__file__).resolve().parents[1] / "data" / "liger" / "all_benchmark_data.csv"
SORTED = ("bench_topk.py::test_topk[sorted-1000]", "bench_topk.py::test_topk[sorted-4000]")
HEAPQ = ("bench_topk.py::test_topk[heapq-1000]", "bench_topk.py::test_topk[heapq-4000]")


def _import(source: Path, out: Path, *extra: str) -> None:
    result = CliRunner().invoke(main, ["import", "pytest-benchmark", str(source), "--out", str(out),
                                       "--implementation-param", "provider", *extra])
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def registry(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("registry")
    _import(SOURCE, out)
    return out


def _candidate(tmp_path: Path, scale: float, benchmarks=SORTED + HEAPQ, *extra: str) -> Path:
    data = json.loads(SOURCE.read_text())
    data["datetime"] = "2026-12-08T17:06:14+00:00"
    data["benchmarks"] = [b for b in data["benchmarks"] if b["fullname"] in benchmarks]
    for bench in data["benchmarks"]:
        bench["stats"]["data"] = [t * scale for t in bench["stats"]["data"]]
    path = tmp_path / "candidate.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "candidate"
    _import(path, out, *extra)
    return out


def _check(candidate: Path, registry: Path, *extra: str):
    return CliRunner().invoke(main, ["check", str(candidate), "--against", str(registry), *extra])


def _verdicts(candidate: Path, registry: Path, *extra: str) -> tuple[int, dict[str, dict]]:
    result = _check(candidate, registry, "--json", *extra)
    data = json.loads(result.stdout)
    return result.exit_code, {_external(candidate, v["run"]): v for v in data["runs"]}


def _external(candidate: Path, run: str) -> str:
    (path,) = candidate.glob(f"runs/*/{run}.json")
    return json.loads(path.read_text())["spec"]["sourceNative"]["externalId"]


def test_a_planted_five_percent_regression_fails_and_is_named(tmp_path, registry):
    candidate = _candidate(tmp_path, 1.05, SORTED)
    result = _check(candidate, registry)
    assert result.exit_code == 1
    code, verdicts = _verdicts(candidate, registry)
    assert code == 1
    for name in SORTED:
        assert verdicts[name]["verdict"] == "slower" and verdicts[name]["regression"] is True
        assert verdicts[name]["ratio"] == pytest.approx(1.05, abs=0.002)
        assert verdicts[name]["interval"][0] > 1
        assert f"| **slower** (regression) | `{verdicts[name]['run']}` | sorted |" in result.stdout
    assert "**2 regression(s)**" in result.stdout


def test_half_a_percent_is_inside_the_noise_a_tie_and_passes(tmp_path, registry):
    candidate = _candidate(tmp_path, 1.005, SORTED)
    code, verdicts = _verdicts(candidate, registry)
    assert code == 0
    assert {verdicts[name]["verdict"] for name in SORTED} == {"tie"}
    assert not any(v["regression"] for v in verdicts.values())
    assert _check(candidate, registry).stdout.count("| tie |") == 2


def test_a_noisy_run_gets_no_verdict_however_slow(tmp_path, registry):
    candidate = _candidate(tmp_path, 2.0, HEAPQ)
    code, verdicts = _verdicts(candidate, registry)
    assert code == 0
    for name in HEAPQ:
        assert verdicts[name]["verdict"] == "not comparable"
        assert verdicts[name]["why"].startswith("noisy: ")
        assert verdicts[name]["versus_fastest"] is None


def test_a_run_with_no_cohort_is_not_comparable(tmp_path, registry):
    candidate = _candidate(tmp_path, 1.5, SORTED, "--gpu", "NVIDIA H100 80GB HBM3")
    code, verdicts = _verdicts(candidate, registry)
    assert code == 0
    for name in SORTED:
        assert verdicts[name]["verdict"] == "not comparable"
        assert verdicts[name]["why"].startswith("no cohort in the registry")


def test_a_faster_run_passes_as_faster(tmp_path, registry):
    candidate = _candidate(tmp_path, 0.95, SORTED)
    code, verdicts = _verdicts(candidate, registry)
    assert code == 0
    assert {verdicts[name]["verdict"] for name in SORTED} == {"faster"}


def test_the_threshold_lets_a_smaller_slowdown_through(tmp_path, registry):
    candidate = _candidate(tmp_path, 1.05, SORTED)
    code, verdicts = _verdicts(candidate, registry, "--threshold", "10")
    assert code == 0
    assert {verdicts[name]["verdict"] for name in SORTED} == {"slower"}
    assert not any(v["regression"] for v in verdicts.values())


def test_a_new_implementation_is_compared_with_the_fastest_other_only(tmp_path, registry):
    # heapq's runs renamed: no earlier run of "mine", but the cohort's sorted run is there.
    data = json.loads(SOURCE.read_text())
    data["datetime"] = "2026-12-08T17:06:14+00:00"
    data["benchmarks"] = [b for b in data["benchmarks"] if b["fullname"] in SORTED]
    for bench in data["benchmarks"]:
        bench["params"]["provider"] = "mine"
        bench["stats"]["data"] = [t * 1.2 for t in bench["stats"]["data"]]
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(data))
    _import(path, tmp_path / "mine")
    code, verdicts = _verdicts(tmp_path / "mine", registry)
    assert code == 0
    for verdict in verdicts.values():
        assert verdict["verdict"] == "not comparable" and verdict["why"] == "no earlier run of mine in the cohort"
        assert verdict["versus_fastest"].startswith("slower: 1.20× slower than sorted")


@pytest.mark.parametrize("args", [["--threshold", "-1"], ["--against", "/nonexistent"]])
def test_usage_errors_exit_2(tmp_path, registry, args):
    candidate = _candidate(tmp_path, 1.0, SORTED)
    result = CliRunner().invoke(main, ["check", str(candidate), *([] if "--against" in args else ["--against", str(registry)]), *args])
    assert result.exit_code == 2


def test_a_candidate_without_runs_exits_2_in_one_line(tmp_path, registry):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = _check(empty, registry)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"{empty}: $: holds no BenchmarkRun to check"]


def test_more_memory_is_more_not_slower_and_never_a_regression(tmp_path):
    """Liger's memory rows (tests/data/liger, real): 5% more memory is reported as more, and exits 0."""
    import csv
    import io

    lines = LIGER_CSV.read_text(encoding="utf-8").splitlines()
    memory = [line for line in lines[1:] if ",memory,MB," in line][:2]
    (tmp_path / "before.csv").write_text("\n".join([lines[0], *memory]) + "\n", encoding="utf-8")
    later = []
    for line in memory:
        row = next(csv.reader(io.StringIO(line)))
        row[8:11] = [repr(float(v) * 1.05) for v in row[8:11]]
        row[13] = "2027-01-01 00:00:00"
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="").writerow(row)
        later.append(buffer.getvalue())
    (tmp_path / "after.csv").write_text("\n".join([lines[0], *later]) + "\n", encoding="utf-8")
    for name in ("before", "after"):
        result = CliRunner().invoke(main, ["import", "liger", str(tmp_path / f"{name}.csv"), "--out", str(tmp_path / name)])
        assert result.exit_code == 0, result.output
    result = _check(tmp_path / "after", tmp_path / "before", "--json")
    assert result.exit_code == 0, result.output
    verdicts = json.loads(result.stdout)["runs"]
    assert [v["verdict"] for v in verdicts] == ["more", "more"]
    assert not any(v["regression"] for v in verdicts)
    assert verdicts[0]["why"].startswith("1.050× more than its previous run")
