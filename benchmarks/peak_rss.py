"""Peak memory of one sitegen command: its own process and its largest forked worker.

    python benchmarks/peak_rss.py lock /tmp/r60k

Runs the command in this process (as `python -m sitegen` would) and prints both figures on
stderr when it ends, whatever its exit. /usr/bin/time's maximum RSS cannot tell them apart:
it reports the largest process of the tree.
"""

import resource
import sys

from sitegen.cli.main import main

try:
    main(sys.argv[1:], prog_name="sitegen", standalone_mode=False)
finally:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"peak RSS: sitegen {own:.0f} MiB, largest worker {workers:.0f} MiB", file=sys.stderr)
