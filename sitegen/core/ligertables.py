"""What Liger-Kernel's benchmarks name: kernels (title, family, axes, semantics) and providers.

Tables only, stdlib only: identity.py builds documents from them, and the GPU rerun harness
imports that on hosts without pydantic. A change here that reaches a ``spec`` (axes,
axis descriptions, semantics, providers' projects and licenses) changes digests.
"""

from __future__ import annotations

from typing import Any

LIGER_REPOSITORY = "https://github.com/linkedin/Liger-Kernel"


# Axis vocabulary shared by the table below: one description per axis name, so the same
# word means the same thing on every operation page.
AXIS_DESCRIPTIONS = {
    "vocab": "vocabulary size",
    "hidden": "hidden size",
    "intermediate": "intermediate (FFN) size",
    "tokens": "rows: batch × sequence length",
    "batch": "batch size",
    "seq_len": "sequence length",
    "embedding_dim": "embedding dimension",
    "features": "feature size of the normalized dimension",
    "channels": "channels",
    "channels_per_group": "channels per group",
    "heads": "attention heads",
    "q_heads": "query heads",
    "kv_heads": "key/value heads",
    "kernel_size": "window (kernel) size",
    "dilation": "window dilation",
    "in_channels": "input channels (attention heads in)",
    "out_channels": "output channels (attention heads out)",
    "experts": "experts",
    "top_k": "experts per token",
}


def _kernel(title: str, family: str, axes: list[str], description: str | None = None) -> dict[str, Any]:
    return {"title": title, "family": family, "axes": axes, "description": description}


# Every kernel of Liger-Kernel's published benchmark data. Axis order is display order
# (the workload label reads it left to right): model dimensions first, then how much
# data goes through (batch, sequence, tokens), as "vocab = 128256 · tokens = 2048".
KERNELS: dict[str, dict[str, Any]] = {
    "cross_entropy": _kernel("Cross-entropy loss", "loss", ["vocab", "tokens"]),
    "distill_cosine_loss": _kernel("Cosine-similarity distillation loss (fused linear)", "loss", ["vocab", "hidden", "tokens"]),
    "distill_jsd_loss": _kernel("Jensen-Shannon distillation loss (fused linear)", "loss", ["vocab", "hidden", "tokens"]),
    "embedding": _kernel("Embedding lookup", "embedding", ["vocab", "embedding_dim", "batch", "seq_len"]),
    "fused_add_rms_norm": _kernel("Fused residual add + RMSNorm", "normalization", ["hidden", "tokens"]),
    "fused_linear_cpo_loss": _kernel("Fused linear CPO loss", "loss", ["vocab", "hidden", "batch", "seq_len"]),
    "fused_linear_cross_entropy": _kernel("Fused linear cross-entropy loss", "loss", ["vocab", "hidden", "tokens"]),
    "fused_linear_grpo_loss_sequence": _kernel("Fused linear GRPO loss (sequence-level importance sampling)", "loss", ["vocab", "hidden", "batch", "seq_len"]),
    "fused_linear_grpo_loss_token": _kernel("Fused linear GRPO loss (token-level importance sampling)", "loss", ["vocab", "hidden", "batch", "seq_len"]),
    "fused_linear_jsd": _kernel("Fused linear Jensen-Shannon divergence loss", "loss", ["vocab", "hidden", "tokens"]),
    "fused_linear_orpo_loss": _kernel("Fused linear ORPO loss", "loss", ["vocab", "hidden", "batch", "seq_len"]),
    "fused_linear_simpo_loss": _kernel("Fused linear SimPO loss", "loss", ["vocab", "hidden", "batch", "seq_len"]),
    "fused_moe": _kernel("Fused mixture-of-experts MLP", "mixture of experts", ["hidden", "intermediate", "experts", "top_k", "tokens"]),
    "fused_neighborhood_attention": _kernel("Fused neighborhood attention", "attention", ["hidden", "heads", "kernel_size", "dilation", "batch", "seq_len"]),
    "geglu": _kernel("GEGLU MLP", "activation", ["hidden", "intermediate", "batch", "seq_len"]),
    "group_norm": _kernel("GroupNorm", "normalization", ["channels", "channels_per_group", "hidden", "batch"]),
    "jsd": _kernel("Jensen-Shannon divergence loss", "loss", ["vocab", "tokens"],
                   "Liger-Kernel's generalized Jensen-Shannon divergence (LigerJSD) between student and teacher log-probabilities."),
    "kl_div": _kernel("KL divergence loss", "loss", ["vocab", "tokens"]),
    "kto_loss": _kernel("Fused linear KTO loss", "loss", ["vocab", "hidden", "batch", "seq_len"]),
    "layer_norm": _kernel("LayerNorm", "normalization", ["hidden", "tokens"]),
    "llama4_rope": _kernel("Llama 4 rotary position embedding", "position embedding", ["hidden", "q_heads", "kv_heads", "seq_len"]),
    "megatron_cross_entropy": _kernel("Cross-entropy loss (Megatron-LM layout)", "loss", ["vocab", "seq_len", "batch"]),
    "megatron_rms_norm": _kernel("RMSNorm (Megatron-LM layout)", "normalization", ["hidden", "seq_len", "batch"]),
    "megatron_swiglu": _kernel("SwiGLU (Megatron-LM layout)", "activation", ["intermediate", "seq_len", "batch"]),
    "multi_token_attention": _kernel("Multi-token attention", "attention", ["in_channels", "out_channels", "kernel_size", "batch", "seq_len"]),
    "relu_squared": _kernel("Squared ReLU", "activation", ["hidden", "tokens"]),
    "rms_norm": _kernel("RMSNorm", "normalization", ["hidden", "tokens"]),
    "rope": _kernel("Rotary position embedding (RoPE)", "position embedding", ["hidden", "q_heads", "kv_heads", "seq_len"]),
    "softmax": _kernel("Softmax", "activation", ["hidden", "tokens"]),
    "sparse_multi_token_attention": _kernel("Sparse multi-token attention", "attention", ["in_channels", "out_channels", "kernel_size", "batch", "seq_len"]),
    "sparsemax": _kernel("Sparsemax", "activation", ["features", "batch", "seq_len"]),
    "swiglu": _kernel("SwiGLU MLP", "activation", ["hidden", "intermediate", "batch", "seq_len"]),
    "tiled_geglu": _kernel("Tiled GEGLU MLP", "activation", ["hidden", "intermediate", "batch", "seq_len"]),
    "tiled_swiglu": _kernel("Tiled SwiGLU MLP", "activation", ["hidden", "intermediate", "batch", "seq_len"]),
    "tvd": _kernel("Total variation distance loss", "loss", ["vocab", "tokens"]),
}

