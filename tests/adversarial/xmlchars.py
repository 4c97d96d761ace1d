"""Characters XML 1.0 forbids, seeded into every field that reaches a feed, sitemap, SVG chart
or badge, and every XML output of the built site read back by a real XML parser and by
feedparser. Used by test_xml_outputs.py and report.py.
"""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import feedparser
from click.testing import CliRunner

from sitegen.cli.main import main
from sitegen.core.digest import document_digest
from sitegen.trust.registrysigning import sign_registry

HERE = Path(__file__).resolve().parent
FIXTURE = HERE.parent / "fixtures" / "registry-small"
FIXTURE_KEY = HERE.parent / "fixtures" / "keys" / "fixture_ed25519"
# As the issue found them: C0 controls XML 1.0 forbids even escaped (U+000B, vertical tab,
# among them), and NUL, which JSON and TOML can write as \u0000.
FORBIDDEN = ["\u0001", "\u000b", "\u001f", "\u0000"]
FIELDS = ["site title", "GPU product", "GPU architecture", "implementation name", "operation title", "unit"]
UNTIMED_RUN = "sitegen-h200-tokens2048-2026-08-21"


def _edit(path: Path, change) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc, indent=2))  # ensure_ascii: the character is written as \uXXXX


def _untimed(doc: dict, char: str) -> None:
    # A run without timing ranks by its measurement at the protocol's statistic: its unit is shown.
    spec = doc["spec"]
    spec.pop("timing", None)
    spec["measurements"] = [{"metric": "peak_memory", "statistic": "median", "value": 1234.5, "unit": f"MiB{char}x"}]


def _relink(root: Path, digests: dict[Path, str]) -> None:
    """Rewrite every reference to a document whose digest the edits changed (``digests``: each file's
    digest before), again for the documents that rewriting changes, until none changes."""
    files = sorted(root.rglob("*.json"))
    while True:
        renamed = {}
        for path in files:
            new = document_digest(json.loads(path.read_text()))
            if digests[path] != new:
                renamed[digests[path]] = new
            digests[path] = new
        if not renamed:
            return
        for path in files:
            text = path.read_text()
            for old, new in renamed.items():
                text = text.replace(old, new)
            path.write_text(text)


def seeded_registry(tmp: Path, char: str) -> Path:
    """A copy of the fixture with ``char`` in each of FIELDS, references and lock made good again."""
    root = tmp / "records"
    shutil.copytree(FIXTURE, root)
    digests = {path: document_digest(json.loads(path.read_text())) for path in sorted(root.rglob("*.json"))}
    toml = (root / "sitegen.toml").read_text()
    escaped = f"\\u{ord(char):04x}"
    (root / "sitegen.toml").write_text(toml.replace('title = "sitegen registry"', f'title = "sitegen{escaped}registry"'))
    for path in sorted((root / "environments").glob("*.json")):
        def hardware(doc):
            doc["spec"]["hardware"]["product"] += f"{char} rev"
            doc["spec"]["hardware"]["architecture"] += f"{char}a"
        _edit(path, hardware)
    for path in sorted((root / "implementations").glob("*.json")):
        _edit(path, lambda doc: doc["spec"].__setitem__("name", doc["spec"]["name"] + f"{char} impl"))
    for path in sorted((root / "operations").glob("*.json")):
        _edit(path, lambda doc: doc["metadata"].__setitem__("title", f"Jensen{char}Shannon"))
    _edit(root / "runs" / f"{UNTIMED_RUN}.json", lambda doc: _untimed(doc, char))
    _relink(root, digests)
    locked = CliRunner().invoke(main, ["lock", str(root)])
    assert locked.exit_code == 0, locked.output
    # The edits changed the documents the signatures cover: the fixture's key holder signs again, so
    # the reruns keep their places (and sitegen's its badges) as Verified runs.
    signed = [name for name, doc in ((p.stem, json.loads(p.read_text())) for p in sorted((root / "runs").glob("*.json")))
              if doc["metadata"].get("signature")]
    sign_registry(root, FIXTURE_KEY, tuple(signed))
    return root


_INLINE_SVG = re.compile(r"<svg\b.*?</svg>", re.S)


def xml_outputs(site: Path) -> dict[str, bytes]:
    """Every XML document of the site: .xml and .svg files, and each chart inlined in a page."""
    found = {str(p.relative_to(site)): p.read_bytes() for p in sorted(site.rglob("*")) if p.suffix in (".xml", ".svg")}
    for page in sorted(site.rglob("*.html")):
        for n, svg in enumerate(_INLINE_SVG.findall(page.read_text(encoding="utf-8"))):
            found[f"{page.relative_to(site)}#svg{n}"] = svg.encode()
    return found


def broken_outputs(site: Path) -> list[str]:
    """'name: why' for each XML output that ElementTree, or (for a feed) feedparser, rejects."""
    broken = []
    for name, data in xml_outputs(site).items():
        try:
            ET.fromstring(data)
        except ET.ParseError as exc:
            broken.append(f"{name}: {exc}")
            continue
        if name.endswith(".xml") and b"<feed" in data[:200]:
            parsed = feedparser.parse(data)
            if parsed.bozo:
                broken.append(f"{name}: feedparser: {parsed.bozo_exception}")
    return broken


def build(root: Path, out: Path) -> Path:
    built = CliRunner().invoke(main, ["build", "--records", str(root), "--out", str(out), "--no-search"])
    assert built.exit_code == 0, built.output
    return out
