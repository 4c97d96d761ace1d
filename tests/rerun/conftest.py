"""Rerun tests run on the CPU under Triton's interpreter unless a GPU is present.

TRITON_INTERPRET is read when triton is first imported, so it is set before any test module
imports the kernel.
"""

import importlib.util
import os

if importlib.util.find_spec("torch") is not None:
    import torch

    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")


import pytest  # noqa: E402


@pytest.fixture
def virtual_time(monkeypatch, request):
    """Virtual time (virtualtime.py) in the harness's clock and sampling loop and in the requesting test module."""
    from sitegen.rerun.measure import clock, timing
    from virtualtime import VirtualTime

    from sitegen.rerun.checks import guards

    fake = VirtualTime()
    for module in (clock, timing, request.module):
        monkeypatch.setattr(module, "time", fake, raising=False)
    # clock_intact would take the fake for an implementation's patch and put the real
    # module back: the guard's snapshot holds the fake for as long as the test does.
    kept = list(guards._SNAPSHOT)
    guards._SNAPSHOT[:] = [(owner, attr, label, fake, None) if (owner is clock and attr == "time") else entry
                           for entry in kept for owner, attr, label, *_ in [entry]]
    guards._seal()  # the guard's digest of its own state follows the edit, as snapshot() would

    def put_back():
        guards._SNAPSHOT[:] = kept
        guards._seal()

    request.addfinalizer(put_back)
    return fake
