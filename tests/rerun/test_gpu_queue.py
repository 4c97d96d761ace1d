"""benchmarks/gpu_queue.py on the CPU: a fake list against a copy of records/' KL divergence runs,
a fake `sitegen rerun` that writes one run file (or hangs), and the archives it leaves."""

from __future__ import annotations

import importlib.util
import json
import shlex
import shutil
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
QUEUE = ROOT / "benchmarks" / "gpu_queue.py"
H100, H200 = "NVIDIA H100 80GB HBM3", "NVIDIA H200"

# Writes one new run file into --out (and a shared document every part writes alike), prints a
# --json summary; hangs when its --axis vocab= is $FAKE_HANG_VOCAB, as a rerun cut short by the budget.
FAKE_RERUN = textwrap.dedent('''
    import os, sys, time, uuid
    from pathlib import Path
    args = sys.argv[1:]
    out = Path(args[args.index("--out") + 1])
    vocab = next(a.split("=", 1)[1] for a in args if a.startswith("vocab="))
    with open(os.environ["FAKE_CALLS"], "a") as calls:
        calls.write(" ".join(args[:args.index("--records")]) + "\\n")
    if vocab == os.environ.get("FAKE_HANG_VOCAB"):
        time.sleep(120)
    run = out / "runs" / "kl-div" / f"fake-{vocab}-{uuid.uuid4().hex[:8]}.json"
    run.write_text("{}")
    (out / "environments" / "fake-shared.json").write_text('{"same": "bytes"}')
    print("measured vocab", vocab, file=sys.stderr)
    print('{"ok": true}')
''')


@pytest.fixture(scope="module")
def registry(tmp_path_factory) -> Path:
    """records/' KL divergence runs and what they reference for the skip check (not the whole 13k files)."""
    root = tmp_path_factory.mktemp("records")
    for folder in ("runs/kl-div", "workloads/kl-div", "environments"):
        shutil.copytree(ROOT / "records" / folder, root / folder)
    return root


def queue(tmp_path: Path, registry: Path, parts: str, *args: str, hang: str | None = None) -> tuple[subprocess.CompletedProcess, list[str]]:
    listing = tmp_path / "list.toml"
    listing.write_text(textwrap.dedent(parts))
    fake = tmp_path / "fake_rerun.py"
    fake.write_text(FAKE_RERUN)
    calls = tmp_path / "calls.txt"
    calls.write_text("")
    env = {"PATH": "/usr/bin:/bin", "FAKE_CALLS": str(calls), **({"FAKE_HANG_VOCAB": hang} if hang else {})}
    proc = subprocess.run([sys.executable, str(QUEUE), "--list", str(listing), "--records", str(registry),
                           "--out", str(tmp_path / "out"), "--scratch", str(tmp_path / "scratch"),
                           "--rerun", f"{sys.executable} {fake}", *args],
                          capture_output=True, text=True, env=env, timeout=300)
    return proc, calls.read_text().splitlines()


def part(pid: str, gpus: list[str], vocab: list[int], passes=("forward", "backward"), impls=("liger", "torch"),
         estimate: int = 5) -> str:
    return f"""
        [[part]]
        id = "{pid}"
        operation = "kl-div"
        passes = {json.dumps(list(passes))}
        impls = {json.dumps(list(impls))}
        axes = {{ vocab = {json.dumps(vocab)} }}
        gpus = {json.dumps(gpus)}
        estimate_s = {estimate}
    """


def members(tar: Path) -> list[str]:
    with tarfile.open(tar) as t:
        return sorted(t.getnames())


def test_a_part_in_records_for_this_gpu_is_skipped_and_one_present_only_for_another_gpu_is_run(tmp_path, registry):
    # Liger and torch's KL forward and backward at vocab 4096 are committed for both GPUs;
    # torch.compile's at vocab 4096 for the H100 80GB HBM3 alone.
    parts = (part("both", [H100, H200], [4096]) + part("compile", [H100, H200], [4096], impls=["torch-compile"]))
    proc, calls = queue(tmp_path, registry, parts, "--gpu", H200)
    assert proc.returncode == 0, proc.stderr
    assert "both: in records/ already (4 runs)" in proc.stdout
    assert calls == ["--operation kl-div --pass forward,backward --impl torch-compile --dtype fp32 "
                     "--axis tokens=16384 --axis vocab=4096"]
    proc, calls = queue(tmp_path, registry, parts, "--gpu", H100)
    assert proc.returncode == 0 and calls == [], proc.stdout + proc.stderr
    assert "compile: in records/ already (2 runs)" in proc.stdout


