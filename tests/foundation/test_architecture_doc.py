"""docs/architecture.md stays true to the code: every path it names exists, and it names every layer
the import-linter contracts enforce."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")


def _named_paths(text: str) -> list[str]:
    # Backticked repository paths: a folder ends in "/", a file has a suffix.
    return sorted({p for p in re.findall(r"`([A-Za-z0-9_./-]+)`", text)
                   if "/" in p and not p.startswith(("http", "-")) and ("." in p.rsplit("/", 1)[-1] or p.endswith("/"))})


def test_every_path_the_document_names_exists():
    paths = _named_paths(DOC)
    assert len(paths) > 40, paths  # the parser found the document's paths, not none
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert missing == []


def test_the_path_check_catches_a_stale_path():
    stale = DOC + "\nThe old loader was `sitegen/loader.py`.\n"
    assert "sitegen/loader.py" in _named_paths(stale)
    assert not (ROOT / "sitegen/loader.py").exists()


def test_the_document_names_every_layer_the_contracts_enforce():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    [layers] = [c["layers"] for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    packages = [name.strip() for row in layers for name in row.split("|")]
    assert len(packages) >= 10
    for package in packages:
        assert f"`{package.replace('.', '/')}/`" in DOC, package
