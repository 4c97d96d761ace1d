"""Cross entropy and KL divergence, two losses the registry holds Liger-Kernel's Reported
records for, as operation plugins: Liger-Kernel, torch and torch.compile as peers, at the
workload axes of Liger's published benchmark (its CSV: cross entropy on an A100, KL divergence
on an H100 PCIe; both tokens 16384 × vocab 4096-131072, fp32), writing the very OperationSpec
and WorkloadCase documents the Liger importer wrote, so the reruns join those operation pages.
"""

from __future__ import annotations

from typing import Any

from sitegen.operations.base import Operation, torch_dtype
from sitegen.operations.peers import ImportedDocuments, LigerPeer, TorchPeer
from sitegen.core.workload import Workload

LIGER_VOCAB = (4096, 8192, 16384, 32768, 65536, 131072)
LIGER_TOKENS = (16384,)  # B·T = 8 × 2048 in Liger's benchmark scripts
_REFERENCE_ROWS = 1024  # rows of a float64 reference block: 1 GiB a temporary at vocab 131072


class _LigerLoss(ImportedDocuments, Operation):
    """A loss over [tokens, vocab] rows whose documents are the Liger importer's."""

    family = "loss"
    axes = ("tokens", "vocab")
    default_axes = {"tokens": LIGER_TOKENS, "vocab": LIGER_VOCAB}
    interpret_axes = {"tokens": (8,), "vocab": (64,)}
    default_dtypes = ("fp32",)
    default_peers = ("liger", "torch", "torch-compile")
    interpret_peers = ("torch",)
    interpret_left_out = ("Liger-Kernel's kernels need a GPU or Triton's interpreter, and inductor compiles C++ for "
                          "every shape on a CPU, tens of seconds each")

    def flop(self, w: Workload, timed_pass: str) -> int:
        # Per element: exp, sum, log or product terms (~5) forward; ~3 for the gradient.
        return {"forward": 5, "backward": 3, "full": 8}[timed_pass] * w["tokens"] * w["vocab"]


class CrossEntropy(_LigerLoss):
    name = "cross-entropy"
    kernel = "cross_entropy"
    title = "Cross-entropy loss"
    peers = {"liger": "sitegen.operations.liger_losses:LigerCrossEntropy",
             "torch": "sitegen.operations.liger_losses:TorchCrossEntropy",
             "torch-compile": "sitegen.operations.liger_losses:CompiledCrossEntropy"}
    # 2 x torch's worst error over the gate's shapes on the CPU (benchmarks/results/
    # honest_errors_issue28_cpu.txt, three runs: bf16 up to 1.2e-2, fp16 up to 1.5e-3, rounded up);
    # fp32 (torch: 1.2e-7) is held at
    # 1e-4, which still fails a 0.1%-off kernel, until Liger's error at vocab 131072 is measured
    # on the H200. Liger's errors are not measured yet: the lead's GPU run must confirm these.
    tolerances = {"fp32": 1e-4, "bf16": 2.5e-2, "fp16": 4e-3}
    reference_name = "sitegen.operations.liger_losses:CrossEntropy.reference (float64 log-sum-exp, gradient softmax − onehot)"
    inputs_notes = "(tokens, vocab) logits (standard normal) and one target class per row (uniform, none ignored)"
    grad_inputs_notes = "the logits"
    input_names = "logits and targets"
    bytes_notes = "forward: read X, T·V·b; backward: write dX, T·V·b; full: 2·T·V·b"
    # Liger's kernel writes dX over the logits during forward (and hands the gradient back in
    # their storage): a training step never reads logits after the loss, so that is allowed here.
    writable_inputs = (0,)

    def make_inputs(self, w: Workload, seed: int, device: str) -> tuple:
        import torch

        gen = torch.Generator(device=device).manual_seed(seed)
        logits = torch.randn(w["tokens"], w["vocab"], generator=gen, device=device, dtype=torch.float32)
        target = torch.randint(0, w["vocab"], (w["tokens"],), generator=gen, device=device)
        return logits.to(torch_dtype(w.dtype)), target

    def reference(self, inputs: tuple):
        import torch

        x, target = inputs[0].detach().double(), inputs[1]
        rows = x.shape[0]
        lse = torch.logsumexp(x, dim=-1)
        loss = (lse - x.gather(1, target[:, None]).squeeze(1)).sum() / rows
        grad = torch.softmax(x, dim=-1)
        grad[torch.arange(rows, device=x.device), target] -= 1.0
        return loss, (grad.div_(rows),)

    def bytes_moved(self, w: Workload, timed_pass: str) -> int:
        return {"forward": 1, "backward": 1, "full": 2}[timed_pass] * w["tokens"] * w["vocab"] * w.elem_bytes


