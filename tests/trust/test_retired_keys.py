"""Retired keys vouch only for what they signed: the bundled registry pins every retired key to its
runs, and a malformed pin is refused with one line."""

from __future__ import annotations

import tomllib

from trust_registry import RECORDS, cli, mini_registry


def test_every_retired_key_of_the_bundled_registry_pins_the_runs_it_signed():
    entries = tomllib.loads((RECORDS / "sitegen.toml").read_text())["trust"]
    retired = [e for e in entries if "valid-before" in e]
    assert len(retired) >= 5
    assert [e["name"] for e in retired if not e.get("runs")] == []
    # Every pinned run is in the registry (a pin of nothing would read as pinned and vouch for nothing).
    names = {line.split()[0] for line in cli("digest", *sorted(RECORDS.joinpath("runs").rglob("*.json"))).stdout.splitlines()}
    assert {d for e in retired for d in e["runs"]} <= names


def test_a_pin_that_is_not_a_digest_is_one_line(tmp_path):
    root = mini_registry(tmp_path / "registry")
    (root / "sitegen.toml").write_text(
        '[[trust]]\nname = "lab"\nkey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIJE8H3UKJmh7kpClzS7uVjMo8//Nu7OnHP5G7tGsiW7Z"\n'
        'runs = ["sha256:abc"]\n')
    result = cli("verify", root, "--unlocked")
    assert result.exit_code == 1 and "Traceback" not in result.output
    [line] = [l for l in result.stderr.splitlines() if "problem(s)" not in l and "unlocked" not in l]
    assert line.startswith(f"{root / 'sitegen.toml'}: $.trust[0].runs[0]: ")