# What each operation computes. Part of the OperationSpec's identity: two kernels whose
# family and axes agree (kl_div and tvd, rms_norm and layer_norm) are still different
# operations, and their digests must say so.
SEMANTICS: dict[str, str] = {
    "cross_entropy": "loss = mean over kept rows i of −log softmax(x_i)[y_i]; x: logits [tokens, vocab], y: one class per row",
    "distill_cosine_loss": "loss = w_hard · cross-entropy(student logits, labels) + w_soft · mean(1 − cos(student logits, teacher logits)), logits = hidden states × LM-head weightᵀ computed in chunks, never whole",
    "distill_jsd_loss": "loss = w_hard · cross-entropy(student logits, labels) + w_soft · JSD(teacher ‖ student) of the softmax distributions, logits = hidden states × LM-head weightᵀ computed in chunks, never whole",
    "embedding": "out[b, t] = weight[ids[b, t]], weight [vocab, embedding_dim]",
    "fused_add_rms_norm": "r = x + residual; y = r / sqrt(mean(r², last dim) + eps) · w; returns y and r",
    "fused_linear_cpo_loss": "CPO preference loss on chosen and rejected sequences, logits = hidden states × LM-head weightᵀ computed in chunks, never whole",
    "fused_linear_cross_entropy": "loss = cross-entropy(hidden states × LM-head weightᵀ, labels), logits [tokens, vocab] computed in chunks, never whole",
    "fused_linear_grpo_loss_sequence": "GRPO policy loss with importance ratios clipped per sequence, logits = hidden states × LM-head weightᵀ computed in chunks, never whole",
    "fused_linear_grpo_loss_token": "GRPO policy loss with importance ratios clipped per token, logits = hidden states × LM-head weightᵀ computed in chunks, never whole",
    "fused_linear_jsd": "loss = JSD(teacher ‖ student) of log_softmax(student hidden × Wₛᵀ) and log_softmax(teacher hidden × Wₜᵀ), logits computed in chunks, never whole",
    "fused_linear_orpo_loss": "ORPO loss (NLL on chosen minus λ · log σ of the log-odds ratio of chosen over rejected), logits = hidden states × LM-head weightᵀ computed in chunks, never whole",
    "fused_linear_simpo_loss": "SimPO loss (−log σ of the length-normalized log-probability margin of chosen over rejected, minus γ), logits = hidden states × LM-head weightᵀ computed in chunks, never whole",
    "fused_moe": "y = Σ over the top_k experts e chosen by the router of g_e(x) · expert MLP_e(x), all experts' MLPs fused",
    "fused_neighborhood_attention": "self-attention in which each position attends only to the kernel_size positions of its dilated neighborhood, projections fused",
    "geglu": "y = (gelu_tanh(x W_gateᵀ) ⊙ x W_upᵀ) W_downᵀ",
    "group_norm": "y = (x − mean_g) / sqrt(var_g + eps) · w + b, statistics over each group of channels_per_group channels",
    "kl_div": "loss = Σ target · (log target − input) / tokens, input log-probabilities and target probabilities [tokens, vocab]",
    "kto_loss": "KTO loss on desirable and undesirable examples against a reference point, logits = hidden states × LM-head weightᵀ computed in chunks, never whole",
    "layer_norm": "y = (x − mean(x)) / sqrt(var(x) + eps) · w + b over the last dim",
    "llama4_rope": "q and k rotated by position-dependent angles, in Llama 4's layout (interleaved pairs)",
    "megatron_cross_entropy": "cross-entropy of logits [seq_len, batch, vocab] in Megatron-LM's layout",
    "megatron_rms_norm": "y = x / sqrt(mean(x², last dim) + eps) · w on [seq_len, batch, hidden], Megatron-LM's layout",
    "megatron_swiglu": "y = silu(a) ⊙ b, the FC1 output [seq_len, batch, 2 · intermediate] split in halves a and b (Megatron-LM's layout)",
    "multi_token_attention": "causal attention scores [batch, heads, seq_len, seq_len] convolved over query and key positions by a kernel_size × kernel_size convolution across heads (in_channels → out_channels), then softmax",
    "relu_squared": "y = relu(x)²",
    "rms_norm": "y = x / sqrt(mean(x², last dim) + eps) · w",
    "rope": "q and k rotated by position-dependent angles: x · cos θ_p + rotate_half(x) · sin θ_p (Llama layout)",
    "softmax": "y = exp(x − max x) / Σ exp(x − max x) over the last dim",
    "sparse_multi_token_attention": "multi-token attention with sparsemax in place of softmax",
    "sparsemax": "y = max(x − τ, 0) with τ chosen so that Σ y = 1 over the last dim (the Euclidean projection of x onto the simplex)",
    "swiglu": "y = (silu(x W_gateᵀ) ⊙ x W_upᵀ) W_downᵀ",
    "tiled_geglu": "y = (gelu_tanh(x W_gateᵀ) ⊙ x W_upᵀ) W_downᵀ, computed in num_shards tiles along the sequence to bound memory",
    "tiled_swiglu": "y = (silu(x W_gateᵀ) ⊙ x W_upᵀ) W_downᵀ, computed in num_shards tiles along the sequence to bound memory",
    "tvd": "loss = ½ Σ_v |p − q| per row, mean over rows; p and q probabilities [tokens, vocab]",
}

