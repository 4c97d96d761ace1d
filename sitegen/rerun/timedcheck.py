"""The outputs of timed calls themselves, checked untimed against float64 (#18 item 1).

Every timed call runs on inputs no earlier call saw (passes.PassRunner draws them afresh after
each call), so its reference is its own. On a random share of calls (CHECK_SHARE, drawn from
the OS's generator after the call was issued, so the implementation cannot know while it runs)
the call's loss is kept, its gradient completed if the pass did not produce it (forward: its
backward, bracketed by events of its own) and digested: d_k = Σ_r W_rk (dX R)_rk, a
projection onto DIGEST_DIM random directions (R: vocab × DIGEST_DIM, W: rows × DIGEST_DIM, both
standard normal, from a secret seed). For any error E = dX − G, Δd_k = Σ_r Σ_v W_rk E_rv R_vk has
mean 0 and variance ‖E‖² over W and R, independently for each k (a column of W and of R each),
so ‖Δd‖ / (√DIGEST_DIM · ‖G‖) estimates the norm-wise relative error the gate bounds by rtol;
the check allows DIGEST_SLACK × rtol for the draw. One weight per row shared by every k would
leave an error alike in every row scaled by one draw for the whole case. The reference (loss,
G's digest, ‖G‖, in float64) is computed at verify(), from the call's inputs drawn again from
their seeds.

A call whose output is wrong fails the run's `timed_output` check: the time is refused. So does
one that hands back a torch.Tensor subclass (its methods would run the implementation's code
inside the harness's untimed reads) or leaves a torch function or dispatch mode active.
"""

from __future__ import annotations

import math

import torch

from sitegen.rerun.protocol import CHECK_SHARE, DIGEST_DIM, DIGEST_SLACK

ALWAYS_CHECKED = 2
_CHUNK_ELEMENTS = 1 << 26


