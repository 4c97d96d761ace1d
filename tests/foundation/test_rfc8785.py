"""Digests are sha256 over RFC 8785 (JCS) canonical JSON: golden tests with the RFC's own
published examples (https://www.rfc-editor.org/rfc/rfc8785)."""

from __future__ import annotations

import hashlib
import struct

import pytest

from sitegen.core.digest import canonical, document_digest, sha256_digest
from sitegen.core.strictjson import parse_bytes


def _double(bits: str) -> float:
    return struct.unpack(">d", bytes.fromhex(bits))[0]


# RFC 8785 Appendix B, "Number Serialization Samples": IEEE-754 bits → JSON text.
APPENDIX_B = [
    ("0000000000000000", "0"),  # zero
    ("8000000000000000", "0"),  # minus zero
    ("0000000000000001", "5e-324"),  # min pos number
    ("8000000000000001", "-5e-324"),  # min neg number
    ("7fefffffffffffff", "1.7976931348623157e+308"),  # max pos number
    ("ffefffffffffffff", "-1.7976931348623157e+308"),  # max neg number
    ("4340000000000000", "9007199254740992"),  # max pos int
    ("c340000000000000", "-9007199254740992"),  # max neg int
    ("4430000000000000", "295147905179352830000"),  # ~2**68
    ("44b52d02c7e14af5", "9.999999999999997e+22"),
    ("44b52d02c7e14af6", "1e+23"),
    ("44b52d02c7e14af7", "1.0000000000000001e+23"),
    ("444b1ae4d6e2ef4e", "999999999999999700000"),
    ("444b1ae4d6e2ef4f", "999999999999999900000"),
    ("444b1ae4d6e2ef50", "1e+21"),
    ("3eb0c6f7a0b5ed8c", "9.999999999999997e-7"),
    ("3eb0c6f7a0b5ed8d", "0.000001"),
    ("41b3de4355555553", "333333333.3333332"),
    ("41b3de4355555554", "333333333.33333325"),
    ("41b3de4355555555", "333333333.3333333"),
    ("41b3de4355555556", "333333333.3333334"),
    ("41b3de4355555557", "333333333.33333343"),
    ("becbf647612f3696", "-0.0000033333333333333333"),
    ("43143ff3c1cb0959", "1424953923781206.2"),  # round to even
]


@pytest.mark.parametrize(("bits", "expected"), APPENDIX_B)
def test_rfc8785_appendix_b_number_serialization(bits, expected):
    assert canonical(_double(bits)) == expected.encode()


@pytest.mark.parametrize("bits", ["7fffffffffffffff", "7ff0000000000000"])  # Appendix B: NaN, Infinity → error
def test_rfc8785_appendix_b_nan_and_infinity_are_errors(bits):
    with pytest.raises(Exception):
        canonical(_double(bits))


@pytest.mark.parametrize(("bits", "expected"), APPENDIX_B)
def test_number_survives_the_strict_parser(bits, expected):
    # What a manifest author writes (the shortest text of the double) reads back as the
    # same double, so the digest a third party computes from the file matches ours.
    # Integers of magnitude 2**53 and more are refused by the parser (I-JSON), hence the float form.
    value = _double(bits)
    written = repr(value) if value.is_integer() else expected
    assert canonical(parse_bytes(written.encode(), "n.json")) == expected.encode()


def test_rfc8785_section_3_2_2_example():
    # RFC 8785 §3.2.2 (and §3.2.2.x on literals, strings, numbers): the example object
    # parsed from its published text, and its published canonical form.
    source = (
        b'{\n  "numbers": [333333333.33333329, 1E30, 4.50,\n              2e-3, 0.000000000000000000000000001],\n'
        b'  "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",\n'
        b'  "literals": [null, true, false]\n}'
    )
    expected = (
        '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],'
        '"string":"\u20ac$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}'
    ).encode("utf-8")
    assert canonical(parse_bytes(source, "rfc.json")) == expected


def test_rfc8785_section_3_2_3_sorting_example():
    # RFC 8785 §3.2.3: properties sorted by UTF-16 code units; the emoji (D83D DE00)
    # sorts before U+FB33 although its code point is larger.
    source = (
        b'{\n  "\\u20ac": "Euro Sign",\n  "\\r": "Carriage Return",\n'
        b'  "\\ufb33": "Hebrew Letter Dalet With Dagesh",\n  "1": "One",\n'
        b'  "\\ud83d\\ude00": "Emoji: Grinning Face",\n  "\\u0080": "Control",\n'
        b'  "\\u00f6": "Latin Small Letter O With Diaeresis"\n}'
    )
    expected = (
        '{"\\r":"Carriage Return","1":"One","\u0080":"Control",'
        '"\u00f6":"Latin Small Letter O With Diaeresis","\u20ac":"Euro Sign",'
        '"\U0001f600":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}'
    ).encode("utf-8")
    assert canonical(parse_bytes(source, "rfc.json")) == expected


def test_document_digest_is_sha256_of_the_canonical_identity():
    document = {
        "spec": {"family": "loss", "axes": [{"name": "tokens"}], "parameters": {"\u20ac": 1.0, "beta": 1e21}},
        "metadata": {"name": "x", "title": "ignored"},
        "kind": "OperationSpec",
        "apiVersion": "kernelindex.dev/v1alpha1",
    }
    # Written out by hand from RFC 8785's rules: sorted keys, no whitespace, 1.0 → 1, 1e21 → 1e+21.
    identity = (
        '{"apiVersion":"kernelindex.dev/v1alpha1","kind":"OperationSpec",'
        '"spec":{"axes":[{"name":"tokens"}],"family":"loss","parameters":{"beta":1e+21,"\u20ac":1}}}'
    ).encode("utf-8")
    expected = "sha256:" + hashlib.sha256(identity).hexdigest()
    assert document_digest(document) == expected
    assert sha256_digest({k: document[k] for k in ("apiVersion", "kind", "spec")}) == expected
