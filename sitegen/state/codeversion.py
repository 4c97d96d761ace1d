"""One digest of sitegen itself: its code, its templates and the libraries that shape its output.

Every entry of the build state (sitegen.state.store) is made under it, and every build's
inputs digest (sitegen.site.engine.fingerprint) folds it in: a changed validator, template or
library version makes all that earlier work no longer count.
"""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from importlib import metadata, resources
from pathlib import Path

import sitegen

# Libraries whose output ends up in the pages: templates and Markdown, the numbers of the
# bootstrap intervals, CITATION.cff, and the search index with its script.
RENDERING_LIBRARIES = ("jinja2", "markupsafe", "markdown", "nh3", "pydantic", "numpy", "pyyaml", "pagefind", "pagefind-bin")


def _sources(package: Path) -> list[tuple[str, str]]:
    """(path, "/"-separated path relative to ``package``) of each .py file, hidden folders aside, in walk order."""
    found, seen = [], set()
    for folder, subfolders, names in os.walk(package, followlinks=True):
        info = os.stat(folder)
        if (info.st_dev, info.st_ino) in seen:  # a link loop ends here
            subfolders[:] = []
            continue
        seen.add((info.st_dev, info.st_ino))
        subfolders[:] = sorted(s for s in subfolders if not s.startswith("."))
        relative = os.path.relpath(folder, package).replace(os.sep, "/")
        prefix = "" if relative == "." else relative + "/"
        found.extend((os.path.join(folder, n), prefix + n) for n in sorted(names) if n.endswith(".py"))
    return found


def add_code(digest) -> None:
    """Feed sitegen's code, templates and rendering libraries' versions to ``digest``."""
    for path, relative in _sources(Path(sitegen.__file__).parent):
        digest.update(relative.encode() + b"\0" + Path(path).read_bytes())
    for item in sorted(resources.files("sitegen.templates").iterdir(), key=lambda item: item.name):
        if item.is_file():
            digest.update(item.name.encode() + b"\0" + item.read_bytes())
    for library in RENDERING_LIBRARIES:
        try:
            digest.update(f"{library}={metadata.version(library)}".encode())
        except metadata.PackageNotFoundError:
            digest.update(library.encode())


def code_digest() -> str:
    """sha256 over sitegen's code, templates and the versions of the libraries that shape its output."""
    digest = hashlib.sha256()
    add_code(digest)
    return digest.hexdigest()


@lru_cache(maxsize=1)
def code_version() -> str:
    """code_digest, made once per process (call it before forking, so workers inherit it)."""
    return code_digest()
