"""Markdown content of a registry: site pages (``pages/*.md``) and operation descriptions
(``operations/<name>.md``), rendered and sanitized exactly as attestation notes are.

A page's title is its first ``# heading`` (else its file name); the rest is its body.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from sitegen.core.inputfile import read_regular
from sitegen.core.problems import InputError, Problem
from sitegen.site.text.markdown import render_markdown

PAGES_DIR = "pages"
OPERATIONS_DIR = "operations"
_NAME = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
_MAX_BYTES = 256 * 1024


@dataclass(frozen=True)
class SitePage:
    path: str
    title: str
    name: str
    body_html: str


def _read(path: Path, records: Path) -> str:
    # As every input: a FIFO, a device or a link out of the registry is refused in one line.
    data = read_regular(path, _MAX_BYTES, registry=records)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError([Problem(str(path), "$", f"not valid UTF-8 (byte {exc.start})")]) from None


def _split_title(text: str, fallback: str) -> tuple[str, str]:
    lines = text.lstrip("\ufeff").splitlines()
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        if line.startswith("# "):
            return line[2:].strip().strip("#").strip() or fallback, "\n".join(lines[i + 1:])
        break
    return fallback, text


def page_path(name: str) -> str:
    return f"{PAGES_DIR}/{name}/index.html"


def load_pages(records: Path) -> list[SitePage]:
    """Every ``records/pages/*.md`` as a sanitized site page, by file name."""
    pages = []
    for file in sorted((records / PAGES_DIR).glob("*.md")):
        if not _NAME.fullmatch(file.stem):
            raise InputError([Problem(str(file), "$", "page file names are lowercase letters, digits and '-' (they become URLs)")])
        title, body = _split_title(_read(file, records), file.stem.replace("-", " ").capitalize())
        pages.append(SitePage(page_path(file.stem), title, file.stem, render_markdown(body, top_heading=1)))
    return pages


def load_descriptions(records: Path, operations: list[str]) -> dict[str, str]:
    """Sanitized HTML of each ``records/operations/<name>.md`` whose operation exists."""
    found = {}
    for name in operations:
        file = records / OPERATIONS_DIR / f"{name}.md"
        if file.exists() or file.is_symlink():
            _, body = _split_title(_read(file, records), name)
            found[name] = render_markdown(body, top_heading=3)
    for file in sorted((records / OPERATIONS_DIR).glob("*.md")):
        if file.stem not in operations:
            raise InputError([Problem(str(file), "$", f"describes no operation: there is no OperationSpec named {file.stem!r}")])
    return found
