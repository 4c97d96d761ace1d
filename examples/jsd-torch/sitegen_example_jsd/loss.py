"""The loss itself: JSD_beta(P || Q) with M = beta*P + (1-beta)*Q, on log-probabilities."""

from __future__ import annotations

import math

import torch


class JSDLoss(torch.nn.Module):
    def __init__(self, beta: float = 0.5):
        super().__init__()
        self.beta = beta

    def forward(self, log_q: torch.Tensor, log_p: torch.Tensor) -> torch.Tensor:
        """log_q: student, log_p: teacher, both [rows, vocab]; the loss in the input dtype."""
        x, y = log_q.float(), log_p.float()
        beta = self.beta
        log_m = torch.logaddexp(y + math.log(beta), x + math.log1p(-beta))
        per_row = (beta * y.exp() * (y - log_m) + (1.0 - beta) * x.exp() * (x - log_m)).sum(dim=-1)
        return per_row.mean().to(log_q.dtype)
