"""Files and folders of manifests → validated documents, or every Problem found.

A file holds one document, or a bundle ``{"run", "protocol", "environment"}`` shaped
like the canonical manifest on a record page.
"""

from __future__ import annotations

import json
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

# The models (pydantic) are imported where a document is validated, not here: `lock`, `verify`
# and `attest` of an unchanged registry take every document from the build state and never
# validate one, and importing the models was a quarter of such a command.

from sitegen.core.digest import document_digest
from sitegen.core.problems import InputError, Problem, json_path
from sitegen.core.inputfile import read_regular
from sitegen.core.strictjson import MAX_FILE_BYTES, parse_bytes

if TYPE_CHECKING:
    from pydantic import ValidationError

    from sitegen.format.model import Document



@dataclass(frozen=True)
class Record:
    """One validated document and where it came from."""

    file: str
    pointer: str
    source: bytes
    """The document as parsed (and migrated), as compressed compact JSON: a tenth of the
    memory of the parsed dict, which a registry of 60,000 runs would otherwise hold until the end."""
    model: Document
    digest: str

    @property
    def raw(self) -> dict[str, Any]:
        """The document as parsed, keys in file order: a new dict on every call."""
        return json.loads(zlib.decompress(self.source))

    @property
    def kind(self) -> str:
        return self.model.kind

    @property
    def name(self) -> str:
        return self.model.metadata.name

    def reference(self, fields: tuple[str, ...]) -> str:
        """The digest at ``spec.<fields>`` (registry.REFERENCES names them)."""
        value = self.model.spec
        for name in fields:
            value = getattr(value, name)
        return value

    def same_document(self, other: Record) -> bool:
        return self.raw == other.raw

    @property
    def signature(self) -> str | None:
        """A run's metadata.signature (sitegen.core.signing)."""
        return getattr(self.model.metadata, "signature", None)

    @property
    def observed(self) -> str | None:
        """A run's spec.observedAt."""
        return getattr(self.model.spec, "observedAt", None)


_MESSAGES = {
    "extra_forbidden": "unknown field",
    "missing": "missing required field",
}


def validation_problems(exc: ValidationError, file: str, prefix: tuple[str, ...], extra: str = "unknown field") -> list[Problem]:
    """pydantic's errors as Problems, worded alike for records and settings files."""
    from sitegen.format.model.common import PATTERN_HELP

    seen: dict[str, str] = {}
    for error in exc.errors(include_url=False):
        loc = error["loc"]
        message = extra if error["type"] == "extra_forbidden" else _MESSAGES.get(error["type"], error["msg"].removeprefix("Value error, "))
        if error["type"] == "string_pattern_mismatch":
            message = PATTERN_HELP.get(error["ctx"]["pattern"], message)
        # pydantic locates a bad dict key as (..., key, "[key]"); the key itself is the path.
        if loc[-1:] == ("[key]",):
            loc, message = loc[:-1], f"invalid key: {message}"
        path = json_path([*prefix, *loc])
        seen.setdefault(path, message)
    return [Problem(file, path, message) for path, message in seen.items()]


