"""Strict loading: every bad manifest is refused with exactly one line naming the file,
the JSON path and the reason, exit code 1, and no traceback."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import copy_registry
from manifest_edits import BAD, REGISTRY, REPO, assert_clean_failure, cli, problem_lines

EXPECTED = json.loads((BAD / "EXPECTED.json").read_text(encoding="utf-8"))
# Every category the issue names must have cases.
CATEGORIES = {
    "json", "duplicate", "nan", "bigint", "utf8", "bom", "depth", "apiversion", "kind",
    "unknown-field", "type", "range", "reference", "name",
}
LIMIT = 4 * 1024 * 1024


def _make_corpus():
    spec = importlib.util.spec_from_file_location("make_corpus", BAD / "make_corpus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _category(name: str) -> str:
    return next(c for c in sorted(CATEGORIES, key=len, reverse=True) if name.startswith(c + "-"))


def test_corpus_is_complete_and_up_to_date():
    on_disk = {p.name for p in BAD.glob("*.json")} - {"EXPECTED.json"}
    assert on_disk == set(EXPECTED)
    assert len(on_disk) >= 40
    assert {_category(name) for name in on_disk} == CATEGORIES
    rendered = _make_corpus().render()
    assert {n: (BAD / n).read_bytes() for n in rendered} == rendered, "run tests/fixtures/bad/make_corpus.py"


def _registry_with(tmp_path: Path, extra: Path) -> Path:
    root = copy_registry(tmp_path, REGISTRY, name="registry", locked=False)  # the new document is unlocked on purpose
    shutil.copy(extra, root / extra.name)
    return root / extra.name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_manifest_is_refused_with_one_line(name, tmp_path):
    expected = EXPECTED[name]
    if expected["command"] == "verify":
        file = _registry_with(tmp_path, BAD / name)
        # Unlocked on purpose (see _registry_with): --unlocked, and its warning line set aside.
        result = cli("verify", "--unlocked", file.parent)
    else:
        file = BAD / name
        result = cli("validate", file)
    assert_clean_failure(result)
    lines = [line for line in problem_lines(result) if ": warning: no digests.lock" not in line]
    assert len(lines) == 1, lines
    prefix = f"{file}: {expected['path']}: "
    assert lines[0].startswith(prefix), (lines[0], prefix)
    assert expected["reason"] in lines[0][len(prefix):]


def test_validate_reports_every_bad_file_before_exiting(tmp_path):
    names = sorted(n for n, e in EXPECTED.items() if e["command"] == "validate")
    for name in names:
        shutil.copy(BAD / name, tmp_path / name)
    result = cli("validate", "--json", tmp_path)
    assert_clean_failure(result)
    files = sorted(Path(p["file"]).name for p in json.loads(result.stdout)["problems"])
    assert files == names
    assert len(problem_lines(result)) == len(names)


def test_oversized_file_is_refused(tmp_path):
    path = _make_corpus().write_oversized(tmp_path)
    assert path.stat().st_size == LIMIT + 1
    result = cli("validate", path)
    assert_clean_failure(result)
    assert problem_lines(result) == [f"{path}: $: file is {LIMIT + 1} bytes, over the {LIMIT}-byte limit"]


def test_oversized_file_is_refused_before_it_is_read(tmp_path):
    # 64 GiB of holes: reading or parsing it would take minutes and all memory.
    path = tmp_path / "huge.json"
    with open(path, "wb") as handle:
        handle.truncate(64 * 1024**3)
    started = time.monotonic()
    result = cli("validate", path)
    assert time.monotonic() - started < 5
    assert_clean_failure(result)
    [line] = problem_lines(result)
    assert line.startswith(f"{path}: $: ") and "limit" in line


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_endless_special_file_is_refused():
    # Refused before any read: a device is not a regular file.
    result = cli("validate", "/dev/zero")
    assert_clean_failure(result)
    [line] = problem_lines(result)
    assert line == "/dev/zero: $: is a character device, not a regular file"


def test_just_under_the_limit_is_parsed(tmp_path):
    path = _make_corpus().write_oversized(tmp_path)
    data = path.read_bytes()
    # One padding byte less: the size check passes and the document is valid.
    path.write_bytes(data[:-1])
    assert cli("validate", path).exit_code == 0


def test_folder_given_where_a_file_is_expected(tmp_path):
    (tmp_path / "looks-like.json").mkdir()
    result = cli("validate", tmp_path)
    assert_clean_failure(result)
    assert len(problem_lines(result)) == 1


def test_missing_path(tmp_path):
    result = cli("validate", tmp_path / "nothing-here")
    assert_clean_failure(result)
    assert problem_lines(result) == [f"{tmp_path / 'nothing-here'}: $: no such file or folder"]


@pytest.mark.parametrize("name", ["depth-100000.json", "utf8-lone-surrogate.json", "utf8-invalid-byte.json"])
def test_real_process_prints_one_line_and_no_traceback(name):
    # A real interpreter: real recursion limit, real stderr encoding.
    result = subprocess.run(
        [sys.executable, "-c", "from sitegen.cli.main import main; main()", "validate", str(BAD / name)],
        capture_output=True, text=True, cwd=REPO, timeout=60,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if not line.endswith(" problem(s) found.")]
    assert len(lines) == 1 and lines[0].startswith(f"{BAD / name}: {EXPECTED[name]['path']}: ")