def reference_chunks(x: torch.Tensor, y: torch.Tensor, beta: float):
    """(rows slice, loss part, gradient part) of the float64 reference, row chunk by row chunk
    (float64: 512 MiB a tensor), each part already divided by all the rows (the loss is a mean)."""
    from sitegen.kernels.reference import jsd_sum_and_grad

    rows, vocab = x.shape
    step = max(1, _CHUNK_ELEMENTS // max(vocab, 1))
    for r0 in range(0, rows, step):
        part, g = jsd_sum_and_grad(x[r0:r0 + step], y[r0:r0 + step], beta=beta)
        g /= rows
        yield slice(r0, r0 + step), part / rows, g


def _reference(x: torch.Tensor, y: torch.Tensor, proj: torch.Tensor, weights: torch.Tensor) -> tuple:
    """Loss, G's digest and ‖G‖², all float64 on the device (no host read)."""
    from sitegen.rerun.cases import BETA

    loss = torch.zeros((), dtype=torch.float64, device=x.device)
    sq = torch.zeros((), dtype=torch.float64, device=x.device)
    d = torch.zeros(proj.shape[1], dtype=torch.float64, device=x.device)
    for rows, part, g in reference_chunks(x, y, BETA):
        loss += part
        sq += (g * g).sum()
        d += digest(g, proj, weights[rows])
    return loss, d, sq


def digest(grad: torch.Tensor, proj: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """Σ_r W_rk (grad R)_rk in float64 (no TF32 whatever the process set), a row chunk at a
    time (no full copy of dX)."""
    rows, vocab = grad.shape
    step = max(1, _CHUNK_ELEMENTS // max(vocab, 1))
    out = torch.zeros(proj.shape[1], dtype=torch.float64, device=grad.device)
    for r0 in range(0, rows, step):
        out += (weights[r0:r0 + step] * (grad[r0:r0 + step].double() @ proj)).sum(dim=0)
    return out


def modes() -> tuple[int, int]:
    """How many torch function and dispatch modes are active."""
    return torch._C._len_torch_function_stack(), torch._C._len_torch_dispatch_stack()


def foreign(value, active_modes: tuple[int, int]) -> str | None:
    """Why an implementation's output cannot be read as plain data, or None."""
    if value is not None and type(value) is not torch.Tensor:
        return f"returned a {type(value).__name__}, not a plain torch.Tensor"
    if modes() != active_modes:
        return "left a torch function or dispatch mode active"
    return None


class TimedCheck:
    """What one runner's checked calls returned, and the references for their own inputs."""

    def __init__(self, rows: int, vocab: int, device: str, rtol: float | None):
        import random
        import secrets

        # Which calls are checked is drawn from the OS's generator: a forward sees the checked
        # ones (their backward runs), and a Mersenne Twister's past output predicts its next.
        self.rng = random.SystemRandom()
        gen = torch.Generator(device=device).manual_seed(secrets.randbits(63))
        self.rtol = rtol
        self.proj = torch.randn(vocab, DIGEST_DIM, generator=gen, device=device, dtype=torch.float64)
        self.weights = torch.randn(rows, DIGEST_DIM, generator=gen, device=device, dtype=torch.float64)
        self.calls: list[tuple] = []
        self.unchecked = 0

    def pick(self) -> bool:
        """Whether the call just issued gets checked."""
        return len(self.calls) < ALWAYS_CHECKED or self.rng.random() < CHECK_SHARE

    def record_loss(self) -> None:
        self.unchecked += 1

    def record(self, loss: torch.Tensor, grad, window, other_window, *, redraw) -> None:
        """A checked call: its loss (as returned, copied) and gradient digest; redraw() gives
        its inputs again, for the reference, computed at verify() outside the timed loop."""
        got = digest(grad, self.proj, self.weights) if grad is not None else None
        self.calls.append((loss, got, redraw, window, other_window))

    def record_foreign(self) -> None:
        """A call whose output could not be read as plain data: wrong, never read."""
        self.calls.append((None, None, None, None, None))

    def verify(self) -> dict:
        """Every checked call's loss and digest against its reference (one synchronisation)."""
        rtol = self.rtol if self.rtol is not None else float("inf")
        loss_bad = grad_bad = 0
        worst_loss = worst_grad = 0.0
        full_ns = []
        for loss, got, redraw, ev, other in self.calls:
            if redraw is None:
                loss_bad, grad_bad, worst_loss, worst_grad = loss_bad + 1, grad_bad + 1, math.inf, math.inf
                continue
            ref_loss, want, sq = _reference(*redraw(), self.proj, self.weights)
            ref, value = float(ref_loss), float(loss)
            err = abs(value - ref) / max(abs(ref), 1e-300) if value == value else math.inf
            worst_loss = max(worst_loss, err)
            loss_bad += not err <= rtol
            if got is None:
                err = math.inf
            else:
                delta = float(torch.linalg.vector_norm(got - want))
                err = delta / (math.sqrt(DIGEST_DIM) * max(math.sqrt(float(sq)), 1e-300)) if delta == delta else math.inf
            worst_grad = max(worst_grad, err)
            grad_bad += not err <= DIGEST_SLACK * rtol
            if ev is not None and other is not None:
                full_ns.append(max(1, ev.stream_ns() + other.stream_ns()))
        cap = 1e300
        return {"calls": len(self.calls) + self.unchecked, "checkedGradients": len(self.calls),
                "lossFailures": loss_bad, "gradientFailures": grad_bad,
                "worstLossRelError": min(worst_loss, cap), "worstGradientRelError": min(worst_grad, cap),
                "fullPassNs": full_ns}


def _loss_copy(out) -> torch.Tensor:
    if out is None or not isinstance(out, torch.Tensor) or out.numel() != 1:
        return torch.tensor(float("nan"), dtype=torch.float64)
    return out.detach().reshape(()).to(torch.float64, copy=True)