# Element types of a JSD workload the rerun harness can time, in the order it lists them.
JSD_DTYPES = ("fp32", "bf16", "fp16")

# The JSD operation in full: the rerun harness times sitegen's own kernel against it.
JSD_SPEC_EXTRA: dict[str, Any] = {
    "inputs": [
        {"name": "student_log_probs", "shape": ["tokens", "vocab"],
         "description": "student log-probabilities X = log Q (the predictions)"},
        {"name": "teacher_log_probs", "shape": ["tokens", "vocab"],
         "description": "teacher log-probabilities Y = log P (the targets)"},
    ],
    "outputs": [
        {"name": "loss", "shape": [], "description": "scalar loss, mean over kept rows"},
    ],
    "parameters": {
        "beta": "weight of the teacher in the mixture M, in [0, 1]; 0 is forward KL, 1 is reverse KL",
        "ignore_index": "rows whose shift label equals it are left out of the loss",
    },
    "semantics": {
        "expression": (
            "loss = (1/N) · Σ_{kept rows i} Σ_v [ β·P_iv·(Y_iv − log M_iv) + (1−β)·Q_iv·(X_iv − log M_iv) ], "
            "where X = student_log_probs, Y = teacher_log_probs, Q = exp(X), P = exp(Y), "
            "M = β·P + (1−β)·Q, and N is the number of kept rows"
        ),
        "notes": (
            "β = 0 is forward KL, Σ_v P·(Y − X), and β = 1 is reverse KL, Σ_v Q·(X − Y): Liger-Kernel "
            "defines these two cases directly (they are not limits of the general form, which vanishes "
            "at both ends). With optional shift_labels [tokens], a row is kept unless its label equals "
            "ignore_index; without labels every row is kept; with no kept rows the loss is 0. The "
            "gradient is taken with respect to the student log-probabilities only."
        ),
    },
    # The roofline floor per pass (b = bytes per element): forward must read X and Y, backward
    # must write dX, full does both. An implementation that writes dX in forward moves more
    # there and nearly nothing in backward; its pass notes say so.
    "bytesMoved": {
        "forward": [{"coefficient": 2, "axes": ["tokens", "vocab"], "perElementOf": "dtype"}],
        "backward": [{"coefficient": 1, "axes": ["tokens", "vocab"], "perElementOf": "dtype"}],
        "full": [{"coefficient": 3, "axes": ["tokens", "vocab"], "perElementOf": "dtype"}],
        "notes": "forward reads X and Y (2·T·V·b); backward writes dX (T·V·b); full does both (3·T·V·b).",
    },
}

