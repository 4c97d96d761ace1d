"""Characters XML 1.0 forbids, in every field that reaches an XML output, never make one
unreadable: each feed, sitemap, badge and chart parses with xml.etree, each feed with
feedparser (not bozo), and the character shows as U+FFFD where it was."""

from __future__ import annotations

import json

import pytest

from xmlchars import FORBIDDEN, broken_outputs, build, seeded_registry, xml_outputs

# Where each seeded field shows in the site-wide feed (xmlchars.seeded_registry puts it there).
SHOWN = {
    "site title": "sitegen\ufffdregistry",
    "GPU product": "NVIDIA H200\ufffd rev",
    "GPU architecture": "sm_90\ufffda",
    "implementation name": "sitegen Triton JSD\ufffd impl",
    "operation title": "Jensen\ufffdShannon",
    "unit": "MiB\ufffdx",
}
# The feed's summary folds runs of whitespace into one space, and Python counts U+000B and
# U+001F as whitespace: there the unit reads "MiB x".
SUMMARY_SPACE = "MiB x"


@pytest.mark.parametrize("char", FORBIDDEN, ids=[f"U+{ord(c):04X}" for c in FORBIDDEN])
def test_every_xml_output_parses_with_a_forbidden_character_in_each_field(char, tmp_path):
    site = build(seeded_registry(tmp_path, char), tmp_path / "site")
    outputs = xml_outputs(site)
    kinds = {name.rsplit(".", 1)[-1].split("#")[0] for name in outputs}
    assert {"xml", "svg"} <= kinds and any("#svg" in name for name in outputs)  # feeds, sitemap, badges, charts
    assert broken_outputs(site) == []
    feed = (site / "feed.xml").read_text(encoding="utf-8")
    for field, shown in SHOWN.items():
        assert (SUMMARY_SPACE if field == "unit" and char.isspace() else shown) in feed, field
    # One badge per implementation (issue 49), a row per operation x GPU: the GPU's name is in it.
    assert "H200\ufffd rev" in (site / "badges" / "sitegen-triton" / "badges.svg").read_text()
    assert all(char.encode() not in data for data in outputs.values())
    # Only the XML outputs change the text: the JSON a program reads keeps the record as written.
    catalog = "".join(p.read_text(encoding="utf-8") for p in sorted((site / "catalog").rglob("*.jsonl")))
    assert json.dumps(f"JSD{char} impl")[1:-1] in catalog and json.dumps(f"H200{char} rev")[1:-1] in catalog
