"""A path the user gives that the file system refuses is one line and exit 1, not a traceback."""

from pathlib import Path

from click.testing import CliRunner

from sitegen.cli.main import main

REGISTRY = Path(__file__).parent / "fixtures" / "registry-small"


def test_output_under_a_file_is_one_line(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    result = CliRunner().invoke(main, ["build", "--records", str(REGISTRY), "--out", str(blocker / "site")])
    assert result.exit_code == 1
    assert isinstance(result.exception, SystemExit)  # a clean exit, no exception of its own
    problem_lines = [line for line in result.stderr.splitlines() if str(blocker) in line]
    assert len(problem_lines) == 1
    assert "Traceback" not in result.output
    assert blocker.read_text() == "not a folder"
