"""sitegen's canonical JSON takes a fast path through the stdlib encoder; it must give
byte for byte what the pure-Python rfc8785 package gives, for any JSON value the strict
parser can produce, and for every document of the bundled registry."""

from __future__ import annotations

from pathlib import Path

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.core.digest import canonical
from sitegen.format.loader import discover
from sitegen.core.strictjson import read_file

EXACT = 2**53 - 1
RECORDS = Path(__file__).resolve().parents[2] / "records"

# Lone surrogates are refused by the strict parser and are not text; everything else is in.
text = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)
scalars = st.one_of(st.none(), st.booleans(), st.integers(-EXACT, EXACT),
                    st.floats(allow_nan=False, allow_infinity=False), text)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(text, inner, max_size=5)), max_leaves=30)


@settings(max_examples=2000, deadline=None)
@given(values)
def test_same_bytes_as_rfc8785_for_any_value(value):
    assert canonical(value) == rfc8785.dumps(value)


@pytest.mark.parametrize("value", [
    1.0, -0.0, 0.0, 1e16, 1e21, 1e-5, 1e-7, 5e-324, 123456789012345.5, 0.0001, 9007199254740992.0,
    {"\U0001f600": 1, "\uffff": 2, "a": 3}, {"\ue000": 1, "\U00010000": 2},
    ["\x00\x1f\x7f\u2028\"\\/\b\f\n\r\t"], {"k": [1.5, 2.0]}, {"k": "1.0]"},
])
def test_same_bytes_as_rfc8785_at_the_edges(value):
    assert canonical(value) == rfc8785.dumps(value)


def test_same_bytes_for_every_bundled_document():
    files = discover([RECORDS])
    assert len(files) > 2000
    for file in files:
        value = read_file(file)
        assert canonical(value) == rfc8785.dumps(value), file


@pytest.mark.parametrize("value", [
    {"naïve": "é", "k": [1.5, -2, "\u2028"]}, {"\uffff": "\uffff"}, ["\ue000", "日本語"],
])
def test_text_within_the_basic_multilingual_plane_takes_the_fast_path(value, monkeypatch):
    # The fast path is what makes digesting a large registry cheap: any text whose characters
    # all lie in the BMP (through U+FFFF itself), ASCII or not, never needs the slow encoder.
    import sitegen.core.digest as digest

    expected = rfc8785.dumps(value)
    monkeypatch.setattr(digest.rfc8785, "dumps", lambda _: pytest.fail("slow path taken"))
    assert canonical(value) == expected
