"""The KernelBench importer's reading of values, in process and in a fraction of a second.

- A few timings of a real snapshot give, byte for byte, the documents the bundled registry
  holds for them (records/ is the nine snapshots imported): every field the importer writes.
- Times are the decimal the file prints, in ms, to integer ns half-even; negative, non-finite,
  non-numeric or beyond 2**53 - 1 ns is refused, naming the field.
- A timing needs mean, std, min, max, num_trials (a positive integer) and hardware (a GPU
  name); otherwise one problem naming file and path, and nothing of that timing.
- The commit and its date come from git in a checkout (refused if tracked files differ), or
  from a snapshot's COMMIT file; PyTorch and CUDA versions from results/timing/README.md.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kernelbenchdata import KERNELBENCH, require_kernelbench
from sitegen.importers import kernelbench
from sitegen.importers.core import RowError
from sitegen.importers.kernelbench import _ns, _scalar, implementation_of, plan_import
from sitegen.core.problems import InputError

RECORDS = Path(__file__).resolve().parents[2] / "records"
FOLDER = "B200_together"
CONFIGS = ("torch", "torch_compile_cudagraphs", "torch_compile_inductor_default")
# A table operation (Softmax), problems of their own with tuple constants, init inputs and scalars.
PICK = {"level1": ["19_ReLU.py", "23_Softmax.py", "4_Matrix_vector_multiplication_.py", "5_Matrix_scalar_multiplication.py"],
        "level2": ["1_Conv2D_ReLU_BiasAdd.py"], "level3": ["1_MLP.py"]}
COMMIT = "0123456789abcdef0123456789abcdef01234567"
TIMING = {"mean": 0.5, "std": 0.01, "min": 0.45, "max": 0.75, "num_trials": 100, "hardware": "NVIDIA B200", "device": "cuda:0"}
RELU = "import torch\nimport torch.nn as nn\n\nclass Model(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n\n" \
       "def get_inputs():\n    return [torch.randn(4, 8)]\n\ndef get_init_inputs():\n    return []\n"


def _real_subset(root: Path) -> Path:
    """A snapshot holding PICK of a147f37's B200 timings and problems."""
    require_kernelbench()
    source = KERNELBENCH / "a147f37"
    (root / "results" / "timing" / FOLDER).mkdir(parents=True)
    shutil.copy(source / "COMMIT", root / "COMMIT")
    shutil.copy(source / "results" / "timing" / "README.md", root / "results" / "timing" / "README.md")
    for config in CONFIGS:
        name = f"baseline_time_{config}.json"
        timings = json.loads((source / "results" / "timing" / FOLDER / name).read_text(encoding="utf-8"))
        subset = {level: {file: timings[level][file] for file in files} for level, files in PICK.items()}
        (root / "results" / "timing" / FOLDER / name).write_text(json.dumps(subset), encoding="utf-8")
    for level, files in PICK.items():
        (root / "KernelBench" / level).mkdir(parents=True)
        for file in files:
            shutil.copy(source / "KernelBench" / level / file, root / "KernelBench" / level / file)
    return root


def _snapshot(root: Path, timings: dict, problems: dict[str, str] | None = None, *,
              commit: str | None = None, readme: str = "All baseline are ran with PyTorch `2.5.0+cu124` and CUDA `12.4`.\n") -> Path:
    (root / "results" / "timing" / FOLDER).mkdir(parents=True)
    (root / "KernelBench" / "level1").mkdir(parents=True)
    (root / "COMMIT").write_text(commit if commit is not None else f"commit {COMMIT}\ndate 2025-06-01T10:00:00Z\nsubject s\n")
    (root / "results" / "timing" / "README.md").write_text(readme)
    for name, text in (problems if problems is not None else {"1_ReLU.py": RELU}).items():
        (root / "KernelBench" / "level1" / name).write_text(text)
    for name, data in timings.items():
        (root / "results" / "timing" / FOLDER / name).write_text(json.dumps(data))
    return root


def _one(timing) -> dict:
    return {"baseline_time_torch.json": {"level1": {"1_ReLU.py": timing}}}


def _problems(plan) -> list[tuple[str, str, str]]:
    return [(Path(p.file).name, p.path, p.message) for p in plan.problems]


# --- the documents, against the bundled registry -----------------------------------------------

