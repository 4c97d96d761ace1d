"""The Liger importer's reading of one row's values (sitegen.importers.ligercases), in process.

- x_value is a positive number, an integer wherever it is whole, at most 2**53 - 1.
- extra_benchmark_config_str is a flat JSON object (empty means {}), with numbers only where
  numbers are (no NaN or Infinity); anything else is refused saying why.
- A row's sizes are positive; B and T of a flattened loss multiply into tokens; the swept
  value wins over the config's default for its axis; an unknown kernel keeps the config's
  axes in published order with the swept one last.
"""

from __future__ import annotations

import pytest

from sitegen.importers.ligercases import AXIS, CONFIG, FACTOR, CaseError, map_case, parse_config, parse_x, rule


def _refusal(function, *args) -> str:
    with pytest.raises(CaseError) as caught:
        function(*args)
    return str(caught.value)


@pytest.mark.parametrize("text, value", [("4096", 4096), ("4096.0", 4096), ("0.5", 0.5), (" 12 ", 12),
                                         ("9007199254740991", 9007199254740991), ("1e3", 1000)])
def test_x_is_a_positive_number_and_an_integer_where_whole(text, value):
    parsed = parse_x(text)
    assert parsed == value and type(parsed) is type(value)


@pytest.mark.parametrize("text, message", [
    ("abc", "x_value: 'abc' is not a number"),
    ("", "x_value: '' is not a number"),
    ("0", "x_value: '0' is not a positive size"),
    ("-4", "x_value: '-4' is not a positive size"),
    ("nan", "x_value: 'nan' is not a positive size"),
    ("inf", "x_value: 'inf' is not a positive size"),
    ("9007199254740993", "x_value: '9007199254740993' is too large (more than 2**53-1)"),
])
def test_x_that_is_no_size_is_refused_saying_why(text, message):
    assert _refusal(parse_x, text) == message


def test_the_column_is_named_in_the_refusal():
    assert _refusal(parse_x, "x", "size") == "size: 'x' is not a number"


@pytest.mark.parametrize("text, value", [("", {}), ("{}", {}), ('{"B": 4, "dtype": "torch.float16", "bias": null}',
                                                                  {"B": 4, "dtype": "torch.float16", "bias": None})])
def test_a_config_is_a_flat_json_object(text, value):
    assert parse_config(text) == value


@pytest.mark.parametrize("text, message", [
    ('{"B": NaN}', "extra_benchmark_config_str: NaN is not a number"),
    ('{"B": -Infinity}', "extra_benchmark_config_str: -Infinity is not a number"),
    ('{"B": 4', "extra_benchmark_config_str: invalid JSON: Expecting ',' delimiter at column 8"),
    ("[" * 100000 + "]" * 100000, "extra_benchmark_config_str: nesting too deep"),
    ('{"B": ' + "1" * 5000 + "}", "extra_benchmark_config_str: a number is too long"),
    ("[1]", "extra_benchmark_config_str: must be a JSON object"),
    ('{"B": [1, 2]}', "extra_benchmark_config_str: B: nested values are not supported"),
    ('{"B": {"a": 1}}', "extra_benchmark_config_str: B: nested values are not supported"),
])
def test_a_config_that_is_not_a_flat_object_is_refused_saying_why(text, message):
    assert _refusal(parse_config, text) == message


@pytest.mark.parametrize("config, message", [
    ('{"V": true}', "V: True is not a positive size"),
    ('{"V": "4096"}', "V: '4096' is not a positive size"),
    ('{"V": -1}', "V: -1 is not a positive size"),
    ('{"V": 9007199254740992}', "V: 9007199254740992 is too large (more than 2**53-1)"),
    ('{"V": 4096, "dtype": "torch.float7"}', "extra_benchmark_config_str: dtype: unknown element type 'torch.float7'"),
])
def test_a_config_value_that_is_no_size_or_type_is_refused(config, message):
    assert _refusal(map_case, "rms_norm", "BT", "tokens", "2048", config.replace('"V"', '"H"')) == message.replace("V:", "H:")


