"""Kill import, attest, rerun, lock and build at write points (SIGKILL in a subprocess) and
fill the disk: afterwards every registry verifies, as before or with the change complete,
a repeat of the command lands, and --out always holds a complete site.

A sample of points per command (first, last and evenly between): report.py tries more.
"""

from __future__ import annotations

import os

import pytest

from faults import LIGER_CSV, build_trials, registry_trials

SAMPLES = 4


@pytest.mark.parametrize("command", ["import", "attest", "rerun", "lock"])
def test_registry_survives_a_kill_at_any_write_point(command, tmp_path):
    if command == "import" and not LIGER_CSV.exists():
        # Under CI a missing input is a failure: a trial that cannot run must not look like one that passed.
        message = f"the Liger CSV is missing: expected {LIGER_CSV} (tests/data/liger in the checkout)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    trials = registry_trials(command, tmp_path, SAMPLES)
    failed = [t for t in trials if not t.ok]
    assert len(trials) >= SAMPLES and not failed, failed


def test_killed_build_leaves_a_complete_site_and_no_leftovers(tmp_path):
    trials = build_trials(tmp_path, SAMPLES)
    failed = [t for t in trials if not t.ok]
    assert len(trials) == SAMPLES and not failed, failed


def test_full_disk_in_a_build_names_the_output_file_and_keeps_the_old_site(tmp_path, monkeypatch):
    import errno
    import os

    from click.testing import CliRunner

    import sitegen.site.engine.write as write
    from besides import beside
    from faults import FIXTURE, snapshot
    from sitegen.cli.main import main

    out = tmp_path / "site"
    # Without search first, so the second build is a real one, not the up-to-date skip.
    assert CliRunner().invoke(main, ["build", "--records", str(FIXTURE), "--out", str(out), "--no-search"]).exit_code == 0
    before = snapshot(out)
    original, calls = write.SiteWriter.add, []

    def add(self, relative, data):
        calls.append(relative)
        if len(calls) == 5:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.tmp / relative))
        return original(self, relative, data)

    monkeypatch.setattr(write.SiteWriter, "add", add)
    result = CliRunner().invoke(main, ["build", "--records", str(FIXTURE), "--out", str(out)])
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == f"{out / calls[-1]}: $: cannot write: No space left on device"
    assert snapshot(out) == before and beside(tmp_path) == [".site.standby-*", "site"]


def test_the_import_trials_need_the_csv_in_tests_data_and_fail_without_it_under_ci(tmp_path):
    """A copy of the tests without tests/data: the import trials skip, or under CI fail; never read a fixed path."""
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    tests = Path(__file__).resolve().parents[1]
    checkout = tmp_path / "elsewhere" / "checkout"
    shutil.copytree(tests / "adversarial", checkout / "tests" / "adversarial", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(tests / "fixtures" / "registry-small", checkout / "tests" / "fixtures" / "registry-small")
    for name in ("conftest.py", "headless.py", "besides.py"):
        shutil.copy(tests / name, checkout / "tests" / name)
    shutil.copytree(tests / "helpers", checkout / "tests" / "helpers", ignore=shutil.ignore_patterns("__pycache__"))
    command = [sys.executable, "-m", "pytest", "-q", "-ra", "-p", "no:cacheprovider", "tests/adversarial/test_faults.py::test_registry_survives_a_kill_at_any_write_point[import]"]
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    skipped = subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True, timeout=300)
    assert skipped.returncode == 0 and "1 skipped" in skipped.stdout, skipped.stdout
    assert str(checkout / "tests" / "data" / "liger" / "all_benchmark_data.csv") in skipped.stdout
    failed = subprocess.run(command, cwd=checkout, env={**env, "CI": "true"}, capture_output=True, text=True, timeout=300)
    assert failed.returncode == 1 and "1 failed" in failed.stdout, failed.stdout