def test_a_subset_of_a_real_snapshot_gives_the_bundled_registrys_bytes(tmp_path):
    plan, day = plan_import(_real_subset(tmp_path / "snap"))
    assert plan.problems == [] and plan.warnings == [] and day == "2025-03-16" and plan.newest_day == day
    assert plan.rows == plan.imported == len(CONFIGS) * sum(map(len, PICK.values()))
    assert len(plan.files) > 40
    for path, data in plan.files.items():
        assert (RECORDS / path).read_bytes() == data, path
        assert plan.documents[path] == json.loads(data)


# --- times --------------------------------------------------------------------------------------

@pytest.mark.parametrize("ms, ns", [(0.386, 386000), (0, 0), (1, 1000000), (2.5e-6, 2), (3.5e-6, 4), (1e-7, 0),
                                    (9007199254.74099, 9007199254740990), (0.00748, 7480)])
def test_times_are_the_printed_decimal_in_ns_half_even(ms, ns):
    assert _ns(ms, "mean") == ns and type(_ns(ms, "mean")) is int


@pytest.mark.parametrize("value, message", [
    (-0.001, "mean: -0.001 is not a finite, non-negative number of ms"),
    (True, "mean: True is not a finite, non-negative number of ms"),
    ("0.5", "mean: '0.5' is not a finite, non-negative number of ms"),
    (None, "mean: None is not a finite, non-negative number of ms"),
    (float("inf"), "mean: inf is not a finite, non-negative number of ms"),
    (float("nan"), "mean: nan is not a finite, non-negative number of ms"),
    (9007199254.741, "mean: 9007199254.741 ms is too large"),
])
def test_a_time_that_is_no_duration_is_refused_naming_its_field(value, message):
    with pytest.raises(RowError) as caught:
        _ns(value, "mean")
    assert str(caught.value) == message


def test_constants_are_scalars_or_shapes():
    assert _scalar(5) == 5 and _scalar(0.5) == 0.5 and _scalar("x") == "x" and _scalar(True) is True
    assert _scalar((3, 4)) == "3×4" and _scalar([1.5, 2]) == "1.5×2" and _scalar(("a", 1)) == "('a', 1)"


@pytest.mark.parametrize("config, expected", [
    ("torch", ("torch eager", "eager")),
    ("torch_compile_cudagraphs", ("torch.compile (cudagraphs)", "torch.compile(backend='cudagraphs')")),
    ("torch_compile_inductor_max-autotune-no-cudagraphs", ("torch.compile (inductor, max-autotune-no-cudagraphs)",
                                                           "torch.compile(backend='inductor', mode='max-autotune-no-cudagraphs')")),
])
def test_a_config_names_its_implementation(config, expected):
    assert implementation_of(config) == expected


# --- a timing, all or nothing ------------------------------------------------------------------

@pytest.mark.parametrize("change, message", [
    ({"mean": -1}, "mean: -1 is not a finite, non-negative number of ms"),
    ({"max": "slow"}, "max: 'slow' is not a finite, non-negative number of ms"),
    ({"hardware": "  "}, "hardware: '  ' is not a GPU name"),
    ({"hardware": 7}, "hardware: 7 is not a GPU name"),
    ({"hardware": "G" * 201}, f"hardware: {'G' * 201!r} is not a GPU name"),
    ({"num_trials": 0}, "num_trials: 0 is not a positive integer"),
    ({"num_trials": True}, "num_trials: True is not a positive integer"),
    ({"num_trials": 1.5}, "num_trials: 1.5 is not a positive integer"),
])
def test_a_bad_timing_is_one_problem_naming_its_field(tmp_path, change, message):
    plan, _ = plan_import(_snapshot(tmp_path, _one({**TIMING, **change})))
    assert _problems(plan) == [("baseline_time_torch.json", "$.level1['1_ReLU.py']", message)]
    assert plan.files == {} and plan.rows == 1 and plan.imported == 0


def test_the_extremes_of_a_timing_are_accepted(tmp_path):
    timing = {**TIMING, "num_trials": 1, "min": 0}
    plan, _ = plan_import(_snapshot(tmp_path, _one(timing)))
    assert plan.problems == [] and plan.imported == 1
    [run] = [d for d in plan.documents.values() if d["kind"] == "BenchmarkRun"]
    assert run["spec"]["timing"]["latencyNs"] == {"mean": 500000, "min": 0, "max": 750000, "stdev": 10000}
    assert run["spec"]["sourceNative"]["metrics"]["num_trials"] == 1


