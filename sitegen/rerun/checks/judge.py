"""The judge process (issue 43 item 2): ``python -m sitegen.rerun.checks.judge CONFIG_JSON WORKER_FD [REPORT_FD]``.

It imports torch, the operation (its inputs and float64 reference), sitegen.rules and the checks,
and no implementation: no outside code runs in it. It owns the gate's secrets (which seeds, so
which inputs) and its verdicts. The measuring process asks it to gate a workload; the judge draws
each checked shape's inputs from a secret seed, computes the reference, hands the inputs over
(sitegen.rerun.checks.handover: host shared memory, copied on receipt, on a GPU too),
takes back each implementation's loss and gradients (copied on receipt too) and compares them.

Where the rerun's parent started it (sitegen.rerun.sweep), its verdicts go to the parent over a
socket of their own (REPORT_FD) and the measuring process is told only passed or failed: the
gate outcome a run records is the judge's, whatever the measuring process writes in its result.
Started by gate_workload itself (tests, the self-test: spawn_local), it answers the caller.

It marks itself not dumpable before anything else, so that a process of the same user (the
measuring process) can neither attach to it nor open its /proc files (memory, descriptors).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

from sitegen.rerun.checks.handover import Channel, Refused

_PR_SET_DUMPABLE = 4
JUDGE_FD_ENV = "SITEGEN_JUDGE_FD"
"""The environment variable that names, to a measuring process, the descriptor of its socket to the judge."""


def _not_dumpable() -> None:
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: nothing to mark
        pass


class Judge:
    """The judge's state: the operation, the bounds, the verdicts so far ({impl: {wkey: outcome}})."""

    def __init__(self, op, device: str, rtol: dict[str, float] | None, *, once: bool = False):
        self.op, self.device, self.rtol, self.once = op, device, rtol, once
        self.verdicts: dict[str, dict[str, dict]] = {}

    def gate(self, chan: Channel, payload: dict) -> dict[str, dict]:
        """One workload's gate, served over ``chan``: {impl: outcome}."""
        from sitegen.core.workload import Workload
        from sitegen.rerun.checks import judging

        w = Workload.from_json(payload["workload"])
        if self.once and any(w.key in seen for seen in self.verdicts.values()):
            # Gated again, an implementation that passes some draws would be asked until it did.
            # (A judge its caller started, spawn_local, serves that caller's own checks again.)
            raise Refused(f"workload {w.key} gated a second time")
        impls = [name for name in payload["impls"] if isinstance(name, str)]
        # The parent's bounds where it gave them; the caller's only where the caller is the one
        # who started this judge (spawn_local).
        rtol = self.rtol[w.dtype] if self.rtol is not None else float(payload["rtol"])
        results = {name: {"cases": [], "errors": []} for name in impls}
        for shape, seed in judging.checked_shapes(self.op, w):
            inputs, g, ref_loss, ref_grads = judging.references(self.op, shape, seed, self.device)
            dims = list(inputs[0].shape)
            chan.send("inputs", {"dims": dims, "gradOutput": g is not None}, [*inputs, g])
            del inputs
            for name in impls:
                # The loss and one gradient per reference, each no larger than its reference:
                # the judge never takes more memory than the outputs it expects.
                most = [ref_loss.numel() if g is not None else 1] + [0 if r is None else r.numel() for r in ref_grads]
                kind, said, handed = chan.recv(self.device, most=most)
                if kind != "outputs" or said.get("impl") != name:
                    raise Refused(f"expected {name}'s outputs, got {kind} of {said.get('impl')!r}")
                if said.get("error") is not None:
                    results[name]["errors"].append(f"{dims} seed {seed}: {str(said['error'])[:500]}")
                    continue
                loss, grads = (handed[0] if handed else None), list(handed[1:])
                grads = (grads + [None] * len(ref_grads))[:len(ref_grads)]  # a missing gradient is all wrong
                out = judging.compare(loss, grads, ref_loss, ref_grads, rtol, tensor_output=g is not None)
                if "error" in out:
                    results[name]["errors"].append(f"{dims} seed {seed}: {out['error']}")
                else:
                    results[name]["cases"].append({"shape": dims, "seed": seed, **out})
                del loss, grads, handed
            del ref_grads
            if self.device.startswith("cuda"):
                import torch

                torch.cuda.empty_cache()
        outcomes = judging.summarise(results)
        for name, outcome in outcomes.items():
            self.verdicts.setdefault(name, {})[w.key] = outcome
        return outcomes


