"""Several sitegen processes writing to one registry, or building into one --out, at once."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from besides import beside

HERE = Path(__file__).resolve().parent
FIXTURE = HERE.parent / "fixtures" / "registry-small"


def _start(args: list[str], **env: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "sitegen", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env={**os.environ, **env})


def concurrent_attests(tmp: Path, writers: int) -> tuple[bool, str]:
    """``writers`` attests on every run at once: every note must be on disk and in the lock."""
    root = tmp / "records"
    shutil.copytree(FIXTURE, root)
    runs = sorted(p.stem for p in (root / "runs").glob("*.json"))
    jobs = [_start(["attest", runs[i % len(runs)], "--kind", "reproduced", "--note", f"writer {i + 1} reproduced it",
                    "--date", "2026-09-01", "--records", str(root)]) for i in range(writers)]
    results = [(job.wait(timeout=120), job.stderr.read()) for job in jobs]
    if any(code != 0 for code, _ in results):
        return False, "; ".join(err for code, err in results if code)[-400:]
    lock = json.loads((root / "digests.lock").read_text())["documents"]
    notes = sorted(p.stem for p in (root / "attestations").glob("*.json"))
    locked = sorted(k.split("/", 1)[1] for k in lock if k.startswith("Attestation/"))
    verify = subprocess.run([sys.executable, "-m", "sitegen", "verify", str(root)], capture_output=True, text=True)
    ok = len(notes) == writers + 1 and notes == locked and verify.returncode == 0
    return ok, f"{len(notes)} notes on disk, {len(locked)} locked; verify: {verify.stderr[-200:]}"


def lock_timeout(tmp: Path) -> tuple[bool, str]:
    """A writer that cannot get the lock in time says so in one line and changes nothing."""
    root = tmp / "records"
    shutil.copytree(FIXTURE, root)
    before = (root / "digests.lock").read_bytes()
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        job = _start(["lock", str(root)], SITEGEN_LOCK_TIMEOUT="1")
        code, err = job.wait(timeout=60), job.stderr.read()
    finally:
        os.close(fd)
    ok = (code == 1 and "waiting for another sitegen command" in err and "still writing to this registry" in err
          and "Traceback" not in err and (root / "digests.lock").read_bytes() == before)
    return ok, err[-300:]


def concurrent_builds(tmp: Path, builders: int) -> tuple[bool, str]:
    """Builds into one --out at once: each succeeds, a complete site remains, nothing is left over but its standby."""
    out = tmp / "site"
    jobs = [_start(["build", "--records", str(FIXTURE), "--out", str(out)]) for _ in range(builders)]
    results = [(job.wait(timeout=180), job.stderr.read()) for job in jobs]
    leftovers = [n for n in beside(tmp) if n not in ("site", ".site.standby-*")]
    from sitegen.site.engine.marker import read_marker as _read_marker

    marker = _read_marker(out) or []
    complete = bool(marker) and all((out / f).is_file() for f in marker)
    ok = all(code == 0 for code, _ in results) and complete and not leftovers
    return ok, f"exits {[c for c, _ in results]}, leftovers {leftovers}, {results[0][1][-200:]}"