def test_a_timing_missing_fields_names_them_all(tmp_path):
    timing = {k: v for k, v in TIMING.items() if k not in ("std", "hardware")}
    plan, _ = plan_import(_snapshot(tmp_path, _one(timing)))
    assert _problems(plan) == [("baseline_time_torch.json", "$.level1['1_ReLU.py']", "no std, hardware")]


def test_a_timing_that_is_no_object_is_refused(tmp_path):
    plan, _ = plan_import(_snapshot(tmp_path, _one([0.5])))
    assert _problems(plan) == [("baseline_time_torch.json", "$.level1['1_ReLU.py']", "a timing is an object, not list")]


def test_a_null_timing_is_a_warning_and_not_a_row(tmp_path):
    root = _snapshot(tmp_path, _one(None))
    plan, _ = plan_import(root)
    assert plan.problems == [] and plan.rows == 0
    assert plan.warnings == [f"{root / 'results' / 'timing' / FOLDER / 'baseline_time_torch.json'}: $.level1['1_ReLU.py']: skipped: null timing"]


def test_files_and_levels_that_are_not_kernelbench_timings_are_refused(tmp_path):
    timings = {"baseline_time_torch.json": {"level1": {"ReLU.py": TIMING, "1_ReLU.py": TIMING}, "level0": {}, "level2": [1],
                                            "extras": {"1_ReLU.py": TIMING}},
               "baseline_time_torch_compile_inductor_default.json": [],
               "baseline_time_jax.json": {}}
    plan, _ = plan_import(_snapshot(tmp_path, timings))
    assert sorted(_problems(plan)) == sorted([
        ("baseline_time_jax.json", "$", "not a baseline_time_torch[_compile_…].json file name"),
        ("baseline_time_torch.json", "$.extras", "not a level (level1..level9) of problem timings"),
        ("baseline_time_torch.json", "$.level0", "not a level (level1..level9) of problem timings"),
        ("baseline_time_torch.json", "$.level2", "not a level (level1..level9) of problem timings"),
        ("baseline_time_torch.json", "$.level1['ReLU.py']", "not a problem file name like 23_Softmax.py"),
        ("baseline_time_torch_compile_inductor_default.json", "$", "not an object of levels"),
    ])
    assert plan.imported == 1 and plan.rows == 2


def test_a_timing_file_that_is_no_json_is_one_problem(tmp_path):
    root = _snapshot(tmp_path, {})
    (root / "results" / "timing" / FOLDER / "baseline_time_torch.json").write_text("{")
    plan, _ = plan_import(root)
    assert [(name, path) for name, path, _ in _problems(plan)] == [("baseline_time_torch.json", "$")]


def test_problems_are_taken_in_numeric_order(tmp_path):
    problems = {name: RELU for name in ("10_A.py", "9_B.py", "1_C.py")}
    timings = {"baseline_time_torch.json": {"level1": {name: {**TIMING, "mean": "x"} for name in problems}}}
    plan, _ = plan_import(_snapshot(tmp_path, timings, problems))
    assert [path for _, path, _ in _problems(plan)] == ["$.level1['1_C.py']", "$.level1['9_B.py']", "$.level1['10_A.py']"]


def test_problem_numbers_of_any_length_keep_numeric_order_and_other_digits_sort_after(tmp_path):
    # 3e18 before 2e19 (a bound on the digits once sorted both as text); "²" is a digit to
    # str.isdigit but not to int(), which raised on it.
    names = ("20000000000000000000_X.py", "3000000000000000000_Y.py", "007_Z.py", "²_D.py", "Q_E.py")
    timings = {"baseline_time_torch.json": {"level1": {name: {**TIMING, "mean": "x"} for name in names}}}
    plan, _ = plan_import(_snapshot(tmp_path, timings, {name: RELU for name in names}))
    assert [path for _, path, _ in _problems(plan)] == [
        "$.level1['007_Z.py']", "$.level1['3000000000000000000_Y.py']", "$.level1['20000000000000000000_X.py']",
        "$.level1['Q_E.py']", "$.level1['²_D.py']"]


