"""JSD's torch-side peer module (imported by workers only: it imports torch).

The operation (sitegen.operations.jsd) passes its beta; this module imports nothing of it, so the
two do not import each other."""

from __future__ import annotations

import torch


class TorchReference(torch.nn.Module):
    """sitegen's reference in float32 (upcast, as Liger's own torch JSD does), result in the input dtype."""

    def __init__(self, beta: float):
        super().__init__()
        self.beta = beta

    def forward(self, log_q, log_p, shift_labels=None):
        from sitegen.kernels.reference import jsd_reference

        loss = jsd_reference(log_q, log_p, shift_labels, beta=self.beta, compute_dtype=torch.float32)
        return loss.to(log_q.dtype)
