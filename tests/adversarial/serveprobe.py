"""`sitegen serve` probed as a hostile page or a curious user would: links out of the site,
foreign Host headers (DNS rebinding), malformed URLs. Used by report.py; the same rules have
their own tests in tests/site/test_site_serve.py.
"""

from __future__ import annotations

import http.client
import os
import re
import subprocess
import sys
from pathlib import Path

from hostile import registry


def _request(port: int, path: str, host: str | None) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.putrequest("GET", path, skip_host=True)
        connection.putheader("Host", host if host is not None else f"127.0.0.1:{port}")
        connection.endheaders()
        response = connection.getresponse()
        return response.status, response.read()
    except (OSError, http.client.HTTPException) as exc:
        return 0, repr(exc).encode()
    finally:
        connection.close()


def serve_trials(tmp: Path) -> list[tuple[str, bool, str]]:
    """(area, ok, detail) per probe of one running server."""
    tmp.mkdir(parents=True, exist_ok=True)
    records, site = registry(tmp), tmp / "site"
    secret = tmp / "secret"
    secret.mkdir()
    (secret / "key.txt").write_text("PRIVATE")
    process = subprocess.Popen([sys.executable, "-m", "sitegen", "serve", "--records", str(records), "--out", str(site),
                                "--port", "0", "--no-search"], stderr=subprocess.PIPE, text=True, cwd=tmp,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    trials: list[tuple[str, bool, str]] = []
    try:
        port = None
        while port is None:
            line = process.stderr.readline()
            if not line:
                return [("serve", False, "serve exited before serving")]
            found = re.search(r"serving http://127\.0\.0\.1:(\d+)/", line)
            port = int(found.group(1)) if found else None
        (site / "key.txt").symlink_to(secret / "key.txt")
        (site / "away").symlink_to(secret)
        os.mkfifo(site / "fifo.html")
        expect = [("serve: links and special files", path, None, {403}) for path in ("/key.txt", "/away/key.txt", "/away/", "/fifo.html")]
        expect += [("serve: foreign Host", path, host, {403, 421})
                   for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1:{port + 1}", "", f"localhost:{port}.evil.example")
                   for path in ("/", "/__sitegen/status")]
        expect += [("serve: malformed URLs", path, None, {400})
                   for path in ("/%00", "/a%00.html", "/" + "a" * 256, "/runs/" + "b" * 300 + "/", "/%zz", "/%4", "/%c3%28",
                                "/..%2f..%2fetc/passwd", "/%2e%2e/secret/key.txt", "/a\\..\\b")]
        expect += [("serve: own pages still served", path, host, {200})
                   for path, host in (("/", None), ("/__sitegen/status", f"localhost:{port}"), ("/style.css", None))]
        for area, path, host, statuses in expect:
            status, body = _request(port, path, host)
            ok = status in statuses and b"PRIVATE" not in body and str(tmp).encode() not in body
            trials.append((area, ok, f"{path[:60]} Host={host!r}: {status}"))
    finally:
        process.terminate()
        _, rest = process.communicate(timeout=20)
    trials.append(("serve: malformed URLs", "Traceback" not in rest, f"server terminal: {rest[-300:]!r}"))
    return trials
