"""digests.lock at registry scale: bytes, write and read time for N documents.

    python benchmarks/bench_lock.py [--documents 200000]

Names as long as the bundled records' longest run names (about 90 characters). It
times lock_bytes/checked_lock_bytes (what `sitegen lock` writes) and read_lock (what
build and verify read, strictly parsed, before any document), and prints the size
against the lock's bound and against the 4 MiB bound on manifests.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sitegen.registry.lockfile import LOCK_NAME, MAX_LOCK_BYTES, checked_lock_bytes, read_lock  # noqa: E402
from sitegen.core.strictjson import MAX_FILE_BYTES  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=200_000)
    args = parser.parse_args()
    documents = {
        f"BenchmarkRun/liger-jsd-forward-liger-nvidia-b200-tokens{i:07d}-vocab128256-fp32-2026-05-27-17-14-29":
            f"sha256:{i:064x}" for i in range(args.documents)
    }
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        started = time.perf_counter()
        data = checked_lock_bytes(root, documents)
        (root / LOCK_NAME).write_bytes(data)
        written = time.perf_counter() - started
        started = time.perf_counter()
        read = read_lock(root)
        reading = time.perf_counter() - started
    assert read == documents
    print(f"documents {args.documents}: lock {len(data) / 2**20:.1f} MiB "
          f"({len(data) / MAX_FILE_BYTES:.1f}x the manifest bound, {len(data) / MAX_LOCK_BYTES:.2f}x the lock bound); "
          f"write {written:.2f} s, strict read {reading:.2f} s")


if __name__ == "__main__":
    main()
