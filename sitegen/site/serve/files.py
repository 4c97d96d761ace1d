"""Which file of the site a request may have: the rules ``sitegen serve`` answers by.

The server is on 127.0.0.1, but a page on any other site can make a browser send it
requests (DNS rebinding: evil.example resolved to 127.0.0.1), so the ``Host`` header must
name this server. A URL is decoded strictly (bad percent-encoding, NUL, a segment no file
system takes: 400; a path longer than any file system takes: 414), and the file it names is served only if it is a regular file whose
resolved path lies inside the site, resolved again at each request (``--out`` may be a
link that a build points elsewhere): a link inside the site to a file or folder outside it
gets 403.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from urllib.parse import quote, unquote_to_bytes

# NAME_MAX of Linux, macOS and Windows file systems: a longer segment can name no file.
MAX_SEGMENT_BYTES = 255
# PATH_MAX of Linux: a longer path names no file, so the request is too long (414), not forbidden.
MAX_PATH_BYTES = 4096
_BAD_PERCENT = re.compile(rb"%(?![0-9A-Fa-f]{2})")


@dataclass(frozen=True)
class Refusal:
    status: int
    reason: str


def allowed_hosts(port: int) -> set[str]:
    """The Host values a browser sends for this server: its address or localhost, with its port."""
    return {f"127.0.0.1:{port}", f"localhost:{port}"}


def host_refusal(host: str | None, port: int) -> Refusal | None:
    if host is None or host.strip().lower() not in allowed_hosts(port):
        return Refusal(421, "this server answers only to 127.0.0.1 and localhost on its own port")
    return None


def url_segments(target: str) -> list[str] | Refusal:
    """The decoded path segments of a request target (query and fragment dropped), or why it is refused."""
    raw = target.split("?", 1)[0].split("#", 1)[0].encode("latin-1", "replace")
    if not raw.startswith(b"/"):
        return Refusal(400, "the path must start with /")
    if _BAD_PERCENT.search(raw):
        return Refusal(400, "bad percent-encoding")
    if len(raw) > MAX_PATH_BYTES:
        return Refusal(414, f"a path over {MAX_PATH_BYTES:,} bytes")
    decoded = unquote_to_bytes(raw)
    if b"\0" in decoded:
        return Refusal(400, "NUL in the path")
    segments = decoded.split(b"/")[1:]
    if any(len(s) > MAX_SEGMENT_BYTES for s in segments):
        return Refusal(400, f"a path segment over {MAX_SEGMENT_BYTES} bytes")
    if any(s in (b".", b"..") or b"\\" in s for s in segments):
        return Refusal(400, "'.', '..' or '\\' in the path")
    try:
        return [s.decode("utf-8") for s in segments]
    except UnicodeDecodeError:
        return Refusal(400, "the path is not UTF-8")


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class Found:
    fd: int
    """Open, read-only: the caller reads and closes it."""
    size: int
    name: str
    """The file's name, for its content type."""


@dataclass(frozen=True)
class Redirect:
    location: str


def open_in_site(site: str, segments: list[str]) -> Found | Redirect | Refusal:
    """The file ``segments`` name below the folder ``site`` (its index.html for a folder), opened."""
    root = os.path.realpath(site)
    wanted = os.path.join(root, *segments)
    real = os.path.realpath(wanted)
    if not _inside(real, root):
        return Refusal(403, "outside the site")
    if os.path.isdir(real):
        if segments and segments[-1] != "":
            return Redirect(quote("/" + "/".join(segments) + "/"))
        real = os.path.realpath(os.path.join(real, "index.html"))
        if not _inside(real, root):
            return Refusal(403, "outside the site")
    try:
        # O_NONBLOCK: a FIFO put in the site opens at once (and is then refused), never blocks a thread.
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return Refusal(404, "no such page")
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            # Below the site's own folder the path passed PATH_MAX: no page is there.
            return Refusal(404, "no such page")
        # ELOOP: the last part was made a link since it was resolved; or unreadable.
        return Refusal(403, "not a file of the site")
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or not _inside(_opened_path(fd, real), root):
        os.close(fd)
        return Refusal(403, "not a file of the site")
    return Found(fd, info.st_size, os.path.basename(real))


def _opened_path(fd: int, fallback: str) -> str:
    """Where the open file really is (a folder on the way may have been swapped for a link since it was resolved)."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return fallback
