"""Liger-Kernel's and KernelBench's importers as plugins: thin wrappers over each module's plan_import."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from sitegen.importers.core import Plan
from sitegen.importers.plugin import Importer
from sitegen.format.model.common import _day as _check_day


def day_option(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    """A --published value: a calendar date like 2026-08-18, else a usage error."""
    if value is None:
        return None
    try:
        _check_day(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date like 2026-08-18") from None
    return value


class Liger(Importer):
    summary = "Liger-Kernel's all_benchmark_data.csv: one BenchmarkRun per row."
    help = (
        "Writes operations/, workloads/, implementations/, protocols/, environments/, runs/, "
        "sources/liger-kernel-bench.toml and adds the written documents to digests.lock. Files "
        "whose bytes are unchanged are not rewritten, so importing the same CSV twice changes "
        "nothing. The registry is checked first (against its digests.lock, if it has one): if "
        "anything is wrong, nothing is written and every problem is listed. A row that cannot "
        "be mapped is reported as `CSV: line N: reason`; the other rows still import, and the "
        "exit code is 1."
    )
    path_name = "CSV"
    options = (
        click.Option(["--published"], callback=day_option, metavar="YYYY-MM-DD",
                     help="Publication date for sources/liger-kernel-bench.toml (default: the existing file's, "
                          "else the date of the CSV's newest timestamp)."),
    )

    def plan(self, path: Path, options: dict[str, Any]) -> Plan:
        from sitegen.importers.liger import plan_import

        return plan_import(path)

    def source(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        from sitegen.importers.liger import LIGER_SOURCE, SOURCE_ID

        return SOURCE_ID, LIGER_SOURCE


class KernelBench(Importer):
    summary = "KernelBench's baseline timings from a checkout or snapshot: one BenchmarkRun per timing."
    help = (
        "PATH is a KernelBench checkout at one commit (commit and date from git) or a snapshot "
        "of one (from its COMMIT file). Every results/timing/*/baseline_time_*.json timing is "
        "imported: the GPU from its `hardware` string, the shapes read from the problem file "
        "as it is in PATH (parsed, never run), the PyTorch version from "
        "results/timing/README.md. A problem whose inputs cannot be read statically, and a null "
        "timing, are skipped with one line each. Writes as `import liger` does: checked first, "
        "only changed files, digests.lock in the same transaction; sources/kernelbench.toml is "
        "dated by the newest commit imported. Importing the same PATH twice changes nothing."
    )
    path_kind = "folder"
    units = "timing(s)"
    newest_wins = True

    def plan(self, path: Path, options: dict[str, Any]) -> Plan:
        from sitegen.importers.kernelbench import plan_import

        plan, day = plan_import(path)
        # The commit's day dates the source file; plan_import returns it beside the plan.
        plan.newest_day = day
        return plan

    def source(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        from sitegen.importers.kernelbench import KERNELBENCH_SOURCE, SOURCE_ID

        return SOURCE_ID, KERNELBENCH_SOURCE

    def report(self, plan: Plan) -> dict[str, Any]:
        return {"timings": plan.rows, "imported": plan.imported, "notices": len(plan.warnings)}
