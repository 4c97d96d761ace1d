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
    from sitegen.rerun import clock, timing
    from virtualtime import VirtualTime

    fake = VirtualTime()
    for module in (clock, timing, request.module):
        monkeypatch.setattr(module, "time", fake, raising=False)
    return fake
