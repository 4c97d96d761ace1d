"""kernelbench_operations.toml checked against the problem sources of every snapshot.

A [[same]] entry claims a problem computes a registry operation: its forward must be the
entry's in every snapshot, and the operation's stated math must say what the source does.
A [[different]] entry claims a look-alike is not that operation, for a stated reason: the
reason is checked in the source, and the importer must give the problem its own operation.
"""

from __future__ import annotations

import ast
import tomllib
from importlib import resources

import pytest

from sitegen.core import identity
from sitegen.importers.kernelbench import read_table
from kernelbenchdata import KERNELBENCH, SNAPSHOTS, require_kernelbench

TABLE = tomllib.loads(resources.files("sitegen.importers").joinpath("kernelbench_operations.toml").read_text("utf-8"))


def _sources(problem: str) -> dict[str, ast.Module]:
    require_kernelbench()
    return {s: ast.parse((KERNELBENCH / s / "KernelBench" / problem).read_text(encoding="utf-8")) for s in SNAPSHOTS}


def _forward(tree: ast.Module) -> ast.FunctionDef:
    model = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Model")
    return next(n for n in model.body if isinstance(n, ast.FunctionDef) and n.name == "forward")


def _returned(tree: ast.Module) -> str:
    return ast.unparse(next(s for s in _forward(tree).body if isinstance(s, ast.Return)).value)


def test_the_table_names_registry_operations_and_is_what_the_importer_reads():
    for entry in TABLE["same"] + TABLE["different"]:
        assert entry["operation"] in identity.KERNELS, entry
    assert read_table() == {e["problem"]: e for e in TABLE["same"]}


@pytest.mark.parametrize("entry", TABLE["same"], ids=lambda e: e["problem"])
def test_a_same_entry_matches_the_source_in_every_snapshot(entry):
    for snapshot, tree in _sources(entry["problem"]).items():
        assert _returned(tree) == entry["forward"], snapshot
    semantics = identity.SEMANTICS[entry["operation"]]
    # The operation's definition, in words, says what the forward computes.
    if entry["operation"] == "softmax":
        assert "over the last dim" in semantics and entry["inputs"] == [["fp32", 2]] and entry["axes"]["hidden"] == [0, 1]
    if entry["operation"] == "cross_entropy":
        assert "−log softmax(x_i)[y_i]" in semantics and "mean" in semantics


def test_rms_norm_lookalike_normalises_over_dim_1_without_a_weight():
    for snapshot, tree in _sources("level1/36_RMSNorm_.py").items():
        text = ast.unparse(_forward(tree))
        assert "dim=1" in text and "weight" not in text, snapshot
    assert "· w" in identity.SEMANTICS["rms_norm"] and "last dim" in identity.SEMANTICS["rms_norm"]


def test_kl_div_lookalike_takes_probabilities_and_applies_the_log():
    for snapshot, tree in _sources("level1/98_KLDivLoss.py").items():
        assert "torch.log(predictions)" in _returned(tree), snapshot
    assert "input log-probabilities" in identity.SEMANTICS["kl_div"]


def test_layer_norm_lookalike_normalises_over_three_dims():
    for snapshot, tree in _sources("level1/40_LayerNorm.py").items():
        init = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_init_inputs")
        returned = next(s for s in init.body if isinstance(s, ast.Return)).value
        assert isinstance(returned, ast.List) and isinstance(returned.elts[0], ast.Tuple) and len(returned.elts[0].elts) == 3, snapshot
    assert "over the last dim" in identity.SEMANTICS["layer_norm"]


def test_group_norm_lookalike_has_a_4d_input():
    for snapshot, tree in _sources("level1/35_GroupNorm_.py").items():
        inputs = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "get_inputs")
        call = next(c for c in ast.walk(inputs) if isinstance(c, ast.Call) and ast.unparse(c.func) in ("torch.rand", "torch.randn"))
        assert len(call.args) == 4, snapshot
