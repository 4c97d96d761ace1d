"""Progress on stderr (issue 12, finding 6): drawn on a terminal for reruns and builds, never
into a pipe, never with --quiet, and --json on stdout untouched.

The terminal is a real pseudo-terminal: rich decides by isatty() as it would for a user.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sitegen.cli.main import main

REPO = Path(__file__).resolve().parents[1]
SMALL = REPO / "tests" / "fixtures" / "registry-small"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def on_terminal(args: list[str], cwd: Path, timeout: float = 300) -> tuple[str, str, int]:
    """Run ``args`` with stderr on a pseudo-terminal; (stderr as shown, without colours; stdout; exit code)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(args, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    shown = b""
    while True:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(master, 1 << 16)
            except OSError:  # the child closed its end
                break
            if not chunk:
                break
            shown += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    stdout = proc.stdout.read().decode()
    proc.wait(timeout=timeout)
    return ANSI.sub("", shown.decode(errors="replace")), stdout, proc.returncode


def test_build_draws_its_stages_and_pages_on_a_terminal(tmp_path):
    script = (
        "import sys\nfrom pathlib import Path\nfrom sitegen.core.progress import Progress\n"
        "from sitegen.site.build import build_site\n"
        "with Progress(enabled=True) as progress:\n"
        f"    build_site(Path({str(SMALL)!r}), Path({str(tmp_path / 'site')!r}), progress=progress)\n"
    )
    shown, _, code = on_terminal([sys.executable, "-c", script], cwd=tmp_path)
    assert code == 0, shown
    assert "record pages" in shown and "elapsed" in shown and "ETA" in shown
    assert re.search(r"record pages .* \d+/\d+ ", shown), shown


def test_build_into_a_pipe_prints_only_its_summary(tmp_path):
    result = CliRunner().invoke(main, ["build", "--records", str(SMALL), "--out", str(tmp_path / "site")])
    assert result.exit_code == 0, result.output
    assert [line for line in result.stderr.splitlines()] == [result.stderr.strip()]
    assert result.stderr.startswith("built ") and "\x1b[" not in result.stderr


def test_a_long_build_into_a_pipe_prints_a_line_per_stage(tmp_path, monkeypatch):
    """A build into a pipe (CI, a log file) printed nothing for minutes; past BUILD_LINES_AFTER_S it
    writes a plain line as each stage starts, before its summary, and none with --quiet."""
    import sitegen.cli.site as commands

    monkeypatch.setattr(commands, "BUILD_LINES_AFTER_S", 0.0)
    result = CliRunner().invoke(main, ["build", "--records", str(SMALL), "--out", str(tmp_path / "site")])
    assert result.exit_code == 0, result.output
    *stages, summary = result.stderr.splitlines()
    assert summary.startswith("built ") and "\x1b[" not in result.stderr
    assert all(re.fullmatch(r"\[\d+:\d\d:\d\d\] [a-z][^\[]*", line) for line in stages), stages
    named = [re.sub(r"^\[[^]]*\] | \([\d,]+\)$", "", line) for line in stages]
    for stage in ("checking for changes", "loading and checking records", "indexing", "record pages", "search index"):
        assert stage in named, named
    assert re.search(r"\] record pages \(8\)$", "\n".join(stages), re.M), stages
    quiet = CliRunner().invoke(main, ["build", "--quiet", "--records", str(SMALL), "--out", str(tmp_path / "quiet")])
    assert quiet.exit_code == 0 and quiet.stderr.splitlines()[:1] == [quiet.stderr.strip()]


RERUN = ["rerun", "--interpret", "--tokens", "4", "--vocab", "64", "--dtype", "fp32", "--pass", "forward",
         "--impl", "torch", "--processes", "2", "--json"]


def _rerun_on_terminal(tmp_path: Path, *extra: str) -> tuple[str, dict]:
    for name in ("torch", "triton", "numpy"):
        pytest.importorskip(name)
    shown, stdout, code = on_terminal([sys.executable, "-m", "sitegen", *RERUN, *extra, "--out", str(tmp_path / "out")],
                                      cwd=tmp_path)
    assert code == 0, shown
    return shown, json.loads(stdout)  # --json is whole and alone on stdout


def test_rerun_shows_cases_process_elapsed_and_eta_on_a_terminal(tmp_path):
    shown, summary = _rerun_on_terminal(tmp_path)
    assert summary["ok"] and len(summary["runs"]) == 1
    assert re.search(r"process [12]/2 · (correctness gate \(workloads\)|cases) .* \d/\d+ elapsed \d:\d\d:\d\d ETA", shown), shown
    assert "process 1/2 · correctness gate" in shown or "process 1/2 · cases" in shown
    # Log lines still come through, above the display.
    assert "[process 1/2" in shown and "[process 2/2" in shown
    assert re.search(r"wrote \d+ file\(s\) into", shown)


def test_rerun_quiet_on_a_terminal_draws_nothing_and_logs_no_cases(tmp_path):
    shown, summary = _rerun_on_terminal(tmp_path, "--quiet")
    assert summary["ok"]
    assert "ETA" not in shown and "[process" not in shown
    assert re.search(r"wrote \d+ file\(s\) into", shown)
