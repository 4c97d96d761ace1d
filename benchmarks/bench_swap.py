"""How the build's swap behaves for a reader: renameat2(RENAME_EXCHANGE) against two renames.

    python benchmarks/bench_swap.py [--swaps 2000]

Two small sites are swapped in and out of one --out path, ``--swaps`` times per method,
while a second process opens ``--out/index.html`` in a tight loop. It prints, per method,
the time per swap (the two-renames loop does a third rename to bring the pair back, as
the next build would) and how many of the reader's opens found no site at all. Both numbers
come from this one run; compare the methods with each other, not across machines.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sitegen.site.engine.swap import exchange  # noqa: E402


def _reader(path: str, stop, counts) -> None:
    opened = missing = 0
    while not stop.is_set():
        try:
            with open(path, "rb"):
                opened += 1
        except FileNotFoundError:
            missing += 1
    counts[0], counts[1] = opened, missing


def _two_renames(new: Path, out: Path, old: Path) -> None:
    os.rename(out, old)
    os.rename(new, out)
    os.rename(old, new)  # keep the pair for the next swap, as a new build would bring one


def measure(method: str, swaps: int, scratch: Path) -> tuple[float, int, int]:
    out, new, old = scratch / f"{method}-site", scratch / f"{method}-new", scratch / f"{method}-old"
    for folder, text in ((out, "a"), (new, "b")):
        folder.mkdir()
        (folder / "index.html").write_text(text)
    stop, counts = multiprocessing.Event(), multiprocessing.Array("q", 2)
    reader = multiprocessing.Process(target=_reader, args=(str(out / "index.html"), stop, counts))
    reader.start()
    time.sleep(0.2)
    started = time.perf_counter()
    for _ in range(swaps):
        if method == "exchange":
            if not exchange(new, out):
                raise SystemExit("renameat2(RENAME_EXCHANGE) is not available here")
        else:
            _two_renames(new, out, old)
    elapsed = time.perf_counter() - started
    time.sleep(0.1)
    stop.set()
    reader.join()
    return elapsed / swaps * 1e6, counts[0], counts[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--swaps", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        print(f"{'method':<14} {'µs/swap':>8} {'reader opens':>13} {'found no site':>14}")
        for method in ("exchange", "two-renames"):
            per_swap, opened, missing = measure(method, args.swaps, Path(scratch))
            print(f"{method:<14} {per_swap:>8.1f} {opened + missing:>13} {missing:>14}")


if __name__ == "__main__":
    main()
