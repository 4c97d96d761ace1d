"""Shared fixtures of the site tests: the small registry, built once per session."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sitegen.site.build import build_site

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "registry-small"
SEED_RUN = "liger-jsd-forward-liger-nvidia-b200-tokens2048-vocab128256-fp32-2026-05-27-17-14-29"
TORCH_RUN = "liger-jsd-forward-torch-nvidia-b200-tokens2048-vocab128256-fp32-2026-05-27-17-14-31"
FAILED_RUN = "liger-jsd-forward-liger-nvidia-b200-tokens4096-vocab128256-fp32-2026-05-27-17-14-33"
OPERATION = "jensen-shannon-divergence"


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    """The fixture registry built once (read-only for tests)."""
    out = tmp_path_factory.mktemp("built") / "site"
    build_site(FIXTURE, out)
    return out


@pytest.fixture
def registry_copy(tmp_path) -> Path:
    """A writable copy of the fixture registry."""
    root = tmp_path / "records"
    shutil.copytree(FIXTURE, root)
    return root
