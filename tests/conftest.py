"""Suite-wide setup.

Triton decides at ``@triton.jit`` time whether a kernel runs compiled or interpreted, so
the interpreter switch must be set before any test module imports the kernel. Without a
CUDA GPU (CI, laptops) every Triton kernel runs on the CPU under the interpreter.
"""

import os


def _has_cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


if not _has_cuda():
    os.environ.setdefault("TRITON_INTERPRET", "1")


# `sitegen lock`, `verify` and `build` keep a build state in the user's cache folder; the suite
# keeps its own, so it neither reads nor fills the developer's.
if "SITEGEN_CACHE_DIR" not in os.environ:
    import tempfile

    os.environ["SITEGEN_CACHE_DIR"] = tempfile.mkdtemp(prefix="sitegen-test-cache-")
