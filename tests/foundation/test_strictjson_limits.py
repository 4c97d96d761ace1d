"""The strict reader's limits, each at its edge: the last accepted input and the first refused.

Written from the rules (docs/record-format.md, "Input is parsed strictly"), not from the code:
every test feeds bytes to the public reader and checks what a user sees, the value read or
the one problem line (file, JSON path, reason). The bad-manifest corpus checks one case of
each kind through the CLI and only part of each reason; these pin the boundaries and the
exact wording.
"""

from __future__ import annotations

import os

import pytest

from sitegen.core.problems import InputError, Problem
from sitegen.core.strictjson import MAX_DEPTH, MAX_SAFE_INTEGER, parse_bytes, read_file

FILE = "m.json"
SURROGATE = "lone surrogate escape (\\ud800-\\udfff) is not Unicode; I-JSON forbids it"
BOM = "file starts with a byte-order mark; save it as UTF-8 without BOM"


def refused(data: bytes | str, file: str = FILE) -> list[Problem]:
    if isinstance(data, str):
        data = data.encode("utf-8")
    with pytest.raises(InputError) as caught:
        parse_bytes(data, file)
    return caught.value.problems


def only(path: str, message: str, file: str = FILE) -> list[Problem]:
    return [Problem(file, path, message)]


def out_of_range(shown: str) -> str:
    return f"integer {shown} is outside the exact range ±(2**53 - 1)"


# Integers: exact in every reader up to 2**53 - 1, refused beyond.

def test_the_largest_safe_integers_are_read_exactly():
    assert MAX_SAFE_INTEGER == 2**53 - 1 == 9007199254740991
    value = parse_bytes(b'{"a": 9007199254740991, "b": -9007199254740991}', FILE)
    assert value == {"a": 2**53 - 1, "b": -(2**53 - 1)}
    assert type(value["a"]) is int and type(value["b"]) is int


@pytest.mark.parametrize("text", ["9007199254740992", "-9007199254740992", "9999999999999999"])
def test_one_past_the_safe_range_is_refused(text):
    # 16 digits like MAX_SAFE_INTEGER: refused on its value, not its length.
    assert refused(f'{{"spec": {{"n": {text}}}}}') == only("$.spec.n", out_of_range(text))


@pytest.mark.parametrize("digits", [17, 40])
def test_integers_of_17_to_40_characters_are_shown_whole(digits):
    text = "1" + "0" * (digits - 1)
    assert refused(f"[{text}]") == only("$[0]", out_of_range(text))


def test_longer_integers_are_shown_shortened_with_their_digit_count():
    text = "12345678901234567890" + "9" * 21  # 41 digits
    assert refused(f'{{"n": {text}}}') == only("$.n", out_of_range("12345678901234567890…(41 digits)"))
    # The count is of digits: a minus sign is shown but not counted.
    assert refused(f'{{"n": -{text}}}') == only("$.n", out_of_range("-1234567890123456789…(41 digits)"))
    huge = "7" * 5000  # past int()'s 4,300-digit limit: still one clean problem
    assert refused(f'{{"n": {huge}}}') == only("$.n", out_of_range("7" * 20 + "…(5000 digits)"))


# Other numbers: a text of at most 1000 characters, and a finite double.

def test_a_number_text_of_1000_characters_is_read():
    text = "1." + "0" * 997 + "5"
    assert len(text) == 1000
    assert parse_bytes(f'{{"x": {text}}}'.encode(), FILE) == {"x": 1.0}


def test_a_number_text_of_1001_characters_is_refused():
    text = "1." + "0" * 998 + "5"
    assert refused(f'{{"x": {text}}}') == only("$.x", "number of 1001 characters is too long")


@pytest.mark.parametrize("text", ["1e400", "-1e400", "1.5e309", "-2E999"])
def test_numbers_beyond_a_double_are_refused(text):
    assert refused(f'{{"spec": {{"w": {text}}}}}') == only("$.spec.w", f"number {text} overflows a double")


def test_the_largest_doubles_are_read():
    assert parse_bytes(b"[1.7976931348623157e308, -1.7976931348623157e308]", FILE) == [
        1.7976931348623157e308, -1.7976931348623157e308]


# Nesting: a value at most MAX_DEPTH keys or indices below the top.

def test_nesting_to_the_limit_is_read():
    assert MAX_DEPTH == 32
    value = parse_bytes(("[" * 32 + "1" + "]" * 32).encode(), FILE)
    for _ in range(32):
        value = value[0]
    assert value == 1
    innermost: list = []  # 32 below the top, and empty
    for _ in range(32):
        innermost = [innermost]
    assert parse_bytes(("[" * 33 + "]" * 33).encode(), FILE) == innermost
    assert refused("[" * 34 + "]" * 34) == only("$" + "[0]" * 33, "nesting deeper than 32 levels")


