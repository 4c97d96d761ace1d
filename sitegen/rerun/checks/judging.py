"""The gate's judge side (issue 43 item 2): the secret seeds, the inputs drawn from them, the
operation's float64 references and the comparison of what an implementation handed back. It runs
in the judge process (sitegen.rerun.checks.judge), which runs no outside code; the measuring
process only calls the implementation (sitegen.rerun.checks.gate) and hands over its outputs.

The rule (docs/trust.md): for each workload the shapes the operation names (the timed shape, a
smaller shape twice, an odd shape), each from a secret seed kept in the record; loss and every
gradient compared norm-wise, |Δloss| <= rtol·|loss| and ‖Δgrad‖₂ <= rtol·‖grad‖₂, and every
element written (the measuring process fills free device memory with NaN before each call).
"""

from __future__ import annotations

import math

import torch

from sitegen.core.workload import Workload, grad_seed
from sitegen.rules.protocol import GATE_INPUTS, SMALL_ROWS
from sitegen.rerun.checks.draws import randbits

_CHUNK_ELEMENTS = 1 << 26  # 512 MiB of float64 a block


def checked_shapes(op, w: Workload, _randbits=randbits) -> list[tuple[Workload, int]]:
    """(workload, seed) of every input the gate checks for a workload. The seeds are drawn
    from the operating system's secret source, in the judge, and kept in the run's record: fixed
    ones would let an implementation recognise the gate's inputs from a few of their elements."""
    shapes = op.gate_workloads(w, SMALL_ROWS)[:GATE_INPUTS]
    return [(shape, _randbits(31)) for shape in shapes]


def references(op, shape: Workload, seed: int, device: str) -> tuple[tuple, object, object, tuple]:
    """(inputs, grad_output or None, reference loss, reference gradients on the host)."""
    inputs = tuple(op.make_inputs(shape, seed, device))
    g = op.make_grad_output(shape, grad_seed(seed, device), device)
    ref_loss, ref_grads = op.reference(inputs) if g is None else op.reference(inputs, g)
    ref_loss = float(ref_loss) if g is None else ref_loss
    # The float64 references wait on the host while the implementations run: beside the
    # inputs, their copies and the implementation's own memory, a [16384, 131072] float64
    # gradient (16 GiB) is what kept Liger's largest KL divergence workload off an 80 GB card.
    return inputs, g, ref_loss, tuple(r.to("cpu") for r in ref_grads)


def compare(loss, grads, ref_loss, ref_grads: tuple, rtol: float, tensor_output: bool) -> dict:
    """The gate's verdict on one call's handed-over loss and gradients (copies the judge holds):
    errors, fully-written flag, pass/fail. ``ref_loss`` is a float for a scalar loss, the float64
    output for a tensor one."""
    if not tensor_output:
        got = float(loss.double().item()) if loss is not None and loss.numel() == 1 else float("nan")
        loss_err = abs((got if got == got else 0.0) - ref_loss)
        max_abs = loss_err
    else:  # a tensor output, compared norm-wise as a gradient is
        if loss is None or tuple(loss.shape) != tuple(ref_loss.shape):
            shape = None if loss is None else list(loss.shape)
            return {"error": f"returned shape {shape}, not {list(ref_loss.shape)}", "passed": False}
        got = 0.0 if bool(torch.isfinite(loss).all()) else float("nan")
        loss_err, max_abs, ref_loss = _errors(loss, ref_loss)
    written = got == got and all(g is not None and bool(torch.isfinite(g).all()) for g in grads)
    rel, grads_ok = loss_err / max(abs(ref_loss), 1e-300), True
    for grad, ref_grad in zip(grads, ref_grads):
        grad_err, grad_max, grad_norm = _errors(grad, ref_grad)
        max_abs = max(max_abs, grad_max)
        rel = max(rel, grad_err / max(grad_norm, 1e-300))
        grads_ok = grads_ok and grad_err <= rtol * grad_norm
    cap = 1e300  # inf is not JSON
    return {
        "maxAbsError": min(max_abs, cap), "maxRelError": min(rel, cap),
        "fullyWritten": written,
        "passed": written and loss_err <= rtol * abs(ref_loss) and grads_ok,
    }


def _errors(got: torch.Tensor | None, ref: torch.Tensor, _norm=torch.linalg.vector_norm) -> tuple[float, float, float]:
    """‖got − ref‖₂, max |got − ref| and ‖ref‖₂ in float64, a block of rows at a time: a whole
    float64 copy of a [16384, 131072] gradient is 16 GiB. ``ref`` may sit on the host (see
    references); got's unwritten (NaN) elements, or all of a missing gradient, read as 0 so the
    errors stay finite numbers. A gradient of another size than the reference's is all wrong."""
    if got is not None and got.numel() != ref.numel():
        got = None
    flat_ref = ref.reshape(ref.shape[0] if ref.dim() > 1 and ref.shape[0] else 1, -1)
    flat_got = None if got is None else got.detach().reshape(flat_ref.shape)
    device = ref.device if got is None else got.device
    step = max(1, _CHUNK_ELEMENTS // max(flat_ref.shape[1], 1))
    err_sq = ref_sq = max_abs = 0.0
    for r0 in range(0, flat_ref.shape[0], step):
        r = flat_ref[r0:r0 + step].to(device, torch.float64)
        g = torch.zeros_like(r) if flat_got is None else flat_got[r0:r0 + step].double().nan_to_num_(nan=0.0)
        diff = g.sub_(r).abs_()
        err_sq += float(_norm(diff)) ** 2
        ref_sq += float(_norm(r)) ** 2
        if diff.numel():
            max_abs = max(max_abs, float(diff.max()))
    return math.sqrt(err_sq), max_abs, math.sqrt(ref_sq)


def summarise(results: dict[str, dict]) -> dict[str, dict]:
    """{impl: {"status", "cases", "maxAbsError", "maxRelError", "notes"?}} from each
    implementation's cases and errors."""
    for r in results.values():
        cases = r["cases"]
        r["status"] = "passed" if cases and not r["errors"] and all(c["passed"] for c in cases) else "failed"
        if cases:
            r["maxAbsError"] = max(c["maxAbsError"] for c in cases)
            r["maxRelError"] = max(c["maxRelError"] for c in cases)
        if r["errors"]:
            r["notes"] = "Raised: " + "; ".join(r["errors"])
        del r["errors"]
    return results
