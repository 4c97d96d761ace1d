"""One CSV row's x axis and ``extra_benchmark_config_str`` → the WorkloadCase it measured.

Every published key lands in exactly one place, by one rule:

- **axes**: sizes of the tensors (or attention windows) the benchmark script builds,
  under the names a person would use (BT → tokens, V → vocab, H → hidden, B → batch, …).
  Where the script flattens batch and sequence into rows (``torch.randn(B * T, V)`` for
  the cross-entropy, KL, TVD and JSD losses) the case is ``tokens = B·T``: the kernel sees
  only the product, so [4·2048, V] and [8·1024, V] are the same problem.
- **dtype**: ``torch.float32`` → fp32, ``torch.bfloat16`` → bf16, …; a script that passes
  no dtype builds ``torch.randn`` tensors, i.e. fp32, where we know it (DEFAULT_DTYPE);
  otherwise the type is left out rather than guessed.
- **scalars**: numeric or string arguments of the operation (eps, beta, ignore_index,
  loss weights, importance_sampling_level, dim).
- **config**: other published settings that may change what is measured (bias,
  hidden_act, groups, sharding, tensor-parallel size), kept as published. A key we do
  not know lands here too: keeping it can only split cohorts, never merge two different
  problems into one.
- **dropped**: keys that provably do not describe the case (DROPPED gives each reason).

The x value wins over a config default for the same axis: the swept value is the one
the script used.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from sitegen.core import identity
from sitegen.core.strictjson import MAX_SAFE_INTEGER

AXIS, SCALAR, CONFIG, FACTOR, DROP, DTYPE = "axis", "scalar", "config", "factor", "drop", "dtype"

DTYPES = {
    "torch.float32": "fp32", "torch.float": "fp32", "torch.bfloat16": "bf16", "torch.float16": "fp16",
    "torch.half": "fp16", "torch.float64": "fp64", "torch.double": "fp64", "torch.float8_e4m3fn": "fp8_e4m3fn",
    "torch.float8_e5m2": "fp8_e5m2", "torch.int8": "int8", "torch.int32": "int32", "torch.int64": "int64",
}

# Keys whose meaning is the same in every Liger benchmark script.
GENERIC: dict[str, tuple[str, str]] = {
    "BT": (AXIS, "tokens"), "V": (AXIS, "vocab"), "vocab_size": (AXIS, "vocab"),
    "H": (AXIS, "hidden"), "hidden_size": (AXIS, "hidden"), "N": (AXIS, "hidden"),
    "B": (AXIS, "batch"), "bsz": (AXIS, "batch"), "batch_size": (AXIS, "batch"),
    "T": (AXIS, "seq_len"), "S": (AXIS, "seq_len"), "L": (AXIS, "seq_len"), "seq_len": (AXIS, "seq_len"),
    "M": (AXIS, "tokens"), "D": (AXIS, "embedding_dim"), "E": (AXIS, "experts"), "K": (AXIS, "top_k"),
    "intermediate_size": (AXIS, "intermediate"), "intermediate_dim": (AXIS, "intermediate"),
    "ffn_local": (AXIS, "intermediate"), "num_heads": (AXIS, "heads"), "num_q_heads": (AXIS, "q_heads"),
    "num_kv_heads": (AXIS, "kv_heads"), "kernel_size": (AXIS, "kernel_size"), "dilation": (AXIS, "dilation"),
    "C": (AXIS, "channels"), "channels_per_group": (AXIS, "channels_per_group"),
    "C_in": (AXIS, "in_channels"), "C_out": (AXIS, "out_channels"),
    "dtype": (DTYPE, "dtype"),
    "eps": (SCALAR, "eps"), "beta": (SCALAR, "beta"), "ignore_index": (SCALAR, "ignore_index"),
    "weight_hard_loss": (SCALAR, "weight_hard_loss"), "weight_soft_loss": (SCALAR, "weight_soft_loss"),
    "importance_sampling_level": (SCALAR, "importance_sampling_level"), "dim": (SCALAR, "dim"),
    "bias": (CONFIG, "bias"), "hidden_act": (CONFIG, "hidden_act"), "activation_type": (CONFIG, "activation_type"),
    "num_shards": (CONFIG, "num_shards"), "groups": (CONFIG, "groups"), "TP": (CONFIG, "tensor_parallel_size"),
    "mode": (DROP, "mode"), "sweep_dim": (DROP, "sweep_dim"),
}

DROPPED = {
    "mode": "the script's default pass; each row's kernel_operation_mode says which pass it timed",
    "sweep_dim": "names the swept axis, which x_name already says",
    "jsd_batch_shape": (
        "bsz and seq_len are the script's default batch shape; with BT as the x axis the inputs "
        "are [BT, V], so they do not shape the case"
    ),
}

_FLATTENED = {"B": (FACTOR, "tokens"), "T": (FACTOR, "tokens")}

# Where a script departs from GENERIC. Tested key by key against the real CSV.
OVERRIDES: dict[str, dict[str, tuple[str, str]]] = {
    "cross_entropy": _FLATTENED,
    "kl_div": _FLATTENED,
    "tvd": _FLATTENED,
    "jsd": {**_FLATTENED, "bsz": (DROP, "jsd_batch_shape"), "seq_len": (DROP, "jsd_batch_shape")},
    "fused_moe": {"T": (AXIS, "tokens")},
    "group_norm": {"M": (AXIS, "batch")},
    "multi_token_attention": {"K": (AXIS, "kernel_size")},
    "sparse_multi_token_attention": {"K": (AXIS, "kernel_size")},
    "sparsemax": {"V": (AXIS, "features")},
}

# Scripts that pass no dtype and build default torch.randn (fp32) inputs.
DEFAULT_DTYPE = {"cross_entropy": "fp32", "kl_div": "fp32", "tvd": "fp32", "jsd": "fp32"}


class CaseError(ValueError):
    """A row whose workload cannot be built; the message says why."""


@dataclass
class Case:
    """A row's workload, split by where each published key went."""

    axes: dict[str, Any]
    dtype: str | None
    scalars: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    dropped: dict[str, str] = field(default_factory=dict)
    unknown_keys: list[str] = field(default_factory=list)


