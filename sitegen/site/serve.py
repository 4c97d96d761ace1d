"""``sitegen serve``: build, serve on 127.0.0.1, rebuild on every change, reload open pages.

A build that fails keeps the last good site on disk (build_site swaps only a complete
site in), so it keeps being served; its problem lines go to the terminal and into a
banner on every open page. Pages learn of a new build or a problem by polling
STATUS_PATH, from a script the server adds to each HTML page it sends (the files on disk
stay as a static host would serve them).
"""

from __future__ import annotations

import functools
import json
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable

import click

STATUS_PATH = "/__sitegen/status"

RELOAD_SCRIPT = """<script>
(function () {
  var seen = null;
  function banner(problems) {
    var el = document.getElementById("sitegen-problems");
    if (!problems.length) { if (el) { el.remove(); } return; }
    if (!el) {
      el = document.createElement("pre");
      el.id = "sitegen-problems";
      el.setAttribute("role", "alert");
      el.style.cssText = "position:fixed;left:0;right:0;bottom:0;margin:0;max-height:40vh;overflow:auto;z-index:99;" +
        "background:#a40e26;color:#fff;padding:0.75rem;white-space:pre-wrap;font:0.85rem ui-monospace,monospace";
      document.body.appendChild(el);
    }
    el.textContent = "The last edit does not build; showing the last good site.\\n" + problems.join("\\n");
  }
  function poll() {
    fetch("%s", {cache: "no-store"}).then(function (r) { return r.json(); }).then(function (s) {
      if (seen !== null && s.version !== seen) { location.reload(); return; }
      seen = s.version;
      banner(s.problems);
    }).catch(function () {}).then(function () { setTimeout(poll, 500); });
  }
  poll();
})();
</script>
""" % STATUS_PATH


class State:
    """The served build's version (bumped on each good build) and the last failed build's problems."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.version = 0
        self.problems: list[str] = []

    def snapshot(self) -> bytes:
        with self.lock:
            return json.dumps({"version": self.version, "problems": self.problems}).encode()

    def built(self) -> None:
        with self.lock:
            self.version += 1
            self.problems = []

    def failed(self, problems: list[str]) -> None:
        with self.lock:
            self.problems = problems


class Handler(SimpleHTTPRequestHandler):
    state: State

    def log_message(self, *args) -> None:
        pass

    def end_headers(self) -> None:
        # A rebuilt page must be fetched again, never taken from the browser's cache.
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def do_GET(self) -> None:
        if self.path.split("?")[0] == STATUS_PATH:
            return self._send(self.state.snapshot(), "application/json")
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            if not self.path.split("?")[0].endswith("/"):
                return super().do_GET()  # the standard redirect to the folder's URL
            path = path / "index.html"
        if path.suffix == ".html" and path.is_file():
            html = path.read_bytes()
            marker = b"</body>"
            at = html.rfind(marker)
            body = html[:at] + RELOAD_SCRIPT.encode() + html[at:] if at >= 0 else html + RELOAD_SCRIPT.encode()
            return self._send(body, "text/html; charset=utf-8")
        return super().do_GET()

    def _send(self, body: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def watched_paths(records: Path) -> list[Path]:
    """The registry (records and sitegen.toml) and the folder the templates are read from."""
    from importlib import resources

    from sitegen.site.render import PACKAGE

    templates = Path(str(resources.files(PACKAGE)))
    return [records, templates]


def serve(records: Path, out: Path, *, port: int, build: Callable[[], None], echo=click.echo) -> None:
    """Serve ``out`` on 127.0.0.1:``port`` (0: any free port), running ``build`` now and on every change."""
    from watchfiles import watch

    from sitegen.problems import InputError

    state = State()

    def rebuild(reason: str) -> None:
        try:
            build()
        except InputError as exc:
            lines = [p.line() for p in exc.problems]
        except Exception as exc:  # a template error, say: shown like a record's problem, the server stays up
            where = f"{exc.filename}:{exc.lineno}: " if getattr(exc, "lineno", None) else ""
            lines = [f"{where}{type(exc).__name__}: {exc}"]
        else:
            lines = None
        if lines is not None:
            state.failed(lines)
            echo(f"{reason}: the site does not build; still serving the last good one:", err=True)
            for line in lines:
                echo(f"  {line}", err=True)
            return
        state.built()
        echo(f"{reason}: rebuilt", err=True)

    rebuild("start")
    out.mkdir(parents=True, exist_ok=True)
    handler = type("BoundHandler", (Handler,), {"state": state})
    server = ThreadingHTTPServer(("127.0.0.1", port), functools.partial(handler, directory=str(out.resolve())))
    stop = threading.Event()

    def watcher() -> None:
        for changes in watch(*watched_paths(records), stop_event=stop, debounce=300):
            names = sorted({Path(p).name for _, p in changes})
            rebuild("changed " + ", ".join(names[:3]) + (" …" if len(names) > 3 else ""))

    thread = threading.Thread(target=watcher, daemon=True)
    thread.start()
    echo(f"serving http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)", err=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        stop.set()
        server.server_close()
