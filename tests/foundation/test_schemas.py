"""The shipped JSON Schemas are what the models generate, and they accept the valid fixtures."""

from __future__ import annotations

import json

import pytest

from manifest_edits import REPO, VALID, cli, problem_lines

import sitegen.format.jsonschema
from sitegen.format.model import BUNDLE_KINDS, KINDS

SHIPPED = REPO / "sitegen" / "format" / "schemas"


def test_schema_check_passes_on_the_shipped_schemas():
    result = cli("schema", "--check", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["schemas"] == sorted(f"{kind}.schema.json" for kind in KINDS)


def test_written_schemas_equal_the_shipped_ones(tmp_path):
    result = cli("schema", "--out", tmp_path)
    assert result.exit_code == 0, result.stderr
    written = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    shipped = {p.name: p.read_bytes() for p in SHIPPED.glob("*.schema.json")}
    assert written == shipped
    assert set(written) == {f"{kind}.schema.json" for kind in KINDS}


def test_schema_check_fails_on_drift(monkeypatch):
    shipped = sitegen.format.jsonschema.committed_schema_files()
    drifted = {**shipped, "BenchmarkRun.schema.json": shipped["BenchmarkRun.schema.json"].replace(b'"median"', b'"p50"', 1)}
    assert drifted != shipped
    monkeypatch.setattr(sitegen.format.jsonschema, "committed_schema_files", lambda: drifted)
    result = cli("schema", "--check")
    assert result.exit_code == 1
    [line] = problem_lines(result)
    assert line.startswith("sitegen/format/schemas: $: ")


def _fixture_documents():
    for path in sorted(VALID.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if "kind" in data:
            yield path.name, data
        else:
            for key in BUNDLE_KINDS:
                yield f"{path.name}#{key}", data[key]


@pytest.mark.parametrize(("where", "document"), list(_fixture_documents()), ids=lambda v: v if isinstance(v, str) else "")
def test_each_schema_validates_the_valid_fixtures(where, document):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((SHIPPED / f"{document['kind']}.schema.json").read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(schema)
    assert [e.message for e in validator.iter_errors(document)] == []


def test_schema_by_default_regenerates_sitegen_schemas_in_a_checkout(tmp_path, monkeypatch):
    """The README says the schemas are generated into sitegen/format/schemas/; so does the command."""
    folder = tmp_path / "sitegen" / "format" / "schemas"
    folder.mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    result = cli("schema", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["out"] == "sitegen/format/schemas"
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == {p.name: p.read_bytes() for p in SHIPPED.glob("*.schema.json")}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sitegen"]


def test_schema_outside_a_checkout_refuses_rather_than_scatter_folders(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = cli("schema")
    assert result.exit_code == 1
    [line] = problem_lines(result)
    assert line == "sitegen/format/schemas: $: no such folder here: run in a sitegen checkout, or give --out DIR"
    assert list(tmp_path.iterdir()) == []
