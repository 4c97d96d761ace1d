"""Format versions: bring documents of older apiVersions to the current one.

Each entry maps an older apiVersion to a function returning the document in the next
version; ``migrate`` applies them in turn. v1alpha1 is the first version, so the table
is empty, but loading goes through here so a v1alpha2 never breaks old registries.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sitegen.core.formatversion import API_VERSION
from sitegen.core.problems import InputError, Problem

MIGRATIONS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {}


def migrate(document: dict[str, Any], file: str, where: str) -> dict[str, Any]:
    version = document.get("apiVersion")
    # isinstance first: an apiVersion of [] or {} is unhashable and would raise TypeError.
    while isinstance(version, str) and version in MIGRATIONS:
        document = MIGRATIONS[version](document)
        version = document.get("apiVersion")
    if version != API_VERSION:
        supported = ", ".join([API_VERSION, *MIGRATIONS])
        path = "$.apiVersion" if where == "$" else f"{where}.apiVersion"
        raise InputError([Problem(file, path, f"unknown apiVersion {version!r}; supported: {supported}")])
    return document