def test_an_unreadable_problem_is_skipped_with_one_warning_for_all_its_timings(tmp_path):
    problems = {"1_ReLU.py": RELU.replace("torch.randn(4, 8)", "make()"), "2_Bytes.py": "x = 1\n"}
    timings = {f"baseline_time_{c}.json": {"level1": {"1_ReLU.py": TIMING}} for c in ("torch", "torch_compile_cudagraphs")}
    root = _snapshot(tmp_path, timings, problems)
    (root / "KernelBench" / "level1" / "2_Bytes.py").write_bytes(b"\xff\xfe")
    timings["baseline_time_torch.json"]["level1"]["2_Bytes.py"] = TIMING
    timings["baseline_time_torch.json"]["level1"]["3_Gone.py"] = TIMING
    for name, data in timings.items():
        (root / "results" / "timing" / FOLDER / name).write_text(json.dumps(data))
    plan, _ = plan_import(root)
    assert plan.problems == [] and plan.imported == 0 and plan.rows == 4
    level = root / "KernelBench" / "level1"
    assert plan.warnings[1:] == [f"{level / '2_Bytes.py'}: skipped: not UTF-8 text",
                                 f"{level / '3_Gone.py'}: skipped: cannot read file: No such file or directory"]
    assert plan.warnings[0].startswith(f"{level / '1_ReLU.py'}: skipped: inputs not readable without running the file: ")


def test_an_unknown_gpu_is_imported_with_one_warning(tmp_path):
    timings = {f"baseline_time_{c}.json": {"level1": {"1_ReLU.py": {**TIMING, "hardware": "Acme Z9"}}} for c in CONFIGS}
    plan, _ = plan_import(_snapshot(tmp_path, timings))
    assert plan.imported == 3 and plan.warnings == [f"{FOLDER}: warning: unknown GPU 'Acme Z9': architecture 'unknown'"]


# --- the commit and the software -----------------------------------------------------------------

@pytest.mark.parametrize("commit, read", [
    ("commit abc\ndate 2025-06-01T10:00:00Z\n", ("abc", "2025-06-01T10:00:00Z")),
    (f"commit {COMMIT}\ndate 2025-06-01\n", (COMMIT, "2025-06-01")),
    (f"date 2025-06-01T10:00:00+02:00\n", ("", "2025-06-01T10:00:00+02:00")),
])
def test_a_commit_file_without_a_commit_id_and_iso_date_is_refused(tmp_path, commit, read):
    root = _snapshot(tmp_path, _one(TIMING), commit=commit)
    plan, day = plan_import(root)
    assert day is None and plan.files == {}
    assert [(p.file, p.message) for p in plan.problems] == [(str(root / "COMMIT"), f"no commit id and ISO date (read {read[0]!r}, {read[1]!r})")]


def test_the_first_commit_and_date_lines_count_and_offsets_are_kept(tmp_path):
    commit = f"commit {COMMIT}\ndate 2025-06-01T10:00:00-07:00\nsubject s\ncommit {'f' * 40}\n"
    plan, day = plan_import(_snapshot(tmp_path, _one(TIMING), commit=commit))
    assert plan.problems == [] and day == "2025-06-01"
    [run] = [d for d in plan.documents.values() if d["kind"] == "BenchmarkRun"]
    assert run["spec"]["observedAt"] == "2025-06-01T10:00:00-07:00" and run["metadata"]["sourceRefs"][0]["commit"] == COMMIT


def test_a_snapshot_without_a_readable_commit_file_is_refused(tmp_path):
    root = _snapshot(tmp_path, _one(TIMING))
    (root / "COMMIT").write_bytes(b"commit \xff\n")
    plan, day = plan_import(root)
    assert day is None
    assert [(p.file, p.message) for p in plan.problems] == [(str(root), "neither a git checkout nor a snapshot with a readable COMMIT file")]


def test_the_software_is_what_the_readme_states(tmp_path):
    plan, _ = plan_import(_snapshot(tmp_path, _one(TIMING), readme="PyTorch `2.6.0` only\n"))
    [environment] = [d for d in plan.documents.values() if d["kind"] == "ExecutionEnvironment"]
    assert environment["spec"]["software"] == {"framework": {"name": "torch", "version": "2.6.0"}}


def test_a_readme_without_a_pytorch_version_is_refused(tmp_path):
    root = _snapshot(tmp_path, _one(TIMING), readme="CUDA `12.4`\n")
    plan, day = plan_import(root)
    assert day is None
    assert [(p.file, p.message) for p in plan.problems] == [(str(root / "results" / "timing" / "README.md"),
                                                             "states no PyTorch version (PyTorch `x.y.z`)")]


def test_a_missing_readme_is_refused_naming_it(tmp_path):
    root = _snapshot(tmp_path, _one(TIMING))
    (root / "results" / "timing" / "README.md").unlink()
    plan, _ = plan_import(root)
    assert [p.file for p in plan.problems] == [str(root / "results" / "timing" / "README.md")]


