"""An importer defined only in the tests: one run per line of a JSON Lines file, found through an entry point."""

from __future__ import annotations

import json
from pathlib import Path

from sitegen.importers.core import Plan
from sitegen.importers.harness import HarnessImporter, Result, plan_results


class Toy(HarnessImporter):
    summary = "A test's JSON Lines of {op, impl, ns, at}."

    def plan(self, path: Path, options: dict) -> Plan:
        plan, results = Plan(), []
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            row = json.loads(line)
            plan.rows += 1
            results.append((f"line {number}", Result(
                operation=row["op"], implementation=row["impl"], axes={"n": row["n"]},
                timing={"latencyNs": {"median": row["ns"]}, "primaryStatistic": "median"},
                observed_at=row["at"], external_id=f"{row['op']}/{row['impl']}/{row['n']}", metrics={"ns": row["ns"]},
                hardware="NVIDIA H100 80GB HBM3",
                protocol={"harness": {"name": "toy"}, "measurement": {"timer": "toy", "primaryStatistic": "median"},
                          "comparability": {"family": "toy"}})))
        return plan_results(plan, str(path), results, self.source(options)[0], options)
