"""Key and trust text is one line, and a run's date is one every reader can place (issue 47.6):
`keygen --comment` with a line break wrote a .pub of two key lines; a [[trust]] key holding a
line break was accepted with its second line dropped; a signed run dated
0001-01-01T00:00:00+01:00 (before year 1 in UTC) ended verify and build in an OverflowError."""

from __future__ import annotations

import json

from trust_registry import RUN, cli, mini_registry, problem_lines, write_json

from sitegen.core.digest import document_digest
from sitegen.core.signing import REFERENCED, load_private_key, payload, sign

NAME = RUN.name


def _keygen(path) -> str:
    result = cli("keygen", path)
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


def test_a_comment_with_a_line_break_is_refused_in_one_line_and_no_key_is_written(tmp_path):
    key = tmp_path / "k"
    other = _keygen(tmp_path / "other")
    result = cli("keygen", key, "--comment", f"lab\n{other}")
    assert result.exit_code == 1
    lines = problem_lines(result)
    assert len(lines) == 1 and lines[0].startswith("--comment: $: ") and "line break" in lines[0], result.output
    assert not key.exists() and not (tmp_path / "k.pub").exists()
    # A comment of one line still makes a key.
    assert cli("keygen", key, "--comment", "lab H200").exit_code == 0
    assert (tmp_path / "k.pub").read_text().count("\n") == 1


def test_a_trust_key_with_a_line_break_is_refused_naming_it(tmp_path):
    first, second = _keygen(tmp_path / "a"), _keygen(tmp_path / "b")
    root = mini_registry(tmp_path / "registry")
    assert cli("lock", root).exit_code == 0
    (root / "sitegen.toml").write_text(f'[[trust]]\nname = "lab"\nkey = """{first}\n{second}"""\n')
    for command in (["verify", root], ["build", "--records", root, "--out", tmp_path / "site"]):
        result = cli(*command)
        assert result.exit_code == 1
        lines = problem_lines(result)
        assert len(lines) == 1, result.output
        assert lines[0].startswith(f"{root / 'sitegen.toml'}: $.trust[0].key: ") and "line break" in lines[0]


def test_a_signed_run_dated_before_year_one_in_utc_is_one_problem_line_in_verify_and_build(tmp_path):
    line = _keygen(tmp_path / "key")
    root = mini_registry(tmp_path / "registry")
    (root / "sitegen.toml").write_text(f'[[trust]]\nname = "lab"\nkey = "{line}"\n')
    assert cli("lock", root).exit_code == 0
    path = root / "runs" / NAME
    run = json.loads(path.read_text())
    before = document_digest(run)
    run["spec"]["observedAt"] = "0001-01-01T00:00:00+01:00"
    # Signed as `sitegen sign` signs: the digests of the run and of what it references.
    workload = json.loads(next(p for p in root.rglob("*.json") if document_digest(json.loads(p.read_text())) == run["spec"]["workloadDigest"]).read_text())
    refs = {key: run["spec"][field] for key, field in REFERENCED.items()} | {"operation": workload["spec"]["operationSpecDigest"]}
    run["metadata"]["signature"] = sign(load_private_key(tmp_path / "key"), payload(document_digest(run), refs))
    write_json(path, run)
    # Locked as `sitegen lock` would lock it, had it read the run.
    lock = root / "digests.lock"
    lock.write_text(lock.read_text().replace(before, document_digest(run)))
    for command in (["verify", root], ["build", "--records", root, "--out", tmp_path / "site"]):
        result = cli(*command)
        assert result.exit_code == 1 and isinstance(result.exception, SystemExit), repr(result.exception)
        lines = problem_lines(result)
        assert lines == [f"{path}: $.spec.observedAt: lies outside the years 1 to 9999 once in UTC"], result.output
