"""The record fields behind ranks and rooflines: bytes moved per pass, pass notes, the
minimum effect, and gpus.toml's nominal bandwidth, as a user meets them through the CLI."""

from __future__ import annotations

import json

import pytest

from manifest_edits import VALID, assert_clean_failure, cli, problem_lines
from sitegen.registry.config import load_config
from sitegen.core import identity
from sitegen.format.model import KINDS
from sitegen.core.problems import InputError
from sitegen.rerun.outcome.records import implementation_doc

JSD_TERMS = {"forward": 2, "backward": 1, "full": 3}


def _operation(tmp_path, bytes_moved):
    doc = json.loads((VALID / "OperationSpec.json").read_text(encoding="utf-8"))
    doc["spec"]["bytesMoved"] = bytes_moved
    path = tmp_path / "op.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path, doc


def test_bytes_moved_is_validated_against_the_operations_axes(tmp_path):
    path, doc = _operation(tmp_path, {"forward": [{"coefficient": 2, "axes": ["nope"], "perElementOf": "dtype"}]})
    result = cli("validate", path)
    assert_clean_failure(result)
    [line] = problem_lines(result)
    assert line.startswith(f"{path}: $.spec: ") and "bytesMoved.forward names axes ['nope']" in line


@pytest.mark.parametrize(("term", "fragment"), [
    ({"coefficient": 0, "axes": [], "perElementOf": "dtype"}, "$.spec.bytesMoved.full[0].coefficient"),
    ({"coefficient": 1, "axes": [], "perElementOf": "fp7"}, "$.spec.bytesMoved.full[0].perElementOf"),
    ({"coefficient": 1, "axes": [], "perElementOf": "dtype", "expr": "2*T*V"}, "$.spec.bytesMoved.full[0].expr"),
])
def test_bad_bytes_terms_name_their_field(tmp_path, term, fragment):
    path, _ = _operation(tmp_path, {"full": [term]})
    result = cli("validate", path)
    assert_clean_failure(result)
    assert any(fragment in line for line in problem_lines(result)), result.stderr


def test_imported_jsd_states_its_floor_per_pass_and_liger_its_pass_notes():
    op = KINDS["OperationSpec"].model_validate(identity.operation_document("jsd"))
    for name, coefficient in JSD_TERMS.items():
        [term] = getattr(op.spec.bytesMoved, name)
        assert (term.coefficient, term.axes, term.perElementOf) == (coefficient, ["tokens", "vocab"], "dtype")
    liger = KINDS["ImplementationRevision"].model_validate(identity.implementation_document("jsd", "liger", "0.8.0"))
    torch = KINDS["ImplementationRevision"].model_validate(identity.implementation_document("jsd", "torch", None))
    assert "dX" in liger.spec.passNotes.forward and "nearly free" in liger.spec.passNotes.backward
    assert "autograd computes dX" in torch.spec.passNotes.backward


@pytest.mark.parametrize("impl", ["sitegen", "torch", "torch-compile"])
def test_the_reruns_implementations_carry_pass_notes(impl):
    from sitegen.operations.jsd import JSD
    from sitegen.rerun.plan.plugins import resolve

    op = JSD()
    [ref] = resolve(op, (impl,))
    doc = implementation_doc(ref, op.operation_document(), run_version="1.0", version="1.0", repository=None)
    model = KINDS["ImplementationRevision"].model_validate(doc)
    assert model.spec.passNotes.forward and model.spec.passNotes.backward and model.spec.passNotes.full


def test_min_effect_is_a_fraction():
    doc = json.loads((VALID / "BenchmarkProtocol.json").read_text(encoding="utf-8"))
    doc["spec"]["comparability"]["minEffect"] = 0.02
    assert KINDS["BenchmarkProtocol"].model_validate(doc).spec.comparability.minEffect == 0.02
    doc["spec"]["comparability"]["minEffect"] = 2
    with pytest.raises(Exception):
        KINDS["BenchmarkProtocol"].model_validate(doc)


def test_gpus_toml_gives_nominal_bandwidth_and_rejects_nonsense(tmp_path):
    (tmp_path / "gpus.toml").write_text('["NVIDIA H200"]\nnominal_memory_bandwidth_gbs = 4800\n', encoding="utf-8")
    assert load_config(tmp_path).gpus["NVIDIA H200"].nominal_memory_bandwidth_gbs == 4800
    (tmp_path / "gpus.toml").write_text('["NVIDIA H200"]\nnominal_memory_bandwidth_gbs = -1\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_config(tmp_path)
    [problem] = caught.value.problems
    assert problem.path == "$['NVIDIA H200'].nominal_memory_bandwidth_gbs"
