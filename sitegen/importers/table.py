"""Any CSV or JSON Lines of results, with a small TOML map saying which column is what → Reported runs, one per row.

For the harnesses no adapter knows: ``sitegen import table FILE --map MAP.toml``. The map names
the columns of the operation, the implementation, each axis, the value with its statistic and
unit, the GPU and the date (and, if the file has them, other statistics, the dtype and the pass);
TableMap below is its schema, and every problem in it is one line with its TOML path. A row that
cannot be read is one line ``FILE: line N: column: reason``; the other rows still import.
"""

from __future__ import annotations

import csv
import io
import math
import re
import tomllib
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

import click
from pydantic import ValidationError

from sitegen.importers.core import Plan, RowError
from sitegen.importers.harness import SOURCE_OPTIONS, HarnessImporter, Result, nanoseconds, plan_results
from sitegen.core.inputfile import read_regular
from sitegen.format.model.common import Short, Strict
from sitegen.format.model.definitions import Pass
from sitegen.format.model.setup import Statistic
from sitegen.core.problems import InputError, Problem, json_path

MAX_BYTES = 256 * 1024 * 1024
SCALE = {"ns": 1, "us": 1000, "ms": 1_000_000, "s": 1_000_000_000}


class TableMap(Strict):
    """MAP.toml: which column of the table holds what. Every value but ``unit``, ``statistic``, ``harness``,
    ``timer`` and ``pass`` names a column (a CSV header, a JSON Lines key)."""

    format: Literal["csv", "jsonl"] | None = None
    """``csv`` or ``jsonl``; by default from the file's extension (.csv, .jsonl or .ndjson)."""
    operation: Short
    """Column of the operation (benchmark) name."""
    implementation: Short
    """Column of the implementation (provider) name."""
    axes: list[Short] = []
    """Columns of the workload's parameters, in display order."""
    dtype: Short | None = None
    """Column of the element type (fp32, bf16...), if the table has one."""
    value: Short
    """Column of the time that ranks the run."""
    statistic: Statistic = "median"
    """Which statistic ``value`` is: median, mean, min, max or a percentile like p50."""
    unit: Literal["ns", "us", "ms", "s"]
    """Unit of ``value`` and of every column in ``statistics``."""
    statistics: dict[Statistic, Short] = {}
    """Other statistics' columns, e.g. ``{p20 = "ms_20", p80 = "ms_80"}``."""
    gpu: Short | None = None
    """Column of the GPU as its driver names it ("NVIDIA H100 80GB HBM3"); without one, --gpu names it."""
    date: Short
    """Column of when it was measured: an ISO 8601 date and time (no zone: UTC) or a day (its start, UTC)."""
    timed_pass: Short | None = None
    """Column of the timed pass (forward, backward or full), if the table has one."""
    fixed_pass: Pass | None = None
    """The timed pass of every row, where the table has no column of it."""
    where: dict[Short, Short] = {}
    """Only rows whose columns hold these values, e.g. ``{metric_name = "speed"}``; every other row is skipped with one line."""
    harness: Short = "table"
    """Name of the harness that timed the rows (the protocol's)."""
    timer: Short = "unrecorded"
    """Its clock, e.g. ``cuda_events``, if known."""