# Who wrote the code a benchmark provider runs: shown name, project, repository, license.
# A provider whose code is Liger-Kernel's carries the Liger release as its version.
PROVIDERS: dict[str, dict[str, Any]] = {
    "liger": {"name": "Liger", "project": "Liger-Kernel", "repository": LIGER_REPOSITORY, "license": "BSD-2-Clause", "liger": True},
    "liger_tiled": {"name": "Liger (tiled)", "project": "Liger-Kernel", "repository": LIGER_REPOSITORY, "license": "BSD-2-Clause", "liger": True},
    "liger_in_place": {"name": "Liger (in place)", "project": "Liger-Kernel", "repository": LIGER_REPOSITORY, "license": "BSD-2-Clause", "liger": True},
    "liger_rms_norm": {"name": "Liger RMSNorm after a separate add", "project": "Liger-Kernel", "repository": LIGER_REPOSITORY, "license": "BSD-2-Clause", "liger": True},
    "liger_fused_add_rms_norm": {"name": "Liger fused add + RMSNorm", "project": "Liger-Kernel", "repository": LIGER_REPOSITORY, "license": "BSD-2-Clause", "liger": True},
    "torch": {"name": "torch", "project": "PyTorch", "repository": "https://github.com/pytorch/pytorch", "license": "BSD-3-Clause", "variant": "eager"},
    "torch_compile": {"name": "torch.compile", "project": "PyTorch", "repository": "https://github.com/pytorch/pytorch", "license": "BSD-3-Clause", "variant": "torch.compile"},
    "huggingface": {"name": "Hugging Face Transformers", "project": "Transformers", "repository": "https://github.com/huggingface/transformers", "license": "Apache-2.0"},
    "megatron": {"name": "Megatron-LM", "project": "Megatron-LM", "repository": "https://github.com/NVIDIA/Megatron-LM"},
    "megatron-fused": {"name": "Megatron-LM (fused)", "project": "Megatron-LM", "repository": "https://github.com/NVIDIA/Megatron-LM"},
    "megatron-unfused": {"name": "Megatron-LM (unfused)", "project": "Megatron-LM", "repository": "https://github.com/NVIDIA/Megatron-LM"},
    "deepspeed_tiled": {"name": "DeepSpeed (tiled)", "project": "DeepSpeed", "repository": "https://github.com/deepspeedai/DeepSpeed", "license": "Apache-2.0"},
}

# What each implementation does in each pass, where known from its code; shown beside
# per-pass times, because the implementations split the gradient work differently.
PASS_NOTES: dict[tuple[str, str], dict[str, str]] = {
    ("jsd", "liger"): {
        "forward": "one kernel computes the loss and writes dX (the gradient) while it reads X and Y",
        "backward": "returns the dX saved in forward, scaled by the incoming gradient: nearly free",
        "full": "the forward kernel does all the work (loss and dX); backward only scales dX",
    },
    ("jsd", "torch"): {
        "forward": "computes the loss with PyTorch ops; autograd saves what backward needs, no dX yet",
        "backward": "autograd computes dX from the saved tensors: the gradient work happens here",
        "full": "loss in forward, dX in backward, each with PyTorch ops",
    },
    ("jsd", "torch_compile"): {
        "forward": "torch.compile's fused loss kernel; saves what backward needs, no dX yet",
        "backward": "the compiled backward graph computes dX: the gradient work happens here",
        "full": "compiled loss in forward, compiled dX in backward",
    },
}

# Entry points known for certain; others are left out rather than guessed.
CALLABLES: dict[tuple[str, str], dict[str, str]] = {
    ("jsd", "liger"): {"module": "liger_kernel.transformers", "name": "LigerJSD"},
}
