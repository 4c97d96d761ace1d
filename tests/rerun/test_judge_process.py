"""The judge never shares a process with the judged (issue 43 item 2): the gate's seeds, inputs'
references and verdicts live in the judge process (sitegen.rerun.checks.judge), which runs no
outside code; the measuring process calls the implementation and hands its outputs over, copied
on receipt. Each test here would pass a cheat if the gate were judged in the measuring process."""

from __future__ import annotations

import gc
import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

for _module in ("torch", "triton", "numpy"):
    pytest.importorskip(_module, reason="rerun measures with torch (numpy: Triton's interpreter)")

import torch  # noqa: E402

from sitegen.operations.jsd import JSD  # noqa: E402
from sitegen.rerun.checks import gate, handover, judging  # noqa: E402
from sitegen.rerun.selftest.cheats import ForwardSkipsDx, WrongGradient, _Given, _honest, _loss_only, bundled_kernel  # noqa: E402

OP = JSD()
W = OP.workload("fp32", tokens=8, vocab=64)
RTOL = OP.tolerances["fp32"]
PLUGINS = Path(__file__).resolve().parent / "plugins"


def _gate(modules: dict) -> dict:
    return gate.gate_workload(modules, OP, W, RTOL, "cpu")


def _references_here(shape) -> list:
    """Every float64 tensor of ``shape`` this process holds: up the calling frames (and what they
    hold in tuples and lists), and among the objects the collector tracks."""
    found, frame = [], sys._getframe(1)
    while frame is not None:
        for value in list(frame.f_locals.values()):
            for v in value if isinstance(value, (tuple, list)) else (value,):
                if isinstance(v, torch.Tensor) and v.dtype == torch.float64 and tuple(v.shape) == shape:
                    found.append(v)
        frame = frame.f_back
    found += [o for o in gc.get_objects() if type(o) is torch.Tensor and o.dtype == torch.float64
              and tuple(o.shape) == shape]
    return found


class ReferenceThief(torch.nn.Module):
    """Computes the loss only; the gradient is the float64 reference it finds in its own process
    (the gate's, if the gate is judged here), else a buffer it never writes."""

    def __init__(self):
        super().__init__()
        self.stolen = 0

    def forward(self, x, y):
        refs = _references_here(tuple(x.shape))
        if refs:
            self.stolen += 1
            return _Given.apply(x, _loss_only(x, y), refs[0].to(x.dtype))
        return ForwardSkipsDx()(x, y)


def test_the_reference_is_not_in_the_process_that_runs_the_implementation():
    thief = ReferenceThief()
    out = _gate({"thief": thief})["thief"]
    assert thief.stolen == 0, "a float64 reference of the gradient's shape was in the measuring process"
    assert out["status"] == "failed" and out["cases"] and not any(c["passed"] for c in out["cases"]), out


def test_a_comparison_replaced_in_the_measuring_process_changes_no_verdict(monkeypatch):
    # What a cheat past the guard would do in its own process: every comparison passes there.
    monkeypatch.setattr(judging, "compare", lambda *a, **k: {"maxAbsError": 0.0, "maxRelError": 0.0,
                                                             "fullyWritten": True, "passed": True})
    monkeypatch.setattr(judging, "_errors", lambda got, ref: (0.0, 0.0, 1.0))
    out = _gate({"wrong": WrongGradient()})["wrong"]
    assert out["status"] == "failed" and out["maxRelError"] == pytest.approx(0.05, rel=1e-3), out


class LateEditor(torch.nn.Module):
    """Hands over a gradient 5% off, keeps it, and on its next call writes the right one into it:
    right by the time a judge that read the shared output late (at the end of the workload) would
    look, wrong when it was handed over."""

    def __init__(self):
        super().__init__()
        self.kept = None

    def forward(self, x, y):
        if self.kept is not None:
            given, right = self.kept
            given.copy_(right)
        loss, grad = _honest(x, y)
        given = grad * 1.05
        self.kept = (given, grad)
        return _Given.apply(x, loss, given)


def test_an_output_edited_after_its_handover_is_judged_as_it_was_handed_over():
    out = _gate({"late": LateEditor()})["late"]
    assert [c["passed"] for c in out["cases"]] == [False] * len(out["cases"]) and out["cases"], out
    assert all(c["maxRelError"] == pytest.approx(0.05, rel=1e-3) for c in out["cases"]), out


def test_the_receiver_copies_a_handed_over_tensor_before_it_acknowledges():
    shared = torch.arange(12, dtype=torch.float32).reshape(3, 4).share_memory_()
    fd, size = shared.untyped_storage()._share_fd_cpu_()
    got = handover._copy_in({"dtype": "float32", "shape": [3, 4], "cpu": {"size": size, "fd": 0}}, [os.dup(fd)], "cpu", 12)
    shared.fill_(-1.0)  # the sender's shared storage, written after the handover
    assert torch.equal(got, torch.arange(12, dtype=torch.float32).reshape(3, 4))
    assert got.untyped_storage().data_ptr() != shared.untyped_storage().data_ptr()


