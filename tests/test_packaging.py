"""The distribution carries what an installed tool needs outside the repository."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        check=True, capture_output=True,
    )
    (built,) = out.glob("sitegen-*.whl")
    return zipfile.ZipFile(built)


def test_wheel_maps_kernels_and_templates_into_the_package(wheel):
    names = set(wheel.namelist())
    assert "sitegen/kernels/__init__.py" in names
    assert not any(n.startswith("kernels/") for n in names), "a top-level kernels package would shadow PyPI's"
    assert any(n.startswith("sitegen/templates/") and n.endswith(".html") for n in names)
    assert {f"sitegen/format/schemas/{p.name}" for p in (ROOT / "sitegen" / "format" / "schemas").glob("*.json")} <= names


def test_wheel_declares_the_console_script_and_keeps_torch_optional(wheel):
    (meta,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    metadata = wheel.read(meta).decode()
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    core = [line for line in requires if "extra ==" not in line]
    assert not any("torch" in line or "triton" in line for line in core)
    assert any("torch" in line and 'extra == "gpu"' in line for line in requires)
    assert not any("ray" in line for line in core)
    assert any(line.startswith("Requires-Dist: ray") and 'extra == "fleet"' in line for line in requires)
    (entry,) = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    assert "sitegen = sitegen.cli.main:main" in wheel.read(entry).decode()


def test_core_cli_runs_without_torch(tmp_path):
    # Hide torch and triton: the registry side must not need them.
    blocker = tmp_path / "block"
    blocker.mkdir()
    for name in ("torch", "triton"):
        (blocker / f"{name}.py").write_text("raise ImportError('blocked for this test')\n")
    env = {"PYTHONPATH": str(blocker), "PATH": "/usr/bin:/bin"}
    result = subprocess.run(
        [sys.executable, "-m", "sitegen", "validate", str(ROOT / "tests" / "fixtures" / "valid")],
        env=env, capture_output=True, text=True, cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
