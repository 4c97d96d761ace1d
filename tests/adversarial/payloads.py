"""Injection payloads in every text field a registry author controls, built and scanned.

Each payload carries the id of the field it was put in, so a page that lets one through
names the field. A page fails when, parsed by html5lib as a browser would: an element
<x-pwn> exists, an on* attribute or a javascript: URL holds a payload id, or a Jinja
expression in a payload was evaluated. Every JSON twin must still parse. A sample of pages
is also loaded in Chromium with a dialog listener.
"""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from pathlib import Path

import headless
import html5lib
from click.testing import CliRunner

from sitegen.cli.main import main

HERE = Path(__file__).resolve().parent
FIXTURE = HERE.parent / "fixtures" / "registry-small"

PAYLOADS = [
    '<x-pwn data-f="{id}"></x-pwn>',
    '"><x-pwn data-f="{id}">',
    "'><x-pwn data-f=\"{id}\">",
    '</script><x-pwn data-f="{id}">',
    '</textarea><x-pwn data-f="{id}">',
    '</style><x-pwn data-f="{id}">',
    '--><x-pwn data-f="{id}"><!--',
    ']]><x-pwn data-f="{id}">',
    '\u2028\u2029</script><x-pwn data-f="{id}">',
    '<svg><x-pwn data-f="{id}"></svg>',
    '" onmouseover="alert(\'{id}\')" x="',
    "<img src=x onerror=alert('{id}')>",
    "javascript:alert('{id}')",
    "{{{{ '{id}' ~ 7*7 }}}}",
    "${{7*7}}{id}",
    "%3Cx-pwn data-f=%22{id}%22%3E",
]


def _text_fields(doc: dict, prefix: str, put) -> None:
    meta = doc["metadata"]
    for key in ("title", "description"):
        meta[key] = put(f"{prefix}.metadata.{key}")
    meta["labels"] = {**(meta.get("labels") or {}), "adv": put(f"{prefix}.metadata.labels.adv")}
    meta["authors"] = [put(f"{prefix}.metadata.authors[0]")]
    for i, ref in enumerate(meta.get("sourceRefs") or []):
        ref["name"] = put(f"{prefix}.metadata.sourceRefs[{i}].name")
    if doc["kind"] == "Attestation":
        for key in ("body", "value", "author"):
            doc["spec"][key] = put(f"{prefix}.spec.{key}")


def _toml(table: dict) -> str:
    return "\n".join(f"{k} = {json.dumps(v, ensure_ascii=False)}" for k, v in table.items()) + "\n"


def payload_registry(tmp: Path, template: str) -> tuple[Path, list[str]]:
    """A copy of the fixture with ``template`` in every author-controlled text field."""
    root = tmp / "records"
    shutil.copytree(FIXTURE, root)
    fields: list[str] = []

    def put(field: str) -> str:
        fields.append(field)
        return template.format(id=f"f{len(fields) - 1}")

    for path in sorted(root.rglob("*.json")):
        doc = json.loads(path.read_text())
        _text_fields(doc, path.relative_to(root).as_posix(), put)
        path.write_text(json.dumps(doc, ensure_ascii=False))
    site = {"title": put("sitegen.toml:site.title"), "license": put("sitegen.toml:site.license")}
    (root / "sitegen.toml").write_text("[site]\n" + _toml(site))
    for source in sorted((root / "sources").glob("*.toml")):
        table = tomllib.loads(source.read_text())
        table["name"] = put(f"{source.name}:name")
        table["citation"] = put(f"{source.name}:citation")
        source.write_text(_toml(table))
    # Attestation specs changed (their digests too): lock again, as an author would.
    locked = CliRunner().invoke(main, ["lock", str(root)])
    assert locked.exit_code == 0, locked.output
    return root, fields


_ID = re.compile(r"\bf(\d+)\b")


def scan_page(text: str) -> set[int]:
    """Payload ids that got out of their text on one HTML page."""
    tree = html5lib.parse(text, namespaceHTMLElements=False)
    leaked: set[int] = set()
    for element in tree.iter():
        tag = element.tag if isinstance(element.tag, str) else ""
        if tag.rpartition("}")[2] == "x-pwn":
            leaked.update(int(m) for m in _ID.findall(element.get("data-f", "")))
        for name, value in element.attrib.items():
            name = name.rpartition("}")[2].lower()
            dangerous = name.startswith("on") or (name in ("href", "src", "action", "formaction") and value.strip().lower().startswith("javascript:"))
            if dangerous:
                leaked.update(int(m) for m in _ID.findall(value))
    for match in re.finditer(r"f(\d+)49\b", text):
        leaked.add(int(match.group(1)))
    return leaked


def scan_site(site: Path) -> tuple[int, set[int], list[str]]:
    """(pages scanned, leaked payload ids, JSON files that no longer parse)."""
    leaked: set[int] = set()
    pages = sorted(site.rglob("*.html"))
    for page in pages:
        leaked |= scan_page(page.read_text(encoding="utf-8"))
    broken = []
    for twin in sorted(site.rglob("*.json")):
        try:
            json.loads(twin.read_text(encoding="utf-8"))
        except ValueError:
            broken.append(str(twin))
    return len(pages), leaked, broken


def build_and_scan(tmp: Path, template: str) -> tuple[list[str], set[int], int, list[str], Path]:
    """Build the payload registry; (fields, leaked ids, pages, broken JSON, site)."""
    tmp.mkdir(parents=True, exist_ok=True)
    root, fields = payload_registry(tmp, template)
    site = tmp / "site"
    built = CliRunner().invoke(main, ["build", "--records", str(root), "--out", str(site)])
    assert built.exit_code == 0, built.output
    pages, leaked, broken = scan_site(site)
    return fields, leaked, pages, broken, site


def browser_sample(sites: list[Path], per_site: int = 3) -> tuple[int, list[str]]:
    """Load ``per_site`` pages of each site in Chromium: (pages loaded, failures).

    A failure is any JavaScript dialog (alert, confirm, prompt) or an <x-pwn> element in
    the live DOM after the page's own scripts ran.
    """
    loaded, failures = 0, []
    with headless.chromium() as browser:
        for site in sites:
            runs = sorted(p.relative_to(site).as_posix() for p in site.glob("runs/*/index.html"))
            with headless.served(site) as base:
                for target in (["index.html"] + runs)[:per_site]:
                    page = browser.new_page()
                    dialogs: list[str] = []
                    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
                    page.goto(base + target)
                    page.wait_for_load_state("load")
                    page.mouse.move(10, 10)
                    if dialogs or page.locator("x-pwn").count():
                        failures.append(f"{site}/{target}: dialogs {dialogs}")
                    loaded += 1
                    page.close()
    return loaded, failures