def test_a_snapshot_without_timing_files_is_refused(tmp_path):
    root = _snapshot(tmp_path, {})
    plan, day = plan_import(root)
    assert day is None
    assert [(p.file, p.message) for p in plan.problems] == [(str(root / "results" / "timing"), "no */baseline_time_*.json timing files")]


def _git(checkout: Path, *args: str) -> str:
    day = "2025-02-03T04:05:06+00:00"
    env = {**os.environ, "GIT_AUTHOR_DATE": day, "GIT_COMMITTER_DATE": day, "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}
    return subprocess.run(["git", "-C", str(checkout), *args], check=True, env=env, capture_output=True, text=True).stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_git_checkout_gives_its_commit_and_date_and_refuses_uncommitted_edits(tmp_path):
    root = _snapshot(tmp_path / "KernelBench", _one(TIMING))
    (root / "COMMIT").unlink()
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "snapshot subject"]):
        _git(root, *command)
    commit = _git(root, "rev-parse", "HEAD").strip()
    assert kernelbench.revision(root) == (commit, "2025-02-03T04:05:06+00:00", "snapshot subject")
    (root / "results" / "timing" / "README.md").write_text("PyTorch `9.9`\n")
    with pytest.raises(InputError) as caught:
        kernelbench.revision(root)
    [problem] = caught.value.problems
    assert (problem.file, problem.path) == (str(root), "$")
    assert problem.message == f"tracked files differ from commit {commit[:7]} (results/timing/README.md); commit or restore them first"


def test_a_gpu_name_of_200_characters_is_a_gpu_name(tmp_path):
    plan, _ = plan_import(_snapshot(tmp_path, _one({**TIMING, "hardware": "NVIDIA B200 " + "x" * 188})))
    assert all("is not a GPU name" not in message for _, _, message in _problems(plan))


def test_a_problem_that_no_longer_computes_its_table_operation_is_its_own_with_one_warning(tmp_path):
    # level1/23_Softmax.py is in kernelbench_operations.toml; a ReLU under its name is not a softmax.
    timings = {f"baseline_time_{c}.json": {"level1": {"23_Softmax.py": TIMING}} for c in ("torch", "torch_compile_cudagraphs")}
    root = _snapshot(tmp_path, timings, {"23_Softmax.py": RELU})
    plan, _ = plan_import(root)
    assert plan.problems == [] and plan.imported == 2
    assert plan.warnings == [f"{root / 'KernelBench' / 'level1' / '23_Softmax.py'}: warning: no longer computes "
                             "softmax as kernelbench_operations.toml says; imported as its own operation"]
    [operation] = [d for d in plan.documents.values() if d["kind"] == "OperationSpec"]
    assert operation["metadata"]["name"].startswith("kernelbench-level1-23-softmax-")
    assert operation["metadata"]["title"] == "KernelBench L1 · 23 Softmax"


def test_a_long_timing_folder_gives_bounded_names(tmp_path):
    problem = "1_" + "Long_problem_name" * 2 + ".py"
    root = _snapshot(tmp_path, {}, {problem: RELU})
    folder = "B200_" + "x" * 210
    config = "torch_compile_inductor_max-autotune-no-cudagraphs"
    (root / "results" / "timing" / folder).mkdir()
    (root / "results" / "timing" / folder / f"baseline_time_{config}.json").write_text(json.dumps({"level1": {problem: TIMING}}))
    plan, _ = plan_import(root)
    assert plan.problems == [] and plan.imported == 1
    [run] = [d for d in plan.documents.values() if d["kind"] == "BenchmarkRun"]
    name, native = run["metadata"]["name"], run["spec"]["sourceNative"]
    external = f"{COMMIT[:7]}/{folder}/{config}/level1/{problem.removesuffix('.py')}"
    assert len(external) > 300 and native["externalId"] == external[:300]
    assert run["spec"]["evidence"]["details"]["timingFolder"] == folder
    import hashlib
    assert len(name) <= 200 and name.endswith("-" + hashlib.sha256(external.encode()).hexdigest()[:8])
    assert name.startswith(f"kernelbench-{COMMIT[:7]}-b200-xxx")


# --- survivors of the first mutation run, each a rule ------------------------------------------

def _runs(plan) -> list[dict]:
    return [d for d in plan.documents.values() if d["kind"] == "BenchmarkRun"]


