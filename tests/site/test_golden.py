"""The fixture registry builds to exactly the committed site in tests/golden/expected-site/.

After an intended change to pages, regenerate and review the diff:
    SITEGEN_UPDATE_GOLDEN=1 .venv/bin/pytest tests/site/test_golden.py
Under CI (CI set to anything but "" or "false") that switch is refused: a CI run that rewrote
the expectation would pass by comparing the build with itself.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from sitegen.site.engine.marker import MARKER

EXPECTED = Path(__file__).resolve().parents[1] / "golden" / "expected-site"


def _bytes(path: Path, name: str) -> bytes:
    if name != MARKER:
        return path.read_bytes()
    # The marker's "inputs" digest, its page-group keys and its listing pages' render keys
    # cover sitegen's own code, so they change with every edit to sitegen; the rest of the
    # marker must match.
    marker = json.loads(path.read_bytes())
    marker.pop("inputs", None)
    marker.pop("groups", None)
    marker.pop("pageKeys", None)
    return json.dumps(marker, indent=1).encode()


def _files(root: Path) -> dict[str, bytes]:
    files = {}
    for p in sorted(root.rglob("*")):
        if p.is_file():
            name = p.relative_to(root).as_posix()
            files[name] = _bytes(p, name)
    return files


def _update_wanted(environ) -> bool:
    """Whether to rewrite the expectation; under CI the request fails the test instead."""
    if environ.get("SITEGEN_UPDATE_GOLDEN") != "1":
        return False
    if environ.get("CI", "") not in ("", "false"):
        pytest.fail("SITEGEN_UPDATE_GOLDEN=1 is refused under CI: regenerate the golden site on a "
                    "developer machine and commit it", pytrace=False)
    return True


def test_the_golden_site_cannot_be_rewritten_under_ci():
    with pytest.raises(pytest.fail.Exception, match="refused under CI"):
        _update_wanted({"SITEGEN_UPDATE_GOLDEN": "1", "CI": "true"})
    assert _update_wanted({"SITEGEN_UPDATE_GOLDEN": "1"}) is True
    assert _update_wanted({"SITEGEN_UPDATE_GOLDEN": "1", "CI": "false"}) is True
    assert _update_wanted({"CI": "true"}) is False


def test_build_matches_the_golden_site(site):
    built = _files(site)
    if _update_wanted(os.environ):
        if EXPECTED.exists():
            shutil.rmtree(EXPECTED)
        shutil.copytree(site, EXPECTED)
    expected = _files(EXPECTED)
    assert sorted(built) == sorted(expected), "files added or missing; regenerate if intended"
    changed = [name for name in sorted(built) if built[name] != expected[name]]
    assert changed == [], f"{len(changed)} file(s) differ, e.g. {changed[:3]}; see the module docstring"
