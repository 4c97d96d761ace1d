"""Kill import, attest, rerun, lock and build at write points (SIGKILL in a subprocess) and
fill the disk: afterwards every registry verifies, as before or with the change complete,
a repeat of the command lands, and --out always holds a complete site.

A sample of points per command (first, last and evenly between): report.py tries more.
"""

from __future__ import annotations

import pytest

from faults import LIGER_CSV, build_trials, registry_trials

SAMPLES = 4


@pytest.mark.parametrize("command", ["import", "attest", "rerun", "lock"])
def test_registry_survives_a_kill_at_any_write_point(command, tmp_path):
    if command == "import" and not LIGER_CSV.exists():
        pytest.skip("needs the bundled Liger CSV")
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

    import sitegen.site.write as write
    from faults import FIXTURE, snapshot
    from sitegen.cli import main

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
    assert snapshot(out) == before and sorted(p.name for p in tmp_path.iterdir()) == ["site"]
