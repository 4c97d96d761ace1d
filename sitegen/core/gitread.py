"""Reading a git checkout that sitegen does not own, without running its programs or writing to it.

A checkout's ``.git/config`` and ``.gitattributes`` are its author's: ``core.fsmonitor``, hooks,
clean filters, ``gpg.program`` with ``log.showSignature`` name programs that git would run.
``git status`` runs the fsmonitor and the clean filters, and rewrites the index (a refresh that
fires the ``post-index-change`` hook). So only plumbing that reads objects and refs runs here,
with those settings overridden and optional locks off (no index refresh is written); whether
the files match HEAD is judged by hashing their bytes as git hashes a blob. Every git command
sitegen runs on a folder it reads goes through ``git``.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from pathlib import Path

# Settings that make a read-only command run a configured program, or write, each switched off.
_SAFE = ("core.fsmonitor=false", "core.hooksPath=/dev/null", "core.untrackedCache=false",
         "log.showSignature=false", "core.pager=cat", "gc.auto=0", "maintenance.auto=false")
_GIT = ("git", *(arg for setting in _SAFE for arg in ("-c", setting)))
# GIT_OPTIONAL_LOCKS=0: no command takes the index lock to write back a refresh.
_ENV = {"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat"}


def git(folder: Path, *args: str) -> str:
    """stdout of ``git -C folder ARGS`` under the settings above; CalledProcessError, OSError or TimeoutExpired if it fails."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")} | _ENV
    return subprocess.run([*_GIT, "-C", str(folder), *args], capture_output=True, text=True, check=True,
                          timeout=60, stdin=subprocess.DEVNULL, env=env).stdout


def _blob_id(path: Path, algorithm: str) -> str:
    data = path.read_bytes()
    return hashlib.new(algorithm, b"blob %d\0" % len(data) + data).hexdigest()


def changed(folder: Path, head: str, *, untracked: bool = True) -> str | None:
    """The first file under ``folder`` that differs from commit ``head`` (changed, missing or, if
    ``untracked``, not tracked), or None when every one matches; judged from the commit's tree and the
    files' bytes. A link, a submodule or a file stored other than as its bytes is named as differing:
    it is not judged here."""
    algorithm = "sha1" if len(head) == 40 else "sha256"
    top = Path(git(folder, "rev-parse", "--show-toplevel").strip())
    for entry in git(folder, "ls-tree", "-r", "-z", "--full-name", head, "--", ".").split("\0"):
        if not entry:
            continue
        meta, _, name = entry.partition("\t")
        mode, kind, blob = meta.split()
        path = top / name
        if kind != "blob" or mode not in ("100644", "100755") or path.is_symlink() or not path.is_file():
            return name
        if _blob_id(path, algorithm) != blob:
            return name
    if untracked:
        others = git(folder, "ls-files", "-z", "--others", "--exclude-standard", "--", ".").split("\0")
        if others[0]:
            return others[0]
    return None


def head(folder: Path) -> str | None:
    """HEAD's commit id in the checkout holding ``folder``, or None."""
    found = git(folder, "rev-parse", "--verify", "--quiet", "HEAD^{commit}").strip()
    return found if re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", found) else None


def clean_commit(folder: Path) -> str | None:
    """HEAD of the git checkout holding ``folder``, when no file under it differs from HEAD; else None."""
    try:
        found = head(folder)
        return found if found is not None and changed(folder, found) is None else None
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
