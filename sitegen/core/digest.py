"""Document identity: sha256 over the RFC 8785 canonical JSON of {apiVersion, kind, spec}.

``metadata`` is deliberately outside the digest: titles and labels can be corrected
without changing what a record is. RFC 8785 (JCS) fixes key order and number formatting,
which ``json.dumps(sort_keys=True)`` does not (it sorts keys by code point rather than
UTF-16 units and prints numbers such as 1e21 or 1.0 differently from ECMAScript), so
third parties in any language get the same digest.
"""

from __future__ import annotations

import hashlib
import json
import re
from functools import lru_cache
from typing import Any

import rfc8785

from sitegen.core.formatversion import API_VERSION


# Where the stdlib's compact, key-sorted output could differ from RFC 8785: a float that
# Python prints with an exponent ("1e-05", "1e+16") or a ".0" ("1.0", "-0.0"), which
# ECMAScript prints otherwise. Every other float prints as str(f) in both (rfc8785 itself
# starts from str(f)). The pattern may also match inside a string; that only costs the
# slow path.
_FLOAT_MAY_DIFFER = re.compile(r"[0-9](?:\.0(?:[,\]}]|$)|e[+-])")
_LAST_BMP = "\uffff"


def canonical(value: Any) -> bytes:
    """RFC 8785 canonical JSON bytes of any JSON value.

    The C encoder of the stdlib gives the same bytes whenever nothing can differ: it
    escapes exactly the characters RFC 8785 escapes, in the same forms, and orders keys by
    code point, which is UTF-16 order as long as no character lies beyond the Basic
    Multilingual Plane. Otherwise, and for the floats above, the pure-Python rfc8785
    decides. Input here comes from the strict parser: integers within ±(2**53 - 1), no
    NaN or infinities, no lone surrogates.
    """
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)
    if (text.isascii() or max(text) <= _LAST_BMP) and _FLOAT_MAY_DIFFER.search(text) is None:
        return text.encode("utf-8")
    return rfc8785.dumps(value)


def sha256_digest(value: Any) -> str:
    return "sha256:" + hashlib.sha256(canonical(value)).hexdigest()


def document_digest(document: dict[str, Any]) -> str:
    """Digest of a document (a parsed manifest), from its identity fields only."""
    return sha256_digest(
        {"apiVersion": document["apiVersion"], "kind": document["kind"], "spec": document["spec"]}
    )


@lru_cache(maxsize=1 << 16)
def comparison_key(
    *, operation: str, workload: str, timed_pass: str, family: str, product: str,
    architecture: str, metric: str,
) -> str:
    """The cohort: runs with the same key are ranked against each other.

    The implementation is deliberately absent (implementations are what a cohort
    compares), and the GPU product is present (results on different GPUs never rank
    together). Cached: the runs of one cohort, a few each, share their key.
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