def read_map(path: Path) -> TableMap:
    """The map at ``path``; InputError with one line per problem (TOML path and reason)."""
    shown = str(path)
    try:
        data = tomllib.loads(read_regular(path, 1024 * 1024, shown).decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError([Problem(shown, "$", f"not UTF-8 text: {exc.reason}")]) from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError([Problem(shown, "$", f"not TOML: {exc}")]) from None
    try:
        return TableMap.model_validate(data)
    except ValidationError as exc:
        raise InputError([Problem(shown, json_path(e["loc"]), e["msg"].removeprefix("Value error, "))
                          for e in exc.errors(include_url=False)]) from None


class Table(HarnessImporter):
    summary = "Any CSV or JSON Lines of results, with --map MAP.toml naming its columns: one BenchmarkRun per row."
    help = ("MAP.toml names the columns of operation, implementation, axes, value (with its statistic and "
            "unit), gpu and date, and optionally dtype, timed_pass and other statistics (docs/ci.md shows one). "
            "Each problem of the map, and each row that cannot be read, is one line.")
    units = "row(s)"
    options = (click.Option(["--map", "map_file"], required=True, metavar="MAP.toml",
                            type=click.Path(path_type=Path, dir_okay=False, exists=True),
                            help="The TOML map of the table's columns."), *SOURCE_OPTIONS)

    def plan(self, path: Path, options: dict[str, Any]) -> Plan:
        plan, shown = Plan(), str(path)
        try:
            mapping = read_map(options["map_file"])
            text = read_regular(path, MAX_BYTES, shown).decode("utf-8-sig")
        except InputError as exc:
            plan.problems.extend(exc.problems)
            return plan
        except UnicodeDecodeError as exc:
            plan.problems.append(Problem(shown, "$", f"not UTF-8 text: {exc.reason}"))
            return plan
        kind = mapping.format or ("jsonl" if path.suffix.lower() in (".jsonl", ".ndjson") else "csv")
        rows = _csv_rows(text, shown, mapping, plan) if kind == "csv" else _jsonl_rows(text, shown, plan)
        results = []
        for line, row in rows:
            other = next(((c, v) for c, v in mapping.where.items() if str(row.get(c, "")).strip() != v), None)
            if other is not None:
                plan.warnings.append(f"{shown}: line {line}: skipped: {other[0]} is {row.get(other[0])!r}, the map takes {other[1]!r}")
                continue
            plan.rows += 1
            try:
                results.append((f"line {line}", _result(row, mapping, f"{path.name}:{line}")))
            except RowError as exc:
                plan.problems.append(Problem(shown, f"line {line}", str(exc)))
        return plan_results(plan, shown, results, self.source(options)[0], options)


def _columns(mapping: TableMap) -> list[str]:
    named = [mapping.operation, mapping.implementation, *mapping.axes, mapping.value, mapping.date,
             *mapping.statistics.values(), mapping.dtype, mapping.gpu, mapping.timed_pass, *mapping.where]
    return list(dict.fromkeys(c for c in named if c))


def _csv_rows(text: str, shown: str, mapping: TableMap, plan: Plan) -> list[tuple[int, dict[str, Any]]]:
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, [])
    except csv.Error as exc:
        plan.problems.append(Problem(shown, "line 1", f"unreadable CSV: {exc}"))
        return []
    missing = [c for c in _columns(mapping) if c not in header]
    if missing:
        plan.problems.extend(Problem(shown, "line 1", f"no column {c!r}, which the map names") for c in missing)
        return []
    rows = []
    while True:
        line = reader.line_num + 1
        try:
            fields = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:
            plan.problems.append(Problem(shown, f"line {line}", f"unreadable CSV: {exc}"))
            break
        if not fields:
            continue
        if len(fields) != len(header):
            plan.rows += 1
            plan.problems.append(Problem(shown, f"line {line}", f"{len(fields)} fields; the header has {len(header)}"))
            continue
        rows.append((line, dict(zip(header, fields))))
    return rows


def _jsonl_rows(text: str, shown: str, plan: Plan) -> list[tuple[int, dict[str, Any]]]:
    from sitegen.core.strictjson import parse_bytes

    rows = []
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            value = parse_bytes(raw.encode("utf-8"), f"{shown}: line {line}")
        except InputError as exc:
            plan.rows += 1
            plan.problems.append(Problem(shown, f"line {line}", f"not JSON: {exc.problems[0].message}"))
            continue
        if not isinstance(value, dict):
            plan.rows += 1
            plan.problems.append(Problem(shown, f"line {line}", "not a JSON object"))
            continue
        rows.append((line, value))
    return rows


def _cell(row: dict[str, Any], column: str) -> Any:
    value = row.get(column)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise RowError(f"{column}: empty" if column in row else f"{column}: missing")
    return value.strip() if isinstance(value, str) else value


