"""The site's own JSON (page twins, catalog lines, samples): sorted keys, compact, deterministic."""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass


def _fields(value) -> dict:
    # What dataclasses.asdict would give for this one level, without its deep copy of
    # every nested value (7.5% of a large build): the encoder recurses by itself.
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in fields(value)}
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def to_json(data) -> bytes:
    """Our own data, page models included: sorted keys, so output never depends on construction order.

    Compact, one line: without ``indent`` json uses its C encoder, several times faster
    on the large listing pages.
    """
    return (json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=_fields) + "\n").encode()


def twin(path: str) -> str:
    """The JSON twin of an HTML page: …/index.html → …/index.json."""
    return path.removesuffix("index.html") + "index.json"
