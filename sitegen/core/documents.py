"""Building a manifest document: the one place that writes the envelope every kind shares."""

from __future__ import annotations

from typing import Any

from sitegen.core.digest import document_digest
from sitegen.core.formatversion import API_VERSION


def document(kind: str, metadata: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """A document of ``kind`` in the current format, keys in the order the layout writes them."""
    return {"apiVersion": API_VERSION, "kind": kind, "metadata": metadata, "spec": spec}


def named(doc: dict[str, Any], stem: str) -> dict[str, Any]:
    """A name that carries a digest fragment: same name always means same content."""
    doc["metadata"]["name"] = f"{stem}-{document_digest(doc)[7:19]}"
    return doc
