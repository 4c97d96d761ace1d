"""One user-facing error: the file, the JSON path inside it, and the reason.

Every failure caused by input (a bad manifest, a broken reference, a bad CSV row) is a
Problem. Commands print one line per Problem and exit 1; they never show a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Problem:
    file: str
    path: str
    message: str

    def line(self) -> str:
        return f"{self.file}: {self.path}: {self.message}"

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


def _quote(key: str) -> str:
    escaped = key.replace("\\", "\\\\").replace("'", "\\'")
    return f"'{escaped}'"