def _folder_snapshot(tmp_path, folder: str, config: str = "torch") -> Path:
    root = _snapshot(tmp_path, {})
    (root / "results" / "timing" / folder).mkdir()
    (root / "results" / "timing" / folder / f"baseline_time_{config}.json").write_text(json.dumps({"level1": {"1_ReLU.py": TIMING}}))
    return root


@pytest.mark.parametrize("k, hashed", [(155, False), (156, True), (165, True)])
def test_a_run_name_over_200_characters_is_cut_and_hashed(tmp_path, k, hashed):
    import hashlib
    folder = "B200_" + "x" * k
    plan, _ = plan_import(_folder_snapshot(tmp_path, folder))
    assert plan.problems == []
    [run] = _runs(plan)
    external = f"{COMMIT[:7]}/{folder}/torch/level1/1_ReLU"
    full = "kernelbench-" + external.replace("/", "-").replace("_", "-").lower()
    expected = full[:191].rstrip("-.") + "-" + hashlib.sha256(external.encode()).hexdigest()[:8] if hashed else full
    assert run["metadata"]["name"] == expected and len(expected) <= 200


def test_a_document_field_over_its_bound_is_a_problem_naming_the_document(tmp_path):
    plan, _ = plan_import(_folder_snapshot(tmp_path, "B200_" + "x" * 240, "torch_compile_inductor_max-autotune-no-cudagraphs"))
    assert [m for _, _, m in _problems(plan)] == ["run $.metadata.sourceRefs[0].path: String should have at most 300 characters"]


def test_two_timings_that_give_one_path_different_documents_are_refused_naming_the_first(tmp_path):
    # "NVIDIA B200" and "nvidia b200" name one environment file with two different products.
    timings = {"baseline_time_torch.json": {"level1": {"1_ReLU.py": TIMING, "2_ReLU.py": {**TIMING, "hardware": "nvidia b200"}}}}
    root = _snapshot(tmp_path, timings, {"1_ReLU.py": RELU, "2_ReLU.py": RELU})
    plan, _ = plan_import(root)
    shown = root / "results" / "timing" / FOLDER / "baseline_time_torch.json"
    [(name, path, message)] = _problems(plan)
    assert path == "$.level1['2_ReLU.py']"
    assert message.startswith("environment environments/") and message.endswith(f" differs from the one {shown} $.level1['1_ReLU.py'] produced")


def test_every_distinct_warning_is_given_once(tmp_path):
    root = _snapshot(tmp_path, {}, {"23_Softmax.py": RELU, "95_CrossEntropyLoss.py": RELU})
    for folder, gpu in (("A_one", "Acme Z9"), ("B_two", "Acme Z8")):
        (root / "results" / "timing" / folder).mkdir()
        (root / "results" / "timing" / folder / "baseline_time_torch.json").write_text(json.dumps(
            {"level1": {"23_Softmax.py": {**TIMING, "hardware": gpu}, "95_CrossEntropyLoss.py": {**TIMING, "hardware": gpu}}}))
    plan, _ = plan_import(root)
    level = root / "KernelBench" / "level1"
    assert plan.warnings == [
        f"{level / '23_Softmax.py'}: warning: no longer computes softmax as kernelbench_operations.toml says; imported as its own operation",
        "A_one: warning: unknown GPU 'Acme Z9': architecture 'unknown'",
        f"{level / '95_CrossEntropyLoss.py'}: warning: no longer computes cross_entropy as kernelbench_operations.toml says; imported as its own operation",
        "B_two: warning: unknown GPU 'Acme Z8': architecture 'unknown'",
    ]


def test_a_skipped_timing_does_not_stop_the_ones_after_it(tmp_path):
    timings = {"baseline_time_torch.json": {"level1": {"1_Opaque.py": TIMING, "2_Gap.py": None, "3_ReLU.py": TIMING}}}
    problems = {"1_Opaque.py": RELU.replace("torch.randn(4, 8)", "make()"), "3_ReLU.py": RELU}
    plan, _ = plan_import(_snapshot(tmp_path, timings, problems))
    assert plan.imported == 1 and [r["spec"]["sourceNative"]["benchmark"] for r in _runs(plan)] == ["level1/3_ReLU"]


