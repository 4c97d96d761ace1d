"""The site's own JSON (page twins, catalog lines, samples): sorted keys, compact, deterministic."""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass


_NAMES: dict[type, tuple[str, ...]] = {}


def _fields(value) -> dict:
    # What dataclasses.asdict would give for this one level, without its deep copy of
    # every nested value (7.5% of a large build): the encoder recurses by itself. The
    # field names are looked up once per class: listings hold hundreds of thousands of rows.
    kind = type(value)
    names = _NAMES.get(kind)
    if names is None:
        if not is_dataclass(value) or isinstance(value, type):
            raise TypeError(f"{kind.__name__} is not JSON serializable")
        names = _NAMES[kind] = tuple(f.name for f in fields(value))
    return {name: getattr(value, name) for name in names}


def to_json(data) -> bytes:
    """Our own data, page models included: sorted keys, so output never depends on construction order.

    Compact, one line: without ``indent`` json uses its C encoder, several times faster
    on the large listing pages.
    """
    return (json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=_fields) + "\n").encode()


def twin(path: str) -> str:
    """The JSON twin of an HTML page: …/index.html → …/index.json."""
    return path.removesuffix("index.html") + "index.json"
