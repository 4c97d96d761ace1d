"""A JSD implementation in plain PyTorch, for `sitegen rerun --impl example-jsd-torch`.

sitegen reads ``operation`` (and ``needs``) from this file without running it; it imports the
module only in the processes that measure it.
"""

from __future__ import annotations

from sitegen.operations.base import Implementation


class PlainTorchJSD(Implementation):
    """Liger's generalized JSD (beta 0.5), mean over rows, in float32 whatever the input dtype."""

    operation = "jsd"
    needs = ("torch",)
    install = "pip install torch"

    def build(self, *, dynamic: bool = False):
        from sitegen_example_jsd.loss import JSDLoss

        return JSDLoss(beta=0.5)
