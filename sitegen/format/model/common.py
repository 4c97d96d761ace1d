"""Types and building blocks shared by every kind of the kernelindex.dev/v1alpha1 format."""

from __future__ import annotations

import re
from datetime import date, datetime, timezone
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, PlainValidator, StringConstraints, WithJsonSchema

from sitegen.core.formatversion import API_VERSION  # noqa: F401  (re-exported)


class Strict(BaseModel):
    """Base of every model: unknown fields are errors, "1" is never coerced to 1."""

    model_config = ConfigDict(
        extra="forbid", strict=True, frozen=True, use_attribute_docstrings=True,
        populate_by_name=False,
    )


Digest = Annotated[str, StringConstraints(pattern=r"^sha256:[0-9a-f]{64}$")]
"""A document digest: ``sha256:`` and 64 lowercase hex digits."""

# Names become path segments of the site and of registry files, so they admit no
# separators, no leading dot and no "..": a name can never escape its folder. The pattern
# also keeps them lowercase (so no two differ only by case, which would collide on macOS
# and Windows) and never ending in a dot or space (which Windows drops).
Name = Annotated[
    str, StringConstraints(pattern=r"^[a-z0-9](?:[a-z0-9._-]{0,198}[a-z0-9])?$"),
    AfterValidator(lambda v: _portable(_no_dot_dot(v))),
]

# Windows opens these as devices whatever the extension ("con.json" is the console): a
# registry or site holding one cannot be checked out or unzipped there.
WINDOWS_DEVICES = frozenset(
    ["con", "prn", "aux", "nul"] + [f"{port}{n}" for port in ("com", "lpt") for n in range(10)]
)
# Every folder of the site holds its own listing page and JSON twin under these names.
SITE_FILES = frozenset(["index.html", "index.json"])


def _portable(value: str) -> str:
    if value.split(".")[0] in WINDOWS_DEVICES:
        raise ValueError(f"{value.split('.')[0]!r} is a device name on Windows, so the file could not be checked out there")
    if value in SITE_FILES:
        raise ValueError(f"{value!r} is the name of the site's own page in every folder")
    return value

LabelKey = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,62}$")]
Text = Annotated[str, StringConstraints(min_length=1, max_length=20000)]
Short = Annotated[str, StringConstraints(min_length=1, max_length=300)]
HttpUrl = Annotated[str, StringConstraints(pattern=r"^https?://[^\s<>\"]+$", max_length=2000)]
NonNegative = Annotated[float, Field(ge=0)]
NonNegativeInt = Annotated[int, Field(ge=0)]
PositiveInt = Annotated[int, Field(gt=0)]
Commit = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{7,64}$")]
"""A revision hash: 7 to 64 lowercase hex digits."""


def _scalar(value: object) -> int | float | str | bool:
    # A plain validator rather than a union, so one bad value gives one error line.
    if isinstance(value, (bool, int, float, str)):
        return value
    raise ValueError("must be a number, a string or a boolean")


def _number(value: object) -> int | float:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    raise ValueError("must be a number")


Scalar = Annotated[
    int | float | str | bool, PlainValidator(_scalar),
    WithJsonSchema({"type": ["number", "string", "boolean"]}),
]
Number = Annotated[int | float, PlainValidator(_number), WithJsonSchema({"type": "number"})]


def _no_dot_dot(value: str) -> str:
    if ".." in value:
        raise ValueError("must not contain '..'")
    return value


def _timestamp(value: str) -> str:
    # RFC 3339 with an explicit zone; kept as the published string so the digest of a
    # document never depends on how a reader re-serialises dates.
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})", value):
        raise ValueError("must be an RFC 3339 timestamp with a zone, e.g. 2026-05-27T17:14:29Z")
    try:
        # Every reader compares instants in UTC: 0001-01-01T00:00:00+01:00 has none.
        datetime.fromisoformat(value).astimezone(timezone.utc)
    except OverflowError:
        raise ValueError("lies outside the years 1 to 9999 once in UTC") from None
    return value


def _day(value: str) -> str:
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        raise ValueError("must be a date like 2026-05-27")
    date.fromisoformat(value)
    return value


Timestamp = Annotated[str, AfterValidator(_timestamp)]
Day = Annotated[str, AfterValidator(_day)]


class SourceRef(Strict):
    """Where a document's content came from."""

    name: Short
    """Human name of the source, e.g. "Liger-Kernel benchmarks"."""
    url: HttpUrl | None = None
    """Where the source can be read."""
    commit: Commit | None = None
    """Revision of the source that was read."""
    path: Short | None = None
    """File inside the source."""
    license: Short | None = None
    """SPDX identifier of the source's license, e.g. "BSD-2-Clause"."""


class Metadata(Strict):
    """Descriptive data. Not part of a document's identity: the digest ignores it."""

    name: Name
    """Unique name among documents of the same kind; used in file names and URLs."""
    title: Short | None = None
    """Human title."""
    description: Text | None = None
    """Longer human description."""
    labels: dict[LabelKey, Short] | None = None
    """Free key/value labels, e.g. ``{"liger_version": "0.8.0"}``."""
    authors: list[Short] | None = None
    """People or organisations responsible for the document."""
    sourceRefs: list[SourceRef] | None = None
    """Sources the document was taken from."""


# What each pattern above means, for error messages a person can act on.
PATTERN_HELP = {
    r"^sha256:[0-9a-f]{64}$": "must be a digest: 'sha256:' and 64 lowercase hex digits",
    r"^[a-z0-9](?:[a-z0-9._-]{0,198}[a-z0-9])?$": (
        "names become file and URL paths: lowercase letters, digits, '.', '_' and '-', "
        "starting and ending with a letter or digit, at most 200 characters"
    ),
    r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,62}$": "label keys are letters, digits, '.', '_', '/' and '-', at most 63 characters",
    r"^https?://[^\s<>\"]+$": "must be an http:// or https:// URL",
    r"^[0-9a-f]{7,64}$": "must be a commit hash: 7 to 64 lowercase hex digits",
    r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$": "keys are letters, digits, '_', '.' and '-', starting with a letter or '_', at most 64 characters",
    r"^[a-z][a-z0-9_]{1,15}$": "dtypes are short lowercase names such as fp32, bf16, fp16",
    r"^(median|mean|min|max|stdev|p[0-9]{1,2})$": "statistic must be median, mean, min, max, stdev or a percentile like p20",
}
