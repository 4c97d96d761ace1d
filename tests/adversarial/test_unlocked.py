"""build and verify refuse a registry without digests.lock unless --unlocked, which warns."""

from __future__ import annotations

import shutil

from click.testing import CliRunner

from hostile import FIXTURE
from sitegen.cli.main import main


def test_unlocked_builds_and_verifies_with_one_warning(tmp_path):
    root = tmp_path / "records"
    shutil.copytree(FIXTURE, root)
    (root / "digests.lock").unlink()
    cli = CliRunner()
    for args in (["verify", str(root)], ["build", "--records", str(root), "--out", str(tmp_path / "site")]):
        refused = cli.invoke(main, args)
        assert refused.exit_code == 1 and "no lock file" in refused.stderr
        accepted = cli.invoke(main, [*args, "--unlocked"])
        assert accepted.exit_code == 0, accepted.output
        warnings = [line for line in accepted.stderr.splitlines() if "warning" in line]
        assert warnings == [f"{root}: warning: no digests.lock; --unlocked, so an edited spec cannot be detected"]


def test_a_failed_import_into_a_new_folder_leaves_no_folder(tmp_path):
    csv = tmp_path / "bad.csv"
    csv.write_text("kernel_name\njsd\n")
    result = CliRunner().invoke(main, ["import", "liger", str(csv), "--out", str(tmp_path / "new")])
    assert result.exit_code == 1 and not (tmp_path / "new").exists()
