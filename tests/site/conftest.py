"""Shared fixtures of the site tests: the small registry, built once per session."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers import copy_registry
from sitegen.site.build import build_site

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "registry-small"
BUNDLED = Path(__file__).resolve().parents[2] / "records"
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
    """A writable copy of the fixture registry, at tmp_path/records."""
    return copy_registry(tmp_path, FIXTURE)


def relock(root: Path) -> None:
    """Record the registry's current digests, as `sitegen lock` does after a reviewed edit."""
    from sitegen.core.atomicwrite import write_atomic
    from sitegen.registry.lockfile import LOCK_NAME
    from sitegen.registry.folder import lock_contents, open_registry

    write_atomic(root / LOCK_NAME, lock_contents(open_registry(root, check_lock_file=False)))


FIXTURE_KEY = Path(__file__).resolve().parents[1] / "fixtures" / "keys" / "fixture_ed25519"


def edit_run(root: Path, name: str, change, *, resign: bool = True) -> None:
    """Apply ``change`` to a run's spec in place, then relock; a signed run is signed again with the
    fixtures' key, as its key holder would after a reviewed edit (``resign=False``: left as it was)."""
    import json

    from sitegen.trust.registrysigning import sign_registry

    path = root / "runs" / f"{name}.json"
    doc = json.loads(path.read_text())
    change(doc["spec"])
    path.write_text(json.dumps(doc, indent=2))
    relock(root)
    if resign and doc["metadata"].get("signature"):
        sign_registry(root, FIXTURE_KEY, (name,))


@pytest.fixture(scope="session")
def bundled_without_kernelbench(tmp_path_factory) -> Path:
    """The bundled registry less its KernelBench documents (8,486 runs), locked again; read-only.

    Tests of build mechanics (workers, reused pages, row tokens) need many operations and
    thousands of runs, which Liger's data gives: with KernelBench's too, each of their many
    builds took about a minute on two cores. The KernelBench pages are tested in
    test_site_bundled_ranks.py, on the whole bundled registry.
    """
    root = tmp_path_factory.mktemp("bundled") / "records"
    shutil.copytree(BUNDLED, root, ignore=lambda _folder, names: [n for n in names if n.startswith((".", "kernelbench"))])
    relock(root)
    return root


@pytest.fixture(scope="module")
def browser():
    """A headless Chromium for one module's page tests (tests/headless.py)."""
    import headless

    with headless.chromium() as chromium:
        yield chromium