@pytest.mark.parametrize("leaf", ["1", "true", "null", "2.5"])
def test_a_number_or_constant_one_level_too_deep_is_refused(leaf):
    assert refused("[" * 33 + leaf + "]" * 33) == only("$" + "[0]" * 33, "nesting deeper than 32 levels")


def test_objects_one_level_too_deep_are_refused_with_their_path():
    text = '{"a": ' * 33 + "0" + "}" * 33
    assert refused(text) == only("$" + ".a" * 33, "nesting deeper than 32 levels")
    deepest: object = 0
    for _ in range(32):
        deepest = {"a": deepest}
    assert parse_bytes(('{"a": ' * 32 + "0" + "}" * 32).encode(), FILE) == deepest


# Byte-order marks: each kind refused with the same one line, not as invalid UTF-8.

@pytest.mark.parametrize("bom", [
    pytest.param(b"\xef\xbb\xbf", id="utf-8"),
    pytest.param(b"\xff\xfe", id="utf-16-le"),
    pytest.param(b"\xfe\xff", id="utf-16-be"),
    pytest.param(b"\xff\xfe\x00\x00", id="utf-32-le"),
])
def test_a_byte_order_mark_is_refused_as_such(bom):
    body = "{}".encode("utf-8") if bom == b"\xef\xbb\xbf" else b"{\x00}\x00"
    assert refused(bom + body) == only("$", BOM)


def test_text_encoded_as_utf16_be_names_the_byte_order_mark():
    assert refused('{"a": 1}'.encode("utf-16-be")) != only("$", BOM)  # no mark: not this problem
    assert refused(b"\xfe\xff" + '{"a": 1}'.encode("utf-16-be")) == only("$", BOM)


# Lone surrogates: in a value the path names the value; in a key, the object holding it.

def test_a_surrogate_in_an_object_key_names_the_key_and_its_object():
    assert refused(b'{"spec": {"ok": 1, "bad\\udc00key": 2}}') == only(
        "$.spec", f"object key 'bad\\udc00key': {SURROGATE}")


def test_a_surrogate_in_a_value_names_the_value():
    assert refused(b'{"spec": {"author": ["x", "\\ud83d"]}}') == only("$.spec.author[1]", SURROGATE)


def test_a_surrogate_pair_is_one_character_and_is_read():
    assert parse_bytes(b'{"\\ud83d\\ude00": "\\ud83d\\ude00"}', FILE) == {"\U0001f600": "\U0001f600"}


# Duplicate keys, alone or beside another fault in the same file.

def test_a_duplicate_key_is_refused_when_the_file_has_another_fault_too():
    # The reader skips its check of the tree when its hooks marked nothing; one mark each from
    # two hooks must never read as none.
    assert refused(b'{"beta": NaN, "kind": "a", "kind": "b"}') == only("$.kind", "duplicate key 'kind'")
    assert refused(b'{"kind": "a", "kind": "b", "x": [1e400]}') == only("$.kind", "duplicate key 'kind'")


def test_two_faults_in_values_report_the_first():
    assert refused(b'{"a": NaN, "b": Infinity}') == only("$.a", "NaN is not valid JSON")


# read_file: the same reader over a regular file, its size bound, and the registry's edge.

def test_read_file_reads_and_names_the_file(tmp_path):
    good = tmp_path / "good.json"
    good.write_bytes(b'{"n": 9007199254740991}')
    assert read_file(good) == {"n": 9007199254740991}
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"n": 9007199254740992}')
    with pytest.raises(InputError) as caught:
        read_file(bad)
    assert caught.value.problems == only("$.n", out_of_range("9007199254740992"), file=str(bad))


def test_read_file_keeps_to_its_limit(tmp_path):
    file = tmp_path / "big.json"
    file.write_bytes(b"[" + b" " * 20 + b"]")
    assert read_file(file, limit=22) == []
    with pytest.raises(InputError) as caught:
        read_file(file, limit=21)
    assert caught.value.problems == only("$", "file is 22 bytes, over the 21-byte limit", file=str(file))


def test_read_file_refuses_a_link_out_of_the_registry(tmp_path):
    registry = tmp_path / "registry"
    registry.mkdir()
    outside = tmp_path / "outside.json"
    outside.write_bytes(b"{}")
    link = registry / "run.json"
    link.symlink_to(outside)
    assert read_file(link) == {}  # no registry given: any regular file
    with pytest.raises(InputError) as caught:
        read_file(link, registry=registry)
    real = os.path.realpath(outside)
    assert caught.value.problems == only(
        "$", f"is a link to {real}, outside the registry; pass --allow-outside-links to read it", file=str(link))
