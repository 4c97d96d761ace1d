"""The record page shows every element of the seed page, with the values the registry implies."""

from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest

from conftest import FAILED_RUN, OPERATION, SEED_RUN, TORCH_RUN
from sitecheck import catalog_runs, parse, resolve


@pytest.fixture(scope="module")
def record(site):
    return parse(site, f"runs/{SEED_RUN}/index.html")


def _links(page):
    return {"".join(a.itertext()).strip(): a.get("href") for a in page.find_all("a")}


def test_elements_appear_in_the_seed_order(record):
    text = record.text()
    order = [
        "Liger · Jensen-Shannon divergence loss · vocab = 128256 · tokens = 2048 · fp32 · forward pass · NVIDIA B200 (sm_100) · run ",
        "passed", "Reported evidence", "Primary measurement", "9.11ms median", "p20–p80 9.11–9.11 ms",
        "Rank 2 in its comparison group · source-native comparison · observed 2026-05-27",
        "ms 20 9.11056 · ms 50 9.11056 · ms 80 9.11056",
        "Identity", "Correctness", "Marked passed by the source; the correctness policy was not published.",
        "Workload", "Measurements", "latency · median 9.11 ms", "Protocol", "Environment",
        "GPU NVIDIA B200 (sm_100)", "Artifacts", "No artifacts published with this run.",
        "Replications and notes",
        "Community attestations. They never change the evidence level; only a KernelIndex-controlled rerun does.",
        "Add a reproduction or note", "Rerun this record", f"sitegen rerun --like {SEED_RUN}", "Canonical manifest", "Show manifest", "Cite this record",
        "Report an issue with this run", "Published 2026-08-18 · Liger-Kernel benchmarks · BSD-2-Clause",
        "All results for Jensen-Shannon divergence loss →", "JSON",
    ]
    position = 0
    for item in order:
        found = text.find(item, position)
        assert found >= 0, f"{item!r} missing after position {position}: {text[position:position + 200]!r}"
        position = found + len(item)


def test_title_line_carries_the_short_run_digest(site, record):
    seed = next(r for r in catalog_runs(site) if r["name"] == SEED_RUN)
    h1 = "".join(record.find_all("h1")[0].itertext())
    assert h1.endswith(f"run {seed['digest'][7:19]}…")
    assert seed["digest"] in record.text()


def test_identity_rows(record):
    text = record.text()
    for row in ("implementation Liger", "project Liger-Kernel", "revision unknown",
                "workload vocab = 128256 · tokens = 2048 · fp32", "source Liger-Kernel benchmarks",
                "external id jsd/forward/liger/nvidia-b200/tokens2048-vocab128256-fp32/2026-05-27-17-14-29"):
        assert row in text
    assert re.search(r"comparison key sha256:[0-9a-f]{16}…", text)


def test_rank_links_to_its_cohort_and_to_the_leader(site, record):
    links = _links(record)
    cohort = links["its comparison group"]
    target, fragment = resolve(record.path, cohort)
    assert target == f"operations/{OPERATION}/nvidia-b200/index.html" and fragment.startswith("cohort-")
    leader = resolve(record.path, links["torch"])[0]
    assert leader == f"runs/{TORCH_RUN}/index.html"
    assert "Leader: torch (4.97 ms)" in record.text()


def test_leader_has_rank_one_and_no_leader_link(site):
    text = parse(site, f"runs/{TORCH_RUN}/index.html").text()
    assert "Rank 1 in its comparison group" in text and "Leader:" not in text


def test_failed_run_says_why_it_is_not_ranked(site):
    page = parse(site, f"runs/{FAILED_RUN}/index.html")
    text = page.text()
    assert "Not eligible to rank: status failed (CUDA out of memory while allocating the gradient); no primary metric" in text
    assert "✕ failed" in text
    assert "No primary measurement" in text


def test_manifest_is_a_details_element_that_links_the_published_bundle(site, record):
    # The page links its JSON twin, the published bundle, rather than printing its bytes again
    # (site.js shows the twin's text in the box when it is opened: tests/site/test_site_browser.py).
    details = record.find_all("details")[0]
    assert details.get("data-manifest") == "index.json" and details.get("open") is None
    assert [a.get("href") for a in details.iter("{http://www.w3.org/1999/xhtml}a")] == ["index.json"]
    bundle = json.loads((site / "runs" / SEED_RUN / "index.json").read_text())
    assert set(bundle) == {"run", "protocol", "environment"}
    assert bundle["run"]["spec"]["timing"]["latencyNs"]["median"] == 9110560
    assert '"latencyNs"' not in (site / "runs" / SEED_RUN / "index.html").read_text(encoding="utf-8")


def test_citation_forms(record):
    text = record.text()
    permalink = f"https://registry.example.org/runs/{SEED_RUN}/"
    citation = record.tree.find(".//*[@id='citation-text']")
    cited = "".join(citation.itertext())
    assert permalink in cited and "Accessed [access date]." in cited and "(sha256:" in cited
    assert "Please also cite the original source: LinkedIn, Liger-Kernel benchmark data" in text
    assert "@misc{sitegen-" in text and "howpublished = {\\url{" + permalink + "}}" in text
    csl = json.loads("".join(record.find_all("details")[2].find(".//{http://www.w3.org/1999/xhtml}code").itertext()))
    assert csl[0]["URL"] == permalink and csl[0]["issued"] == {"date-parts": [[2026, 5, 27]]}


