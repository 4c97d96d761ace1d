"""Which code ran: the repository commit (only when the files that ran match it) and source digests."""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tomllib
from pathlib import Path

import sitegen
from sitegen.core import gitread

PACKAGE_ROOT = Path(sitegen.__file__).resolve().parent
CHECKOUT = PACKAGE_ROOT.parent
# Files whose bytes a rerun depends on: a commit is claimed only if none differ from it.
RUN_PATHS = ("kernels", "sitegen/rerun", "sitegen/operations")
COMMIT_ENV = "SITEGEN_COMMIT"
KERNEL_COMMIT_ENV = "SITEGEN_KERNEL_COMMIT"


def source_digest(module_file: str | Path) -> str:
    """sha256 of a source file's bytes, as projectRevision.sourceDigest."""
    return "sha256:" + hashlib.sha256(Path(module_file).read_bytes()).hexdigest()


def _head_if_clean(paths: tuple[str, ...]) -> str | None:
    # Read as any checkout is (sitegen.core.gitread): git status would run the checkout's fsmonitor
    # and clean filters and rewrite its index.
    if not (CHECKOUT / ".git").exists():
        return None
    try:
        head = gitread.head(CHECKOUT)
        if head is None or any(gitread.changed(CHECKOUT / path, head) for path in paths):
            return None
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    return head


def _named(env: str) -> str | None:
    named = os.environ.get(env, "").strip().lower()
    return named if re.fullmatch(r"[0-9a-f]{7,64}", named) else None


def commit() -> str | None:
    """The harness's commit: HEAD when kernels/, sitegen/rerun/ and sitegen/operations/ are clean; else None.

    A host that got a copy of the tree without .git may name the commit in $SITEGEN_COMMIT
    (the caller vouches that the copy is that commit's files).
    """
    return _named(COMMIT_ENV) or _head_if_clean(RUN_PATHS)


def kernel_commit() -> str | None:
    """The bundled kernel's commit: HEAD when kernels/ is clean, or $SITEGEN_KERNEL_COMMIT.

    Kept apart from the harness's commit so that a harness change need not re-identify an
    unchanged kernel: any commit whose kernels/ holds these bytes is a true answer.
    """
    return _named(KERNEL_COMMIT_ENV) or _named(COMMIT_ENV) or _head_if_clean(("kernels",))


def version() -> str | None:
    """sitegen's version: installed metadata, else the checkout's pyproject.toml."""
    try:
        import importlib.metadata

        return importlib.metadata.version("sitegen")
    except Exception:
        pass
    try:
        value = tomllib.loads((CHECKOUT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    except (OSError, KeyError, TypeError, tomllib.TOMLDecodeError):
        return None
    return value if isinstance(value, str) else None


def repository_url(records: Path) -> str | None:
    """The registry's repository, from <records>/sitegen.toml ([site] repository_url)."""
    from sitegen.core.inputfile import read_regular
    from sitegen.core.problems import InputError

    try:
        # As every registry input: bounded, a regular file, inside the registry (sitegen.core.inputfile).
        data = tomllib.loads(read_regular(records / "sitegen.toml", 1024 * 1024, registry=records).decode("utf-8"))
    except (InputError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None
    url = data.get("site", {}).get("repository_url")
    return url if isinstance(url, str) and re.match(r"^https?://[^\s<>\"]+$", url) else None
