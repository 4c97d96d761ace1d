"""What surrounds the pages: feeds, sitemap, robots, favicon, indexes, badges, Markdown pages."""

from __future__ import annotations

import json
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import asdict

import feedparser
from click.testing import CliRunner

from conftest import FIXTURE, OPERATION, SEED_RUN
from sitegen.cli.main import main
from sitegen.site.build import build_site

BASE = "https://registry.example.org/"


def test_site_and_operation_feeds_parse_as_atom(site):
    whole = feedparser.parse((site / "feed.xml").read_bytes())
    assert not whole.bozo, whole.get("bozo_exception")
    assert whole.version == "atom10" and len(whole.entries) == 8
    links = [e.link for e in whole.entries]
    assert f"{BASE}runs/{SEED_RUN}/" in links
    # Newest published first, then newest observed.
    keys = [(e.published, e.updated) for e in whole.entries]
    assert keys == sorted(keys, reverse=True)
    operation = feedparser.parse((site / "operations" / OPERATION / "feed.xml").read_bytes())
    assert not operation.bozo and operation.feed.title.endswith("Jensen-Shannon divergence loss")
    assert all(e.tags[0].term == OPERATION for e in operation.entries)
    page = (site / "operations" / OPERATION / "index.html").read_text()
    assert 'type="application/atom+xml"' in page and 'href="../../operations/jensen-shannon-divergence/feed.xml"' in page


def test_sitemap_lists_every_page_and_robots_points_at_it(site):
    root = ET.fromstring((site / "sitemap.xml").read_bytes())
    locs = {e.text for e in root.iter("{http://www.sitemaps.org/schemas/sitemap/0.9}loc")}
    pages = {BASE + p.relative_to(site).as_posix().removesuffix("index.html") for p in site.rglob("*.html")}
    assert locs == pages and f"{BASE}runs/{SEED_RUN}/" in locs
    assert f"Sitemap: {BASE}sitemap.xml" in (site / "robots.txt").read_text()
    ET.fromstring((site / "favicon.svg").read_bytes())
    assert 'rel="icon" href="favicon.svg"' in (site / "index.html").read_text()


def test_operations_index_and_schemas_page(site):
    operations = (site / "operations" / "index.html").read_text()
    assert f'href="../operations/{OPERATION}/index.html"' in operations
    schemas = (site / "schemas" / "index.html").read_text()
    kinds = ["Attestation", "BenchmarkProtocol", "BenchmarkRun", "ExecutionEnvironment", "ImplementationRevision",
             "OperationSpec", "WorkloadCase"]
    for kind in kinds:
        assert f'href="../schemas/v1alpha1/{kind}.schema.json"' in schemas
        assert (site / "schemas" / "v1alpha1" / f"{kind}.schema.json").is_file()
    home = (site / "index.html").read_text()
    assert 'href="operations/index.html">Operations<' in home and 'href="schemas/index.html">Schemas<' in home


def _badges_through_the_index(site) -> dict[str, dict]:
    """Every badge row a program finds from badges/index.json, by its SVG and text: its pages list
    implementations, each linking its page's JSON twin, whose rows name its one SVG and each badge row."""
    first = json.loads((site / "badges" / "index.json").read_text())
    pages = [l["href"] for l in first["pager"]["pages"]] if first["pager"] else ["badges/index.html"]
    found: dict[str, dict] = {}
    for page in pages:
        for listed in json.loads((site / page.removesuffix("index.html") / "index.json").read_text())["listed"]:
            facts = json.loads((site / listed["json"]).read_text())["facts"]
            [image] = [f["image"] for f in facts if f["label"] == "badge"]
            base = tomllib.loads((FIXTURE / "sitegen.toml").read_text())["site"]["base_url"]
            found.update((f"{image} {f['value']}", {"image": image, "text": f["value"], "cohort": base + f["href"]})
                         for f in facts if f["label"] == "badge row")
    return found


