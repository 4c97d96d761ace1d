"""Strict JSON reading: the bytes of a manifest to Python values, or one Problem.

The stdlib parser accepts things a registry must not: duplicate keys (last wins),
NaN/Infinity, 1e400 (becomes inf), integers no other JSON reader can hold exactly. We
keep the stdlib's speed and catch those cases through its hooks, marking offenders in
the tree so the error can name the JSON path where it happened.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from sitegen.core.inputfile import read_regular
from sitegen.core.problems import InputError, Problem, json_path

MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 32
# I-JSON (RFC 7493) and RFC 8785 both assume IEEE doubles: beyond 2**53 an integer
# would not survive a round trip through another reader, so its digest would differ.
MAX_SAFE_INTEGER = 2**53 - 1


class _Bad:
    """Placeholder left in the tree by a parser hook; carries the reason."""

    __slots__ = ("reason",)
    made = 0
    """How many marks (a _Bad or a _DuplicateKeys) the hooks have left in any tree so far."""

    def __init__(self, reason: str):
        self.reason = reason
        _Bad.made += 1


class _DuplicateKeys(dict):
    duplicate: str = ""


# Short strings (digests, units, statuses, statistic names) repeat across thousands of
# documents that a build holds at once; one copy of each saves about 1 KB per run.
_SHARED_UP_TO = 96


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            marked = _DuplicateKeys(out)
            marked.duplicate = key
            _Bad.made += 1
            return marked
        out[key] = sys.intern(value) if type(value) is str and len(value) <= _SHARED_UP_TO else value
    return out


def _int(text: str) -> int | _Bad:
    # Checked on the text: int() refuses more than 4,300 digits with a ValueError that
    # json.loads would pass on as a traceback, and no safe integer has 17 digits.
    digits = len(text.lstrip("-"))
    if digits > 16:
        shown = text if len(text) <= 40 else f"{text[:20]}…({digits} digits)"
        return _Bad(f"integer {shown} is outside the exact range ±(2**53 - 1)")
    value = int(text)
    if abs(value) > MAX_SAFE_INTEGER:
        return _Bad(f"integer {text} is outside the exact range ±(2**53 - 1)")
    return value


def _float(text: str) -> float | _Bad:
    if len(text) > 1000:
        return _Bad(f"number of {len(text)} characters is too long")
    value = float(text)
    if value in (float("inf"), float("-inf")):
        return _Bad(f"number {text} overflows a double")
    return value


def _constant(text: str) -> _Bad:
    return _Bad(f"{text} is not valid JSON")


# "\ud800" is valid JSON syntax but no Unicode text: I-JSON (RFC 7493 §2.1) forbids it, it
# cannot be written as UTF-8, and RFC 8785 could not canonicalise it for a digest.
_SURROGATE = "lone surrogate escape (\\ud800-\\udfff) is not Unicode; I-JSON forbids it"


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_PLAIN = (int, float, bool, type(None))


def _find_bad(value: Any, loc: list[str | int]) -> tuple[list[str | int], str] | None:
    if len(loc) > MAX_DEPTH:
        return loc, f"nesting deeper than {MAX_DEPTH} levels"
    if isinstance(value, _Bad):
        return loc, value.reason
    if isinstance(value, _DuplicateKeys):
        return [*loc, value.duplicate], f"duplicate key {value.duplicate!r}"
    if isinstance(value, str):
        return None if _is_unicode(value) else (loc, _SURROGATE)
    if isinstance(value, dict):
        for key in value:
            if not _is_unicode(key):
                return loc, f"object key {ascii(key)}: {_SURROGATE}"
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    # Numbers, booleans and null can hide nothing (a bad one is a _Bad); skipping the call
    # for them saves one call per number. At the depth limit every child is still visited
    # so that the nesting error keeps its path.
    shallow = len(loc) < MAX_DEPTH
    for key, child in items:
        if shallow and child.__class__ in _PLAIN:
            continue
        found = _find_bad(child, [*loc, key])
        if found:
            return found
    return None


def parse_bytes(data: bytes, file: str) -> Any:
    """Parse one JSON text strictly; raise InputError naming the file and JSON path."""

    def fail(path: str, message: str) -> InputError:
        return InputError([Problem(file, path, message)])

    # UTF-8's BOM, and UTF-16's in either byte order (UTF-32LE's starts like UTF-16LE's).
    if data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        raise fail("$", "file starts with a byte-order mark; save it as UTF-8 without BOM")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail("$", f"invalid UTF-8 at byte {exc.start}") from None
    marks = _Bad.made
    try:
        value = json.loads(
            text, object_pairs_hook=_pairs, parse_int=_int, parse_float=_float,
            parse_constant=_constant,
        )
    except json.JSONDecodeError as exc:
        raise fail("$", f"invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
    except RecursionError:
        raise fail("$", f"nesting deeper than {MAX_DEPTH} levels") from None
    # The walk finds marks, lone surrogates and deep nesting. When the hooks left no mark,
    # no escape could make a surrogate (UTF-8 text holds none of its own) and there are
    # too few brackets to nest that deep, it would find nothing: most files skip it.
    if _Bad.made == marks and _SURROGATE_ESCAPE.search(text) is None and text.count("{") + text.count("[") <= MAX_DEPTH:
        return value
    found = _find_bad(value, [])
    if found:
        raise fail(json_path(found[0]), found[1])
    return value


def read_file(path: Path, limit: int = MAX_FILE_BYTES, registry: Path | None = None) -> Any:
    """Read and strictly parse a JSON file: a regular file of at most ``limit`` bytes (inside ``registry`` if given)."""
    return parse_bytes(read_regular(path, limit, registry=registry), str(path))
