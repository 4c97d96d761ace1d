"""Correctness gate: every implementation against the operation's float64 reference before any timing.

For each workload: the shapes the operation names (sitegen.operations.base: the timed shape, a
smaller shape twice, and an odd shape), each from a secret seed s kept in the record, from which
the operation's make_inputs draws every input, on the device. Loss and every gradient are
compared norm-wise: |Δloss| <= rtol·|loss| and ‖Δgrad‖₂ <= rtol·‖grad‖₂. Free device memory is
filled with NaN before each call so that output elements the implementation never writes show
up as NaN.

A gate call looks to the implementation like a timed one (#18 item 1): it runs in the same
window (clock: lead, flush, the call, a device-wide synchronize), its backward in another, as a
checked forward's does. Telling the phases apart would not pay anyway: the timed calls' own
outputs are checked too (timedcheck).
"""

from __future__ import annotations

import math

import torch

from sitegen.core.workload import Workload, grad_seed
from sitegen.rules.protocol import GATE_INPUTS, SMALL_ROWS
from sitegen.rerun.checks.draws import randbits
from sitegen.rerun.checks.timedcheck import aliasing, foreign, modes


def checked_shapes(op, w: Workload, _randbits=randbits) -> list[tuple[Workload, int]]:
    """(workload, seed) of every input the gate checks for a workload. The seeds are drawn
    from the operating system's secret source, here, and kept in the run's record: fixed ones
    would let an implementation recognise the gate's inputs from a few of their elements."""
    shapes = op.gate_workloads(w, SMALL_ROWS)[:GATE_INPUTS]
    return [(shape, _randbits(31)) for shape in shapes]


