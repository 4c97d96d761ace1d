"""Debian's Chromium for the page tests: where it is, how it starts, and a site served over HTTP
(Pagefind and fetch() do not work from file://).

A test that needs the browser calls require_chromium(): skipped where Chromium is absent,
a failure under CI (CI set), where a missing browser means the set-up is broken.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def require_chromium(*, module: bool = False) -> None:
    if not Path(CHROMIUM).exists() and not os.environ.get("CI"):
        pytest.skip("no /usr/bin/chromium (set CI to make this a failure)", allow_module_level=module)


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextlib.contextmanager
def served(directory: Path):
    """The folder over HTTP on a free local port; yields its base URL (ending in /)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(directory)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def chromium():
    """A launched headless Chromium (playwright's Browser)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()