class KLDiv(_LigerLoss):
    name = "kl-div"
    kernel = "kl_div"
    title = "KL divergence loss"
    peers = {"liger": "sitegen.operations.liger_losses:LigerKLDiv",
             "torch": "sitegen.operations.liger_losses:TorchKLDiv",
             "torch-compile": "sitegen.operations.liger_losses:CompiledKLDiv"}
    # As cross entropy's (same file of measurements): bf16 up to 6.0e-3, fp16 2.2e-2 (targets near
    # fp16's subnormal range), each times 2; fp32 (torch: 1.2e-7) held at 1e-4.
    tolerances = {"fp32": 1e-4, "bf16": 1.3e-2, "fp16": 4.5e-2}
    reference_name = "sitegen.operations.liger_losses:KLDiv.reference (float64, gradient −target / tokens)"
    inputs_notes = ("(tokens, vocab) input log-probabilities and target probabilities (softmax of standard-normal "
                    "logits), reduction batchmean")
    grad_inputs_notes = "the input"
    input_names = "input and target"
    bytes_notes = "forward: read input and target, 2·T·V·b; backward: write dX, T·V·b; full: 3·T·V·b"

    def make_inputs(self, w: Workload, seed: int, device: str) -> tuple:
        import torch

        gen = torch.Generator(device=device).manual_seed(seed)
        shape = (w["tokens"], w["vocab"])
        x = torch.randn(shape, generator=gen, device=device, dtype=torch.float32).log_softmax(-1)
        t = torch.randn(shape, generator=gen, device=device, dtype=torch.float32).softmax(-1)
        return x.to(torch_dtype(w.dtype)), t.to(torch_dtype(w.dtype))

    def reference(self, inputs: tuple):
        import torch

        x, t = (v.detach() for v in inputs)
        rows = x.shape[0]
        # A block of rows at a time: at tokens 16384 x vocab 131072 each float64 temporary of the
        # whole is 16 GiB, and four of them beside the harness's input sets ran the H200 out of
        # memory (benchmarks/results/rerun_h200_issue28b/refused/). The sum's order changes
        # nothing that float64 would show at the tolerances used.
        total = torch.zeros((), dtype=torch.float64, device=x.device)
        for start in range(0, rows, _REFERENCE_ROWS):
            xb, tb = x[start:start + _REFERENCE_ROWS].double(), t[start:start + _REFERENCE_ROWS].double()
            total += torch.where(tb > 0, tb * (torch.log(tb) - xb), torch.zeros_like(tb)).sum()
        return total / rows, ((-t.double()).div_(rows),)

    def bytes_moved(self, w: Workload, timed_pass: str) -> int:
        return {"forward": 2, "backward": 1, "full": 3}[timed_pass] * w["tokens"] * w["vocab"] * w.elem_bytes


# -- peers ------------------------------------------------------------------------------

class LigerCrossEntropy(LigerPeer):
    operation = "cross-entropy"
    needs = ("liger_kernel",)
    install = "pip install liger-kernel"
    kernel, liger_class = "cross_entropy", "LigerCrossEntropyLoss"


class TorchCrossEntropy(TorchPeer):
    operation = "cross-entropy"
    needs = ("torch",)
    install = "pip install '.[gpu]' in the sitegen checkout"
    kernel, callable = "cross_entropy", ("torch.nn", "CrossEntropyLoss")


class CompiledCrossEntropy(TorchCrossEntropy):
    operation = "cross-entropy"
    needs = ("torch",)
    install = "pip install '.[gpu]' in the sitegen checkout"
    provider = "torch_compile"


class LigerKLDiv(LigerPeer):
    operation = "kl-div"
    needs = ("liger_kernel",)
    install = "pip install liger-kernel"
    kernel, liger_class = "kl_div", "LigerKLDIVLoss"
    liger_kwargs = {"reduction": "batchmean"}


class TorchKLDiv(TorchPeer):
    operation = "kl-div"
    needs = ("torch",)
    install = "pip install '.[gpu]' in the sitegen checkout"
    kernel, callable = "kl_div", ("torch.nn", "KLDivLoss")
    module_kwargs = {"reduction": "batchmean"}


class CompiledKLDiv(TorchKLDiv):
    operation = "kl-div"
    needs = ("torch",)
    install = "pip install '.[gpu]' in the sitegen checkout"
    provider = "torch_compile"
