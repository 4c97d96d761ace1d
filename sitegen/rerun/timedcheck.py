"""The outputs of timed calls themselves, checked untimed against float64 (#18 item 1).

After each timed call, outside its events: the loss is copied, and on a random share of calls
(CHECK_SHARE, drawn on the host after the call was issued, so the implementation cannot know
while it runs) the gradient is completed if the pass did not produce it (forward: its
backward, bracketed by events of its own) and digested: d = wᵀ (dX R), a projection onto
DIGEST_DIM random directions (R: vocab × DIGEST_DIM, w: one weight per row, both standard
normal, drawn from os.urandom so no implementation can know them). For any error E = dX − G,
each component of Δd is normal with standard deviation ‖E‖ (over w and R), so
‖Δd‖ / (√DIGEST_DIM · ‖G‖) estimates the norm-wise relative error the gate bounds by rtol;
the check allows DIGEST_SLACK × rtol for the draw. The references (loss, G in float32, ‖G‖)
are computed once per input set: passes.PassRunner's rolls keep the loss and roll G, which
`shift` follows. Float32 holds G to ~6e-8, far inside every rtol.

A call whose output is wrong fails the run's `timed_output` check: the time is refused.
"""

from __future__ import annotations

import math
import os

import torch

from sitegen.rerun.protocol import CHECK_SHARE, DIGEST_DIM, DIGEST_SLACK

ALWAYS_CHECKED = 2
_CHUNK_ELEMENTS = 1 << 26


def _reference(x: torch.Tensor, y: torch.Tensor) -> tuple[float, torch.Tensor, float]:
    """Loss, the gradient G (float64 arithmetic, kept in float32) and ‖G‖, row chunk by chunk."""
    from sitegen.kernels.reference import jsd_reference

    from sitegen.rerun.cases import BETA

    rows, vocab = x.shape
    step = max(1, _CHUNK_ELEMENTS // max(vocab, 1))
    loss, sq = 0.0, 0.0
    grad = torch.empty(rows, vocab, dtype=torch.float32, device=x.device)
    for r0 in range(0, rows, step):
        xc = x[r0:r0 + step].detach().to(torch.float64).requires_grad_()
        part = jsd_reference(xc, y[r0:r0 + step], beta=BETA) * (xc.shape[0] / rows)
        (g,) = torch.autograd.grad(part, xc)
        loss += part.item()
        sq += float((g * g).sum())
        grad[r0:r0 + step] = g
        del g, xc
    return loss, grad, math.sqrt(sq)


def digest(grad: torch.Tensor, proj: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """wᵀ (grad R) in float32, a row chunk at a time (no full float32 copy of a bf16 dX)."""
    rows, vocab = grad.shape
    step = max(1, _CHUNK_ELEMENTS // max(vocab, 1))
    out = torch.zeros(proj.shape[1], dtype=torch.float32, device=grad.device)
    for r0 in range(0, rows, step):
        out += weights[r0:r0 + step] @ (grad[r0:r0 + step].float() @ proj)
    return out


class TimedCheck:
    """What one runner's timed calls returned, and the references to judge it by."""

    def __init__(self, xs: list[torch.Tensor], ys: list[torch.Tensor], device: str, rtol: float | None):
        import random

        secret = int.from_bytes(os.urandom(8), "little") >> 1
        # Which calls are checked is drawn from the OS's generator: a forward sees the checked
        # ones (their backward runs), and a Mersenne Twister's past output predicts its next.
        self.rng = random.SystemRandom()
        gen = torch.Generator(device=device).manual_seed(secret)
        rows, vocab = xs[0].shape
        self.rtol = rtol
        self.proj = torch.randn(vocab, DIGEST_DIM, generator=gen, device=device, dtype=torch.float32)
        self.weights = torch.randn(rows, generator=gen, device=device, dtype=torch.float32)
        refs = [_reference(x, y) for x, y in zip(xs, ys)]
        self.ref_loss = [r[0] for r in refs]
        self.ref_grad = [r[1] for r in refs]
        self.ref_norm = [r[2] for r in refs]
        self.shift = [0] * len(xs)
        self.calls: list[tuple] = []
        self.checked = 0

    def pick(self) -> bool:
        """Whether the call just issued gets its gradient checked."""
        return self.checked < ALWAYS_CHECKED or self.rng.random() < CHECK_SHARE

    def record_loss(self, k: int, out) -> None:
        self.calls.append((k, _loss_copy(out), None, None, None, None))

    def record(self, k: int, out, grad, pass_events, other_events) -> None:
        self.checked += 1
        got = digest(grad, self.proj, self.weights) if grad is not None else None
        ref = self.ref_grad[k]
        rolled = torch.roll(ref.view(-1), self.shift[k]).view(ref.shape) if self.shift[k] else ref
        want = digest(rolled, self.proj, self.weights)
        self.calls.append((k, _loss_copy(out), got, want, pass_events, other_events))

    def roll(self, k: int, shift: int) -> None:
        """The set's inputs were rolled by `shift` elements (flat); its gradient rolls with them."""
        self.shift[k] = (self.shift[k] + shift) % self.ref_grad[k].numel()

    def verify(self) -> dict:
        """Every kept loss and digest against its reference (one synchronisation)."""
        rtol = self.rtol if self.rtol is not None else float("inf")
        loss_bad = grad_bad = 0
        worst_loss = worst_grad = 0.0
        full_ns = []
        for k, loss, got, want, ev, other in self.calls:
            ref = self.ref_loss[k]
            value = float(loss)
            err = abs(value - ref) / max(abs(ref), 1e-300) if value == value else math.inf
            worst_loss = max(worst_loss, err)
            loss_bad += not err <= rtol
            if want is None:
                continue
            if got is None:
                err = math.inf
            else:
                delta = float(torch.linalg.vector_norm(got.double() - want))
                err = delta / (math.sqrt(DIGEST_DIM) * max(self.ref_norm[k], 1e-300)) if delta == delta else math.inf
            worst_grad = max(worst_grad, err)
            grad_bad += not err <= DIGEST_SLACK * rtol
            if ev is not None and other is not None:
                full_ns.append(int(round((ev[0].elapsed_time(ev[1]) + other[0].elapsed_time(other[1])) * 1e6)))
        cap = 1e300
        return {"calls": len(self.calls), "checkedGradients": sum(c[3] is not None for c in self.calls),
                "lossFailures": loss_bad, "gradientFailures": grad_bad,
                "worstLossRelError": min(worst_loss, cap), "worstGradientRelError": min(worst_grad, cap),
                "fullPassNs": full_ns}


def _loss_copy(out) -> torch.Tensor:
    if out is None or not isinstance(out, torch.Tensor) or out.numel() != 1:
        return torch.tensor(float("nan"), dtype=torch.float64)
    return out.detach().reshape(()).to(torch.float64, copy=True)
