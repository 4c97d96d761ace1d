"""The foundation commands: help, --json output shape, exit codes (0 ok, 1 input, 2 usage)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from manifest_edits import BAD, REGISTRY, SEED, VALID, assert_clean_failure, cli, problem_lines

COMMANDS = ["validate", "verify", "digest", "schema", "lock"]
BAD_FILE = BAD / "type-string-for-int.json"


@pytest.mark.parametrize("flag", ["-h", "--help"])
@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help(command, flag):
    result = cli(*([command] if command else []), flag)
    assert result.exit_code == 0
    assert result.stdout.startswith("Usage:")
    assert "Exit codes: 0 ok, 1 invalid input, 2 usage error." in result.stdout
    if command is None:
        for name in COMMANDS:
            assert name in result.stdout


@pytest.mark.parametrize("args", [
    ["validate", "--no-such-option"],
    ["verify", "--no-such-option"],
    ["digest"],  # needs at least one file
    ["digest", "--no-such-option", str(SEED)],
    ["schema", "--no-such-option"],
    ["schema", "--out"],  # option without its value
    ["lock", str(SEED)],  # a file where a folder is required
    ["lock", str(REGISTRY), "extra-argument"],
    ["no-such-command"],
])
def test_usage_errors_exit_2(args):
    result = cli(*args)
    assert result.exit_code == 2, result.output
    assert "Error:" in result.stderr
    assert result.stdout == ""


def _problems_match_stderr(result, payload):
    lines = problem_lines(result)
    assert [f"{p['file']}: {p['path']}: {p['message']}" for p in payload["problems"]] == lines


def test_validate_json_shape():
    ok = cli("validate", "--json", SEED)
    assert ok.exit_code == 0
    assert json.loads(ok.stdout) == {"ok": True, "problems": [], "documents": 3}
    bad = cli("validate", "--json", SEED, BAD_FILE)
    assert bad.exit_code == 1
    payload = json.loads(bad.stdout)
    assert payload["ok"] is False and payload["documents"] == 3
    assert [set(p) for p in payload["problems"]] == [{"file", "path", "message"}]
    _problems_match_stderr(bad, payload)


def test_verify_json_shape(tmp_path):
    root = tmp_path / "registry"
    shutil.copytree(REGISTRY, root)
    ok = cli("verify", "--json", root)
    assert ok.exit_code == 0
    assert json.loads(ok.stdout) == {"ok": True, "problems": [], "documents": 7}
    (root / "OperationSpec.json").write_text(
        (root / "OperationSpec.json").read_text(encoding="utf-8").replace('"family": "loss"', '"family": "lost"'), encoding="utf-8")
    bad = cli("verify", "--json", root)
    assert bad.exit_code == 1
    payload = json.loads(bad.stdout)
    assert payload["ok"] is False
    _problems_match_stderr(bad, payload)
    assert any(p["file"] == str(root / "OperationSpec.json") and p["path"] == "$.spec" for p in payload["problems"])


def test_digest_json_shape():
    result = cli("digest", "--json", SEED, VALID / "Attestation.json")
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    assert payload["ok"] is True and payload["problems"] == []
    rows = payload["documents"]
    assert [set(r) for r in rows] == [{"digest", "kind", "name", "file", "pointer"}] * 4
    assert [r["pointer"] for r in rows][-1] == "$"


def test_digest_json_on_bad_input_still_prints_json():
    result = cli("digest", "--json", BAD_FILE)
    assert result.exit_code == 1
    payload = json.loads(result.stdout)
    assert payload["ok"] is False
    _problems_match_stderr(result, payload)


def test_digest_refuses_bad_input_with_one_line_per_problem():
    result = cli("digest", SEED, BAD_FILE, BAD / "nan-latency.json")
    assert result.exit_code == 1
    assert result.stdout == ""  # no digests of a half-valid input
    assert len(problem_lines(result)) == 2


def test_lock_json_and_refusal(tmp_path):
    root = tmp_path / "registry"
    shutil.copytree(REGISTRY, root)
    (root / "digests.lock").unlink()
    result = cli("lock", "--json", root)
    assert result.exit_code == 0
    # With no previous lock, every document is added (and each named on stderr).
    names = sorted(f"{d['kind']}/{d['metadata']['name']}" for d in map(json.loads, map(Path.read_text, root.glob("*.json"))))
    assert json.loads(result.stdout) == {"ok": True, "problems": [], "documents": 7, "lock": str(root / "digests.lock"),
                                         "added": names, "changed": [], "removed": []}
    assert [line for line in result.stderr.splitlines() if line.startswith("added: ")] == [f"added: {n}" for n in names]
    # A registry with a broken reference is not locked, and the old lock is left alone.
    before = (root / "digests.lock").read_bytes()
    shutil.copy(BAD / "reference-attestation-run.json", root)
    refused = cli("lock", "--json", root)
    assert refused.exit_code == 1
    assert json.loads(refused.stdout)["ok"] is False
    assert (root / "digests.lock").read_bytes() == before


def test_validate_defaults_to_records(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    missing = cli("validate")
    assert missing.exit_code == 1
    assert problem_lines(missing) == ["records: $: no such file or folder"]
    (tmp_path / "records").mkdir()
    shutil.copy(SEED, tmp_path / "records" / "seed.json")
    assert cli("validate").exit_code == 0
    shutil.copy(BAD_FILE, tmp_path / "records" / "bad.json")
    result = cli("validate")
    assert result.exit_code == 1
    assert [line.split(":")[0] for line in problem_lines(result)] == ["records/bad.json"]


def test_validate_of_an_empty_folder_is_one_problem_and_exit_1(tmp_path):
    """It said "0 document(s) valid." and exited 0: a wrong or empty folder read as a pass."""
    empty = tmp_path / "empty"
    empty.mkdir()
    result = cli("validate", empty)
    assert_clean_failure(result)
    assert problem_lines(result) == [f"{empty}: $: no manifest documents (*.json) found"]


def test_validate_skips_hidden_folders(tmp_path):
    shutil.copy(SEED, tmp_path / "seed.json")
    (tmp_path / ".git").mkdir()
    shutil.copy(BAD_FILE, tmp_path / ".git" / "bad.json")
    assert cli("validate", tmp_path).exit_code == 0


def test_schema_out_onto_a_file_is_an_input_error(tmp_path):
    target = tmp_path / "not-a-folder"
    target.write_text("", encoding="utf-8")
    result = cli("schema", "--out", target)
    assert_clean_failure(result)
    [line] = problem_lines(result)
    assert line.startswith(str(target))


def test_lock_onto_an_unwritable_lock_path_is_an_input_error(tmp_path):
    root = tmp_path / "registry"
    shutil.copytree(REGISTRY, root)
    (root / "digests.lock").unlink()
    (root / "digests.lock").mkdir()
    result = cli("lock", root)
    assert_clean_failure(result)
    # Besides the documents it would have added (`lock` names them before writing), one line.
    problems = [line for line in problem_lines(result) if not line.startswith("added: ")]
    assert problems == [f"{root / 'digests.lock'}: $: cannot write: Is a directory"]
    assert sorted(p.name for p in root.iterdir() if p.name.startswith(".")) == []  # no temp file left
