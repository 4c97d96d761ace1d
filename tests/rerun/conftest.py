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
