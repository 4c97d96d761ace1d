"""Correctness gate, the measuring process's side: every implementation against the operation's
float64 reference before any timing.

The judge process (sitegen.rerun.checks.judge, judging) draws each checked shape's inputs from a
secret seed, computes the reference and compares; this side calls each implementation on the
inputs the judge handed over and hands its loss and gradients back (issue 43 item 2: no secret
seed, no reference and no verdict is ever in the process that runs the implementation). Free
device memory is filled with NaN before each call so that output elements the implementation
never writes show up as NaN. What must still run beside the call is here: the clock's windows,
the plain-output and inputs-intact checks, the guard's watch.

A gate call looks to the implementation like a timed one (#18 item 1): it runs in the same
window (clock: lead, flush, the call, a device-wide synchronize), its backward in another, as a
checked forward's does. Telling the phases apart would not pay anyway: the timed calls' own
outputs are checked too (timedcheck).
"""

from __future__ import annotations

import torch

from sitegen.core.workload import Workload
from sitegen.rerun.checks import judge as _judge
from sitegen.rerun.checks.timedcheck import aliasing, foreign, modes


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


def call(module, op, inputs: tuple, device: str, clock, grad_output=None) -> tuple[str | None, object, list]:
    """One implementation on one input, in the measuring process: (why it failed here or None,
    its loss, its gradients). Never raises. What it handed back is judged by the judge process."""
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
            return why, None, []
        clock.window(lambda: loss.backward(grad_output))
    except Exception as exc:  # an implementation that raises fails the gate; it is reported
        return f"{type(exc).__name__}: {exc}"[:500], None, []
    grads = [leaf.grad for leaf in leaves]
    for grad in grads:
        if why := foreign(grad, active):
            return why, None, []
    guarded = [None if j in op.writable_inputs else a for j, a in enumerate(args)]
    if why := aliasing(guarded, [loss, *grads]):
        return f"inputs_intact: {why}", None, []
    for j, (now, drawn) in enumerate(zip(args, inputs)):
        if j not in op.writable_inputs and not torch.equal(now.detach(), drawn):
            return f"inputs_intact: input {j} was written during the call", None, []
    if seen := clock.watch.take():
        name, why = next(iter(seen.items()))
        return f"{name}: {why}", None, []
    # Only the outputs go on; the loss's graph holds the differentiable copies (at tokens 16384
    # x vocab 131072 the copies are 16 GiB that an 80 GB card needs for the judge's copy).
    return None, loss.detach(), grads


_JUDGE_TENSORS = 64  # an operation's inputs and upstream gradient, with room to spare


def gate_workload(modules: dict, op, w: Workload, rtol: float, device: str, clock=None, judge=None) -> dict[str, dict]:
    """{impl: outcome} for one workload, as the judge process (sitegen.rerun.checks.judge) gave
    it: {"status", "cases", "maxAbsError", "maxRelError", "notes"?} from a judge this process
    started (``judge`` None: spawn_local), only {"status"} from the parent's judge, whose full
    verdicts go to the parent. The judge draws the inputs; this process calls and hands over."""
    if clock is None:
        from sitegen.rerun.measure.clock import Clock

        clock = Clock(device)
    if judge is None:
        judge = _judge.spawn_local(op, device)
    judge.send("gate", {"workload": w.as_json(), "impls": list(modules), "rtol": rtol})
    while True:
        # The judge's inputs: this end trusts them (the judge runs no outside code), so no bound of its own.
        kind, said, tensors = judge.recv(device, most=[1 << 62] * _JUDGE_TENSORS)
        if kind == "gated":
            return said["outcomes"]
        if kind != "inputs":
            raise _judge.Refused(f"the judge sent {kind!r}")
        inputs, g = tuple(tensors[:-1]), tensors[-1]
        for name, module in modules.items():
            clock.watch.subject = name
            # A copy each: a backward may write into the gradient it is given.
            why, loss, grads = call(module, op, inputs, device, clock, grad_output=None if g is None else g.clone())
            if device.startswith("cuda"):
                torch.cuda.synchronize()  # the outputs complete before the judge copies them
            judge.send("outputs", {"impl": name, "error": why}, [loss, *grads] if why is None else [])
            del loss, grads
        del inputs, g, tensors
        if device.startswith("cuda"):
            torch.cuda.empty_cache()
