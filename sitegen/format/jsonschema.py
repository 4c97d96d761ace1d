"""JSON Schemas of every kind, generated from the pydantic models (never written by hand)."""

from __future__ import annotations

import json
from importlib import resources

from sitegen.format.model import API_VERSION, KINDS

SCHEMA_BASE = "https://kernelindex.dev/schemas/v1alpha1/"


def schema_of(kind: str) -> dict:
    schema = KINDS[kind].model_json_schema(mode="validation")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{SCHEMA_BASE}{kind}.schema.json",
        "x-apiVersion": API_VERSION,
        **schema,
    }


def schema_files() -> dict[str, bytes]:
    """File name → bytes of every kind's schema, deterministic."""
    return {
        f"{kind}.schema.json": (json.dumps(schema_of(kind), indent=2, sort_keys=True) + "\n").encode()
        for kind in sorted(KINDS)
    }


def committed_schema_files() -> dict[str, bytes]:
    """The schemas shipped in the package (sitegen/format/schemas/), to detect drift."""
    folder = resources.files("sitegen.format") / "schemas"
    return {item.name: item.read_bytes() for item in folder.iterdir() if item.name.endswith(".schema.json")}
