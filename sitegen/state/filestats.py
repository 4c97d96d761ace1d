"""Registry files whose bytes are known from their stat, as git's index knows a checkout's.

A build fingerprints every registry file (sitegen.site.engine.fingerprint); reading 60,000 files
to hash them was most of a no-op build. A file whose (size, mtime_ns, ctime_ns, inode,
device) are those it had when its bytes were last hashed on this machine is taken to hold
those bytes still. ctime is in the key because no user call can set it: an edit that keeps
the size and puts the old mtime back (`touch -d`, `cp -p`, a checkout) still changes it.
Except where the file system keeps no ctime of its own: Linux's FAT and exFAT drivers copy
it from the mtime, so there such an edit is missed; a registry on a FAT drive, or on NFS
(whose client may serve a stat up to a minute old), is checked with `--full`.

Only plain files reached through no link are known this way: a link may point elsewhere
tomorrow with no change to any stat here. And an entry is kept only if the file's times
lie RACY_NS before the build began reading (git's "racy clean" rule): on a file system
whose clock ticks coarsely, a file written again within the tick it was hashed in would
keep its stat with new bytes. `build --full` reads every file again.
"""

from __future__ import annotations

import os
import stat
import time

from sitegen.state.store import BuildState

# Two seconds: the coarsest mtime tick of any file system (FAT's).
RACY_NS = 2_000_000_000
_clock = time.time_ns


def stat_key(info: os.stat_result) -> str:
    return f"{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}:{info.st_ino}:{info.st_dev}"


class FileStats:
    """The stat → sha256 of the registry files of one build state, looked up and learned during one walk."""

    def __init__(self, state: BuildState, now_ns=None):
        self._state = state
        self._known = state.file_stats()
        self._found: dict[str, tuple[str, str]] = {}
        self._touched: set[str] = set()
        """Files looked up or read: their old entries, if not found again, are stale."""
        # Times at or after this are too recent to vouch for the bytes (module docstring).
        self._racy_from = (now_ns or _clock)() - RACY_NS

    def lookup(self, path: str, relative: str) -> tuple[os.stat_result | None, str | None]:
        """The file's lstat if it is a plain file (else None), and the sha256 its stat vouches for (else None)."""
        try:
            info = os.lstat(path)
        except OSError:
            return None, None
        if not stat.S_ISREG(info.st_mode):
            return None, None
        return info, self.sha256(relative, info)

    def sha256(self, relative: str, info: os.stat_result) -> str | None:
        """The sha256 of the file's bytes if its stat is the one they were hashed under, else None."""
        entry = self._known.get(relative)
        if entry is not None and entry[0] == stat_key(info):
            self._found[relative] = entry
            return entry[1]
        self._touched.add(relative)
        return None

    def learn(self, relative: str, info: os.stat_result, sha256: str) -> None:
        """The file's bytes as just hashed, ``info`` taken before they were read."""
        self._touched.add(relative)
        if max(info.st_mtime_ns, info.st_ctime_ns) < self._racy_from:
            self._found[relative] = (stat_key(info), sha256)

    def save(self, forget_unseen: bool = True) -> None:
        """Keep what this walk found; forget the files it saw change, and those it did not see
        unless it walked only some (``forget_unseen`` False)."""
        changed = {r: e for r, e in self._found.items() if self._known.get(r) != e}
        gone = [r for r in self._known if r not in self._found and (forget_unseen or r in self._touched)]
        self._state.put_file_stats(changed, gone)