def test_timings_of_other_than_100_trials_have_a_protocol_of_their_own(tmp_path):
    timings = {"baseline_time_torch.json": {"level1": {"1_ReLU.py": TIMING, "2_ReLU.py": {**TIMING, "num_trials": 7}}}}
    plan, _ = plan_import(_snapshot(tmp_path, timings, {"1_ReLU.py": RELU, "2_ReLU.py": RELU}))
    names = sorted(d["metadata"]["name"] for d in plan.documents.values() if d["kind"] == "BenchmarkProtocol")
    assert plan.problems == [] and names == ["kernelbench-baseline-timing", "kernelbench-baseline-timing-7-trials"]


def _workload(tmp_path, inputs: str, constants: str = "") -> dict:
    problem = RELU.replace("return [torch.randn(4, 8)]", f"return {inputs}").replace("def get_inputs", f"{constants}\ndef get_inputs")
    plan, _ = plan_import(_snapshot(tmp_path, _one(TIMING), {"1_ReLU.py": problem}))
    assert plan.problems == [], plan.problems
    [workload] = [d for d in plan.documents.values() if d["kind"] == "WorkloadCase"]
    return workload


@pytest.mark.parametrize("inputs, dtype", [
    ("[torch.randn(4, 8, dtype=torch.bfloat16)]", "bf16"),
    ("[torch.randn(4, 8, dtype=torch.float16), torch.randn(4)]", None),
    ("[torch.randint(0, 9, (4,))]", None),
])
def test_a_workload_has_a_dtype_only_when_its_float_tensors_share_one(tmp_path, inputs, dtype):
    assert _workload(tmp_path, inputs)["spec"].get("dtype") == dtype


def test_a_workload_without_constants_or_dtype_reads_no_constants(tmp_path):
    assert _workload(tmp_path, "[torch.randint(0, 9, (4,))]")["metadata"]["title"] == "no constants"


@pytest.mark.parametrize("extra", [0, 1])
def test_a_workload_title_is_cut_at_300_characters(tmp_path, extra):
    from sitegen.core import identity
    # Constants whose "name = 1 · … · fp32" label is 300 characters, or one more.
    names = [f"c{i}" + "x" * 57 for i in range(4)]
    names.append("d" * (300 - len(identity.axes_label({n: 1 for n in [*names, ""]}, "fp32")) + extra))
    label = identity.axes_label({n: 1 for n in names}, "fp32")
    assert len(label) == 300 + extra
    workload = _workload(tmp_path, f"[torch.randn({', '.join(names)})]", "".join(f"{n} = 1\n" for n in names))
    assert workload["metadata"]["title"] == (label[:299] + "…" if extra else label)


def test_a_readme_with_bytes_that_are_not_utf8_still_states_its_versions(tmp_path):
    root = _snapshot(tmp_path, _one(TIMING))
    (root / "results" / "timing" / "README.md").write_bytes(b"Caf\xe9 notes\nPyTorch `2.5.0` and CUDA `12.4`\n")
    plan, _ = plan_import(root)
    assert plan.problems == [] and plan.imported == 1


def test_a_commit_file_is_read_as_key_then_value(tmp_path):
    root = _snapshot(tmp_path, {}, commit=f"commit {COMMIT}\ndate 2025-06-01T10:00:00Z\nsubject add B200 profiling results\n")
    assert kernelbench.revision(root) == (COMMIT, "2025-06-01T10:00:00Z", "add B200 profiling results")
    (root / "COMMIT").write_text(f"commit {COMMIT}\ndate 2025-06-01T10:00:00Z\n")
    assert kernelbench.revision(root) == (COMMIT, "2025-06-01T10:00:00Z", "")


def test_a_commit_file_without_a_date_is_refused(tmp_path):
    root = _snapshot(tmp_path, {}, commit=f"commit {COMMIT}\n")
    with pytest.raises(InputError) as caught:
        kernelbench.revision(root)
    assert [(p.file, p.path, p.message) for p in caught.value.problems] == [
        (str(root / "COMMIT"), "$", f"no commit id and ISO date (read {COMMIT!r}, '')")]


def test_problem_files_are_taken_by_number_then_name_and_others_last(tmp_path):
    problems = {name: RELU for name in ("10_A_b.py", "9_B_c.py", "1_C.py")}
    timings = {"baseline_time_torch.json": {"level1": {name: {**TIMING, "mean": "x"} for name in [*problems, "Extra.py"]}}}
    plan, _ = plan_import(_snapshot(tmp_path, timings, problems))
    assert [path for _, path, _ in _problems(plan)] == ["$.level1['1_C.py']", "$.level1['9_B_c.py']", "$.level1['10_A_b.py']",
                                                         "$.level1['Extra.py']"]


