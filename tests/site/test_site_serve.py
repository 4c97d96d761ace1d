"""`sitegen serve` over real HTTP: it serves the build, rebuilds on an edit, and keeps the
last good site (with the problem shown) when an edit breaks the registry; it serves nothing
outside the site, answers only to its own Host, and refuses bad URLs with a 400."""

from __future__ import annotations

import contextlib
import http.client
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


@contextlib.contextmanager
def serving(records, out, cwd):
    """`sitegen serve` on any free port: yields (base URL, the process, its stderr lines so far)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "sitegen", "serve", "--records", str(records), "--out", str(out),
         "--port", "0", "--no-search"],
        stderr=subprocess.PIPE, text=True, cwd=cwd, env={**os.environ, "PYTHONUNBUFFERED": "1"},
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
        yield found.group(1), process, lines
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest.fixture
def server(registry_copy, tmp_path):
    with serving(registry_copy, tmp_path / "site", tmp_path) as (url, process, _):
        yield url, registry_copy, process


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
    # Named as the command line named the registry (by its folder name, as it was given
    # absolute): the status is served, so it holds no absolute path of this machine.
    assert any(line.startswith(f"records/operations/{OPERATION}.json: ") for line in status["problems"]), status
    assert str(records.parent) not in json.dumps(status, ensure_ascii=False)
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
        assert f"records/operations/{OPERATION}.json" in banner.inner_text() and "last good site" in banner.inner_text()
        assert "Reloaded by itself" in page.locator("h1").inner_text()


def _request(url: str, path: str, host: str | None = None) -> tuple[int, bytes]:
    """GET ``path`` as sent, byte for byte (no client-side quoting), with ``host`` as the Host header if given."""
    address = url.removeprefix("http://").rstrip("/")
    connection = http.client.HTTPConnection(address, timeout=10)
    try:
        connection.putrequest("GET", path, skip_host=host is not None)
        if host is not None:
            connection.putheader("Host", host)
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def _stderr_after_stop(process, lines) -> str:
    process.terminate()
    _, rest = process.communicate(timeout=20)
    return "".join(lines) + rest


def test_links_to_files_or_folders_outside_the_site_are_refused(registry_copy, tmp_path):
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "key.txt").write_text("PRIVATE KEY")
    site = tmp_path / "site"
    with serving(registry_copy, site, tmp_path) as (url, process, lines):
        (site / "key.txt").symlink_to(secret / "key.txt")
        (site / "outside").symlink_to(secret)
        (site / "same.css").symlink_to(site / "style.css")  # a link that stays inside is a file of the site
        (site / "pipe").mkdir()
        os.mkfifo(site / "pipe" / "index.html")
        for path in ("/key.txt", "/outside/key.txt", "/outside/", "/pipe/"):
            status, body = _request(url, path)
            assert status == 403 and b"PRIVATE" not in body, (path, status, body)
        assert _request(url, "/same.css") == (200, (site / "style.css").read_bytes())
        assert _request(url, "/")[0] == 200
        assert "Traceback" not in _stderr_after_stop(process, lines)


def test_out_given_as_a_link_serves_the_folder_it_names_at_each_request(registry_copy, tmp_path):
    for generation in ("gen1", "gen2"):
        (tmp_path / generation).mkdir()
        (tmp_path / generation / "index.html").write_text(f"<body>{generation}</body>")
    (tmp_path / "gen2" / "older.html").symlink_to(tmp_path / "gen1" / "index.html")
    link = tmp_path / "site"
    link.symlink_to("gen1")
    # The build into a link is refused (the terminal says why); what the link names is served.
    with serving(registry_copy, link, tmp_path) as (url, process, lines):
        assert b"gen1" in _request(url, "/")[1]
        (tmp_path / "next").symlink_to("gen2")
        os.replace(tmp_path / "next", link)
        assert b"gen2" in _request(url, "/")[1]
        # gen1 is no longer the site: a link into it is a link outside.
        assert _request(url, "/older.html")[0] == 403


def test_only_its_own_host_is_answered(server):
    url, _, _ = server
    port = int(url.rstrip("/").rsplit(":", 1)[1])
    for host in (f"localhost:{port}", f"127.0.0.1:{port}"):
        status, body = _request(url, "/__sitegen/status", host)
        assert status == 200 and "version" in json.loads(body)
    # DNS rebinding: a page of evil.example whose name now resolves to 127.0.0.1.
    for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1:{port + 1}", f"localhost.evil.example:{port}"):
        for path in ("/__sitegen/status", "/", f"/operations/{OPERATION}/"):
            status, body = _request(url, path, host)
            assert status in (403, 421) and b"version" not in body and b"<html" not in body.lower(), (host, path)


def test_bad_urls_get_400_and_no_traceback(registry_copy, tmp_path):
    long = "a" * 256
    with serving(registry_copy, tmp_path / "site", tmp_path) as (url, process, lines):
        for path in ("/%00", "/index.html%00.txt", f"/{long}", f"/operations/{long}/", "/%zz", "/%4", "/%e2%82",
                     "/..%2f..%2fetc/passwd", "/%2e%2e/records/sitegen.toml"):
            status, body = _request(url, path)
            assert status == 400, (path, status, body)
        # 255 bytes is a name a file system takes: looked for, and not found.
        assert _request(url, "/" + "a" * 255)[0] == 404
        assert _request(url, "/")[0] == 200
        stderr = _stderr_after_stop(process, lines)
    assert "Traceback" not in stderr and "Error" not in stderr, stderr


def test_a_path_too_long_for_any_file_system_is_too_long_not_forbidden(registry_copy, tmp_path):
    # 403 would say a file is there and withheld; there is none, and the path is the fault.
    with serving(registry_copy, tmp_path / "site", tmp_path) as (url, process, lines):
        segment = "a" * 250
        status, body = _request(url, "/" + "/".join([segment] * 32))  # 8,032 bytes
        assert (status, body) == (414, b"414 a path over 4,096 bytes\n")
        # Under the URL bound, but past PATH_MAX once below the site's folder: no such page.
        long_below = "/" + "/".join([segment] * 16)  # 4,016 bytes
        assert _request(url, long_below)[0] == 404
        assert _request(url, "/")[0] == 200
        stderr = _stderr_after_stop(process, lines)
    assert "Traceback" not in stderr, stderr



def test_a_busy_port_is_said_at_once_and_nothing_is_built(registry_copy, tmp_path):
    """It built the whole site (minutes on the bundled registry) before saying the port was taken."""
    import socket

    from click.testing import CliRunner

    from sitegen.cli.main import main

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = tmp_path / "site"
        result = CliRunner().invoke(main, ["serve", "--records", str(registry_copy), "--out", str(out), "--port", str(port)])
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines()[0] == f"127.0.0.1:{port}: $: cannot listen: Address already in use"
    assert not out.exists()
