"""Importers as plugins: the Importer base class, and finding one by name, entry point or pkg.module:Name.

Part of the importers' shared core (core.py holds the plan, its validation and the write): an
importer is a class that reads its source into a core.Plan and declares, as data, what the
``sitegen import`` command needs to run it: its name and summary, whether it reads a file or a
folder, the options it takes, and the sources/<id>.toml its records cite. The command
(sitegen.cli.imports) knows no importer by name: Liger-Kernel's and KernelBench's are found the way a
third party's is, as ``sitegen.importers`` entry points (sitegen's own are also listed in
BUILTIN, as the operations' are, so a checkout run without reinstalling still finds them).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import click

from sitegen.importers.core import Plan
from sitegen.core.problems import InputError, Problem

IMPORTERS_GROUP = "sitegen.importers"
# Shipped with sitegen; an installed sitegen also declares them as entry points (pyproject).
BUILTIN = {
    "google-benchmark": "sitegen.importers.google_benchmark:GoogleBenchmark",
    "kernelbench": "sitegen.importers.builtin:KernelBench",
    "liger": "sitegen.importers.builtin:Liger",
    "nvbench": "sitegen.importers.nvbench:NVBench",
    "table": "sitegen.importers.table:Table",
    "tritonbench": "sitegen.importers.tritonbench:TritonBench",
    "pytest-benchmark": "sitegen.importers.pytest_benchmark:PytestBenchmark",
}


class Importer:
    """Subclass, fill in the class attributes and implement ``plan``.

    ``plan`` reads ``path`` and returns every unit's documents (core.accept), the problems
    (one core.Problem per unit that cannot be imported, naming file, JSON path or line, and
    why) and warnings (one line per unit skipped on purpose, with why). It writes nothing:
    the command checks the registry and writes the plan in one transaction.
    """

    name: ClassVar[str] = ""
    """What ``sitegen import NAME`` calls it; set from the entry point's name when found through one."""
    summary: ClassVar[str]
    """One line: what it imports (``sitegen import --list`` prints it)."""
    help: ClassVar[str] = ""
    """The rest of ``sitegen import NAME -h`` after the summary."""
    path_kind: ClassVar[str] = "file"
    """``file`` or ``folder``: what PATH must be."""
    path_name: ClassVar[str] = "PATH"
    """How the usage line names PATH."""
    units: ClassVar[str] = "row(s)"
    """What the report counts, e.g. ``benchmark(s)``."""
    options: ClassVar[tuple[click.Parameter, ...]] = ()
    """Options it takes besides --out, --json and --allow-outside-links; their values reach ``plan``."""
    newest_wins: ClassVar[bool] = False
    """The source file's date is the later of the existing one and the data's newest day (snapshots in any order)."""

    def plan(self, path: Path, options: dict[str, Any]) -> Plan:
        raise NotImplementedError

    def source(self, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        """(id, fields) of the sources/<id>.toml the records cite (every Source field but ``published``)."""
        raise NotImplementedError

    def published(self, options: dict[str, Any]) -> str | None:
        """The source's date given on the command line, if any (else the existing file's, else the data's newest day)."""
        return options.get("published")

    def report(self, plan: Plan) -> dict[str, Any]:
        """The counts --json prints besides what was written."""
        return {"rows": plan.rows, "imported": plan.imported, "failed": plan.rows - plan.imported}


def _entry_points() -> dict[str, Any]:
    from sitegen.operations import entry_points

    return entry_points(IMPORTERS_GROUP)


def known() -> dict[str, str]:
    """Every importer name found → its "module:Name": sitegen's own, then installed entry points."""
    out = dict(BUILTIN)
    for name, ep in _entry_points().items():
        out.setdefault(name, ep.value)
    return dict(sorted(out.items()))


def load(ref: str) -> Importer:
    """The importer ``ref`` names (a known name or pkg.module:Name), instantiated; InputError (one line) otherwise."""
    from sitegen.operations import import_target

    targets = known()
    target = targets.get(ref) or (ref if ":" in ref else None)
    if target is None:
        raise InputError([Problem("import", "$", f"unknown importer {ref!r}; known: {', '.join(targets)}, "
                                                  "or pkg.module:Name (sitegen import --list)")])
    obj = import_target(target, "import")
    if not (isinstance(obj, type) and issubclass(obj, Importer)):
        raise InputError([Problem("import", "$", f"{target} is not a subclass of sitegen.importers.plugin.Importer")])
    importer = obj()
    if ref in targets:
        importer.name = ref
    elif not importer.name:
        importer.name = target
    return importer
