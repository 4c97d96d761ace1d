"""Shared by the foundation tests: where fixtures live, how to call the CLI, how to
walk and change the leaves of a manifest."""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from helpers import copy_registry
from sitegen.cli.main import main

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
VALID = FIXTURES / "valid"
BAD = FIXTURES / "bad"
REGISTRY = FIXTURES / "registry-verify"
SMALL = FIXTURES / "registry-small"
SEED = VALID / "seed-manifest.json"
SUMMARY_SUFFIX = " problem(s) found."


def cli(*args: str | Path) -> Result:
    """Run ``sitegen`` in-process; stdout and stderr stay apart."""
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def registry(tmp_path, monkeypatch) -> Path:
    """A copy of the small registry, with a build-state cache folder of its own; import it to use it."""
    monkeypatch.setenv("SITEGEN_CACHE_DIR", str(tmp_path / "cache"))
    return copy_registry(tmp_path, SMALL, name="registry")


@pytest.fixture
def loads(monkeypatch) -> list[str]:
    """The files `lock` and `verify` load in full (in this process: one job); import it to use it."""
    from sitegen.core import forkpool

    from sitegen.state import summaries
    loaded, load = [], summaries.load_bytes
    monkeypatch.setattr(forkpool, "default_jobs", lambda: 1)
    monkeypatch.setattr(summaries, "load_bytes", lambda data, name: loaded.append(name) or load(data, name))
    return loaded


def problem_lines(result: Result) -> list[str]:
    """The stderr lines that report problems (the closing count line left out)."""
    return [line for line in result.stderr.splitlines() if line and not line.endswith(SUMMARY_SUFFIX)]


def assert_clean_failure(result: Result) -> None:
    """Exit 1 through the CLI's own error path: no traceback, no escaped exception."""
    assert result.exit_code == 1, (result.exit_code, result.output)
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output


Location = tuple[str | int, ...]


def leaves(value: Any, at: Location = ()) -> Iterator[Location]:
    """Every path to a string, number or boolean inside ``value``."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield from leaves(child, (*at, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from leaves(child, (*at, index))
    elif value is not None:
        yield at


def changed(value: Any) -> Any:
    """The smallest edit of a leaf: a bool flipped, a number +1, one character replaced."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        # Stay inside the exact integer range the strict parser accepts.
        return value + 1 if value < 2**53 - 1 else value - 1
    if isinstance(value, float):
        bumped = value + 1.0
        # Past 2**53, +1 is absorbed by rounding: move one unit in the last place instead.
        return bumped if bumped != value else math.nextafter(value, 0.0)
    last = value[-1]
    return value[:-1] + ("x" if last != "x" else "y")


def with_leaf_changed(document: dict, path: Location) -> dict:
    out = copy.deepcopy(document)
    node = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = changed(node[path[-1]])
    return out