def validate_document(raw: Any, file: str, prefix: tuple[str, ...] = ()) -> Record:
    """Validate one parsed document; raise InputError with its problems."""
    from pydantic import ValidationError

    from sitegen.format.migrate import migrate
    from sitegen.format.model import KINDS

    where = json_path(prefix)

    def fail(sub: str, message: str) -> InputError:
        return InputError([Problem(file, json_path([*prefix, *([sub] if sub else [])]), message)])

    if not isinstance(raw, dict):
        raise fail("", "a document must be a JSON object")
    raw = migrate(raw, file, where)
    kind = raw.get("kind")
    model = KINDS.get(kind) if isinstance(kind, str) else None
    if model is None:
        raise fail("kind", f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    try:
        validated = model.model_validate(raw, strict=True)
    except ValidationError as exc:
        raise InputError(validation_problems(exc, file, prefix)) from None
    if kind == "BenchmarkRun":
        from sitegen.rules.recompute import disagreements

        wrong = disagreements(validated.spec)
        if wrong:
            raise InputError([Problem(file, json_path([*prefix, *path]), reason) for path, reason in wrong])
    # A JSON round trip gives back the same dict: the strict parser admits only what
    # json.dumps writes back exactly (finite floats, integers within ±(2**53 - 1), no lone surrogates).
    source = zlib.compress(json.dumps(raw, ensure_ascii=False, separators=(",", ":")).encode(), 1)
    return Record(file, where, source, validated, document_digest(raw))


def load_file(path: Path, registry: Path | None = None) -> list[Record]:
    """Every document of one file (one, or three for a bundle); one found in the folder ``registry`` must lie inside it."""
    return load_bytes(read_regular(path, MAX_FILE_BYTES, registry=registry), str(path))


def load_bytes(data: bytes, name: str) -> list[Record]:
    """Every document of a file's bytes; ``name`` is the file, for problems."""
    from sitegen.format.model import BUNDLE_KINDS, KINDS

    raw = parse_bytes(data, name)
    if isinstance(raw, dict) and "kind" not in raw and set(raw) & set(BUNDLE_KINDS):
        unknown = sorted(set(raw) - set(BUNDLE_KINDS))
        if unknown:
            raise InputError([Problem(name, json_path([unknown[0]]), "unknown bundle key; a bundle holds run, protocol and environment")])
        records, problems = [], []
        for key in BUNDLE_KINDS:
            if key not in raw:
                problems.append(Problem(name, json_path([key]), "missing bundle member"))
                continue
            member = raw[key]
            # Checked before validation: validating a protocol as the run it claims to be
            # would list every field of the wrong model instead of the one real mistake.
            kind = member.get("kind") if isinstance(member, dict) else None
            if isinstance(kind, str) and kind in KINDS and kind != BUNDLE_KINDS[key]:
                problems.append(Problem(name, json_path([key, "kind"]), f"bundle member {key!r} must be a {BUNDLE_KINDS[key]}"))
                continue
            try:
                record = validate_document(member, name, (key,))
            except InputError as exc:
                problems.extend(exc.problems)
                continue
            # A migration may rename a kind, which the check above, made on the member as
            # written, cannot see.
            if record.kind != BUNDLE_KINDS[key]:
                problems.append(Problem(name, json_path([key, "kind"]), f"bundle member {key!r} must be a {BUNDLE_KINDS[key]}"))
            records.append(record)
        if problems:
            raise InputError(problems)
        return records
    return [validate_document(raw, name)]


def discover(paths: list[Path]) -> list[Path]:
    """Manifest files under the given files and folders, sorted; hidden folders skipped."""
    return [file for file, _ in found_in(paths)]


def found_in(paths: list[Path]) -> list[tuple[Path, Path | None]]:
    """What discover finds, each with the folder it was found in (None for a file named itself)."""
    found: list[tuple[Path, Path | None]] = []
    for path in paths:
        if path.is_dir():
            found.extend((path / relative, path) for relative in manifests(path))
        else:
            found.append((path, None))
    return found


def manifest_names(root: Path) -> list[tuple[str, str]]:
    """(str(root / relative), relative) of every manifest below the folder ``root``, as discover finds them.

    Without a Path per file: the caches need only the two names, and at 60,000 files
    making the Paths took as long as the walk.
    """
    base = str(root)
    if base == ".":
        return [(relative, relative) for relative in manifests(root)]
    return [(os.path.join(base, relative), relative) for relative in manifests(root)]


def manifests(root: Path) -> list[str]:
    """What ``sorted(root.rglob("*.json"))`` finds, hidden names aside, relative and "/"-separated.

    The same walk as Python 3.11's rglob (linked folders are not entered, a folder that
    cannot be listed is skipped) and the same order (by path parts), without a Path per
    entry: on a registry of 60,000 runs rglob took seconds.
    """
    found: list[tuple[str, ...]] = []
    pending: list[tuple[tuple[str, ...], str]] = [((), str(root))]
    while pending:
        parts, folder = pending.pop()
        try:
            with os.scandir(folder) as listing:
                entries = list(listing)
        except PermissionError:
            continue
        for entry in entries:
            if entry.name.startswith("."):
                continue
            if entry.name.endswith(".json"):
                found.append((*parts, entry.name))
            try:
                inside = entry.is_dir() and not entry.is_symlink()
            except OSError:
                inside = False
            if inside:
                pending.append(((*parts, entry.name), entry.path))
    found.sort()
    return ["/".join(parts) for parts in found]


def load_paths(paths: list[Path]) -> tuple[list[Record], list[Problem]]:
    """Load everything, collecting every problem instead of stopping at the first."""
    records: list[Record] = []
    problems: list[Problem] = []
    for file, folder in found_in(paths):
        if not file.exists():
            problems.append(Problem(str(file), "$", "no such file or folder"))
            continue
        try:
            # A file named on the command line is read wherever it is; one found in a folder only inside it.
            records.extend(load_file(file, folder))
        except InputError as exc:
            problems.extend(exc.problems)
    return records, sorted(problems)