def _pair():
    a, b = socket.socketpair()
    return handover.Channel(a), handover.Channel(b)


def test_a_tensor_crosses_a_channel_with_its_values_and_the_sender_waits_for_the_copy():
    send, recv = _pair()
    t = torch.arange(20, dtype=torch.float64).reshape(4, 5)[:, 1:4]  # a strided view
    got = {}
    th = threading.Thread(target=lambda: got.update(zip(("kind", "payload", "tensors"), recv.recv("cpu", most=[12, 0]))))
    th.start()
    send.send("outputs", {"impl": "m"}, [t, None])
    th.join()
    assert got["kind"] == "outputs" and got["payload"] == {"impl": "m"}
    assert torch.equal(got["tensors"][0], t) and got["tensors"][1] is None


def _described(body: dict | bytes, fds: list[int]):
    """``body`` (a header, or raw bytes) sent over a fresh pair with ``fds`` riding along; the receiving end."""
    a, b = socket.socketpair()
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    socket.send_fds(a, [len(data).to_bytes(4, "big")], fds)
    a.sendall(data)
    a.close()
    return handover.Channel(b)


def test_a_tensor_larger_than_its_reference_is_refused_before_any_memory_is_taken(monkeypatch):
    # The judge states the most elements of each output (its reference's); a header naming more,
    # or more tensors than references, is refused before torch.empty is asked for them.
    asked = []
    monkeypatch.setattr(torch, "empty", lambda *a, **k: asked.append(a) or (_ for _ in ()).throw(AssertionError("allocated")))
    fd = os.memfd_create("t")
    os.ftruncate(fd, 8)
    huge = {"kind": "outputs", "payload": {}, "tensors": [{"dtype": "float32", "shape": [1 << 20, 1 << 20], "cpu": {"size": 4 << 40, "fd": 0}}]}
    with pytest.raises(handover.Refused, match="at most 2"):
        _described(huge, [fd]).recv("cpu", most=[2])
    extra = {"kind": "outputs", "payload": {}, "tensors": [None, {"dtype": "float32", "shape": [1], "cpu": {"size": 4, "fd": 0}}]}
    with pytest.raises(handover.Refused, match="2 tensors where at most 1"):
        _described(extra, [fd]).recv("cpu", most=[2])
    assert asked == []
    os.close(fd)


def test_a_shared_file_smaller_than_its_tensor_is_refused_and_not_grown():
    fd = os.memfd_create("t")
    os.ftruncate(fd, 4)
    short = {"kind": "outputs", "payload": {}, "tensors": [{"dtype": "float32", "shape": [4], "cpu": {"size": 16, "fd": 0}}]}
    with pytest.raises(handover.Refused, match="of 4 bytes for a tensor of 16"):
        _described(short, [os.dup(fd)]).recv("cpu", most=[4])
    assert os.fstat(fd).st_size == 4
    os.close(fd)


def test_a_cuda_ipc_handle_is_never_opened():
    # A handle the measuring process made would map memory at offsets it states (handover's docstring).
    handle = {"kind": "outputs", "payload": {}, "tensors": [{"dtype": "float32", "shape": [4], "cuda": {
        "device": 0, "handle": "AAAA", "size": 16, "offset": 0, "refHandle": "AAAA", "refOffset": 1 << 40}}]}
    with pytest.raises(handover.Refused, match="not in a shared-memory file"):
        _described(handle, []).recv("cpu", most=[4])


def test_a_refused_header_leaves_no_descriptor_open():
    # Refused while the header is read (not JSON), after the descriptors arrived with its length.
    fd = os.memfd_create("t")
    before = len(os.listdir("/proc/self/fd"))
    chan = _described(b"not json", [fd])
    with pytest.raises(handover.Refused, match="not JSON"):
        chan.recv("cpu")
    chan.close()
    assert len(os.listdir("/proc/self/fd")) == before
    os.close(fd)


def test_a_message_that_is_not_this_protocol_s_is_refused_and_runs_nothing(tmp_path):
    import pickle

    marker = tmp_path / "ran"

    class Runs:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    for body in (pickle.dumps(Runs()), json.dumps({"kind": "outputs", "payload": {}, "tensors": [{"dtype": "object"}]}).encode(),
                 json.dumps([1, 2]).encode()):
        a, b = socket.socketpair()
        a.sendall(len(body).to_bytes(4, "big") + body)
        with pytest.raises(handover.Refused):
            handover.Channel(b).recv("cpu")
    assert not marker.exists()


