"""`sitegen lock` run right after another writer was killed past its commit point.

docs/registries.md: a writer killed after its commit point leaves a journal that the next
sitegen command on the registry finishes first. For `lock` that order matters: a lock taken
of the registry without the committed write, or one that drops the journal, would record a
registry the write then changes (or loses).
"""

from __future__ import annotations

from click.testing import CliRunner

from faults import SCENARIOS, count_points, run_killer, snapshot
from sitegen.cli.main import main
from sitegen.registry.transaction import COMMITTED, JOURNAL


def _killed_past_commit(tmp_path):
    """A registry whose `attest` was SIGKILLed after its commit point, before its files landed."""
    scenario = SCENARIOS["attest"]
    (points, _), before, after = count_points(scenario, tmp_path / "count")
    for point in range(1, points + 1):
        root = scenario.prepare(tmp_path / f"kill-{point}")
        proc = run_killer(scenario.args(root), kill_at=point)
        assert proc.returncode == -9, proc.stderr[-300:]
        state = snapshot(root)
        if (root / JOURNAL / COMMITTED).exists() and state != after:
            return root, before, after
    raise AssertionError(f"no write point of attest's {points} lies between its commit and its files landing")


def test_lock_right_after_a_writer_killed_past_its_commit_point_finishes_that_write_first(tmp_path):
    root, before, after = _killed_past_commit(tmp_path)
    result = CliRunner().invoke(main, ["lock", str(root)])
    assert result.exit_code == 0, result.output
    assert not (root / JOURNAL).exists()
    # Exactly what the attest would have left uninterrupted: its note landed and the lock covers it.
    assert snapshot(root) == after != before
    verify = CliRunner().invoke(main, ["verify", "--full", str(root)])
    assert verify.exit_code == 0, verify.output
