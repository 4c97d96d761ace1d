"""`sitegen serve` over real HTTP: it serves the build, rebuilds on an edit, and keeps the
last good site (with the problem shown) when an edit breaks the registry."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request

import pytest

import headless
from conftest import OPERATION


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


def _wait_for(check, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError("timed out")


@pytest.fixture
def server(registry_copy, tmp_path):
    process = subprocess.Popen(
        [sys.executable, "-m", "sitegen", "serve", "--records", str(registry_copy), "--out", str(tmp_path / "site"),
         "--port", "0", "--no-search"],
        stderr=subprocess.PIPE, text=True, cwd=tmp_path, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    lines = []
    try:
        while True:
            line = process.stderr.readline()
            assert line, "serve exited: " + "".join(lines)
            lines.append(line)
            found = re.search(r"serving (http://127\.0\.0\.1:\d+/)", line)
            if found:
                break
        yield found.group(1), registry_copy, process
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_serve_rebuilds_on_an_edit_and_keeps_the_last_good_site(server):
    url, records, process = server
    page_url = f"{url}operations/{OPERATION}/"
    page = _get(page_url)
    assert "All results for Jensen-Shannon divergence loss" in page and "/__sitegen/status" in page
    version = json.loads(_get(url + "__sitegen/status"))["version"]

    # metadata is not identity, so the lock still holds: a good edit.
    path = records / "operations" / f"{OPERATION}.json"
    doc = json.loads(path.read_text())
    doc["metadata"]["title"] = "JSD, renamed while serving"
    path.write_text(json.dumps(doc, indent=2))
    _wait_for(lambda: "All results for JSD, renamed while serving" in _get(page_url))
    # The version (which open pages poll to reload) moves on once the new site is in place.
    _wait_for(lambda: json.loads(_get(url + "__sitegen/status"))["version"] > version)

    # A broken file: the problem is reported, the last good page is still served.
    path.write_text("{ not json")
    status = _wait_for(lambda: (s := json.loads(_get(url + "__sitegen/status")))["problems"] and s)
    assert any(str(path) in line for line in status["problems"])
    assert "All results for JSD, renamed while serving" in _get(page_url)
    assert process.poll() is None


@pytest.mark.browser
def test_open_page_reloads_and_shows_a_bad_edit(server):
    headless.require_chromium()
    url, records, _ = server
    path = records / "operations" / f"{OPERATION}.json"
    with headless.chromium() as browser:
        page = browser.new_page()
        page.goto(f"{url}operations/{OPERATION}/")
        page.wait_for_timeout(1000)  # the page has read the current version
        doc = json.loads(path.read_text())
        doc["metadata"]["title"] = "Reloaded by itself"
        path.write_text(json.dumps(doc, indent=2))
        page.wait_for_function("document.querySelector('h1').textContent.includes('Reloaded by itself')", timeout=60_000)
        path.write_text("[")
        banner = page.locator("#sitegen-problems")
        banner.wait_for(timeout=60_000)
        assert str(path) in banner.inner_text() and "last good site" in banner.inner_text()
        assert "Reloaded by itself" in page.locator("h1").inner_text()