def _text(row: dict[str, Any], column: str) -> str:
    value = _cell(row, column)
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise RowError(f"{column}: {value!r} is not text")
    return str(value)


def _number(row: dict[str, Any], column: str) -> float:
    written = value = _cell(row, column)
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise RowError(f"{column}: {value!r} is not a number") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        # The cell as the user wrote it: a CSV's "1e400" parses to inf, which the file never says.
        raise RowError(f"{column}: {written!r} is not a finite number")
    return value


def _axis(row: dict[str, Any], column: str) -> int | float | str | bool:
    """A CSV cell as the number it spells, else its text; a JSON value as it is."""
    value = _cell(row, column)
    if isinstance(value, str):
        if re.fullmatch(r"-?[0-9]{1,15}", value):
            return int(value)
        if re.fullmatch(r"-?[0-9]*\.[0-9]+(e-?[0-9]+)?|-?[0-9]+e-?[0-9]+", value, re.IGNORECASE):
            return float(value)
        return value
    if isinstance(value, (int, float, bool)) and not (isinstance(value, float) and not math.isfinite(value)):
        return value
    raise RowError(f"{column}: {value!r} is not a number, text or boolean")


def _moment(row: dict[str, Any], column: str) -> str:
    text = _text(row, column)
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise RowError(f"{column}: {text!r} is not an ISO 8601 date or date and time") from None
    moment = moment.astimezone(timezone.utc) if moment.tzinfo else moment
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + (f".{moment.microsecond:06d}" if moment.microsecond else "") + "Z"


def _result(row: dict[str, Any], mapping: TableMap, external: str) -> Result:
    scale = SCALE[mapping.unit]
    values = {mapping.statistic: mapping.value, **mapping.statistics}
    latency = {stat: nanoseconds(_number(row, column), scale, column) for stat, column in values.items()
               if stat in ("median", "mean", "min", "max", "p20", "p80", "stdev")}
    measurements = [{"metric": "latency", "statistic": stat, "unit": "ns", "value": nanoseconds(_number(row, column), scale, column)}
                    for stat, column in values.items() if stat not in latency]
    timed_pass = mapping.fixed_pass
    if mapping.timed_pass:
        timed_pass = _text(row, mapping.timed_pass)
        if timed_pass not in ("forward", "backward", "full"):
            raise RowError(f"{mapping.timed_pass}: {timed_pass!r} is not forward, backward or full")
    dtype = _text(row, mapping.dtype) if mapping.dtype else None
    if dtype is not None and not re.fullmatch(r"[a-z][a-z0-9_]{1,15}", dtype):
        raise RowError(f"{mapping.dtype}: {dtype!r} is not a dtype name such as fp32 or bf16")
    protocol = {"harness": {"name": mapping.harness},
                "measurement": {"timer": mapping.timer, "primaryStatistic": mapping.statistic},
                "comparability": {"family": f"table-{mapping.harness}"[:300], "notes": (
                    f"Imported from a table of {mapping.harness} results through a column map: the {mapping.statistic} in "
                    f"{mapping.unit}, as the table states it; how the rows were timed is what {mapping.harness} does.")}}
    metrics = {re.sub(r"[^A-Za-z0-9_.-]", "_", column)[:64] if re.match(r"[A-Za-z_]", column) else f"_{column}"[:64]:
               _number(row, column) for column in values.values()}
    return Result(
        operation=_text(row, mapping.operation), implementation=_text(row, mapping.implementation),
        axes={column: _axis(row, column) for column in mapping.axes}, dtype=dtype, timed_pass=timed_pass,
        timing={"latencyNs": latency, "primaryStatistic": mapping.statistic} if mapping.statistic in latency else None,
        measurements=measurements, observed_at=_moment(row, mapping.date), external_id=external, metrics=metrics,
        hardware=_text(row, mapping.gpu) if mapping.gpu else "", host=not mapping.gpu, protocol=protocol,
    )
