"""Outside code runs in the process that measures it and could forge its checks: its signed
rerun reads Reproducible, with that reason, until the registry lists the code under [[reviewed]];
sitegen's own peers stay Verified without it."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from test_signatures import keygen, lock, page, sign, trust_toml
from trust_registry import REPO, RUN, cli, journal_runs, mini_registry, problem_lines, write_json

EXAMPLE = REPO / "examples" / "jsd-torch"
REASON = ("not Verified: outside code not reviewed by this registry: it runs in the measuring process and could "
          "forge its checks")


@pytest.fixture
def key(tmp_path):
    path = tmp_path / "trusted"
    return path, keygen(path)


def outside_registry(root: Path, monkeypatch, **ref_changes) -> str:
    """The bundled H200 rerun of sitegen's kernel, its implementation record swapped for the one
    `sitegen rerun` writes for the example package (examples/jsd-torch); its source digest."""
    from sitegen.core.digest import document_digest
    from sitegen.rerun.plan import plugins
    from sitegen.rerun.outcome import records

    mini_registry(root)
    monkeypatch.syspath_prepend(str(EXAMPLE))
    ref = replace(plugins.describe("example-jsd-torch", "sitegen_example_jsd:PlainTorchJSD"), **ref_changes)
    run_path = root / "runs" / RUN.name
    run = json.loads(run_path.read_text())
    [old] = [p for p in (root / "implementations").rglob("*.json")
             if document_digest(json.loads(p.read_text())) == run["spec"]["implementationDigest"]]
    old.unlink()
    [op_path] = (root / "operations").rglob("*.json")
    op = json.loads(op_path.read_text())
    doc = records.implementation_doc(ref, op, run_version=None, version=None, repository=None)
    write_json(root / records.path_of(doc, op["metadata"]["name"]), doc)
    run["spec"]["implementationDigest"] = document_digest(doc)
    write_json(run_path, run)
    journal_runs(root)
    return ref.source_digest


def configure(root: Path, key_line: str, reviewed: str = "") -> None:
    (root / "sitegen.toml").write_text(trust_toml(("H200 lab", key_line, "")) + reviewed)


def reviewed_table(pin: str) -> str:
    return f'[[reviewed]]\nname = "example JSD"\n{pin}\nreviewer = "a maintainer"\ndate = 2026-12-01\n'


def signed_page(root, key, tmp_path, *options):
    sign(root, key)
    lock(root)
    return page(root, tmp_path, *options)


def test_a_signed_rerun_of_outside_code_reads_reproducible_with_the_reason(tmp_path, key, monkeypatch):
    root = tmp_path / "registry"
    outside_registry(root, monkeypatch)
    configure(root, key[1])
    level, reason, row = signed_page(root, key[0], tmp_path)
    assert (level, reason, row) == ("Reproducible", REASON, "valid, by H200 lab")


def test_listing_its_source_digest_as_reviewed_makes_it_verified(tmp_path, key, monkeypatch):
    root = tmp_path / "registry"
    digest = outside_registry(root, monkeypatch)
    configure(root, key[1], reviewed_table(f'source-digest = "{digest}"'))
    assert signed_page(root, key[0], tmp_path) == ("Verified", "", "valid, by H200 lab")


def test_a_review_of_other_bytes_does_not_count(tmp_path, key, monkeypatch):
    root = tmp_path / "registry"
    digest = outside_registry(root, monkeypatch)
    other = digest[:-1] + ("0" if digest[-1] != "0" else "1")
    configure(root, key[1], reviewed_table(f'source-digest = "{other}"'))
    assert signed_page(root, key[0], tmp_path)[:2] == ("Reproducible", REASON)


def test_a_reviewed_distribution_release_counts_by_name_and_version(tmp_path, key, monkeypatch):
    root = tmp_path / "registry"
    # As an installed copy records it: the distribution's name and version.
    outside_registry(root, monkeypatch, distribution="sitegen-example-jsd", dist_version="0.1.0")
    configure(root, key[1], reviewed_table('distribution = "sitegen_example_jsd@0.2.0"'))
    assert signed_page(root, key[0], tmp_path)[:2] == ("Reproducible", REASON)
    configure(root, key[1], reviewed_table('distribution = "Sitegen_Example.JSD@0.1.0"'))  # PEP 503 spelling
    assert page(root, tmp_path)[0] == "Verified"


def test_outside_code_that_takes_a_peers_name_is_still_outside(tmp_path, key, monkeypatch):
    root = tmp_path / "registry"
    # A distribution called "sitegen" and an entry point called "sitegen": its record still
    # names its own module and class as the callable, which no shipped peer's does.
    outside_registry(root, monkeypatch, name="sitegen", distribution="sitegen", dist_version="0.1.0")
    configure(root, key[1])
    assert signed_page(root, key[0], tmp_path)[:2] == ("Reproducible", REASON)


def test_a_review_only_in_the_registry_does_not_count_under_an_outside_trust_file(tmp_path, key, monkeypatch):
    root = tmp_path / "registry"
    digest = outside_registry(root, monkeypatch)
    configure(root, key[1], reviewed_table(f'source-digest = "{digest}"'))
    base = tmp_path / "base.toml"  # the base branch's settings: the key, no review
    base.write_text(trust_toml(("H200 lab", key[1], "")))
    assert signed_page(root, key[0], tmp_path, "--trust", base)[:2] == ("Reproducible", REASON)


def test_a_bundled_peer_stays_verified_without_any_review(tmp_path, key):
    root = mini_registry(tmp_path / "registry")
    configure(root, key[1])
    assert signed_page(root, key[0], tmp_path) == ("Verified", "", "valid, by H200 lab")


@pytest.mark.parametrize("pin", ["", 'source-digest = "sha256:' + "0" * 64 + '"\ndistribution = "x@1"'])
def test_a_review_needs_exactly_one_pin(tmp_path, pin):
    root = mini_registry(tmp_path / "registry")
    (root / "sitegen.toml").write_text(reviewed_table(pin))
    lock(root)
    result = cli("build", "--records", root, "--out", tmp_path / "site", "--no-search", "--quiet")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert problem_lines(result) == [f"{root / 'sitegen.toml'}: $.reviewed[0]: give exactly one of source-digest or distribution"]
