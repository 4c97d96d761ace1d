"""A KernelBench checkout's own git settings never run while `sitegen import kernelbench` reads it,
and the import writes nothing into it: its fsmonitor, a clean filter named in .gitattributes and
a hook each write a marker file if git runs them, and its .git (index included) and files must
come out byte for byte as they went in."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sitegen.cli.main import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "importers"))
from kernelbenchdata import KERNELBENCH, require_kernelbench  # noqa: E402

ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}


def _git(checkout: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(checkout), *args], check=True, env=ENV, capture_output=True, text=True).stdout


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()}


@pytest.fixture
def hostile_checkout(tmp_path) -> tuple[Path, Path]:
    """A real snapshot committed to git, then armed: three programs that each leave a marker."""
    require_kernelbench()
    if shutil.which("git") is None:
        pytest.fail("git is needed to make the checkout", pytrace=False)
    checkout = tmp_path / "KernelBench"
    shutil.copytree(KERNELBENCH / "752dd45", checkout, ignore=shutil.ignore_patterns("COMMIT"))
    _git(checkout, "init", "-q")
    _git(checkout, "add", "-A")
    _git(checkout, "commit", "-q", "-m", "snapshot")
    markers = tmp_path / "markers"
    markers.mkdir()
    for what in ("fsmonitor", "filter", "hook"):
        script = tmp_path / f"{what}.sh"
        # The filter passes its input through, so git would see clean files and carry on.
        script.write_text(f"#!/bin/sh\necho ran >> {markers / what}\ncat\n")
        script.chmod(0o755)
    _git(checkout, "config", "core.fsmonitor", str(tmp_path / "fsmonitor.sh"))
    _git(checkout, "config", "filter.evil.clean", str(tmp_path / "filter.sh"))
    _git(checkout, "config", "filter.evil.smudge", str(tmp_path / "filter.sh"))
    # Written after the commit, so the committed blobs are the files' bytes and the checkout is clean.
    (checkout / ".git" / "info" / "attributes").write_text("* filter=evil\n")
    (checkout / ".gitattributes").write_text("* filter=evil\n")
    _git(checkout, "add", ".gitattributes")
    _git(checkout, "commit", "-q", "-m", "attributes")
    shutil.rmtree(markers)
    markers.mkdir()
    for hook in ("post-index-change", "reference-transaction", "post-checkout", "pre-auto-gc"):
        path = checkout / ".git" / "hooks" / hook
        path.write_text(f"#!/bin/sh\necho {hook} >> {markers / 'hook'}\n")
        path.chmod(0o755)
    # A changed stat on every file: git status would re-read each through the filter and
    # write the refreshed index (which fires post-index-change).
    for path in checkout.rglob("*"):
        if path.is_file() and ".git" not in path.relative_to(checkout).parts:
            os.utime(path, (1_000_000_000, 1_000_000_000))
    return checkout, markers


def test_importing_a_checkout_runs_none_of_its_programs_and_writes_nothing_into_it(hostile_checkout, tmp_path):
    checkout, markers = hostile_checkout
    before = _tree(checkout)
    head = _git(checkout, "rev-parse", "HEAD").strip()
    shutil.rmtree(markers)
    markers.mkdir()
    out = tmp_path / "records"
    result = CliRunner().invoke(main, ["import", "kernelbench", str(checkout), "--out", str(out)])
    assert sorted(p.name + ": " + p.read_text() for p in markers.iterdir()) == []
    assert result.exit_code == 0, result.output
    changed = sorted(name for name in before.keys() | _tree(checkout).keys() if before.get(name) != _tree(checkout).get(name))
    assert changed == []
    # The commit git names is the one the records cite.
    assert any(head in path.read_text(encoding="utf-8") for path in (out / "runs").rglob("*.json"))


def test_an_edited_file_is_still_found_without_running_the_checkouts_programs(hostile_checkout, tmp_path):
    checkout, markers = hostile_checkout
    problem = checkout / "KernelBench" / "level1" / "23_Softmax.py"
    problem.write_text(problem.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    before = _tree(checkout)
    out = tmp_path / "records"
    result = CliRunner().invoke(main, ["import", "kernelbench", str(checkout), "--out", str(out)])
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if "differ from commit" in line]
    assert len(lines) == 1 and "KernelBench/level1/23_Softmax.py" in lines[0], result.output
    assert list(markers.iterdir()) == []
    assert _tree(checkout) == before
    assert not out.exists()
