"""An operation sitegen does not ship, defined here only: the mean squared distance of two
[rows, cols] tensors, with two implementations. `sitegen rerun --operation sqdist:SquaredDistance`
measures it with this folder on PYTHONPATH (tests/rerun/test_plugins.py)."""

from __future__ import annotations

from sitegen.operations.base import Implementation, Operation, torch_dtype


class SquaredDistance(Operation):
    name = "test-sqdist"
    title = "Mean squared distance (test plugin)"
    family = "loss"
    definition = "loss = mean over rows and cols of (x - y)², x: [rows, cols] requires grad, y: [rows, cols]"
    axes = ("rows", "cols")
    default_axes = {"rows": (4096,), "cols": (4096,)}
    interpret_axes = {"rows": (8,), "cols": (32,)}
    peers = {"eager": "sqdist:Eager", "looped": "sqdist:Looped"}
    default_peers = ("eager", "looped")
    interpret_peers = ("eager", "looped")
    tolerances = {"fp32": 1e-5, "bf16": 1e-2, "fp16": 5e-3}
    reference_name = "tests/rerun/plugins/sqdist.py SquaredDistance.reference (float64, closed form)"
    bytes_notes = "forward: read x and y, 2·R·C·b; backward: write dx, R·C·b; full: 3·R·C·b"

    def make_inputs(self, w, seed, device):
        import torch

        gen = torch.Generator(device=device).manual_seed(seed)
        shape = (w["rows"], w["cols"])
        x = torch.randn(shape, generator=gen, device=device, dtype=torch.float32).to(torch_dtype(w.dtype))
        y = torch.randn(shape, generator=gen, device=device, dtype=torch.float32).to(torch_dtype(w.dtype))
        return x, y

    def reference(self, inputs):
        x, y = (t.detach().double() for t in inputs)
        diff = x - y
        return (diff * diff).mean(), (2.0 * diff / diff.numel(),)

    def bytes_moved(self, w, timed_pass):
        return {"forward": 2, "backward": 1, "full": 3}[timed_pass] * w["rows"] * w["cols"] * w.elem_bytes

    def flop(self, w, timed_pass):
        return {"forward": 3, "backward": 2, "full": 5}[timed_pass] * w["rows"] * w["cols"]


class Eager(Implementation):
    operation = "test-sqdist"
    needs = ("torch",)

    def build(self, *, dynamic=False):
        import torch

        class Module(torch.nn.Module):
            def forward(self, x, y):
                return torch.nn.functional.mse_loss(x.float(), y.float()).to(x.dtype)

        return Module()


class Looped(Implementation):
    """Row by row in Python: right, and much slower at any size."""

    operation = "test-sqdist"
    needs = ("torch",)

    def build(self, *, dynamic=False):
        import torch

        class Module(torch.nn.Module):
            def forward(self, x, y):
                total = sum(((x[r].float() - y[r].float()) ** 2).sum() for r in range(x.shape[0]))
                return (total / x.numel()).to(x.dtype)

        return Module()