def test_a_part_partly_present_runs_only_what_is_missing(tmp_path, registry):
    # On the H200, Liger's KL forward is committed at vocab 4096 and 32768, not at 8192.
    proc, calls = queue(tmp_path, registry, part("p", [H200], [4096, 8192, 32768], passes=["forward"],
                                                 impls=["liger"]), "--gpu", H200)
    assert proc.returncode == 0, proc.stderr
    assert "p: to run, 1 of 3 runs missing" in proc.stdout
    assert calls == ["--operation kl-div --pass forward --impl liger --dtype fp32 --axis tokens=16384 --axis vocab=8192"]


def test_a_failed_run_in_records_does_not_count_as_present(tmp_path, registry):
    # Liger's KL forward at vocab 4096 on the H200 is committed; marked failed, the part runs it again.
    root = tmp_path / "records"
    shutil.copytree(registry, root)
    failed = 0
    for path in sorted((root / "runs" / "kl-div").glob("*.json")):
        doc = json.loads(path.read_text())
        command = doc["spec"].get("evidence", {}).get("command", "")
        if "--pass forward" in command and "--impl liger" in command and "vocab=4096" in command:
            doc["spec"]["status"] = "failed"
            path.write_text(json.dumps(doc))
            failed += 1
    assert failed >= 1
    proc, calls = queue(tmp_path, root, part("p", [H200], [4096], passes=["forward"], impls=["liger"]), "--gpu", H200)
    assert proc.returncode == 0, proc.stderr
    assert calls == ["--operation kl-div --pass forward --impl liger --dtype fp32 --axis tokens=16384 --axis vocab=4096"]


def load_queue():
    spec = importlib.util.spec_from_file_location("gpu_queue", QUEUE)
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpu_queue"] = module  # pydantic resolves the models' annotations through it
    spec.loader.exec_module(module)
    return module


def test_the_budget_starts_only_the_parts_whose_estimate_fits_what_is_left(tmp_path, registry, monkeypatch, capsys):
    gpu_queue = load_queue()
    now = [0.0]
    took = {"1001": 100, "1002": 300, "1003": 50, "1004": 60}  # each part takes its estimate, on a clock we move
    ran = []

    def fake_run(cmd, log, summary, timeout):
        vocab = cmd[cmd.index("--axis", cmd.index("--axis") + 1) + 1].split("=")[1]
        ran.append(vocab)
        now[0] += took[vocab]
        log.write_text("")
        summary.write_text("{}")
        return 0

    monkeypatch.setattr(gpu_queue, "clock", lambda: now[0])
    monkeypatch.setattr(gpu_queue, "run_part", fake_run)
    listing = tmp_path / "list.toml"
    listing.write_text(textwrap.dedent(part("first", [H100], [1001], estimate=100) + part("too-long", [H100], [1002], estimate=300)
                                       + part("short", [H100], [1003], estimate=50) + part("now-too-long", [H100], [1004], estimate=60)))
    rc = gpu_queue.main(["--list", str(listing), "--records", str(registry), "--out", str(tmp_path / "out"), "--gpu", H100,
                         "--scratch", str(tmp_path / "scratch"), "--budget", "170"])
    out = capsys.readouterr().out
    assert rc == 0
    # 170 s less 10 for packing: 100 fits; then 60 s are left, too few for 300 but enough for 50; then 10 s, too few for 60.
    assert ran == ["1001", "1003"]
    assert "too-long: not started, ~300 s needed, 60 s left" in out
    assert "now-too-long: not started, ~60 s needed, 10 s left" in out
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["first.tar", "short.tar"]


