"""Guards that cannot be talked out of it (issue 43 item 5): each check keeps its own references,
taken before any implementation is imported, to what it calls. Each cheat of the guards is
planted here and refused; the resealed snapshot, which only a closed guard refuses, in a
measuring process of its own (tests/rerun/plugins/intruders.py)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="rerun measures with torch")
pytest.importorskip("triton", reason="the bundled kernel needs triton")
if not torch.cuda.is_available():
    pytest.importorskip("numpy", reason="Triton's interpreter needs numpy")

from sitegen.operations.jsd import JSD as JSDOperation  # noqa: E402
from sitegen.rerun.checks import guards  # noqa: E402
from sitegen.rerun.checks.gate import gate_workload  # noqa: E402
from sitegen.rerun.checks.timedcheck import TimedCheck  # noqa: E402
from sitegen.rerun.measure.clock import Clock  # noqa: E402
from sitegen.rerun.measure.passes import PassRunner  # noqa: E402
from sitegen.rerun.measure.timing import collect  # noqa: E402
from sitegen.rerun.selftest import cheats  # noqa: E402

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
OP = JSDOperation()
W = OP.workload("fp32", tokens=8, vocab=64)
PLUGINS = Path(__file__).resolve().parent / "plugins"


def timed(module, name="m"):
    clock = Clock(DEVICE)
    clock.watch.subject = name
    runner = PassRunner(module, OP, W, DEVICE, "forward", seed=3, rtol=OP.tolerances["fp32"], clock=clock)
    try:
        return collect(clock, runner, min_samples=24, min_ms=0.0, max_ms=0.0, repeated_probe=False, warmup=(1, 0.0))
    finally:
        guards.restore()


def test_switching_the_guard_off_by_its_name_is_refused_and_undone():
    real = guards.changed
    per = timed(cheats.GuardPatch())
    seen = per["guards"]["clock_intact"]
    assert "sitegen.rerun.checks.guards.changed" in seen and "time.perf_counter_ns" in seen, per["guards"]
    assert guards.changed is real


BUILD_CHECK_OFF = '''
import time
from sitegen.operations.base import Implementation
from sitegen.rerun.checks import guards


class K(Implementation):
    operation = "jsd"

    def build(self, *, dynamic=False):
        guards.check_build = lambda *a, **k: None
        guards.changed = lambda *a, **k: []
        time.monotonic = lambda: 0.0
        return None
'''


def test_switching_the_build_check_off_by_its_name_is_refused(tmp_path, monkeypatch):
    from sitegen.rerun.measure.worker import implementation

    (tmp_path / "build_check_off.py").write_text(BUILD_CHECK_OFF)
    monkeypatch.syspath_prepend(str(tmp_path))
    real = (guards.check_build, guards.changed)
    got = implementation("build_check_off:K", "jsd")
    assert got["ok"] is False and got["reason"].startswith("refused by clock_intact: importing or building it replaced "), got
    for label in ("time.monotonic", "sitegen.rerun.checks.guards.changed", "sitegen.rerun.checks.guards.check_build"):
        assert label in got["reason"], got
    assert (guards.check_build, guards.changed) == real


def test_a_patched_norm_lets_no_zero_gradient_through_the_gate():
    real = torch.linalg.vector_norm
    out = gate_workload({"m": cheats.NormPatch()}, OP, W, OP.tolerances["fp32"], DEVICE)["m"]
    assert torch.linalg.vector_norm is real
    assert out["status"] == "failed" and "clock_intact: torch.linalg.vector_norm" in out["notes"], out


def test_the_comparisons_judge_with_the_norm_they_kept(monkeypatch):
    from sitegen.rerun.checks import judging as gate

    # Past the guard (a patch it did not see): the gate's comparison still reads the real norm
    # (it runs in the judge process, where no implementation runs; here, called in this one).
    monkeypatch.setattr(torch.linalg, "vector_norm", lambda *a, **k: torch.zeros((), dtype=torch.float64))
    ref = torch.ones(4, 8, dtype=torch.float64)
    err, max_abs, norm = gate._errors(torch.zeros(4, 8), ref)
    assert (err, max_abs, norm) == (pytest.approx(32 ** 0.5), 1.0, pytest.approx(32 ** 0.5))


def test_a_replaced_generator_picks_nothing_the_timed_check_draws():
    check = TimedCheck([(W["tokens"], W["vocab"])], DEVICE, 1e-3)
    check.calls = [None, None]  # past the calls always checked
    real = random.SystemRandom.random
    random.SystemRandom.random = lambda self_: 0.999  # what the generator-swap cheat plants
    try:
        picked = sum(check.pick() for _ in range(200))
    finally:
        random.SystemRandom.random = real
    assert 20 < picked < 90, picked  # about a quarter (CHECK_SHARE); none at all before issue 43


def test_a_generator_swap_while_timed_is_refused_and_undone():
    real = random.SystemRandom.random
    per = timed(cheats.GeneratorSwap())
    assert "random.SystemRandom.random" in per["guards"].get("clock_intact", ""), per["guards"]
    assert random.SystemRandom.random is real


def test_a_thread_started_from_code_compiled_under_torch_s_name_is_charged():
    per = timed(cheats.SpoofedThread(), name="spoofed-thread")
    assert "'cheat-gradient'" in per["guards"].get("host_threads", ""), per["guards"]


def test_a_resealed_snapshot_is_refused_in_a_measuring_process(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(PLUGINS), os.environ.get("PYTHONPATH")])))
    out = tmp_path / "records"
    done = subprocess.run([sys.executable, "-m", "sitegen", "rerun", "--interpret", "--tokens", "8", "--vocab", "64",
                           "--dtype", "fp32", "--pass", "forward", "--impl", "intruders:Resealer", "--processes", "1",
                           "--out", str(out), "--json"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)["runs"]
    run = json.loads((out / row["file"]).read_text())
    assert row["status"] == "failed", row
    reason = run["spec"]["statusReason"]
    assert "refused by clock_intact" in reason and "time.perf_counter_ns" in reason, reason


def test_a_kept_method_s_code_swapped_in_place_is_seen_and_put_back():
    import secrets

    func = secrets.randbits.__func__  # SystemRandom.getrandbits, bound to secrets' generator
    code = func.__code__
    func.__code__ = (lambda self, k: 0).__code__
    try:
        assert "secrets.randbits" in guards.changed()
        guards.restore()
        assert func.__code__ is code and guards.changed() == []
    finally:
        func.__code__ = code
