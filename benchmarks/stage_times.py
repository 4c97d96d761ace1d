"""Where one `sitegen build` spends its time, stage by stage, without a profiler's overhead.

    python3 benchmarks/stage_times.py --records R --out S --no-search

Runs the build in this process (as `python -m sitegen build ARGS`) and prints, on stderr, the
seconds since start at which each progress stage began ("checking for changes", "loading
and checking records", "indexing", ...), after the imports, and at the end. The gaps between
the lines are the stages' times (benchmarks/results/attest.txt quotes them for one rebuild
after an attest). Interpreter teardown is not included: `sitegen` skips it (cli.Group.main).
"""

from __future__ import annotations

import sys
import time

START = time.perf_counter()

from sitegen.cli.main import main  # noqa: E402
from sitegen.core.progress import Progress  # noqa: E402
import sitegen.site.build  # noqa: E402,F401  (imported here so that the import time is its own line)


def _stamp(text: str) -> None:
    print(f"{time.perf_counter() - START:6.2f} s  {text}", file=sys.stderr)


def run() -> None:
    stage = Progress.stage

    def timed_stage(self, description: str, total: int | None = None) -> None:
        _stamp(description)
        stage(self, description, total)

    Progress.stage = timed_stage
    _stamp("imported")
    try:
        main(["build", *sys.argv[1:]], standalone_mode=False)
    finally:
        _stamp("end")


if __name__ == "__main__":
    run()
