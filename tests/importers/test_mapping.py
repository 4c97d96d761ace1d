"""Every kernel's x axis and config keys land where a person would look for them.

EXPECTED is written by hand from the first CSV row of each kernel; it is not derived
from the mapping code, so a changed rule fails here.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from sitegen.core import identity
from sitegen.importers.ligercases import CaseError, map_case
from sharedinputs import CSV, require_csv

ROWS = list(csv.DictReader(CSV.open(encoding="utf-8"))) if CSV.exists() else []

BF, F32 = "bf16", "fp32"
LM = {"vocab": 128256, "hidden": 4096}
# kernel: (axes in display order, dtype, scalars, config) of the kernel's first row.
EXPECTED = {
    "cross_entropy": ({"vocab": 4096, "tokens": 16384}, F32, {}, {}),
    "distill_cosine_loss": ({**LM, "tokens": 1024}, BF, {"weight_hard_loss": 0.5, "weight_soft_loss": 0.5, "ignore_index": -100}, {"bias": False}),
    "distill_jsd_loss": ({**LM, "tokens": 1024}, BF, {"weight_hard_loss": 0.5, "weight_soft_loss": 0.5, "ignore_index": -100}, {"bias": False}),
    "embedding": ({"vocab": 1024, "embedding_dim": 768, "batch": 32, "seq_len": 512}, F32, {}, {}),
    "fused_add_rms_norm": ({"hidden": 1024, "tokens": 2048}, F32, {"eps": 1e-06}, {}),
    "fused_linear_cpo_loss": ({**LM, "batch": 2, "seq_len": 1024}, BF, {}, {}),
    "fused_linear_cross_entropy": ({**LM, "tokens": 4096}, BF, {}, {}),
    "fused_linear_grpo_loss_sequence": ({**LM, "batch": 2, "seq_len": 1024}, BF, {"importance_sampling_level": "sequence"}, {}),
    "fused_linear_grpo_loss_token": ({**LM, "batch": 2, "seq_len": 1024}, BF, {"importance_sampling_level": "token"}, {}),
    "fused_linear_jsd": ({**LM, "tokens": 1024}, BF, {}, {}),
    "fused_linear_orpo_loss": ({**LM, "batch": 2, "seq_len": 4096}, BF, {}, {}),
    "fused_linear_simpo_loss": ({**LM, "batch": 2, "seq_len": 1024}, BF, {}, {}),
    "fused_moe": ({"hidden": 2048, "intermediate": 768, "experts": 128, "top_k": 8, "tokens": 128}, BF, {}, {}),
    "fused_neighborhood_attention": ({"hidden": 512, "heads": 8, "kernel_size": 7, "dilation": 1, "batch": 2, "seq_len": 64}, F32, {}, {"bias": True}),
    "geglu": ({"hidden": 4096, "intermediate": 11008, "batch": 8, "seq_len": 1024}, BF, {}, {"hidden_act": "gelu_pytorch_tanh"}),
    "group_norm": ({"channels": 32, "channels_per_group": 4, "hidden": 512, "batch": 128}, F32, {"eps": 1e-06}, {}),
    "jsd": ({"vocab": 4096, "tokens": 8192}, F32, {}, {}),
    "kl_div": ({"vocab": 4096, "tokens": 16384}, F32, {}, {}),
    "kto_loss": ({"vocab": 128256, "hidden": 1024, "batch": 2, "seq_len": 512}, BF, {"beta": 0.1, "ignore_index": 42}, {"bias": True}),
    "layer_norm": ({"hidden": 1024, "tokens": 4096}, F32, {"eps": 1e-06}, {}),
    "llama4_rope": ({"hidden": 512, "q_heads": 32, "kv_heads": 8, "seq_len": 2048}, BF, {}, {}),
    "megatron_cross_entropy": ({"vocab": 4096, "seq_len": 2048, "batch": 4}, None, {}, {"tensor_parallel_size": 1}),
    "megatron_rms_norm": ({"hidden": 1024, "seq_len": 4096, "batch": 1}, None, {}, {}),
    "megatron_swiglu": ({"intermediate": 1024, "seq_len": 2048, "batch": 4}, None, {}, {}),
    "multi_token_attention": ({"in_channels": 4, "out_channels": 4, "kernel_size": 3, "batch": 2, "seq_len": 32}, BF, {}, {"groups": 1, "bias": True}),
    "relu_squared": ({"hidden": 128, "tokens": 4096}, BF, {}, {}),
    "rms_norm": ({"hidden": 1024, "tokens": 2048}, BF, {"eps": 1e-06}, {}),
    "rope": ({"hidden": 512, "q_heads": 32, "kv_heads": 8, "seq_len": 2048}, BF, {}, {}),
    "softmax": ({"hidden": 128, "tokens": 2048}, F32, {}, {}),
    "sparse_multi_token_attention": ({"in_channels": 4, "out_channels": 4, "kernel_size": 3, "batch": 2, "seq_len": 32}, F32, {}, {"groups": 1, "bias": True}),
    "sparsemax": ({"features": 1024, "batch": 4, "seq_len": 512}, F32, {"dim": -1}, {}),
    "swiglu": ({"hidden": 4096, "intermediate": 11008, "batch": 4, "seq_len": 1024}, BF, {}, {"hidden_act": "silu"}),
    "tiled_geglu": ({"hidden": 2048, "intermediate": 4096, "batch": 2, "seq_len": 1024}, BF, {}, {"hidden_act": "gelu_pytorch_tanh", "activation_type": "geglu", "num_shards": 4}),
    "tiled_swiglu": ({"hidden": 2048, "intermediate": 4096, "batch": 2, "seq_len": 1024}, BF, {}, {"hidden_act": "silu", "activation_type": "swiglu", "num_shards": 4}),
    "tvd": ({"vocab": 4096, "tokens": 16384}, F32, {}, {}),
}


@pytest.fixture(autouse=True)
def _needs_csv():
    require_csv()


def _case(row):
    return map_case(row["kernel_name"], row["x_name"], row["x_label"], row["x_value"], row["extra_benchmark_config_str"])


def test_the_table_covers_every_kernel_of_the_csv():
    assert sorted({r["kernel_name"] for r in ROWS}) == sorted(EXPECTED) == sorted(identity.KERNELS)
    assert len(EXPECTED) == 35


@pytest.mark.parametrize("kernel", sorted(EXPECTED))
def test_kernel_mapping(kernel):
    rows = [r for r in ROWS if r["kernel_name"] == kernel]
    axes, dtype, scalars, config = EXPECTED[kernel]
    case = _case(rows[0])
    assert list(case.axes.items()) == list(axes.items())
    assert (case.dtype, case.scalars, case.config) == (dtype, scalars, config)
    assert not case.unknown_keys
    # Every row of the kernel, whichever axis it sweeps, has the operation's axes in its order.
    for row in rows:
        other = _case(row)
        assert list(other.axes) == identity.operation_axes(kernel), row
        assert int(row["x_value"]) in other.axes.values()
    # The operation declares exactly these axes; its title is a human name.
    operation = identity.operation_document(kernel)
    assert [a["name"] for a in operation["spec"]["axes"]] == list(axes)
    assert "_" not in operation["metadata"]["title"]


def test_jsd_sweeping_tokens_drops_the_default_batch_shape():
    row = next(r for r in ROWS if r["kernel_name"] == "jsd" and r["x_name"] == "BT" and r["x_value"] == "2048")
    case = _case(row)
    assert case.axes == {"vocab": 128256, "tokens": 2048}
    assert set(case.dropped) == {"bsz", "seq_len"} and all(case.dropped.values())


def test_fused_moe_sweeping_experts_takes_tokens_from_the_config():
    row = next(r for r in ROWS if r["kernel_name"] == "fused_moe" and r["x_name"] == "E")
    case = _case(row)
    assert case.axes["tokens"] == 8192 and case.axes["experts"] == int(row["x_value"])


def test_rope_sweeping_sequence_takes_hidden_from_the_config():
    row = next(r for r in ROWS if r["kernel_name"] == "rope" and r["x_name"] == "T")
    case = _case(row)
    assert case.axes["hidden"] == 8192 and case.axes["seq_len"] == int(row["x_value"])


def test_unknown_kernel_uses_the_generic_names_with_the_swept_axis_last():
    case = map_case("foo_bar", "T", "sequence length", "512", '{"B": 2, "H": 64, "dtype": "torch.float16", "flavour": "x"}')
    assert list(case.axes.items()) == [("batch", 2), ("hidden", 64), ("seq_len", 512)]
    assert case.dtype == "fp16" and case.config == {"flavour": "x"} and case.unknown_keys == ["flavour"]


@pytest.mark.parametrize("config, reason", [
    ('{"B": 4', "invalid JSON"),
    ('{"B": 4, "T": 2048, "dtype": "torch.float7"}', "unknown element type"),
    ('{"B": 0, "T": 2048}', "not a positive size"),
    ("{}", "missing axis tokens"),
])
def test_bad_configs_say_why(config, reason):
    with pytest.raises(CaseError, match=reason):
        map_case("jsd", "V", "vocab size", "4096", config)