def test_refusals_of_a_whole_snapshot_are_about_whole_files(tmp_path):
    # COMMIT, README and the timing folder: the JSON path of each problem is "$".
    for make in (lambda r: (r / "COMMIT").write_text("commit x\n"), lambda r: (r / "results" / "timing" / "README.md").write_text(""),
                 lambda r: (r / "COMMIT").write_bytes(b"\xff")):
        root = _snapshot(tmp_path / str(id(make)), {})
        make(root)
        plan, _ = plan_import(root)
        assert [p.path for p in plan.problems] == ["$"]
    plan, _ = plan_import(_snapshot(tmp_path / "empty", {}))
    assert [p.path for p in plan.problems] == ["$"]


def test_git_that_fails_is_one_line_naming_the_checkout(tmp_path, monkeypatch):
    root = _snapshot(tmp_path, {})
    (root / ".git").mkdir()  # not a repository: git log fails
    with pytest.raises(InputError) as caught:
        kernelbench.revision(root)
    [problem] = caught.value.problems
    assert (problem.file, problem.path) == (str(root), "$")
    # git's own reason, not the command line sitegen ran.
    assert problem.message.startswith("cannot read the commit with git: fatal: not a git repository")


@pytest.mark.parametrize(("failure", "reason"), [
    (FileNotFoundError(2, "No such file or directory", "git"), "[Errno 2] No such file or directory: 'git'"),
    (subprocess.CalledProcessError(128, ["git", "log"], stderr=""), "Command '['git', 'log']' returned non-zero exit status 128."),
    (subprocess.CalledProcessError(128, ["git", "log"], stderr="warning: x\nfatal: bad object HEAD\n"), "fatal: bad object HEAD"),
])
def test_git_that_fails_without_saying_why_is_named_by_its_error(tmp_path, monkeypatch, failure, reason):
    # No git on the PATH, or a git that fails silently: the line still says what failed; with
    # several lines on stderr, git's last (its fatal reason) is the one shown.
    root = _snapshot(tmp_path, {})
    (root / ".git").mkdir()

    def fails(*args, **kwargs):
        raise failure

    monkeypatch.setattr(subprocess, "run", fails)
    with pytest.raises(InputError) as caught:
        kernelbench.revision(root)
    [problem] = caught.value.problems
    assert problem.message == f"cannot read the commit with git: {reason}"


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_that_cannot_say_the_checkouts_state_is_one_line(tmp_path, monkeypatch):
    root = _snapshot(tmp_path / "KernelBench", {})
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", ""], ):
        _git(root, *command, *(["--allow-empty-message"] if command[0] == "commit" else []))
    commit, date, subject = kernelbench.revision(root)
    assert subject == "" and len(commit) == 40
    real = subprocess.run

    def status_fails(args, *rest, **kwargs):
        if "ls-tree" in args:  # as git fails where there is no repository
            args = ["git", "-C", str(tmp_path / "nowhere"), "ls-tree", "HEAD"]
        return real(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "run", status_fails)
    with pytest.raises(InputError) as caught:
        kernelbench.revision(root)
    [problem] = caught.value.problems
    assert (problem.file, problem.path) == (str(root), "$")
    assert problem.message.startswith("cannot read the checkout's state with git: fatal: ")


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_is_run_with_a_bound_and_its_failures_checked(tmp_path, monkeypatch):
    # A git that hangs (a credential prompt, a lock) must not hang the import.
    root = _snapshot(tmp_path / "KernelBench", {})
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "s"]):
        _git(root, *command)
    calls, real = [], subprocess.run

    def recording(args, *rest, **kwargs):
        calls.append(kwargs)
        return real(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "run", recording)
    kernelbench.revision(root)
    # Every call bounded and checked, and none may take the index lock to write a refresh back.
    assert calls and all(k.get("check") is True and 0 < k.get("timeout", 0) <= 60 for k in calls)
    assert all(k["env"].get("GIT_OPTIONAL_LOCKS") == "0" for k in calls)


def test_a_bad_problem_name_does_not_stop_the_ones_after_it(tmp_path):
    timings = {"baseline_time_torch.json": {"level1": {"1_Bad-name.py": TIMING, "2_ReLU.py": TIMING}}}
    plan, _ = plan_import(_snapshot(tmp_path, timings, {"2_ReLU.py": RELU}))
    assert [m for _, _, m in _problems(plan)] == ["not a problem file name like 23_Softmax.py"] and plan.imported == 1