def serve(config: dict, worker: Channel, report: Channel | None) -> None:
    """Answer the measuring process until it says done (or goes away); then report."""
    from sitegen import operations

    judge = Judge(operations.load(config["operation"]), config["device"], config.get("rtol"), once=report is not None)
    try:
        while True:
            try:
                kind, payload, _ = worker.recv("cpu")
            except EOFError:
                break
            if kind == "done":
                break
            if kind != "gate":
                raise Refused(f"a {kind!r} request; the judge serves gate and done")
            outcomes = judge.gate(worker, payload)
            if report is None:
                worker.send("gated", {"outcomes": outcomes})
            else:  # the measuring process learns what it needs to skip, no more
                worker.send("gated", {"outcomes": {n: {"status": o["status"]} for n, o in outcomes.items()}})
    except (Refused, EOFError, KeyError, TypeError, ValueError) as exc:
        # Whatever the measuring process said that this protocol does not: the gate of the
        # workload in progress is not recorded, so its implementations have no passed gate.
        print(f"judge: refused the measuring process's message: {exc}", file=sys.stderr, flush=True)
    finally:
        if report is not None:
            # Left in the socket for the parent, which reads it once the measuring process has
            # ended; that process waits for this one to end first (on a GPU, its context with it).
            report.send("report", {"gate": judge.verdicts}, wait=False)


def main(argv: list[str]) -> int:
    _not_dumpable()
    config = json.loads(argv[0])
    if config.get("interpret"):
        os.environ["TRITON_INTERPRET"] = "1"
    worker = Channel.from_fd(int(argv[1]))
    report = Channel.from_fd(int(argv[2])) if len(argv) > 2 else None
    serve(config, worker, report)
    return 0


# -- starting one --------------------------------------------------------------------------------

def start(config: dict, *, report: bool, env: dict | None = None) -> tuple[subprocess.Popen, socket.socket, Channel | None]:
    """A judge process; returns (process, the socket a measuring process talks to it through,
    the parent's report channel or None). The caller hands the socket's descriptor on (pass_fds)."""
    worker_end, judge_end = socket.socketpair()
    fds, args = [judge_end.fileno()], [json.dumps(config), str(judge_end.fileno())]
    parent_end = None
    if report:
        parent_end, judge_report = socket.socketpair()
        fds.append(judge_report.fileno())
        args.append(str(judge_report.fileno()))
    proc = subprocess.Popen([sys.executable, "-m", "sitegen.rerun.checks.judge", *args], pass_fds=fds, env=env)
    judge_end.close()
    if report:
        judge_report.close()
    return proc, worker_end, None if parent_end is None else Channel(parent_end)


_LOCAL: dict[tuple[str, str], tuple[subprocess.Popen, Channel]] = {}


def operation_target(op) -> str:
    return getattr(op, "target", None) or f"{type(op).__module__}:{type(op).__qualname__}"


def spawn_local(op, device: str) -> Channel:
    """A judge this process started and talks to itself (gate_workload with no judge given: the
    self-test, tests), one per operation and device, kept for later gates. It gets this
    process's import path, so that an operation defined where the caller can import it loads."""
    key = (operation_target(op), device)
    if key in _LOCAL and _LOCAL[key][0].poll() is None:
        return _LOCAL[key][1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p or os.getcwd() for p in sys.path)}
    config = {"operation": key[0], "device": device, "interpret": os.environ.get("TRITON_INTERPRET") == "1"}
    proc, sock, _ = start(config, report=False, env=env)
    _LOCAL[key] = (proc, Channel(sock))
    return _LOCAL[key][1]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