def test_a_verdict_the_measuring_process_rewrites_is_not_the_one_recorded(tmp_path):
    # GateForger: right at the timed shape only, and rewrites the gate outcomes its process
    # stores to passed. Judged in that process, its run would pass; the judge's verdict fails it.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(PLUGINS), os.environ.get("PYTHONPATH")])),
               GATE_FORGER_TOKENS="4", GATE_FORGER_VOCAB="64")
    out = tmp_path / "records"
    done = subprocess.run([sys.executable, "-m", "sitegen", "rerun", "--interpret", "--tokens", "4", "--vocab", "64",
                           "--dtype", "fp32", "--pass", "forward", "--impl", "intruders:GateForger",
                           "--processes", "1", "--out", str(out), "--json"], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    [row] = json.loads(done.stdout)["runs"]
    run = json.loads((out / row["file"]).read_text())
    correctness = run["spec"]["correctness"]
    assert row["status"] != "passed" and correctness["status"] == "failed", (row, correctness)
    # Only the shapes other than the timed one were wrong: the judge saw what the process handed over.
    cases = correctness["cases"]
    assert [c["passed"] for c in cases] == [c["shape"] == [4, 64] for c in cases], cases


def test_a_measuring_process_asked_to_gate_without_a_judge_refuses_in_one_line(tmp_path):
    from sitegen.rerun.measure.exchange import PlannedImpl, WorkerPlan
    from sitegen.rerun.checks.judge import JUDGE_FD_ENV

    plan = WorkerPlan(operation="sitegen.operations.jsd:JSD", device="cpu", interpret=True,
                      workloads=(W.as_json(),), passes=("forward",), mode="controlled",
                      impls=(PlannedImpl("torch", "sitegen.operations.jsd_torch:Torch"),), process=0, processes=1,
                      gate=True, skip=(), seed=1, repeated_probe=False, min_samples=3, min_time_ms=1.0, max_time_ms=2.0,
                      warmup=(1, 0.0), rtol={"fp32": 1e-3})
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan.to_json()))
    env = {k: v for k, v in os.environ.items() if k != JUDGE_FD_ENV}
    done = subprocess.run([sys.executable, "-m", "sitegen.rerun.measure.worker", str(path), str(tmp_path / "result.json")],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 2 and not (tmp_path / "result.json").exists()
    assert done.stderr.strip().count("\n") == 0 and "no judge process was handed down" in done.stderr, done.stderr


def test_a_workload_the_judge_gave_no_verdict_for_fails_the_gate():
    # The first measuring process gates every workload; one it never asked the judge about would
    # otherwise be timed and written "passed" with its correctness not checked.
    from sitegen.core.workload import Workload
    from sitegen.rerun.outcome.assemble import outcome
    from sitegen.rerun.sweep import every_load_judged

    asked, skipped = JSD().workload("fp32", tokens=4, vocab=64), JSD().workload("fp32", tokens=8, vocab=64)
    judged = every_load_judged({asked.key: {"status": "passed"}}, [asked, skipped])
    assert judged[asked.key] == {"status": "passed"} and judged[skipped.key]["status"] == "failed"
    assert isinstance(skipped, Workload)
    from sitegen.core.workload import Case

    result = outcome(Case(skipped, "forward", "m"), judged[skipped.key], [{"samplesNs": [1000] * 10}], op=JSD(),
                     copy_bytes_per_s=None, process_counts=[None], expected_counts=[1], repeated_probe=False)
    assert result["status"] == "failed" and "never timed" in result["statusReason"]


def test_a_measuring_process_that_asks_for_a_second_gate_of_a_workload_is_refused_and_keeps_the_first_verdict():
    # A forger whose implementation is right on some draws would ask again until one passed:
    # the parent's judge gates a workload once, and its report holds that first verdict alone.
    from sitegen.rerun.checks import judge as judge_module

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p or os.getcwd() for p in sys.path)}
    config = {"operation": judge_module.operation_target(OP), "device": "cpu", "interpret": True, "rtol": {"fp32": RTOL}}
    proc, sock, report = judge_module.start(config, report=True, env=env)
    chan = handover.Channel(sock)
    first = gate.gate_workload({"wrong": WrongGradient()}, OP, W, RTOL, "cpu", judge=chan)
    assert first == {"wrong": {"status": "failed"}}
    with pytest.raises((handover.Refused, EOFError, OSError)):
        gate.gate_workload({"wrong": bundled_kernel()}, OP, W, RTOL, "cpu", judge=chan)
    chan.close()
    proc.wait(timeout=60)
    kind, payload, _ = report.recv("cpu", ack=False)
    assert kind == "report" and payload["gate"]["wrong"][W.key]["status"] == "failed"
