"""Run the sitegen CLI, killing itself (SIGKILL) or failing with a full disk at the Nth write point.

Usage: python killer.py ARGS... (or killer.py SCRIPT.py ARGS...) with environment
  SITEGEN_KILL_AT=N   SIGKILL just before write point N (1-based); 0 only counts them
  SITEGEN_ENOSPC_AT=N raise "No space left on device" at the Nth file sync instead
  SITEGEN_COUNT_FILE  where "POINTS SYNCS" (how many were reached) is written at exit

Write points are every call that changes the file system for a registry or a site:
file syncs, renames, links, unlinks, the build's exchange and each file a build adds.
"""

from __future__ import annotations

import errno
import os
import signal
import sys

import sitegen.site.engine.swap as site_swap
import sitegen.site.engine.write as site_write

KILL_AT = int(os.environ.get("SITEGEN_KILL_AT", "0"))
ENOSPC_AT = int(os.environ.get("SITEGEN_ENOSPC_AT", "0"))
COUNT_FILE = os.environ.get("SITEGEN_COUNT_FILE")
count = 0
syncs = 0
# Points are counted in the command's own process: forked loaders and renderers inherit the
# count, and killing one of them tests what tests/site/test_build_documents.py and
# test_incremental_build.py plant directly (one line, nothing changed), not a kill of the command.
MAIN = os.getpid()


def _point(name: str) -> None:
    global count, syncs
    if os.getpid() != MAIN:
        return
    count += 1
    if count == KILL_AT:
        os.kill(os.getpid(), signal.SIGKILL)
    # Only a write that needs space can find the disk full: the sync of written data.
    # (Renames and unlinks free or keep space; they never fail with ENOSPC.)
    if name == "fsync":
        syncs += 1
        if syncs == ENOSPC_AT:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _wrap(owner, name: str) -> None:
    original = getattr(owner, name)

    def wrapped(*args, **kwargs):
        _point(name)
        return original(*args, **kwargs)

    setattr(owner, name, wrapped)


for name in ("fsync", "replace", "rename", "link", "unlink"):
    _wrap(os, name)
_wrap(site_swap, "exchange")
_wrap(site_write.SiteWriter, "add")

if __name__ == "__main__":
    import runpy

    from sitegen.cli.main import main

    try:
        if sys.argv[1].endswith(".py"):
            # A driver script instead of the CLI (tests/adversarial/rerunwrite.py).
            sys.argv = sys.argv[1:]
            runpy.run_path(sys.argv[0], run_name="__main__")
        else:
            main(sys.argv[1:], prog_name="sitegen")
    finally:
        if COUNT_FILE:
            with open(COUNT_FILE, "w") as handle:
                handle.write(f"{count} {syncs}")
