"""Hostile input: special files, malformed values and names. Each case must give exit 1 and
exactly one problem line (``FILE: JSON-PATH: REASON``) that says what is wrong: no traceback,
no hang, no silent acceptance. Used by test_hostile.py (every case) and report.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from helpers import copy_registry

HERE = Path(__file__).resolve().parent
FIXTURE = HERE.parent / "fixtures" / "registry-small"
RUN = "liger-jsd-forward-torch-nvidia-b200-tokens4096-vocab128256-fp32-2026-05-27-17-14-35"
HEADER = ("kernel_name,kernel_provider,metric_name,metric_unit,gpu_name,x_name,x_label,x_value,y_value_50,"
          "y_value_20,y_value_80,extra_benchmark_config_str,kernel_operation_mode,timestamp,liger_version\n")
ROW = 'jsd,liger,speed,ms,NVIDIA H100 80GB HBM3,V,vocab size,4096,1.5,1.4,1.6,"{CONFIG}",forward,2024-10-01 12:00:00,0.3.0\n'


@dataclass
class Case:
    area: str
    name: str
    setup: Callable[[Path], list[str]]
    """Makes the files under a temporary folder; returns the sitegen arguments."""
    expect: str
    """Text the one problem line must hold."""


def registry(tmp: Path) -> Path:
    """The small registry at tmp/records, copied there by the first call (a case's steps call it again)."""
    root = tmp / "records"
    return root if root.exists() else copy_registry(tmp, FIXTURE)


def fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        path.unlink()
    os.mkfifo(path)
    return path


def _build(tmp: Path) -> list[str]:
    return ["build", "--records", str(registry(tmp)), "--out", str(tmp / "site")]


def _verify(tmp: Path) -> list[str]:
    return ["verify", str(registry(tmp))]


def _then(prepare: Callable[[Path], object], command: Callable[[Path], list[str]]) -> Callable[[Path], list[str]]:
    def setup(tmp: Path) -> list[str]:
        registry(tmp)
        prepare(tmp)
        return command(tmp)
    return setup


def _marker(tmp: Path, make: Callable[[Path], object]) -> None:
    site = tmp / "site"
    site.mkdir()
    (site / "index.html").write_text("x")
    make(site / ".sitegen-site")


def _csv(tmp: Path, data: bytes) -> list[str]:
    path = tmp / "data.csv"
    path.write_bytes(data)
    return ["import", "liger", str(path), "--out", str(tmp / "out"), "--published", "2026-01-01"]


def _config_row(config: str) -> bytes:
    return (HEADER + ROW.replace("{CONFIG}", config.replace('"', '""'))).encode()


def _set_json(tmp: Path, relative: str, change: Callable[[dict], None]) -> None:
    path = registry(tmp) / relative
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def _huge_int_json(tmp: Path) -> None:
    path = registry(tmp) / "runs" / f"{RUN}.json"
    text = path.read_text().replace('"median": 9802246', '"median": ' + "9" * 5000, 1)
    path.write_text(text)


def _lock(tmp: Path, change: Callable[[dict], None]) -> None:
    _set_json(tmp, "digests.lock", change)


def _name(kind_file: str, name: str) -> Callable[[Path], list[str]]:
    def setup(tmp: Path) -> list[str]:
        _set_json(tmp, kind_file, lambda d: d["metadata"].__setitem__("name", name))
        return ["validate", str(registry(tmp) / kind_file)]
    return setup


def _deep_toml(depth: int) -> str:
    return "[site]\ntitle = " + "[" * depth + "1" + "]" * depth + "\n"


def _oversized_lock(tmp: Path) -> list[str]:
    from sitegen.registry.lockfile import MAX_LOCK_BYTES

    root = registry(tmp)
    with open(root / "digests.lock", "r+b") as handle:
        handle.truncate(MAX_LOCK_BYTES + 1)
    return ["verify", str(root)]


def _unlocked_tamper(tmp: Path) -> list[str]:
    root = registry(tmp)
    (root / "digests.lock").unlink()
    _set_json(tmp, f"runs/{RUN}.json", lambda d: d["spec"]["timing"]["latencyNs"].__setitem__("median", 1))
    return _build(tmp)


def _link(relative: str, target: str | Callable[[Path], Path]) -> Callable[[Path], None]:
    """Make ``relative`` in the registry a link to ``target`` (a path, or one made under the temporary folder)."""
    def make(tmp: Path) -> None:
        path = registry(tmp) / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() or path.is_symlink():
            path.unlink()
        path.symlink_to(target if isinstance(target, str) else target(tmp))
    return make


def _secret(tmp: Path) -> Path:
    """A file outside the registry that must never be published: a key in a home folder, say."""
    path = tmp / "home" / "id_ed25519"
    path.parent.mkdir(exist_ok=True)
    path.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    return path


def _secret_folder(tmp: Path) -> Path:
    folder = _secret(tmp).parent
    (folder / "diary.md").write_text("# Private\n")
    return folder


def _with(command: Callable[[Path], list[str]], *extra: str) -> Callable[[Path], list[str]]:
    return lambda tmp: [*command(tmp), *extra]


PAGE = "pages/about.md"
DESCRIPTION = "operations/jensen-shannon-divergence.md"


def _out_under_file(tmp: Path) -> list[str]:
    (tmp / "a-file").write_text("x")
    return ["build", "--records", str(registry(tmp)), "--out", str(tmp / "a-file" / "site")]


CASES = [
    # Special files: each would hang (FIFO) or flood memory (/dev/zero) if opened plainly.
    Case("special files", "FIFO as a record", _then(lambda t: fifo(registry(t) / "runs" / "fifo.json"), _verify), "FIFO"),
    Case("special files", "FIFO as digests.lock", _then(lambda t: fifo(registry(t) / "digests.lock"), _verify), "FIFO"),
    Case("special files", "FIFO as sitegen.toml", _then(lambda t: fifo(registry(t) / "sitegen.toml"), _build), "FIFO"),
    Case("special files", "FIFO as a source TOML", _then(lambda t: fifo(registry(t) / "sources" / "liger-kernel-bench.toml"), _build), "FIFO"),
    Case("special files", "FIFO as the site marker", _then(lambda t: _marker(t, fifo), _build), "not built by sitegen"),
    Case("special files", "marker linked to /dev/zero", _then(lambda t: _marker(t, lambda p: p.symlink_to("/dev/zero")), _build), "not built by sitegen"),
    Case("special files", "/dev/zero as sitegen.toml", _then(lambda t: (registry(t) / "sitegen.toml").unlink() or (registry(t) / "sitegen.toml").symlink_to("/dev/zero"), _build), "character device"),
    Case("special files", "/dev/zero as the CSV", lambda t: ["import", "liger", "/dev/zero", "--out", str(t / "out")], "character device"),
    Case("special files", "FIFO as the CSV", lambda t: ["import", "liger", str(fifo(t / "data.csv")), "--out", str(t / "out")], "FIFO"),
    Case("special files", "folder named like a record", _then(lambda t: (registry(t) / "runs" / "dir.json").mkdir(), _verify), "a folder"),
    # Markdown pages and operation descriptions are read as every other input is.
    *[Case("special files", f"{what} as {where}", _then(make, _build), expect)
      for where, relative in (("a site page", PAGE), ("an operation description", DESCRIPTION))
      for what, make, expect in (
          ("FIFO", lambda t, r=relative: fifo(registry(t) / r), "FIFO"),
          ("/dev/urandom", _link(relative, "/dev/urandom"), "character device"),
          ("/dev/zero", _link(relative, "/dev/zero"), "character device"),
          ("link to /proc/self/pagemap", _link(relative, "/proc/self/pagemap"), "outside the registry"))],
    Case("special files", "link to /proc/self/pagemap as a page, --allow-outside-links",
         _then(_link(PAGE, "/proc/self/pagemap"), _with(_build, "--allow-outside-links")), "byte limit"),
    Case("special files", "link to /proc/self/pagemap as a record", _then(_link("runs/x.json", "/proc/self/pagemap"), _build), "outside the registry"),
    # Links out of the registry: refused for every input, not only pages.
    *[Case("links out of the registry", f"{where} linked to a file outside", _then(_link(relative, _secret), command), "outside the registry")
      for where, relative, command in (
          ("a site page", PAGE, _build), ("an operation description", DESCRIPTION, _build),
          ("a record", "runs/x.json", _build), ("a record (verify)", "runs/x.json", _verify),
          ("a record (validate)", "runs/x.json", lambda t: ["validate", str(registry(t))]),
          ("a record (lock)", "runs/x.json", lambda t: ["lock", str(registry(t))]),
          ("sitegen.toml", "sitegen.toml", _build), ("a source TOML", "sources/liger-kernel-bench.toml", _build),
          ("digests.lock", "digests.lock", _verify))],
    Case("links out of the registry", "pages folder linked to a folder outside",
         _then(_link("pages", _secret_folder), _build), "outside the registry"),
    # Malformed values.
    Case("malformed input", "5,000-digit integer in a record", _then(_huge_int_json, _verify), "outside the exact range"),
    Case("malformed input", "5,000-digit integer in sitegen.toml", _then(lambda t: (registry(t) / "sitegen.toml").write_text("[site]\ntitle = " + "9" * 5000 + "\n"), _build), "invalid TOML"),
    Case("malformed input", "5,000-digit integer in a source TOML", _then(lambda t: (registry(t) / "sources" / "liger-kernel-bench.toml").write_text("name = " + "9" * 5000 + "\n"), _build), "invalid TOML"),
    Case("malformed input", "TOML nested 3,000 deep", _then(lambda t: (registry(t) / "sitegen.toml").write_text(_deep_toml(3000)), _build), "nesting too deep"),
    Case("malformed input", "CSV cell of deep JSON", lambda t: _csv(t, _config_row("[" * 3000 + "]" * 3000)), "nesting too deep"),
    Case("malformed input", "CSV cell with a 5,000-digit number", lambda t: _csv(t, _config_row('{"B": ' + "9" * 5000 + "}")), "too long"),
    Case("malformed input", "CSV with a NUL byte", lambda t: _csv(t, _config_row("{}").replace(b"speed", b"sp\0eed")), "line 2: column 13: NUL byte"),
    Case("malformed input", "CSV with invalid UTF-8", lambda t: _csv(t, _config_row("{}").replace(b"speed", b"sp\xffeed")), "line 2: column 13: not UTF-8"),
    Case("malformed input", "lock of formatVersion 999", _then(lambda t: _lock(t, lambda d: d.__setitem__("formatVersion", 999)), _verify), "written by a newer sitegen"),
    Case("malformed input", "lock over its size bound", _oversized_lock, "over the"),
    Case("malformed input", "tampered spec with digests.lock deleted", _unlocked_tamper, "no lock file"),
    Case("malformed input", "--out under a regular file", _out_under_file, "is a file, not a folder"),
    # Names that validate but could not be built, checked out or unzipped everywhere.
    *[Case("names", f"implementation named {n!r}", _name("implementations/torch.json", n), "device name on Windows")
      for n in ("con", "aux.json", "nul", "lpt1", "com9.txt", "prn")],
    *[Case("names", f"implementation named {n!r}", _name("implementations/torch.json", n), "site's own page")
      for n in ("index.html", "index.json")],
    *[Case("names", f"implementation named {n!r}", _name("implementations/torch.json", n), "names become file and URL paths")
      for n in ("Torch", "torch.", "torch ", "a" * 201)],
]


def run_case(case: Case, tmp: Path) -> tuple[bool, str]:
    """Run in a subprocess with a timeout, so a hang is a failure rather than a stuck suite."""
    tmp.mkdir(parents=True, exist_ok=True)
    args = case.setup(tmp)
    try:
        proc = subprocess.run([sys.executable, "-m", "sitegen", *args], capture_output=True, text=True, timeout=30, cwd=tmp)
    except subprocess.TimeoutExpired:
        return False, "hung (30 s)"
    lines = [line for line in proc.stderr.splitlines() if ": " in line and not line.endswith("problem(s) found.") and "warning" not in line and not line.startswith(("imported ", "built "))]
    ok = proc.returncode == 1 and "Traceback" not in proc.stderr and len(lines) == 1 and case.expect in lines[0]
    return ok, proc.stderr.strip()[-400:]
