"""``sitegen serve``: build, serve on 127.0.0.1, rebuild on every change, reload open pages.

A build that fails keeps the last good site on disk (build_site swaps only a complete
site in), so it keeps being served; its problem lines go to the terminal and into a
banner on every open page. Pages learn of a new build or a problem by polling
STATUS_PATH, from a script the server adds to each HTML page it sends (the files on disk
stay as a static host would serve them).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable

import click

from sitegen.site.serve.files import Redirect, Refusal, host_refusal, open_in_site, url_segments

STATUS_PATH = "/__sitegen/status"
STATUS_SEGMENTS = STATUS_PATH.split("/")[1:]

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
    """Answers by sitegen.site.serve.files' rules; never lists a folder, never prints a traceback."""

    state: State
    site: str
    """--out as given, made absolute: resolved again at each request."""
    port: int

    def log_message(self, *args) -> None:
        pass

    def end_headers(self) -> None:
        # A rebuilt page must be fetched again, never taken from the browser's cache.
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def do_HEAD(self) -> None:
        self._answer(head=True)

    def do_GET(self) -> None:
        self._answer(head=False)

    def _answer(self, head: bool) -> None:
        refused = host_refusal(self.headers.get("Host"), self.port)
        segments = url_segments(self.path) if refused is None else refused
        if isinstance(segments, Refusal):
            return self._refuse(segments)
        if segments == STATUS_SEGMENTS:
            return self._send(self.state.snapshot(), "application/json", head)
        found = open_in_site(self.site, segments)
        if isinstance(found, Refusal):
            return self._refuse(found)
        if isinstance(found, Redirect):
            self.send_response(301)
            self.send_header("Location", found.location)
            self.send_header("Content-Length", "0")
            return self.end_headers()
        with os.fdopen(found.fd, "rb") as handle:
            if found.name.endswith(".html"):
                html = handle.read()
                at = html.rfind(b"</body>")
                body = html[:at] + RELOAD_SCRIPT.encode() + html[at:] if at >= 0 else html + RELOAD_SCRIPT.encode()
                return self._send(body, "text/html; charset=utf-8", head)
            self.send_response(200)
            self.send_header("Content-Type", self.guess_type(found.name))
            self.send_header("Content-Length", str(found.size))
            self.end_headers()
            if not head:
                shutil.copyfileobj(handle, self.wfile)

    def _refuse(self, refusal: Refusal) -> None:
        body = f"{refusal.status} {refusal.reason}\n".encode()
        self.send_response(refusal.status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True

    def _send(self, body: bytes, content_type: str, head: bool = False) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        # One line, not socketserver's traceback: a browser that closes a connection early
        # is routine, and nothing a request sends may fill the terminal with a stack.
        kind, exc = sys.exc_info()[:2]
        if kind is not None and not issubclass(kind, (ConnectionError, TimeoutError)):
            click.echo(f"serve: a request failed: {kind.__name__}: {exc}", err=True)


_ABSOLUTE = re.compile(r"(?<![^\s'\"(=])/(?:[^/\s:'\"]+/)*([^/\s:'\"]*)")


def private_paths(records: Path, out: Path) -> Callable[[str], str]:
    """A problem line as the status may show it: no absolute path of this machine.

    Pages on other sites cannot read the status (the Host check), but a page of this site
    can, and a site may be shared by screen or screenshot: the registry and the output are
    named as the command line named them (their folder name if given absolute), any other
    absolute path by its last part.
    """
    names = {}
    for given in (records, out):
        shown = given.name if given.is_absolute() else str(given)
        for form in {str(given.absolute()), str(given.resolve())}:
            names[form] = shown
    longest_first = sorted(names, key=len, reverse=True)

    def hide(line: str) -> str:
        for form in longest_first:
            line = line.replace(form, names[form])
        return _ABSOLUTE.sub(lambda m: "…/" + m.group(1), line)

    return hide


def watched_paths(records: Path) -> list[Path]:
    """The registry (records and sitegen.toml) and the folder the templates are read from."""
    from importlib import resources

    from sitegen.site.render import PACKAGE

    templates = Path(str(resources.files(PACKAGE)))
    return [records, templates]


def _listen(server, port: int, step: Callable[[], None]) -> None:
    """Bind or listen; a refusal (a busy port) is one problem line, with the socket closed."""
    from sitegen.core.problems import InputError, Problem

    try:
        step()
    except OSError as exc:
        server.server_close()
        raise InputError([Problem(f"127.0.0.1:{port}", "$", f"cannot listen: {exc.strerror or exc}")]) from None


def serve(records: Path, out: Path, *, port: int, build: Callable[[], None], echo=click.echo) -> None:
    """Serve ``out`` on 127.0.0.1:``port`` (0: any free port), running ``build`` now and on every change."""
    from watchfiles import watch

    from sitegen.core.problems import InputError

    state = State()
    hide = private_paths(records, out)

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
            state.failed([hide(line) for line in lines])
            echo(f"{reason}: the site does not build; still serving the last good one:", err=True)
            for line in lines:
                echo(f"  {line}", err=True)
            return
        state.built()
        echo(f"{reason}: rebuilt", err=True)

    # The port is taken before the first build and listened on after it: a busy port is said at
    # once, not after minutes of building the site.
    server = Server(("127.0.0.1", port), Handler, bind_and_activate=False)
    server.RequestHandlerClass = type("BoundHandler", (Handler,), {"state": state, "site": str(out.absolute())})
    _listen(server, port, server.server_bind)
    rebuild("start")
    out.mkdir(parents=True, exist_ok=True)
    _listen(server, port, server.server_activate)
    server.RequestHandlerClass.port = server.server_address[1]
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
