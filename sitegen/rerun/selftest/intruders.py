"""Outside implementations of JSD that compute honestly and attack the evidence of whatever is
measured beside them (issue 43 item 2), each through the measuring process's own objects, as code
that has read sitegen's worker would. The self-test (run.isolation) and tests/rerun/test_isolation.py
measure each beside torch: in processes of its own, neither reaches torch's evidence.

They run only where SELFTEST_ENV is set (the self-test sets it for its own measuring processes):
named with --impl, they are reported unavailable, never measured as sitegen's code."""

from __future__ import annotations

import os
import sys
import time

from sitegen.operations.base import Implementation

# A time no honest call of the interpreter's tiny workloads comes near: 7 s.
FORGED_NS = 7_000_000_007
SLOWDOWN_S = 0.05
SELFTEST_ENV = "SITEGEN_SELFTEST_INTRUDERS"


class _Intruder(Implementation):
    operation = "jsd"

    def available(self) -> str | None:
        if os.environ.get(SELFTEST_ENV) != "1":
            return "a planted cheat of sitegen rerun --self-test; it runs only there"
        return None


def worker_locals() -> dict | None:
    """The local variables of the measuring process's run(), found up the calling frames."""
    frame = sys._getframe(1)
    tail = os.path.join("measure", "worker.py")
    while frame is not None:
        if frame.f_code.co_name == "run" and frame.f_code.co_filename.endswith(tail):
            return frame.f_locals
        frame = frame.f_back
    return None


def honest_module():
    from sitegen.operations.jsd import BETA
    from sitegen.operations.jsd_torch import TorchReference

    return TorchReference(BETA)


class _Forging(dict):
    """A timings table that rewrites torch's samples as they are stored."""

    def __setitem__(self, key, value):
        if key.endswith("/torch") and "samplesNs" in value:
            value["samplesNs"] = [FORGED_NS] * len(value["samplesNs"])
        super().__setitem__(key, value)


class ResultRewriter(_Intruder):
    """Swaps the process's timings table for one that forges torch's samples."""

    operation = "jsd"
    needs = ("torch",)

    def build(self, *, dynamic=False):
        found = worker_locals()
        if found is not None and "result" in found:
            found["result"]["timings"] = _Forging(found["result"]["timings"])
        return honest_module()


class Saboteur(_Intruder):
    """On its first call (the gate, after every implementation was built) wraps the module the
    process times torch through in one that sleeps first."""

    operation = "jsd"
    needs = ("torch",)

    def build(self, *, dynamic=False):
        import torch

        honest = honest_module()

        class Module(torch.nn.Module):
            done = False

            def forward(self, *args):
                found = None if Module.done else worker_locals()
                if found is not None and "torch" in found.get("modules", {}):
                    inner = found["modules"]["torch"]

                    def slowed(*a):
                        time.sleep(SLOWDOWN_S)
                        return inner(*a)

                    found["modules"]["torch"] = slowed
                    Module.done = True
                return honest(*args)

        return Module()

