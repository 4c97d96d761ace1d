"""The README's command table states what the commands really do by default (issue 12)."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from sitegen.cli.main import SCHEMA_FOLDER, main
from sitegen.cli.imports import ImportGroup

README = Path(__file__).resolve().parents[1] / "README.md"
ROW = re.compile(r"^\| `sitegen ([a-z]+(?: [a-z]+)?)([^`]*)` \| (.*) \|$")


def table() -> dict[str, tuple[str, str]]:
    """command path → (its usage as the README writes it, the row's text)."""
    rows = {}
    for line in README.read_text(encoding="utf-8").splitlines():
        match = ROW.match(line)
        if match:
            rows[match[1]] = (match[2], match[3])
    return rows


def commands() -> dict[str, click.Command]:
    found = {}
    for name, command in main.commands.items():
        if isinstance(command, ImportGroup):
            # Its subcommands are the importers installed (plugins): one family of rows,
            # `sitegen import NAME PATH …` and `sitegen import --list`.
            found[name] = command
        elif isinstance(command, click.Group):
            found.update({f"{name} {sub}": c for sub, c in command.commands.items()})
        else:
            found[name] = command
    return found


def test_every_command_has_a_row_and_every_row_a_command():
    assert set(table()) == set(commands())


@pytest.mark.parametrize("name", sorted(commands()))
def test_declared_defaults_are_stated_and_usage_names_real_options(name):
    usage, text = table()[name]
    command = commands()[name]
    params = list(command.params)
    if isinstance(command, ImportGroup):
        ctx = click.Context(command)
        params += [p for sub in command.list_commands(ctx) for p in command.get_command(ctx, sub).params]
    options = {opt for p in params for opt in (*p.opts, *p.secondary_opts)}
    assert set(re.findall(r"--[a-z-]+", usage)) <= options, usage
    for param in params:
        default = param.default
        # Only real values: flags, None and click's own "unset" marker state no default.
        if isinstance(default, bool) or not isinstance(default, (str, int, float, Path)):
            continue
        if isinstance(param.type, click.Choice) and len(param.type.choices) == 1:
            continue  # nothing to choose, nothing to state
        value = str(default)
        if isinstance(param, click.Argument):
            assert f"(default `{value}`)" in text, (name, param.name, value)
        else:
            assert f"`{param.opts[0]} {value}`" in text, (name, param.opts[0], value)


def test_schema_row_states_where_schema_writes():
    _, text = table()["schema"]
    assert f"(default `{SCHEMA_FOLDER}`" in text


def _setup_commands() -> list[str]:
    """The shell blocks of the README's "Set up" section, in order."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## Set up\n", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", section, flags=re.S)]


def test_set_up_is_two_commands_and_the_test_one_takes_cpu_torch_first():
    """Pasted on a machine without a GPU, the test command must not pull CUDA torch: PyPI's torch is the
    CUDA build, so torch comes from PyTorch's CPU index before anything that requires it is installed."""
    build, tests = _setup_commands()
    assert "\n" not in build and "\n" not in tests
    installs = [step.strip() for step in tests.split("&&") if " pip install " in step]
    first, *rest = installs
    assert first.split() == ["python3", "-m", "pip", "install", "--index-url", "https://download.pytorch.org/whl/cpu", "torch==2.13.0"]
    assert all("torch" not in step.split() and "download.pytorch.org" not in step for step in rest), rest
    assert tests.endswith("&& python3 -m pytest")


def test_ci_runs_the_readmes_test_command():
    _, tests = _setup_commands()
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    from_pip = tests[tests.index("python3 -m pip install"):]
    assert ci[-1] == from_pip


def test_the_kernel_guide_installs_cpu_torch_from_pytorchs_index():
    """docs/measure-your-kernel.md once said torch==2.13.0 from PyPI is a CPU build (it is the CUDA one)."""
    guide = (README.parent / "docs" / "measure-your-kernel.md").read_text(encoding="utf-8")
    for line in guide.splitlines():
        if re.search(r"pip install .*torch==", line):
            assert "--index-url https://download.pytorch.org/whl/cpu" in line, line
    assert "installs a CPU build" not in guide
