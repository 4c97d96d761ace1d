"""One user-facing error: the file, the JSON path inside it, and the reason.

Every failure caused by input (a bad manifest, a broken reference, a bad CSV row) is a
Problem. Commands print one line per Problem and exit 1; they never show a traceback.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Problem:
    file: str
    path: str
    message: str

    def line(self) -> str:
        """The one line a command prints: control characters in names (a folder called "a\\nb") escaped."""
        return f"{escape(self.file)}: {self.path}: {escape(self.message)}"

    def as_dict(self) -> dict[str, str]:
        return {"file": self.file, "path": self.path, "message": self.message}


class InputError(Exception):
    """Raised with every Problem found, so a command can report them all at once."""

    def __init__(self, problems: list[Problem]):
        super().__init__("\n".join(p.line() for p in problems))
        self.problems = sorted(problems)


def json_path(loc: tuple[str | int, ...] | list[str | int]) -> str:
    """Render a location as a JSONPath: ``$.spec.tensors[0].shape``."""
    out = "$"
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.isidentifier():
            out += f".{part}"
        else:
            out += "[" + _quote(part) + "]"
    return out


_SHORT_ESCAPES = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape(text: str) -> str:
    """``text`` with control characters and line or paragraph separators escaped (\\n, \\u2028)."""
    if text.isprintable():
        return text
    return "".join(_escaped(char) for char in text)


def _escaped(char: str) -> str:
    if char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    return f"\\u{ord(char):04x}" if unicodedata.category(char) in ("Cc", "Zl", "Zp") else char


def _quote(key: str) -> str:
    # As RFC 9535 normalized paths: control characters escaped, so a key holding a line
    # break can never split a problem's one line in two.
    return "'" + "".join("\\" + char if char in "\\'" else _escaped(char) for char in key) + "'"

