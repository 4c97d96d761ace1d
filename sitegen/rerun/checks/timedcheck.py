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
G's digest, ‖G‖, in float64) is the operation's float64 reference, computed at verify() from
the call's inputs drawn again from their seed. An operation with several differentiable inputs
has one digest per gradient (each viewed as [first dim, the rest]); each is judged alone.

A call whose output is wrong fails the run's `timed_output` check: the time is refused. One that
hands back a torch.Tensor subclass (its methods would run the implementation's code inside the
harness's untimed reads: a lazy result deferring its work past the timer) or leaves a torch
function or dispatch mode active is never read and fails `plain_output`; one whose output
shares memory with an input, or that wrote into its inputs (compared, on the checked calls,
with the inputs drawn again from their seed), fails `inputs_intact`.
"""

from __future__ import annotations

import math

import torch

from sitegen.rules.checkparams import CHECK_SHARE, DIGEST_DIM, DIGEST_SLACK
from sitegen.rerun.checks.draws import randbits, uniform

# Bound before any implementation is imported: a replaced torch.linalg.vector_norm judges nothing here.
_norm = torch.linalg.vector_norm

ALWAYS_CHECKED = 2
_CHUNK_ELEMENTS = 1 << 26


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


def as_matrix(shape) -> tuple[int, int]:
    """A gradient's shape read as [rows, columns] for its digest: [first dim, the rest]."""
    dims = list(shape) or [1]
    rows = dims[0] if len(dims) > 1 else 1
    return rows, math.prod(dims) // max(rows, 1)


def aliasing(inputs, outputs) -> str | None:
    """Why an output (the loss, a gradient) shares memory with an input, or None."""
    held = {t.untyped_storage().data_ptr(): j for j, t in enumerate(inputs) if isinstance(t, torch.Tensor)}
    for n, out in enumerate(outputs):
        if isinstance(out, torch.Tensor) and out.untyped_storage().data_ptr() in held:
            what = "the loss" if n == 0 else f"gradient {n - 1}"
            return f"{what} shares memory with input {held[out.untyped_storage().data_ptr()]}"
    return None


class TimedCheck:
    """What one runner's checked calls returned, and the references for their own inputs."""

    def __init__(self, grad_shapes: list, device: str, rtol: float | None, out_shape=None, _randbits=randbits):
        # Which calls are checked is drawn from the OS's generator (draws.uniform, bound when the
        # module was imported, never an attribute of this object an implementation could swap):
        # a forward sees the checked ones (their backward runs), and a Mersenne Twister's past
        # output predicts its next.
        gen = torch.Generator(device=device).manual_seed(_randbits(63))
        self.rtol = rtol
        self.shapes = [as_matrix(s) for s in grad_shapes]
        self.projections = [
            (torch.randn(cols, DIGEST_DIM, generator=gen, device=device, dtype=torch.float64),
             torch.randn(rows, DIGEST_DIM, generator=gen, device=device, dtype=torch.float64))
            for rows, cols in self.shapes]
        # A tensor output (out_shape) is digested as a gradient is; a scalar loss is kept whole.
        self.out_shape = as_matrix(out_shape) if out_shape is not None else None
        self.out_projection = None if out_shape is None else (
            torch.randn(self.out_shape[1], DIGEST_DIM, generator=gen, device=device, dtype=torch.float64),
            torch.randn(self.out_shape[0], DIGEST_DIM, generator=gen, device=device, dtype=torch.float64))
        self.calls: list[tuple] = []
        self.unchecked = 0
        self.foreign_calls = 0
        self.foreign_reason: str | None = None
        self.inputs_reason: str | None = None

    def pick(self, _uniform=uniform) -> bool:
        """Whether the call just issued gets checked."""
        return len(self.calls) < ALWAYS_CHECKED or _uniform() < CHECK_SHARE

    def output(self, out) -> torch.Tensor:
        """The output as the call returned it, kept for verify(): a scalar loss copied in float64,
        a tensor output's digest (NaN where it is not what the operation returns)."""
        if self.out_shape is None:
            return _loss_copy(out)
        if not isinstance(out, torch.Tensor) or out.numel() != self.out_shape[0] * self.out_shape[1]:
            return torch.full((DIGEST_DIM,), float("nan"), dtype=torch.float64)
        return digest(out.detach().reshape(self.out_shape), *self.out_projection)

    def _output_error(self, kept: torch.Tensor, ref_out, _norm=_norm) -> float:
        if self.out_shape is None:
            ref, value = float(ref_out), float(kept)
            return abs(value - ref) / max(abs(ref), 1e-300) if value == value else math.inf
        want = digest(ref_out.reshape(self.out_shape), *self.out_projection)
        delta = float(_norm(kept - want))
        norm = float(_norm(ref_out))
        # The digest's estimate of the norm-wise error, stored as it is (as a gradient's); verify()
        # allows it DIGEST_SLACK x rtol for the draw, as it allows a gradient's.
        return delta / (math.sqrt(DIGEST_DIM) * max(norm, 1e-300)) if delta == delta else math.inf

    def record_loss(self) -> None:
        self.unchecked += 1

    def _digests(self, grads) -> list:
        return [None if g is None else digest(g.reshape(shape), proj, weights)
                for g, shape, (proj, weights) in zip(grads, self.shapes, self.projections)]

    def record(self, loss: torch.Tensor, grads, window, other_window, *, redraw) -> None:
        """A checked call: its loss (as returned, copied) and gradient digests; redraw() gives
        the operation's float64 reference for its inputs drawn again, computed at verify()
        outside the timed loop."""
        self.calls.append((loss, self._digests(grads), redraw, window, other_window))

    def record_foreign(self, reason: str) -> None:
        """A call whose output could not be read as plain data: never read (plain_output)."""
        self.foreign_calls += 1
        self.foreign_reason = self.foreign_reason or reason

    def record_inputs(self, reason: str) -> None:
        """An output that shares memory with an input, or an input written by the call (inputs_intact)."""
        self.inputs_reason = self.inputs_reason or reason

    def verify(self, _norm=_norm) -> dict:
        """Every checked call's loss and digests against its reference (one synchronisation)."""
        rtol = self.rtol if self.rtol is not None else float("inf")
        # A scalar loss is compared whole; a tensor output by its digest, which a random draw may
        # overstate, so with the gradients' allowance.
        loss_rtol = rtol if self.out_shape is None else DIGEST_SLACK * rtol
        loss_bad = grad_bad = 0
        worst_loss = worst_grad = 0.0
        full_ns = []
        for loss, got, redraw, ev, other in self.calls:
            ref_loss, ref_grads = redraw()
            err = self._output_error(loss, ref_loss)
            worst_loss = max(worst_loss, err)
            loss_bad += not err <= loss_rtol
            err = 0.0
            for d, g, shape, (proj, weights) in zip(got, ref_grads, self.shapes, self.projections):
                if d is None:
                    err = math.inf
                    continue
                want = digest(g.reshape(shape), proj, weights)
                delta = float(_norm(d - want))
                norm = float(_norm(g))
                err = max(err, delta / (math.sqrt(DIGEST_DIM) * max(norm, 1e-300)) if delta == delta else math.inf)
            worst_grad = max(worst_grad, err)
            grad_bad += not err <= DIGEST_SLACK * rtol
            if ev is not None and other is not None:
                full_ns.append(max(1, ev.stream_ns() + other.stream_ns()))
        cap = 1e300
        return {"calls": len(self.calls) + self.unchecked + self.foreign_calls, "checkedGradients": len(self.calls),
                "foreignOutputs": self.foreign_calls, "foreignReason": self.foreign_reason,
                "inputsReason": self.inputs_reason,
                "lossFailures": loss_bad, "gradientFailures": grad_bad,
                "worstLossRelError": min(worst_loss, cap), "worstGradientRelError": min(worst_grad, cap),
                "fullPassNs": full_ns}


def _loss_copy(out) -> torch.Tensor:
    if out is None or not isinstance(out, torch.Tensor) or out.numel() != 1:
        return torch.tensor(float("nan"), dtype=torch.float64)
    return out.detach().reshape(()).to(torch.float64, copy=True)