def test_each_finished_part_is_its_own_archive_of_the_files_it_created(tmp_path, registry):
    proc, _ = queue(tmp_path, registry, part("a", [H100], [1001]) + part("b", [H100], [1002]), "--gpu", H100)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["a.tar", "b.tar"]
    names = members(out / "a.tar")
    runs = [n for n in names if n.startswith("records/runs/")]
    assert len(runs) == 1 and runs[0].startswith("records/runs/kl-div/fake-1001-")
    assert set(names) == {runs[0], "records/environments/fake-shared.json", "parts/a.log", "parts/a.json", "parts/a.gpu.txt"}
    with tarfile.open(out / "a.tar") as t:
        assert t.extractfile("parts/a.log").read().decode().strip() == "measured vocab 1001"
        assert t.extractfile("parts/a.gpu.txt").read().decode().strip() == H100
    # b's archive stands alone: it holds the shared document a wrote first, and none of a's runs.
    names = members(out / "b.tar")
    assert "records/environments/fake-shared.json" in names and not any("fake-1001" in n for n in names)
    assert "a: exit 0" in proc.stdout and "b: exit 0" in proc.stdout


def test_a_part_cut_short_by_the_budget_leaves_no_archive_and_the_finished_ones_stay(tmp_path, registry):
    parts = part("done", [H100], [1001], estimate=1) + part("hangs", [H100], [1002], estimate=1) \
        + part("never", [H100], [1003], estimate=1)
    proc, calls = queue(tmp_path, registry, parts, "--gpu", H100, "--budget", "16", hang="1002")
    assert proc.returncode == 1
    assert "hangs: cut off at the budget" in proc.stdout
    assert len(calls) == 2  # nothing started after the budget ran out
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["done.tar"]
    assert not list((tmp_path / "scratch" / "records" / "runs" / "kl-div").glob("fake-1002-*"))


def test_past_max_archives_the_later_parts_share_one_and_group_seconds_packs_by_window(tmp_path, registry):
    parts = "".join(part(f"p{k}", [H100], [1000 + k]) for k in range(1, 5))
    proc, _ = queue(tmp_path, registry, parts, "--gpu", H100, "--max-archives", "3")
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out"
    assert sorted(p.name for p in out.iterdir()) == ["p1.tar", "p2.tar", "queue-more.tar"]
    more = members(out / "queue-more.tar")
    assert [n for n in more if n.endswith(".log")] == ["parts/p3.log", "parts/p4.log"]
    assert more.count("records/environments/fake-shared.json") == 1
    shutil.rmtree(out)
    proc, _ = queue(tmp_path, registry, parts, "--gpu", H100, "--group-seconds", "3600")
    assert sorted(p.name for p in out.iterdir()) == ["queue-01.tar"]
    assert [n for n in members(out / "queue-01.tar") if n.endswith(".log")] == [f"parts/p{k}.log" for k in range(1, 5)]


def test_a_bad_list_is_one_line_naming_the_file_and_the_json_path(tmp_path, registry):
    bad = part("x", [H100], [4096]).replace('"forward", "backward"', '"forward", "sideways"')
    proc, calls = queue(tmp_path, registry, bad, "--gpu", H100)
    assert proc.returncode == 1 and calls == []
    assert proc.stderr.strip().splitlines() == [f"{tmp_path / 'list.toml'}: $.part[0].passes: sideways: kl-div has forward, backward, full"]


def test_every_part_of_the_committed_list_is_a_command_sitegen_rerun_accepts():
    gpu_queue = load_queue()
    from sitegen.cli.rerun import rerun

    planned = gpu_queue.load_list(ROOT / "benchmarks" / "gpu_queue.toml")
    assert {g for p in planned for g in p.part.gpus} == {H100, H200}
    for p in planned:
        params = rerun.make_context("rerun", p.args()).params
        assert params["operation"] == p.op.name and list(params["passes"]) == p.part.passes, shlex.join(p.args())
        assert p.estimate_s <= 540 - gpu_queue.PACK_S, p.part.id  # every part fits one device call's budget
