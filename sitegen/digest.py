"""Document identity: sha256 over the RFC 8785 canonical JSON of {apiVersion, kind, spec}.

``metadata`` is deliberately outside the digest: titles and labels can be corrected
without changing what a record is. RFC 8785 (JCS) fixes key order and number formatting,
which ``json.dumps(sort_keys=True)`` does not (it sorts keys by code point rather than
UTF-16 units and prints numbers such as 1e21 or 1.0 differently from ECMAScript), so
third parties in any language get the same digest.
"""

from __future__ import annotations

import hashlib
from typing import Any

import rfc8785

from sitegen.formatversion import API_VERSION


def canonical(value: Any) -> bytes:
    """RFC 8785 canonical JSON bytes of any JSON value."""
    return rfc8785.dumps(value)


def sha256_digest(value: Any) -> str:
    return "sha256:" + hashlib.sha256(canonical(value)).hexdigest()


def document_digest(document: dict[str, Any]) -> str:
    """Digest of a document (a parsed manifest), from its identity fields only."""
    return sha256_digest(
        {"apiVersion": document["apiVersion"], "kind": document["kind"], "spec": document["spec"]}
    )


def comparison_key(
    *, operation: str, workload: str, timed_pass: str, family: str, product: str,
    architecture: str, metric: str,
) -> str:
    """The cohort: runs with the same key are ranked against each other.

    The implementation is deliberately absent (implementations are what a cohort
    compares), and the GPU product is present (results on different GPUs never rank
    together).
    """
    return sha256_digest({
        "apiVersion": API_VERSION,
        "kind": "ComparisonKey",
        "spec": {
            "operationSpecDigest": operation,
            "workloadDigest": workload,
            "timedPass": timed_pass,
            "comparabilityFamily": family,
            "hardware": {"product": product, "architecture": architecture},
            "metric": metric,
        },
    })
