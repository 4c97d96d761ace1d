"""Helpers shared by the test folders: running the `sitegen` command and copying a fixture registry.

tests/ is on sys.path (pytest puts the folder of tests/conftest.py there; tests/adversarial/report.py
adds it itself), so any test imports these as ``from helpers import ...``.

invoke(*args, input=None, check=False)
    Runs the `sitegen` click command in this process and returns click's Result: exit_code, stdout
    and stderr apart (output: both, interleaved), exception when one escaped. Exceptions are caught
    (CliRunner's default), so a crash is a non-zero exit_code and Result.exception, never a raise out
    of the helper; with check, a non-zero exit fails the test, its message the arguments, the
    output and the exception (a worker that died leaves no output to read).
build(records, out, *extra, flags=(), check=True)
    ``sitegen build --records RECORDS --out OUT FLAGS... EXTRA...`` through invoke. A test file whose
    builds all pass the same options names them once: ``_build = partial(build, flags=(...))``.
lock(records, *extra, check=True)
    ``sitegen lock RECORDS EXTRA...`` through invoke.
copy_registry(tmp, fixture=SMALL, *, name="records", locked=True)
    A writable copy of a fixture registry, at tmp/name. The fixtures are committed locked (their
    digests.lock inside); locked=False leaves the copy without its lock.
"""

from __future__ import annotations

import shutil
from collections.abc import Sequence
from pathlib import Path

from click.testing import CliRunner, Result

from sitegen.cli.main import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SMALL = FIXTURES / "registry-small"
"""Eight runs of one operation (Jensen-Shannon divergence) with what they reference, a note and settings."""
VERIFY = FIXTURES / "registry-verify"
"""One document of each kind, flat in one folder."""
LOCK_FILE = "digests.lock"


def invoke(*args: str | Path, input: str | None = None, check: bool = False) -> Result:
    """Run ``sitegen ARGS...`` in this process (see the module docstring)."""
    result = CliRunner().invoke(main, [str(a) for a in args], input=input)
    if check:
        assert result.exit_code == 0, (args, result.output, repr(result.exception))
    return result


def build(records: str | Path, out: str | Path, *extra: str, flags: Sequence[str] = (), check: bool = True) -> Result:
    """``sitegen build --records RECORDS --out OUT FLAGS... EXTRA...``; with check, it must exit 0."""
    return invoke("build", "--records", records, "--out", out, *flags, *extra, check=check)


def lock(records: str | Path, *extra: str, check: bool = True) -> Result:
    """``sitegen lock RECORDS EXTRA...``; with check, it must exit 0."""
    return invoke("lock", records, *extra, check=check)


def copy_registry(tmp: Path, fixture: Path = SMALL, *, name: str = "records", locked: bool = True) -> Path:
    """A copy of ``fixture`` at ``tmp / name`` (which must not exist yet); without its lock unless ``locked``."""
    root = tmp / name
    shutil.copytree(fixture, root)
    if not locked:
        (root / LOCK_FILE).unlink()
    return root
