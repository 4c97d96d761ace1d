"""Full-text search with Pagefind, run over the finished pages of a build.

Pagefind ships as a binary inside the ``pagefind[bin]`` wheel, so ``pip install .`` brings
it everywhere pip does; it writes a static index and the search box's script, loaded by
pages only in builds that ran it (``Renderer(search=True)``). Its output is part of the
site's marker like every other file. Two builds of the same pages give the same index
bytes (checked by tests/site/test_site_determinism.py).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from sitegen.problems import InputError, Problem

OUTPUT = "pagefind"
# What a page is about is in its headings and text. Tables list other records (each
# indexed on its own page); a record's detail sections, verdicts, rerun box, manifest and
# citation repeat operation and run names ("jsd_reference", "rerun --like liger-jsd-…"),
# so with them every record of an operation outranked the operation's own page.
EXCLUDE = "pre, table, svg, .cite, .manifest, .unranked, .sections, .verdicts, .rerun"


def index_site(pages: Path, writer) -> int:
    """Index the HTML under ``pages`` and add Pagefind's files to ``writer`` under pagefind/."""
    with tempfile.TemporaryDirectory(prefix="sitegen-pagefind-") as tmp:
        command = [sys.executable, "-m", "pagefind", "--site", str(pages), "--output-path", tmp,
                   "--exclude-selectors", EXCLUDE, "--silent"]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=600)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise InputError([Problem("pagefind", "$", f"could not run Pagefind: {exc}; build with --no-search to skip search")]) from None
        if done.returncode != 0:
            reason = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
            raise InputError([Problem("pagefind", "$", f"Pagefind failed ({reason[0]}); is pagefind[bin] installed? --no-search skips it")])
        files = sorted(p for p in Path(tmp).rglob("*") if p.is_file())
        for file in files:
            writer.add(f"{OUTPUT}/{file.relative_to(tmp).as_posix()}", file.read_bytes())
    return len(files)
