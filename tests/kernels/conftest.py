"""Kernel tests: on a CUDA GPU when there is one, else on the CPU under Triton's interpreter.

TRITON_INTERPRET is read when triton is first imported, so it is set here, before any test
module imports the kernel. Test modules skip themselves (pytest.importorskip) when torch,
triton or, for the interpreter, numpy is missing.
"""

import importlib.util
import os

if importlib.util.find_spec("torch") is not None:
    import torch

    if not torch.cuda.is_available():
        os.environ.setdefault("TRITON_INTERPRET", "1")
