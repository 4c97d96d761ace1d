"""CSV downloads keep every cell one cell, and none a spreadsheet evaluates (issue 47.2): an
implementation name and a GPU product holding a carriage return and `=cmd|...` after it split
runs.csv and the cohort tables (since issue 49, runs.csv alone) into rows that began with the formula."""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

from click.testing import CliRunner

from sitegen.cli.main import main
from sitegen.site.outputs.downloads import COLUMNS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "rules"))
from registry import RuleRegistry  # noqa: E402

NAME = "Triton\r=cmd|' /C calc'!A0"
PRODUCT = "NVIDIA H200\n@SUM(1+1)*cmd|' /C calc'!A0\r\n-2+3"
FORMULA = ("=", "+", "-", "@", "\t", "\r", "\n")


def _site(tmp: Path) -> Path:
    rules = RuleRegistry(tmp / "records")
    rules.amend("implementations", "sitegen-triton", lambda spec: spec.__setitem__("name", NAME))
    rules.amend("environments", "sitegen-nvidia-h200", lambda spec: spec["hardware"].__setitem__("product", PRODUCT))
    rules.run("hostile-1", rules.template["spec"]["implementationDigest"], [1000 + k for k in range(41)])
    rules.index()
    site = tmp / "site"
    built = CliRunner().invoke(main, ["build", "--records", str(rules.root), "--out", str(site)])
    assert built.exit_code == 0, built.output
    return site


def test_a_name_with_line_breaks_and_a_formula_stays_one_cell_that_no_spreadsheet_evaluates(tmp_path):
    site = _site(tmp_path)
    tables = sorted(site.rglob("*.csv"))
    assert tables and all(t.name == "runs.csv" for t in tables)
    seen = 0
    for table in tables:
        data = table.read_bytes().decode("utf-8")
        rows = list(csv.reader(io.StringIO(data, newline="")))
        assert all(len(row) == len(COLUMNS) for row in rows), (table, [len(r) for r in rows])
        header = [name for name, _ in COLUMNS]
        assert rows[0] == header
        for row in rows[1:]:
            cells = dict(zip(header, row))
            if cells["run"] == "hostile-1":
                seen += 1
                # The text is kept, each line that would start a formula guarded with an apostrophe.
                assert cells["implementation"] == "Triton\r'=cmd|' /C calc'!A0"
                assert cells["gpu"] == "NVIDIA H200\n'@SUM(1+1)*cmd|' /C calc'!A0\r\n'-2+3"
            for cell in row:
                assert not cell.startswith(FORMULA), (table, cell)
        # A reader that splits at every line break, as a naive import does, meets no formula either.
        for line in data.replace("\r", "\n").split("\n"):
            assert not line.lstrip('"').startswith(FORMULA[:5]), (table, line)
    assert seen == 1  # one row per run: the operation's runs.csv
