"""What the site hands to other programs parses as intended: BibTeX (re-parsed with
bibtexparser), CITATION.cff (with PyYAML), and the copy-paste attest command (run by bash)."""

from __future__ import annotations

import html
import json
import re
import subprocess
from pathlib import Path

import bibtexparser
import yaml

from helpers import build, lock as _relock
from hostile import RUN, registry

INJECTED_URL = "https://example.org/}},note={INJECTED"


def _build(root: Path, out: Path, *extra: str) -> Path:
    build(root, out, *extra)  # must exit 0
    return out


def test_bibtex_entries_keep_their_fields_whatever_the_base_url_and_title(tmp_path):
    root = registry(tmp_path)
    (root / "sitegen.toml").write_text(f'[site]\ntitle = "Bench }} {{ \\\\ % title"\nbase_url = "{INJECTED_URL}"\n')
    site = _build(root, tmp_path / "site")
    page = (site / "runs" / RUN / "index.html").read_text()
    [entry_text] = re.findall(r"@misc\{.*?\n\}", html.unescape(page), re.S)
    library = bibtexparser.parse_string(entry_text)
    assert not library.failed_blocks
    [entry] = library.entries
    assert sorted(entry.fields_dict) == ["author", "howpublished", "note", "title", "year"]
    assert "INJECTED" in entry.fields_dict["howpublished"].value  # kept inside the URL, not a field


def test_citation_cff_is_valid_yaml_with_control_characters(tmp_path):
    root = registry(tmp_path)
    (root / "sitegen.toml").write_text('[site]\ntitle = "Bench\\u0007: {x} # \\"y\\""\nlicense = "MIT\\u0001"\n')
    site = _build(root, tmp_path / "site")
    cff = yaml.safe_load((site / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["title"] == 'Bench\x07: {x} # "y"' and cff["license"] == "MIT\x01"
    assert cff["date-released"] == "2026-08-22" and cff["cff-version"] == "1.2.0"


def test_pasted_attest_command_runs_nothing_a_record_put_there(tmp_path):
    root = registry(tmp_path)
    marker = tmp_path / "pwned"
    unit = f"ms'; touch {marker}; echo '"
    path = root / "runs" / f"{RUN}.json"
    doc = json.loads(path.read_text())
    doc["spec"].pop("timing")
    doc["spec"]["measurements"] = [{"metric": "latency", "statistic": "median", "value": 9.8, "unit": unit}]
    path.write_text(json.dumps(doc))
    # The note on the seed run references it by digest; this run has none, so relocking suffices.
    _relock(root)
    site = _build(root, tmp_path / "site")
    page = (site / "runs" / RUN / "index.html").read_text()
    [command] = [html.unescape(c) for c in re.findall(r"<code[^>]*>(sitegen attest .*?)</code>", page, re.S)]
    args_file = tmp_path / "args"
    script = f'sitegen() {{ printf "%s\\n" "$@" > {args_file}; }}\n{command}\n'
    subprocess.run(["bash", "-c", script], check=True, cwd=tmp_path)
    assert not marker.exists()
    args = args_file.read_text().splitlines()
    assert args[:5] == ["attest", RUN, "--kind", "reproduced", "--value"] and unit in args[5]


def test_gpu_products_that_cannot_be_file_names_get_safe_unique_segments():
    from sitegen.facts.index import gpu_slugs

    long_a, long_b = "NVIDIA " + "H" * 293, "NVIDIA " + "H" * 292 + "X"
    segments = gpu_slugs({long_a, long_b, "CON", "NVIDIA H100"})
    assert len(set(segments.values())) == 4
    assert all(len(s.encode()) < 120 for s in segments.values())
    assert segments["CON"] != "con" and segments["CON"].startswith("con-")
    assert segments["NVIDIA H100"] == "nvidia-h100"