def test_badges_link_to_their_cohort_and_read_ranks_from_the_index(site):
    by_row = _badges_through_the_index(site)
    # One SVG per implementation (issue 49), not one per operation × GPU.
    assert {b["image"] for b in by_row.values()} == {p.relative_to(site).as_posix() for p in (site / "badges").rglob("*.svg")}
    assert all(p.name == "badges.svg" and p.parent.parent == site / "badges" for p in (site / "badges").rglob("*.svg"))
    torch = next(b for b in by_row.values() if b["image"] == "badges/torch/badges.svg" and f"{OPERATION} · B200 · " in b["text"])
    # torch leads the seed's cohort (4.97 ms against Liger's 9.11 ms).
    assert torch["text"].startswith(f"{OPERATION} · B200 · #1 forward")
    svg = ET.fromstring((site / torch["image"]).read_bytes())
    rows = {"".join(a.itertext()).removeprefix("sitegen"): a.get("href") for a in svg.iter("{http://www.w3.org/2000/svg}a")}
    assert rows[torch["text"]] == torch["cohort"] and "#cohort-" in torch["cohort"]
    # The link leads to the page that holds the cohort's table (here the B200 page of the operation).
    target, anchor = torch["cohort"].rsplit("#", 1)
    assert "/nvidia-b200/" in target
    page = (site / target.split("/", 3)[-1] if target.startswith("http") else site / target).read_text()
    assert f'id="{anchor}"' in page
    liger = next(b for b in by_row.values() if b["image"] == "badges/liger/badges.svg" and f"{OPERATION} · B200 · " in b["text"])
    assert liger["text"].startswith(f"{OPERATION} · B200 · #2")


def test_the_site_wide_badge_index_lists_implementations_never_their_badges(site):
    """badges/index.json once held every badge (3.4 MB at the bundled registry, its largest file, growing
    with each implementation, issue 49). It is the badges index's first page now: at most
    listings.PAGE_ITEMS implementations, each with a count and links, whatever the number of badges."""
    from sitegen.facts.index import build_index
    from sitegen.registry.config import load_config
    from sitegen.registry.folder import open_registry
    from sitegen.site.outputs.badges import Badge
    from sitegen.site.pages.badges_page import badges_index
    from sitegen.site.pages.listings import PAGE_ITEMS

    text = (site / "badges" / "index.json").read_text()
    assert ".svg" not in text and "#cohort-" not in text
    assert json.loads(text)["path"] == "badges/index.html"  # the page's own twin, as its footer's link says

    index = build_index(open_registry(FIXTURE), load_config(FIXTURE))

    def first_page(by_implementation) -> str:
        return json.dumps(asdict(badges_index(index, by_implementation)[0]))

    def made(name: str, count: int) -> list[Badge]:
        return [Badge(f"badges/{name}/badges.svg", f"op{i} · GPU · #1 full", f"{BASE}x#cohort-{i}") for i in range(count)]

    # As many badges as the registry holds: the index does not grow (the count's digits aside).
    assert len(first_page({"torch": made("torch", 5000)})) - len(first_page({"torch": made("torch", 5)})) == 3
    # As many implementations as the registry holds: a page lists PAGE_ITEMS of them, the pager the rest.
    many = {f"impl-{i:05d}": made(f"impl-{i:05d}", 1) for i in range(3 * PAGE_ITEMS + 1)}
    pages = badges_index(index, many)
    assert [len(p.listed) for p in pages] == [PAGE_ITEMS, PAGE_ITEMS, PAGE_ITEMS, 1]
    assert pages[0].listed[0].json == "implementations/impl-00000/index.json"


HOSTILE = """# About us

Plain **text**.

<script>alert(1)</script>
[click](javascript:alert(2)) <img src=x onerror="alert(3)"> <a href="https://example.org" onclick="alert(4)">ok</a>
<iframe src="https://evil.example"></iframe>
"""


