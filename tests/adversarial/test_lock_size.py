"""A registry whose digests.lock is over 4 MiB (the bound on manifests) locks, verifies and builds;
a lock over the lock's own bound is refused before any document is loaded, and never written."""

from __future__ import annotations

import json
import shutil

from click.testing import CliRunner

from hostile import FIXTURE
from sitegen.registry import lockfile
from sitegen.cli.main import main
from sitegen.core.strictjson import MAX_FILE_BYTES

WORKLOAD = "workloads/jsd-vocab128256-tokens2048-fp32.json"
# Long names make each lock line about 290 bytes, so 15,000 small documents pass 4 MiB.
DOCUMENTS = 15_000


def big_registry(root):
    shutil.copytree(FIXTURE, root)
    base = json.loads((root / WORKLOAD).read_text())
    folder = root / "workloads" / "many"
    folder.mkdir()
    stem = "jsd-synthetic-" + "x" * 170
    for i in range(DOCUMENTS):
        base["metadata"]["name"] = f"{stem}-{i:05d}"
        base["spec"]["axes"]["tokens"] = 100_000 + i
        (folder / f"{i:05d}.json").write_text(json.dumps(base))
    return root


def test_a_lock_over_4_mib_locks_verifies_and_builds(tmp_path):
    root = big_registry(tmp_path / "records")
    cli = CliRunner()
    locked = cli.invoke(main, ["lock", str(root)])
    assert locked.exit_code == 0, locked.output
    assert (root / "digests.lock").stat().st_size > MAX_FILE_BYTES
    verified = cli.invoke(main, ["verify", str(root)])
    assert verified.exit_code == 0, verified.output
    built = cli.invoke(main, ["build", "--records", str(root), "--out", str(tmp_path / "site")])
    assert built.exit_code == 0, built.output


def test_an_oversized_lock_is_refused_before_loading_and_never_written(tmp_path, monkeypatch):
    root = tmp_path / "records"
    shutil.copytree(FIXTURE, root)
    before = (root / "digests.lock").read_bytes()
    monkeypatch.setattr(lockfile, "MAX_LOCK_BYTES", 1000)
    result = CliRunner().invoke(main, ["lock", str(root)])
    assert result.exit_code == 1 and "over the 1000-byte limit" in result.output
    assert (root / "digests.lock").read_bytes() == before
    # A lock over the bound on disk: one line, before a single document is parsed.
    with open(root / "digests.lock", "r+b") as handle:
        handle.truncate(lockfile.MAX_LOCK_BYTES * 1000)
    (root / "runs" / "broken.json").write_text("{")
    result = CliRunner().invoke(main, ["verify", str(root)])
    lines = [line for line in result.stderr.splitlines() if line.startswith(str(root))]
    assert result.exit_code == 1 and len(lines) == 1 and "digests.lock: $: file is" in lines[0]