def _poison(tensor_bytes: int, device: str) -> None:
    """0xFF bytes (NaN in fp32, bf16 and fp16) wherever the gradient of a tensor_bytes input
    may be carved from: freed, the blocks stay in torch's caching allocator."""
    if not device.startswith("cuda"):
        return
    torch.empty(4 * tensor_bytes + (1 << 20), dtype=torch.uint8, device=device).fill_(255)
    if tensor_bytes > 1 << 20:
        return
    # Requests of at most 1 MiB come from a pool of their own, best fit first: take every free
    # block of that pool that could hold the gradient, until the pool has to grow, and then the
    # rest of the 2 MiB segment it grew by, poison each, and free them together. No free block
    # of that pool is then left unpoisoned that the gradient fits in.
    block = -(-tensor_bytes // 512) * 512
    held, reserved = [], torch.cuda.memory_reserved(device)
    while len(held) < 8192 and torch.cuda.memory_reserved(device) == reserved:
        held.append(torch.empty(tensor_bytes, dtype=torch.uint8, device=device).fill_(255))
    for _ in range((2 << 20) // block - 1):
        held.append(torch.empty(tensor_bytes, dtype=torch.uint8, device=device).fill_(255))
    del held


def check(module, op, inputs: tuple, ref_loss, ref_grads: tuple, rtol: float, device: str, clock,
          grad_output=None) -> dict:
    """One implementation on one input: errors, fully-written flag, pass/fail (never raises).
    ``ref_loss`` is a float for a scalar loss, the float64 output for a tensor one (whose
    backward gets ``grad_output``)."""
    _poison(max(inputs[j].numel() * inputs[j].element_size() for j in op.differentiable), device)
    # Copies of every input: one that writes into its inputs is seen, and the next
    # implementation still gets the inputs as drawn.
    args = [t.detach().clone() for t in inputs]
    for j in op.differentiable:
        args[j].requires_grad_()
    leaves = [args[j] for j in op.differentiable]
    active = modes()
    try:
        loss, _ = clock.window(lambda: module(*args))
        # Before anything reads it: a subclass's methods would run the implementation's code.
        if why := foreign(loss, active):
            return {"error": why, "passed": False}
        clock.window(lambda: loss.backward(grad_output))
    except Exception as exc:  # an implementation that raises fails the gate; it is reported
        return {"error": f"{type(exc).__name__}: {exc}"[:500], "passed": False}
    grads = [leaf.grad for leaf in leaves]
    for grad in grads:
        if why := foreign(grad, active):
            return {"error": why, "passed": False}
    guarded = [None if j in op.writable_inputs else a for j, a in enumerate(args)]
    if why := aliasing(guarded, [loss, *grads]):
        return {"error": f"inputs_intact: {why}", "passed": False}
    for j, (now, drawn) in enumerate(zip(args, inputs)):
        if j not in op.writable_inputs and not torch.equal(now.detach(), drawn):
            return {"error": f"inputs_intact: input {j} was written during the call", "passed": False}
    if seen := clock.watch.take():
        name, why = next(iter(seen.items()))
        return {"error": f"{name}: {why}", "passed": False}
    # The copies are judged; from here on only the outputs are read. The loss goes too once
    # compared: its graph holds the differentiable copies (at tokens 16384 x vocab 131072 the
    # copies are 16 GiB that an 80 GB card needs for the comparison).
    del args, leaves, guarded
    if grad_output is None:
        got = float(loss.detach().double().item()) if loss.numel() == 1 else float("nan")
        loss_err = abs((got if got == got else 0.0) - ref_loss)
        max_abs = loss_err
    else:  # a tensor output, compared norm-wise as a gradient is
        if tuple(loss.shape) != tuple(ref_loss.shape):
            return {"error": f"returned shape {list(loss.shape)}, not {list(ref_loss.shape)}", "passed": False}
        got = 0.0 if bool(torch.isfinite(loss.detach()).all()) else float("nan")
        loss_err, max_abs, ref_loss = _errors(loss.detach(), ref_loss)
    del loss
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


_CHUNK_ELEMENTS = 1 << 26  # 512 MiB of float64 a block


def _errors(got: torch.Tensor | None, ref: torch.Tensor, _norm=torch.linalg.vector_norm) -> tuple[float, float, float]:
    """‖got − ref‖₂, max |got − ref| and ‖ref‖₂ in float64, a block of rows at a time: a whole
    float64 copy of a [16384, 131072] gradient is 16 GiB. ``ref`` may sit on the host (see
    gate_workload); got's unwritten (NaN) elements, or all of a missing gradient, read as 0 so
    the errors stay finite numbers."""
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


def gate_workload(modules: dict, op, w: Workload, rtol: float, device: str, clock=None) -> dict[str, dict]:
    """{impl: {"status", "cases", "maxAbsError", "maxRelError", "notes"?}} for one workload."""
    if clock is None:
        from sitegen.rerun.measure.clock import Clock

        clock = Clock(device)
    results = {name: {"cases": [], "errors": []} for name in modules}
    for shape, seed in checked_shapes(op, w):
        inputs = tuple(op.make_inputs(shape, seed, device))
        g = op.make_grad_output(shape, grad_seed(seed, device), device)
        ref_loss, ref_grads = op.reference(inputs) if g is None else op.reference(inputs, g)
        ref_loss = float(ref_loss) if g is None else ref_loss
        # The float64 references wait on the host while the implementations run: beside the
        # inputs, their copies and the implementation's own memory, a [16384, 131072] float64
        # gradient (16 GiB) is what kept Liger's largest KL divergence workload off an 80 GB card.
        ref_grads = tuple(r.to("cpu") for r in ref_grads)
        dims = list(inputs[0].shape)
        for name, module in modules.items():
            clock.watch.subject = name
            # A copy each: a backward may write into the gradient it is given.
            out = check(module, op, inputs, ref_loss, ref_grads, rtol, device, clock,
                        grad_output=None if g is None else g.clone())
            if "error" in out:
                results[name]["errors"].append(f"{dims} seed {seed}: {out['error']}")
                continue
            results[name]["cases"].append({"shape": dims, "seed": seed, **out})
        del inputs, ref_grads
        if device.startswith("cuda"):
            torch.cuda.empty_cache()
    for name, r in results.items():
        cases = r["cases"]
        r["status"] = "passed" if cases and not r["errors"] and all(c["passed"] for c in cases) else "failed"
        if cases:
            r["maxAbsError"] = max(c["maxAbsError"] for c in cases)
            r["maxRelError"] = max(c["maxRelError"] for c in cases)
        if r["errors"]:
            r["notes"] = "Raised: " + "; ".join(r["errors"])
        del r["errors"]
    return results