def rule(kernel: str, key: str, label: str = "") -> tuple[str, str]:
    """Where ``key`` of ``kernel`` goes; the x label decides T: "num_tokens" → tokens."""
    found = OVERRIDES.get(kernel, {}).get(key) or GENERIC.get(key)
    if found is None:
        return (CONFIG, key)
    if key == "T" and found == (AXIS, "seq_len") and "token" in label.lower():
        return (AXIS, "tokens")
    return found


def parse_config(text: str) -> dict[str, Any]:
    """The JSON object of ``extra_benchmark_config_str``; CaseError when it is not one."""
    def constant(name: str) -> Any:
        raise CaseError(f"extra_benchmark_config_str: {name} is not a number")

    try:
        value = json.loads(text or "{}", parse_constant=constant)
    except json.JSONDecodeError as exc:
        raise CaseError(f"extra_benchmark_config_str: invalid JSON: {exc.msg} at column {exc.colno}") from None
    except RecursionError:
        raise CaseError("extra_benchmark_config_str: nesting too deep") from None
    except CaseError:
        raise  # NaN or Infinity, from constant(): a ValueError too, not a number too long
    except ValueError:
        # int() refuses more than 4,300 digits; no real size has as many.
        raise CaseError("extra_benchmark_config_str: a number is too long") from None
    if not isinstance(value, dict):
        raise CaseError("extra_benchmark_config_str: must be a JSON object")
    for key, item in value.items():
        if isinstance(item, (list, dict)):
            raise CaseError(f"extra_benchmark_config_str: {key}: nested values are not supported")
    return value


def _axis_value(key: str, value: Any, shown: str | None = None) -> int | float:
    shown = shown if shown is not None else repr(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise CaseError(f"{key}: {shown} is not a positive size")
    if value > MAX_SAFE_INTEGER:
        raise CaseError(f"{key}: {shown} is too large (more than 2**53-1)")
    return int(value) if float(value).is_integer() else value


def parse_x(text: str, column: str = "x_value") -> int | float:
    """The swept value: a positive number, an integer wherever it is whole."""
    try:
        value = float(text)
    except ValueError:
        raise CaseError(f"{column}: {text!r} is not a number") from None
    return _axis_value(column, value, repr(text))


def map_case(kernel: str, x_name: str, x_label: str, x_value: str, config_text: str) -> Case:
    """Build the Case of one row; CaseError names the offending column or key."""
    config = parse_config(config_text)
    kind, axis = rule(kernel, x_name, x_label)
    if kind not in (AXIS, FACTOR):
        raise CaseError(f"x_name: {x_name!r} is not a size axis of {kernel}")
    x_axis = axis
    axes: dict[str, Any] = {x_axis: parse_x(x_value)}
    case = Case(axes={}, dtype=DEFAULT_DTYPE.get(kernel))
    factors: dict[str, int | float] = {}
    order: list[str] = []
    for key, value in config.items():
        kind, target = rule(kernel, key)
        if kind == DROP:
            case.dropped[key] = DROPPED[target]
        elif value is None:
            # The placeholder of the swept axis (fused_moe's "E": null when sweeping E).
            case.dropped[key] = "null: the swept axis, given by x_value"
        elif kind == DTYPE:
            if value not in DTYPES:
                raise CaseError(f"extra_benchmark_config_str: dtype: unknown element type {value!r}")
            case.dtype = DTYPES[value]
        elif kind == AXIS:
            if target != x_axis:
                axes[target] = _axis_value(key, value)
                order.append(target)
        elif kind == FACTOR:
            factors[target] = factors.get(target, 1) * _axis_value(key, value)
        elif kind == SCALAR:
            case.scalars[key] = value
        else:
            if key not in GENERIC and key not in OVERRIDES.get(kernel, {}):
                case.unknown_keys.append(key)
            case.config[target] = value
    for target, product in factors.items():
        if target != x_axis:
            axes.setdefault(target, product)
            order.append(target)
    expected = identity.operation_axes(kernel)
    if expected:
        missing = [a for a in expected if a not in axes]
        extra = [a for a in axes if a not in expected]
        if missing or extra:
            what = "; ".join(filter(None, [
                f"missing axis {', '.join(missing)}" if missing else "",
                f"unexpected axis {', '.join(extra)}" if extra else "",
            ]))
            raise CaseError(f"extra_benchmark_config_str: {what} for {kernel} (x_name {x_name!r})")
        case.axes = {a: axes[a] for a in expected}
    else:
        # An unknown kernel: the config's axes in published order, then the swept one.
        case.axes = {**{a: axes[a] for a in order}, x_axis: axes[x_axis]}
    return case