def test_the_swept_axis_must_be_a_size():
    assert _refusal(map_case, "rms_norm", "eps", "epsilon", "1", '{"H": 4096}') == "x_name: 'eps' is not a size axis of rms_norm"


def test_flattened_losses_multiply_batch_and_sequence_into_tokens():
    case = map_case("cross_entropy", "V", "vocab size", "32000", '{"B": 4, "T": 512}')
    assert case.axes == {"vocab": 32000, "tokens": 2048}


def test_the_swept_value_wins_over_the_configs_default_for_its_axis():
    case = map_case("rms_norm", "H", "hidden size", "1024", '{"H": 4096, "BT": 2048}')
    assert case.axes == {"hidden": 1024, "tokens": 2048}
    case = map_case("cross_entropy", "BT", "tokens", "4096", '{"B": 4, "T": 512, "V": 32000}')
    assert case.axes == {"vocab": 32000, "tokens": 4096}


def test_t_is_tokens_when_the_x_label_says_tokens():
    assert rule("rms_norm", "T", "Number of Tokens") == (AXIS, "tokens")
    assert rule("rms_norm", "T", "sequence length") == (AXIS, "seq_len")
    assert rule("cross_entropy", "T", "num_tokens") == (FACTOR, "tokens")
    assert rule("rms_norm", "flavour") == (CONFIG, "flavour")


def test_a_null_placeholder_is_dropped_as_the_swept_axis():
    case = map_case("rms_norm", "H", "hidden size", "1024", '{"H": null, "BT": 2048}')
    assert case.dropped == {"H": "null: the swept axis, given by x_value"} and case.axes == {"hidden": 1024, "tokens": 2048}


def test_every_key_lands_in_one_place():
    case = map_case("rms_norm", "H", "hidden size", "1024",
                    '{"BT": 2048, "eps": 1e-6, "bias": true, "mode": "forward", "dtype": "torch.bfloat16", "flavour": "x"}')
    assert case.axes == {"hidden": 1024, "tokens": 2048} and case.dtype == "bf16"
    assert case.scalars == {"eps": 1e-6} and case.config == {"bias": True, "flavour": "x"}
    assert list(case.dropped) == ["mode"] and case.unknown_keys == ["flavour"]


def test_a_row_missing_or_adding_axes_names_them_all():
    assert _refusal(map_case, "rms_norm", "H", "hidden size", "1024", '{"B": 2, "D": 8}') == (
        "extra_benchmark_config_str: missing axis tokens; unexpected axis batch, embedding_dim for rms_norm (x_name 'H')")
    assert _refusal(map_case, "rms_norm", "H", "hidden size", "1024", '{"B": 2, "BT": 8}') == (
        "extra_benchmark_config_str: unexpected axis batch for rms_norm (x_name 'H')")


def test_an_unknown_kernel_keeps_published_order_with_the_swept_axis_last():
    case = map_case("foo_bar", "T", "sequence length", "512", '{"H": 64, "B": 2}')
    assert list(case.axes.items()) == [("hidden", 64), ("batch", 2), ("seq_len", 512)]
    assert case.dtype is None


def test_scripts_without_a_dtype_that_build_fp32_say_so():
    assert map_case("cross_entropy", "V", "vocab size", "32000", '{"BT": 8}').dtype == "fp32"
    assert map_case("rms_norm", "H", "hidden size", "64", '{"BT": 8}').dtype is None


def test_a_swept_t_is_tokens_when_the_x_label_says_tokens():
    case = map_case("rms_norm", "T", "Number of tokens", "2048", '{"H": 4096}')
    assert case.axes == {"hidden": 4096, "tokens": 2048}


def test_a_flattened_size_that_is_no_size_is_refused_by_its_key():
    assert _refusal(map_case, "cross_entropy", "V", "vocab size", "32000", '{"B": 0, "T": 512}') == "B: 0 is not a positive size"


def test_a_row_missing_axes_names_them_all_and_nothing_else():
    assert _refusal(map_case, "geglu", "T", "sequence length", "512", "{}") == (
        "extra_benchmark_config_str: missing axis hidden, intermediate, batch for geglu (x_name 'T')")
