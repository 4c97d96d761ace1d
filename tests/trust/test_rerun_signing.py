"""`sitegen rerun --key` signs what it writes (end to end on the CPU, under Triton's interpreter)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch", reason="rerun measures with torch")
pytest.importorskip("triton", reason="the bundled kernel needs triton")

from trust_registry import cli, problem_lines  # noqa: E402

ARGS = ["rerun", "--interpret", "--tokens", "4", "--vocab", "64", "--dtype", "fp32", "--pass", "forward",
        "--impl", "torch", "--processes", "1", "--quiet"]


def test_rerun_signs_each_run_it_writes_with_the_key_given(tmp_path):
    key = tmp_path / "machine"
    public = cli("keygen", key).stdout.strip()
    out = tmp_path / "out"
    result = cli(*ARGS, "--out", out, "--records", out, "--key", key)
    assert result.exit_code == 0, result.output
    runs = [json.loads(p.read_text()) for p in out.rglob("*.json") if '"BenchmarkRun"' in p.read_text()]
    assert runs and all(run["metadata"].get("signature") for run in runs)
    trusted = tmp_path / "trusted.toml"
    trusted.write_text(f'[[trust]]\nname = "this machine"\nkey = "{public}"\n')
    assert cli("verify", "--trust", trusted, out).exit_code == 0
    stranger = tmp_path / "stranger"
    other = tmp_path / "other.toml"
    other.write_text(f'[[trust]]\nname = "another machine"\nkey = "{cli("keygen", stranger).stdout.strip()}"\n')
    lines = problem_lines(cli("verify", "--trust", other, out))
    assert len(lines) == len(runs) and all(line.endswith("$.metadata.signature: signed by a key this registry does not trust") for line in lines)


def test_an_unusable_key_is_refused_before_anything_is_measured(tmp_path):
    bad = tmp_path / "not-a-key"
    bad.write_text("hello\n")
    out = tmp_path / "out"
    result = cli(*ARGS, "--out", out, "--records", out, "--key", bad)
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert result.stderr.splitlines()[0].startswith(f"{bad}: $: not an OpenSSH private key")
    assert not out.exists()
