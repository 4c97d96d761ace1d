"""The bundled registry (records/) as a reader meets it: ranks, passes, rooflines and sizes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sitecheck import catalog_runs
from sitegen.site.build import build_site

RECORDS = Path(__file__).resolve().parents[2] / "records"
# The bundled --like rerun of the seed record: the one H200 run that names the run it reran.
LIKE_RUN = next(p.stem for p in sorted((RECORDS / "runs" / "jsd").glob("rerun-*.json")) if '"rerunOf"' in p.read_text())
RANK = re.compile(r"^(=?\d+( · no interval)?( · faster but set aside: .+ \((noisy|flagged: [a-z_, ]+)\))?|noisy)( · this run noisy)?( \(another run represents it\))?$")


@pytest.fixture(scope="module")
def bundled(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bundled") / "site"
    build_site(RECORDS, out)
    return out


@pytest.fixture(scope="module")
def catalog(bundled) -> list[dict]:
    return catalog_runs(bundled)


def test_no_cohort_table_lists_an_implementation_twice(bundled):
    # operations/index.json is the Operations listing, not an operation page.
    for twin in (bundled / "operations").glob("*/**/index.json"):
        for gpu in json.loads(twin.read_text())["gpus"]:
            for section in gpu["passes"]:
                for dtype in section["dtypes"]:
                    for cohort in dtype["cohorts"]:
                        runs = [row["run"]["href"] for row in cohort["ranked"]]
                        assert len(runs) == len(set(runs)), (twin, cohort["heading"])


def test_every_rank_is_strict_shared_noisy_or_says_no_interval(catalog):
    implementations_per_cohort: dict[tuple, int] = {}
    for run in catalog:
        label = run["rankLabel"]
        assert RANK.match(label) or label == "not ranked" or label.startswith("flagged: "), label
        if run["comparisonKey"] and RANK.match(label) and "another run" not in label:
            key = (run["comparisonKey"], run["implementation"])
            implementations_per_cohort[key] = implementations_per_cohort.get(key, 0) + 1
    assert implementations_per_cohort and max(implementations_per_cohort.values()) == 1


def test_jsd_leads_with_the_full_pass_and_notes_every_split_pass(bundled):
    main = json.loads((bundled / "operations" / "jsd" / "index.json").read_text())
    assert main["headline_pass"] == "full"
    assert {row["gpu"]["text"] for row in main["summary"]} >= {"NVIDIA H200 (sm_90)", "NVIDIA B200 (sm_100)"}
    h200 = json.loads((bundled / "operations" / "jsd" / "nvidia-h200" / "index.json").read_text())
    [gpu] = h200["gpus"]
    assert [p["title"] for p in gpu["passes"]] == ["full: forward + backward", "forward pass", "backward pass"]
    for section in gpu["passes"][1:]:
        rows = [row for d in section["dtypes"] for c in d["cohorts"] for row in c["ranked"]]
        assert rows and all(row["pass_note"] for row in rows)
    html = (bundled / "operations" / "jsd" / "nvidia-h200" / "index.html").read_text()
    assert "backward: scales the dX saved in forward by the incoming gradient: nearly free" in html
    assert "% of roofline" in html


def test_h200_records_show_bandwidth_against_the_measured_copy_and_b200_against_nominal(bundled, catalog):
    h200 = [r for r in catalog if r["operation"] == "jsd" and r["gpu"] == "NVIDIA H200" and r["primary"]]
    b200 = [r for r in catalog if r["operation"] == "jsd" and r["gpu"] == "NVIDIA B200" and r["primary"]
            and r["primary"]["metric"] == "latency"]
    assert len(h200) >= 96 and b200
    for run in h200:
        text = (bundled / run["url"] / "index.html").read_text()
        assert "the measured copy bandwidth" in text, run["name"]
        # A forward or full pass does all its own work: its bandwidth is always meaningful. Only
        # a backward whose work an implementation did in forward gets the note instead.
        achieved = re.search(r"TB/s achieved|GB/s achieved", text)
        if "-backward-" in run["name"]:
            assert bool(achieved) != ("not meaningful for this pass" in text), run["name"]
        else:
            assert achieved and "not meaningful for this pass" not in text, run["name"]
    for run in b200:
        text = (bundled / run["url"] / "index.html").read_text()
        assert "of the nominal peak (8.00 TB/s) — nominal, not measured" in text, run["name"]


def test_a_pass_whose_work_is_done_elsewhere_shows_its_note_not_a_bandwidth(bundled, catalog):
    # sitegen writes dX in forward: its backward only scales it, far under the dX-write floor.
    run = next(r for r in catalog if r["name"].startswith("rerun-jsd-backward-sitegen-nvidia-h200-tokens2048-vocab128256-fp32"))
    text = (bundled / run["url"] / "index.html").read_text()
    assert "not meaningful for this pass" in text and "scales the dX saved in forward" in text
    assert "TB/s achieved" not in text
    h200 = (bundled / "operations" / "jsd" / "nvidia-h200" / "index.html").read_text()
    assert "over 100%: see pass note" in h200 and "over 100%: unexplained" not in h200


def test_the_seeds_like_rerun_names_what_keeps_it_from_verified(bundled, catalog):
    # Liger's do_bench protocol runs neither timed_output nor repeated_input: the bundled --like
    # rerun passed every check it ran, and its page names the two it lacks as the reason.
    [row] = [r for r in catalog if r["name"] == LIKE_RUN]
    assert row["evidenceLevel"] == "Reproducible"
    text = (bundled / "runs" / LIKE_RUN / "index.html").read_text()
    assert "not Verified: the repeated_input, timed_output checks were not run under the liger_kernel_bench protocol" in text


def test_operation_pages_stay_under_300_kb(bundled):
    sizes = {page: page.stat().st_size for page in (bundled / "operations").rglob("*.html")}
    assert max(sizes.values()) <= 300_000, max(sizes.items(), key=lambda item: item[1])


def test_h200_sweep_charts_draw_the_measured_roofline_floor_but_not_under_moved_work(bundled):
    html = (bundled / "operations" / "jsd" / "nvidia-h200" / "index.html").read_text()
    figures = re.findall(r'<figure class="chart-block".*?</figure>', html, re.S)
    full = [f for f in figures if "· full ·" in f]
    backward = [f for f in figures if "· backward ·" in f]
    assert full and all("roofline floor" in f for f in full)
    # sitegen's backward is under T·V·b (its forward wrote dX), so a floor there would mislead.
    assert backward and not any("roofline floor" in f for f in backward)


def test_a_noisy_run_holds_no_rank_in_the_catalog(catalog):
    # The rule the ranks page states; rope's bundled data has noisy runs whose implementation is
    # ranked through another run, which the catalog once carried as the noisy run's own rank.
    noisy = [row for row in catalog if row["noisy"]]
    assert any(row["rankLabel"].endswith("(another run represents it)") for row in noisy)
    assert [row["name"] for row in noisy if row["rank"] is not None] == []


def _cohorts(twin: Path) -> list[dict]:
    page = json.loads(twin.read_text())
    return [c for gpu in page["gpus"] for s in gpu["passes"] for d in s["dtypes"] for c in d["cohorts"]]


@pytest.mark.parametrize("gpu", ["nvidia-b200", "nvidia-h100-80gb-hbm3", "nvidia-l40s"])
def test_kernelbench_ranks_eager_against_torch_compile_on_the_big_gpus(bundled, gpu):
    # KernelBench level1 23_Softmax.py was timed eager and under torch.compile on each of these.
    cohorts = [c for c in _cohorts(bundled / "operations" / "softmax" / gpu / "index.json")
               if "kernelbench_baseline" in c["heading"]]
    assert cohorts
    for cohort in cohorts:
        names = [row["run"]["text"] for row in cohort["ranked"]]
        assert "torch eager" in names and any(n.startswith("torch.compile (") for n in names), names
        assert all(row["interval"].endswith("(normal approx. of the mean)") for row in cohort["ranked"])


def test_operations_index_groups_by_source_then_family_fewest_first(bundled):
    groups = json.loads((bundled / "operations" / "index.json").read_text())["groups"]
    headings = [g["heading"] for g in groups]
    assert headings.index("Liger-Kernel benchmarks") < headings.index("KernelBench baseline timings")
    liger = groups[headings.index("Liger-Kernel benchmarks")]
    assert liger["operations"] == 35 and liger["runs"] == 2448
    kernelbench = groups[headings.index("KernelBench baseline timings")]
    families = {f["heading"]: f["items"] for f in kernelbench["families"]}
    assert {"KernelBench level 1", "KernelBench level 2", "KernelBench level 3"} <= set(families)
    first = [item["item"]["text"] for item in families["KernelBench level 1"][:3]]
    assert [t.split(" · ")[1].split(" ")[0] for t in first] == ["1", "2", "3"], first
    # Softmax is Liger's operation that a KernelBench problem joins: listed under both sources.
    assert any(i["item"]["text"] == "Softmax" for f in liger["families"] for i in f["items"])
    assert any(i["item"]["text"] == "Softmax" for i in families["activation"])


def test_a_kernelbench_problem_page_links_its_source_file_at_each_commit(bundled):
    [page] = (bundled / "operations").glob("kernelbench-level1-98-kldivloss-*/index.html")
    html = page.read_text()
    # 1f8d20f's timing of 98_KLDivLoss.py (December 2025) was taken at that commit's source.
    assert ('href="https://github.com/ScalingIntelligence/KernelBench/blob/1f8d20fa06357a9c343f4508887b6da22f114752/'
            'KernelBench/level1/98_KLDivLoss.py"') in html


def test_home_answers_per_operation_for_liger_and_per_gpu_for_kernelbenchs_problems(bundled):
    home = json.loads((bundled / "index.json").read_text())
    rows = home["leaders"]
    kernelbench = [r for r in rows if r["operation"]["text"].startswith("KernelBench")]
    # One row per GPU KernelBench timed on (ten), not one per problem and GPU (thousands of rows).
    assert len(kernelbench) == len({r["gpu"] for r in kernelbench}) == 10
    for row in kernelbench:
        firsts, total = map(int, re.match(r"(?:each )?(?:first alone|shared first) in (\d+) of (\d+) cohorts", row["detail"]).groups())
        assert 0 <= firsts <= total <= 500, row
        assert row["operation"]["href"].startswith("operations/index.html#source-")
    # A cohort where one implementation alone is ranked makes no leader: the KernelBench
    # problems timed in one mode only on a GPU count for nobody.
    assert all(int(re.search(r"of (\d+) cohorts", r["detail"])[1]) < 250 for r in kernelbench if "A100-SXM4-40GB" in r["gpu"])
    jsd = [r for r in rows if r["operation"]["text"] == "Jensen-Shannon divergence loss" and "H200" in r["gpu"]]
    assert [r["leader"] for r in jsd] == ["sitegen"] and jsd[0]["timed_pass"] == "full"
    assert (bundled / "index.html").stat().st_size < 100_000


def test_the_implementations_index_lists_every_implementation_once_over_its_pages(bundled):
    pages = [bundled / "implementations" / "index.json", *sorted((bundled / "implementations" / "page").glob("*/index.json"))]
    listed = [item["item"]["href"] for p in pages for item in json.loads(p.read_text())["items"]]
    assert len(pages) > 1 and len(listed) == len(set(listed)) == len(list((RECORDS / "implementations").glob("*.json")))
    # Small projects first: a reader finds one kernel without paging past a thousand compile modes.
    first = [item["detail"] for item in json.loads(pages[0].read_text())["items"]]
    assert "Liger-Kernel" in first and "sitegen" in first


def test_every_operation_gpu_page_with_a_full_pass_opens_its_charts_with_one(bundled):
    checked = 0
    for twin in (bundled / "operations").glob("*/*/index.json"):
        data = json.loads(twin.read_text())
        html = (twin.parent / "index.html").read_text()
        captions = re.findall(r'<figure class="chart-block"[^>]*>\s*<figcaption>(.*?)</figcaption>', html, re.S)
        if data.get("headline_pass") == "full" and any("· full ·" in c for c in captions):
            assert "· full ·" in captions[0], (twin, captions[0])
            checked += 1
    assert checked >= 3  # JSD on H200, B200 and H100


def test_a_chart_names_the_implementation_it_leaves_out_and_why(bundled):
    html = (bundled / "operations" / "jsd" / "nvidia-h200" / "index.html").read_text()
    figures = re.findall(r'<figure class="chart-block".*?</figure>', html, re.S)
    backward_bf16 = next(f for f in figures if "· bf16 · backward ·" in f)
    # Liger's bf16 backward runs failed the repeated-input check at every workload.
    assert re.search(r"Not drawn: [^<]*Liger: flagged", backward_bf16)
    # Each line's pass note sits under the chart it explains.
    assert "sitegen: " in backward_bf16 and "chart-notes" in backward_bf16


def _section(html: str, heading_id: str) -> str:
    return re.search(rf'<h2 id="{heading_id}">.*?</section>', html, re.S).group(0)


def _verified_h200_run() -> tuple[str, dict]:
    path = sorted((RECORDS / "runs" / "jsd").glob("rerun-jsd-full-sitegen-nvidia-h200-tokens8192-vocab128256-fp32-*.json"))[0]
    return path.stem, json.loads(path.read_text())


def test_integrity_rows_read_in_words_with_units(bundled):
    name, run = _verified_h200_run()
    details = run["spec"]["evidence"]["details"]
    integrity = _section((bundled / "runs" / name / "index.html").read_text(), "integrity-h")
    labels = re.findall(r"<dt>(.*?)</dt>", integrity)
    assert labels and not [label for label in labels if re.search(r"[a-z][A-Z]|\bRel\b|\bNs\b|_", label)], labels
    assert "Ci half width" not in integrity
    half = f"±{details['ciHalfWidthRel'] * 100:.2g}% of the median"
    assert re.search(rf"<dt>95% interval of the median, half-width</dt> <dd>{re.escape(half)}</dd>", integrity), integrity[:2000]
    median_ms = details["repeatedInputMedianNs"] / 1e6
    assert f"<dt>Median on repeated input</dt> <dd>{median_ms:.2f} ms</dd>" in integrity


def test_what_is_timed_reads_in_sentences_on_the_protocol_page(bundled):
    name, run = _verified_h200_run()
    html = (bundled / "runs" / name / "index.html").read_text()
    protocol = _section(html, "protocol-h")
    notes = next(json.loads(p.read_text())["spec"]["comparability"]["notes"] for p in (RECORDS / "protocols").glob("*.json")
                 if "sitegen-rerun-controlled" in p.name)
    assert notes[:200] not in html  # no longer a wall in a table cell
    link = re.search(r'<dt>What is timed</dt> <dd><a href="([^"]+)">(\d+) words', protocol)
    assert link and int(link.group(2)) == len(notes.split())
    page = (bundled / "runs" / name / link.group(1)).resolve()
    text = page.read_text()
    blocks = [re.sub(r"<[^>]+>", "", b) for b in re.findall(r"<(?:p|li)>(.*?)</(?:p|li)>", text, re.S)]
    assert len(blocks) >= 10  # sentences and clauses, not one block
    import html as markup
    joined = " ".join(markup.unescape(b) for b in blocks)
    for sentence in re.split(r"(?<=[.])\s+(?=[A-Z])", notes):
        assert sentence.split("; ")[-1].strip() in joined, sentence[:80]


def test_a_chart_says_which_points_of_a_drawn_line_it_leaves_out(bundled):
    # The fused head's H200 forward runs at 8,192 tokens are flagged (the records' own checks say so):
    # the chart draws sitegen's line without that point, and must say so rather than drop the column.
    [record] = (RECORDS / "runs" / "fused-linear-jsd").glob(
        "rerun-fused-linear-jsd-forward-sitegen-nvidia-h200-hidden4096-tokens8192-*.json")
    checks = json.loads(record.read_text())["spec"]["evidence"]["integrity"]
    assert any(not check["passed"] for check in checks)
    html = (bundled / "operations" / "fused-linear-jsd" / "nvidia-h200" / "index.html").read_text()
    figures = re.findall(r'<figure class="chart-block".*?</figure>', html, re.S)
    forward = next(f for f in figures if "· bf16 · forward ·" in f)
    assert re.search(r"Not drawn: [^<]*sitegen at tokens = 8192: flagged", forward)


def test_a_summary_gap_with_a_set_aside_run_between_is_no_lead_but_keeps_the_first_place(bundled):
    # KL divergence on the H200: where Liger's run is noisy it sits between torch.compile and torch.
    # torch.compile still leads there (nothing set aside measured faster than it), but torch's gap
    # behind it is not torch.compile's lead over the field, so the answer's ratio range leaves it out.
    [group] = json.loads((bundled / "operations" / "kl-div" / "nvidia-h200" / "index.json").read_text())["summary"]
    between = [r for r in group["rows"] if r["set_aside_between"]]
    clear = [r for r in group["rows"] if not r["set_aside_between"] and not r["set_aside"]]
    assert between and clear
    assert all(not r["set_aside"] for r in between)
    assert "fastest at every one of the 6 workloads" in group["answer"]
    low, high = min(r["ratio"] for r in clear), max(r["ratio"] for r in clear)
    assert f"{low:.2f}–{high:.2f}× slower" in group["answer"]
    assert all(r["ratio"] > high for r in between)  # the ratios the range would otherwise have stretched to


def test_a_gpu_without_a_ranked_full_pass_is_summarized_by_its_forward_pass_not_called_unranked(bundled):
    # KL divergence has full-pass runs on the H200 and Liger's H100 PCIe, but only forward and
    # backward on the H100 80GB HBM3: that GPU's summary leads with its forward pass.
    twin = json.loads((bundled / "operations" / "kl-div" / "nvidia-h100-80gb-hbm3" / "index.json").read_text())
    assert twin["summary"] and {g["timed_pass"] for g in twin["summary"]} == {"forward"}
    page = (bundled / "operations" / "kl-div" / "nvidia-h100-80gb-hbm3" / "index.html").read_text()
    assert "Summary: forward pass leaders" in page and "No ranked runs yet" not in page
    # The page of every GPU names no single pass above groups of different passes.
    top = (bundled / "operations" / "kl-div" / "index.html").read_text()
    assert '<h2 id="summary">Summary</h2>' in top
    assert "· fp32 · forward pass" in top and "· fp32 · full pass" in top