def test_markdown_pages_and_operation_descriptions_are_sanitized(registry_copy, tmp_path):
    (registry_copy / "pages").mkdir()
    (registry_copy / "pages" / "about.md").write_text(HOSTILE)
    (registry_copy / "operations" / f"{OPERATION}.md").write_text("Computed **in fp32**.\n\n<script>alert(5)</script>\n")
    build_site(registry_copy, tmp_path / "out")
    about = (tmp_path / "out" / "pages" / "about" / "index.html").read_text()
    assert "<h1>About us</h1>" in about and "<strong>text</strong>" in about
    body = about.split('<main id="main"', 1)[1].split("</main>", 1)[0]
    for bad in ("<script", "alert(", "javascript:", "onerror", "onclick", "<iframe", "<img"):
        assert bad not in body, bad
    assert '<a href="https://example.org" rel="nofollow noopener noreferrer">ok</a>' in body
    # Linked from every page's navigation.
    assert 'href="../../pages/about/index.html">About us<' in (tmp_path / "out" / "runs" / SEED_RUN / "index.html").read_text()
    operation = (tmp_path / "out" / "operations" / OPERATION / "index.html").read_text()
    assert "Computed <strong>in fp32</strong>." in operation and "alert(5)" not in operation


def test_bad_markdown_files_are_one_line_problems(registry_copy, tmp_path):
    (registry_copy / "pages").mkdir()
    (registry_copy / "pages" / "about.md").write_bytes(b"# About\n\xff\xfe")
    result = CliRunner().invoke(main, ["build", "--records", str(registry_copy), "--out", str(tmp_path / "o"), "--no-search"])
    assert result.exit_code == 1 and "pages/about.md: $: not valid UTF-8" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "o").exists()
    (registry_copy / "pages" / "about.md").unlink()
    (registry_copy / "operations" / "no-such-op.md").write_text("hi")
    result = CliRunner().invoke(main, ["build", "--records", str(registry_copy), "--out", str(tmp_path / "o"), "--no-search"])
    assert result.exit_code == 1 and "no-such-op.md: $: describes no operation" in result.output


def test_a_long_sitemap_becomes_an_index_of_sitemaps_listing_every_page_once(tmp_path, monkeypatch):
    from sitegen.site.outputs import feeds

    monkeypatch.setattr(feeds, "SITEMAP_URLS", 4)
    site = tmp_path / "site"
    build_site(FIXTURE, site)
    ns = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
    root = ET.fromstring((site / "sitemap.xml").read_bytes())
    assert root.tag == f"{ns}sitemapindex"
    parts = [e.text for e in root.iter(f"{ns}loc")]
    assert len(parts) > 2
    locs = []
    for part in parts:
        urls = ET.fromstring((site / part.removeprefix(BASE)).read_bytes())
        locs += [e.text for e in urls.iter(f"{ns}loc")]
        assert len(list(urls.iter(f"{ns}url"))) <= 4
    pages = {BASE + p.relative_to(site).as_posix().removesuffix("index.html") for p in site.rglob("*.html")}
    assert sorted(locs) == sorted(pages)


def test_the_about_page_names_every_source_the_registry_imports(tmp_path):
    """The bundled About page said only Liger-Kernel while 8,486 runs come from KernelBench: it links
    each source of records/sources/ by its name and address, as the built page shows it."""
    import re
    import shutil
    import tomllib
    from pathlib import Path

    from conftest import FIXTURE, relock
    from sitegen.site.build import build_site

    bundled = Path(__file__).resolve().parents[2] / "records"
    root = tmp_path / "records"
    shutil.copytree(FIXTURE, root)
    (root / "pages").mkdir(exist_ok=True)
    shutil.copy(bundled / "pages" / "about.md", root / "pages" / "about.md")
    relock(root)
    build_site(root, tmp_path / "site")
    about = (tmp_path / "site" / "pages" / "about" / "index.html").read_text(encoding="utf-8")
    sources = [tomllib.loads(p.read_text(encoding="utf-8")) for p in sorted((bundled / "sources").glob("*.toml"))]
    assert len(sources) >= 2
    for source in sources:
        assert re.search(rf'<a href="{re.escape(source["url"])}"[^>]*>{re.escape(source["name"])}</a>', about), source["name"]
