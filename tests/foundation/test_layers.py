"""sitegen stays in layers: the import-linter contracts in pyproject.toml hold, and a crossing fails them.

docs/architecture.md names the layers; pyproject.toml's [tool.importlinter] states them as contracts.
The planted crossings run the same tool and the same contracts on a copy of the package, so a test
that passed because the contracts never looked would fail here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")


def _lint(root: Path) -> subprocess.CompletedProcess:
    # PYTHONPATH first: the copy's sitegen, not the installed one, is the graph's root package.
    env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([LINT, str(root / "pyproject.toml"), "--no-cache"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def copy(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("layers")
    shutil.copytree(ROOT / "sitegen", root / "sitegen", ignore=shutil.ignore_patterns("__pycache__", "*.json"))
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    return root


def _plant(copy: Path, module: str, text: str):
    path = copy / (module.replace(".", "/") + ".py")
    path.write_text(text, encoding="utf-8")
    return path


def test_the_contracts_hold_on_the_package():
    assert LINT, "import-linter is a test dependency (pyproject.toml)"
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize("module, text, crossing", [
    # The record format reaching up into the rerun harness, at function level.
    ("sitegen.format.planted", "def f():\n    from sitegen.rerun.plan import like\n    return like\n",
     "sitegen.format is not allowed to import sitegen.rerun"),
    # One feature into another's internals.
    ("sitegen.gate.planted", "from sitegen.site.charts import trends\n",
     "sitegen.gate is not allowed to import sitegen.site"),
    # The core into the command line.
    ("sitegen.core.planted", "import sitegen.cli.main\n", "sitegen.core is not allowed to import sitegen.cli"),
    # pydantic where GPU hosts import without it.
    ("sitegen.rules.planted", "import pydantic\n", "sitegen.rules.planted -> pydantic"),
])
def test_a_planted_crossing_fails_the_contracts(copy, module, text, crossing):
    planted = _plant(copy, module, text)
    try:
        result = _lint(copy)
    finally:
        planted.unlink()
    assert result.returncode == 1, result.stdout + result.stderr
    assert crossing in result.stdout, result.stdout
