"""The write step of `sitegen rerun`, on its own: new runs (copies of a fixture run under new
names) planned and written into REGISTRY through sitegen.rerun.outcome.records, as the sweep does.

Usage: python rerunwrite.py REGISTRY. A GPU sweep per fault-injection trial would take
minutes; the documents differ, the write path is the one the sweep calls.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

from sitegen.core.problems import InputError
from sitegen.rerun.outcome import records

SEED = "runs/sitegen-h200-tokens2048-2026-08-20.json"
# The fixtures' key, which the fixture registry trusts: the write path signs as `rerun --key` does.
KEY = Path(__file__).resolve().parents[1] / "fixtures" / "keys" / "fixture_ed25519"


def main(out: Path) -> int:
    base = json.loads((out / SEED).read_text())
    runs = []
    for i in range(3):
        doc = copy.deepcopy(base)
        doc["metadata"]["name"] = f"rerun-jsd-fault-{i}"
        doc["spec"]["observedAt"] = f"2026-09-0{i + 1}T00:00:00Z"
        runs.append(doc)
    try:
        records.write_all(out, records.plan_writes(out, [], runs, "jsd", key=KEY))
    except InputError as exc:
        print(exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