def test_report_an_issue_link_is_prefilled_and_encoded(record):
    href = _links(record)["Report an issue with this run"]
    parts = urlsplit(href)
    assert href.startswith("https://github.com/kernelindex/registry/issues/new?")
    query = parse_qs(parts.query)
    assert query["title"] == [f"Run {SEED_RUN}"]
    assert f"https://registry.example.org/runs/{SEED_RUN}/" in query["body"][0]
    assert " " not in href and "\n" not in href


def test_attestation_is_shown_sanitized(record):
    notes = record.tree.find(".//*[@class='notes']")
    html_text = "".join(notes.itertext())
    assert "Reproduced · 9.2 ms" in html_text and "A. Tester" in html_text
    assert "our own B200" in html_text
    for element in notes.iter():
        if not isinstance(element.tag, str):
            continue
        tag = element.tag.split("}")[-1]
        assert tag not in {"script", "img", "iframe", "style"}
        assert not any(k.startswith("on") for k in element.attrib)
        href = element.get("href")
        if href is not None:
            assert href.startswith(("https://", "http://")), href
    assert "alert('x')" not in html_text
    assert 'sitegen attest ' + SEED_RUN + ' --kind reproduced --value' in html_text


def test_verdicts_link_both_ways(site, record):
    assert "not comparable (different GPU product: NVIDIA B200 recorded, NVIDIA H200 rerun)" in record.text()
    rerun = parse(site, "runs/liger-h200-tokens2048-rerun-2026-08-20/index.html")
    assert "Rerun of" in rerun.text()
    assert resolve(rerun.path, _links(rerun)[next(k for k in _links(rerun) if k.startswith("Liger on NVIDIA B200"))])[0] == record.path
    reproduced = parse(site, "runs/sitegen-h200-tokens2048-2026-08-20/index.html").text()
    assert "reproduced within 5% (1.2% slower)" in reproduced


def test_controlled_rerun_page(site):
    text = parse(site, "runs/sitegen-h200-tokens2048-2026-08-21/index.html").text()
    assert "Replicated evidence" in text
    assert "controlled comparison" in text
    assert "5 samples" in text
    assert "GPU NVIDIA H200 (sm_90)" in text and "Framework torch 2.11.0+cu130" in text
    assert "Instance · GPU UUID GPU-2222bbbb" in text
    assert "[3, 1000]" in text  # a checked correctness case
    dry = parse(site, "runs/sitegen-h200-tokens2048-dry-2026-08-19/index.html").text()
    assert "Not eligible to rank: dry run" in dry and "Reproducible evidence" in dry


def test_json_twin_is_the_canonical_manifest_pretty_printed(site):
    from conftest import FIXTURE

    def read(relative):
        return json.loads((FIXTURE / relative).read_text())

    bundle = {
        "run": read(f"runs/{SEED_RUN}.json"),
        "protocol": read("protocols/liger-bench-do-bench-forward.json"),
        "environment": read("environments/liger-bench-nvidia-b200.json"),
    }
    expected = json.dumps(bundle, indent=2, ensure_ascii=False) + "\n"
    assert (site / "runs" / SEED_RUN / "index.json").read_text() == expected


# The PyPI form of an install: `sitegen` there is another project (docs/measure-your-kernel.md).
PYPI_INSTALL = re.compile(r"pip install\s+['\"]?sitegen\b")


def test_rerun_box_installs_this_sitegen_from_a_clone_of_the_registry(record):
    import shlex
    import tomllib

    from conftest import FIXTURE

    repository = tomllib.loads((FIXTURE / "sitegen.toml").read_text())["site"]["repository_url"]
    [box] = [s for s in record.find_all("section") if s.get("class") == "rerun"]
    commands = ["".join(c.itertext()) for c in box.iter("{http://www.w3.org/1999/xhtml}pre")]
    assert len(commands) == 2, commands
    install = shlex.split(commands[0].replace("&&", " && "))
    assert install[:3] == ["git", "clone", repository]
    assert install[install.index("install") + 1] == ".[gpu]"
    assert commands[1] == f"sitegen rerun --like {SEED_RUN}"


def test_no_page_or_doc_says_to_install_sitegen_from_pypi(site):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    texts = [p for p in site.rglob("*") if p.suffix in (".html", ".md", ".json", ".txt") and p.is_file()]
    texts += [root / "README.md", *(root / "docs").glob("*.md"), *(root / "templates").glob("*.html")]
    said = sorted(str(p) for p in texts if PYPI_INSTALL.search(p.read_text(encoding="utf-8", errors="replace")))
    assert said == []


def test_a_check_a_dry_run_could_not_make_reads_not_checked_never_failed(registry_copy, tmp_path):
    """`sitegen rerun --interpret` records NVML's checks as not passed, "not checked: NVML unavailable";
    the page said "Throttling: failed — not checked", as if the GPU had been found throttling."""
    from conftest import edit_run
    from sitegen.site.build import build_site

    dry = "sitegen-h200-tokens2048-dry-2026-08-19"
    edit_run(registry_copy, dry, lambda spec: spec["evidence"]["integrity"].append(
        {"name": "throttle", "passed": False, "detail": "not checked: NVML unavailable"}))
    build_site(registry_copy, tmp_path / "site")
    page = parse(tmp_path / "site", f"runs/{dry}/index.html").text()
    assert "not checked — NVML unavailable" in page
    assert "failed — not checked" not in page
