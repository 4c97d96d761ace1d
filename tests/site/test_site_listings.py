"""Operation, home, implementation and GPU pages."""

from __future__ import annotations

import json

from conftest import OPERATION, SEED_RUN, TORCH_RUN, relock
from sitecheck import parse, resolve

X = "{http://www.w3.org/1999/xhtml}"


def _text(element) -> str:
    return " ".join("".join(element.itertext()).split())


B200_PAGE = f"operations/{OPERATION}/nvidia-b200/index.html"
H200_PAGE = f"operations/{OPERATION}/nvidia-h200/index.html"


def _ranked_rows(cohort) -> list[list[str]]:
    return [[_text(c) for c in tr] for tr in cohort.iter(f"{X}tr") if tr.get("class") != "detail"][1:]


def test_operation_page_ranks_each_cohort_by_value(site):
    record = parse(site, f"runs/{SEED_RUN}/index.html")
    cohort_href = next(a.get("href") for a in record.find_all("a") if _text(a) == "its comparison group")
    target, fragment = resolve(record.path, cohort_href)
    assert target == B200_PAGE  # two GPUs: each has its own page
    page = parse(site, target)
    cohort = page.tree.find(f".//*[@id='{fragment}']")
    rows = _ranked_rows(cohort)
    assert [(r[0], r[1], r[3], r[5]) for r in rows] == [("1", "torch", "4.97 ms", "1.00×"), ("2", "Liger", "9.11 ms", "1.83×")]
    links = [resolve(page.path, a.get("href"))[0] for a in cohort.iter(f"{X}a")]
    assert [link for link in links if link.startswith("runs/")] == [f"runs/{TORCH_RUN}/index.html", f"runs/{SEED_RUN}/index.html"]
    # Liger's row links its comparison with torch's, the row above.
    compared = [link for link in links if link.startswith("compare/")]
    assert len(compared) == 1 and (site / compared[0]).is_file()
    assert "Compare torch and Liger" in (site / compared[0]).read_text(encoding="utf-8")


def test_operation_page_summarises_and_splits_by_gpu(site):
    page = parse(site, f"operations/{OPERATION}/index.html")
    assert _text(page.find_all("h1")[0]) == "All results for Jensen-Shannon divergence loss"
    links = {resolve(page.path, a.get("href"))[0] for a in page.find_all("a")}
    assert {B200_PAGE, H200_PAGE} <= links
    groups = [d for d in page.find_all("div") if "summary-group" in (d.get("class") or "")]
    assert [_text(d.find(f"{X}h3")).split(" · ")[0] for d in groups] == ["NVIDIA B200 (sm_100)", "NVIDIA H200 (sm_90)"]
    # Every workload has its row, not only the largest: at 2048 tokens Liger (9.11 ms) follows torch (4.97 ms).
    rows = [[_text(c) for c in tr][:4] for tr in groups[0].iter(f"{X}tr")][1:]
    assert rows == [["tokens = 2048", "1 torch 4.97 ms", "2 Liger 9.11 ms", "1.83× slower"],
                    ["tokens = 4096", "1 torch 9.80 ms", "—", "—"]]
    assert "Rankings on" not in page.text()  # the cohorts are on the GPU pages
    gpu = parse(site, H200_PAGE)
    assert "Rankings on NVIDIA H200 (sm_90)" in [_text(h) for h in gpu.find_all("h2")]
    assert "not ranked: dry run (CPU rehearsal)" in gpu.text()
    # The replicated pair is one implementation: one row, the other run listed with it.
    cohort = next(d for d in gpu.find_all("div") if "cohort" in (d.get("class") or ""))
    rows = _ranked_rows(cohort)
    assert [r[1] for r in rows] == ["sitegen Triton JSD", "Liger"]
    assert "also measured: 810 µs, Replicated" in _text(cohort)


def test_sweep_table_follows_the_varying_axis(site):
    page = parse(site, B200_PAGE)
    sweep = next(t for t in page.find_all("table") if "sweep" in (t.get("class") or ""))
    header = [_text(th) for th in sweep.find(f"{X}thead").iter(f"{X}th")]
    assert header[-2:] == ["tokens 2048", "tokens 4096"]
    rows = {(_text(tr[4]), _text(tr[0])): [_text(td) for td in tr][-2:] for tr in sweep.find(f"{X}tbody")}
    assert ("Liger", "NVIDIA B200 (sm_100)") not in rows  # its 4096-token run failed: one point left
    assert rows[("torch", "NVIDIA B200 (sm_100)")] == ["4.97 ms", "9.80 ms"]
    # H200 runs exist only at 2048 tokens: one point is no sweep.
    assert "Across workloads" in parse(site, H200_PAGE).text()
    assert not any(t for t in parse(site, H200_PAGE).find_all("table") if "sweep" in (t.get("class") or ""))


def test_operation_history_is_split_per_gpu_and_newest_first(site):
    main = json.loads((site / "operations" / OPERATION / "index.json").read_text())
    assert main["history"] == []
    for gpu in ("nvidia-b200", "nvidia-h200"):
        data = json.loads((site / "operations" / OPERATION / gpu / "index.json").read_text())
        observed = [row["observed"] for row in data["history"]]
        assert observed == sorted(observed, reverse=True) and len(observed) == 4


def test_home_page_counts(site):
    data = json.loads((site / "index.json").read_text())
    assert data["run_count"] == 8
    levels = {row["item"]["text"]: row["count"] for row in data["levels"]}
    assert levels == {"Reported evidence": 4, "Reproducible evidence": 1, "Verified evidence": 1, "Replicated evidence": 2}
    gpus = {row["item"]["text"]: row["count"] for row in data["gpus"]}
    assert gpus == {"NVIDIA B200": 4, "NVIDIA H200": 4}
    sources = {row["item"]["text"]: row["count"] for row in data["sources"]}
    assert sources == {"Liger-Kernel benchmarks": 4, "sitegen rerun": 4}
    text = parse(site, "index.html").text()
    assert "Jensen-Shannon divergence loss" in text and "Newest records" in text


def test_implementation_and_gpu_pages_list_their_runs(site):
    liger = json.loads((site / "implementations" / "liger" / "index.json").read_text())
    assert len(liger["runs"]) == 3
    h200 = json.loads((site / "gpus" / "nvidia-h200" / "index.json").read_text())
    assert {r["run"]["href"].split("/")[1] for r in h200["runs"]} == {
        "liger-h200-tokens2048-rerun-2026-08-20", "sitegen-h200-tokens2048-2026-08-20",
        "sitegen-h200-tokens2048-2026-08-21", "sitegen-h200-tokens2048-dry-2026-08-19",
    }
    gpu_index = parse(site, "gpus/index.html").text()
    assert "NVIDIA B200" in gpu_index and "NVIDIA H200" in gpu_index


def _move_runs_to_gpu(root, runs, product, env_name):
    """Put ``runs`` on a new environment whose hardware.product is ``product``."""
    from sitegen.core.digest import document_digest

    env = json.loads((root / "environments" / "sitegen-nvidia-h200.json").read_text())
    env["metadata"]["name"] = env_name
    env["spec"]["hardware"]["product"] = product
    (root / "environments" / f"{env_name}.json").write_text(json.dumps(env, indent=2, ensure_ascii=False))
    for name in runs:
        path = root / "runs" / f"{name}.json"
        doc = json.loads(path.read_text())
        doc["spec"]["environmentDigest"] = document_digest(env)
        path.write_text(json.dumps(doc, indent=2))
    relock(root)


def _gpu_pages(out):
    """product → (its page's href, the names of the runs that page lists)."""
    listing = json.loads((out / "gpus" / "index.json").read_text())
    pages = {}
    for row in listing["items"]:
        page = json.loads((out / row["item"]["href"].replace("index.html", "index.json")).read_text())
        product = next(fact["value"] for fact in page["facts"] if fact["label"] == "product")
        assert product == row["item"]["text"]
        pages[product] = (row["item"]["href"], {r["run"]["href"].split("/")[1] for r in page["runs"]})
    return pages


def test_products_whose_slugs_collide_get_a_page_each(registry_copy, tmp_path):
    from sitegen.site.build import build_site

    dry, rerun = "sitegen-h200-tokens2048-dry-2026-08-19", "liger-h200-tokens2048-rerun-2026-08-20"
    _move_runs_to_gpu(registry_copy, [dry], "NVIDIA-H200", "other-h200")
    _move_runs_to_gpu(registry_copy, [rerun], "NVIDIA H200.", "dotted-h200")
    out = tmp_path / "site"
    build_site(registry_copy, out)
    pages = _gpu_pages(out)
    assert set(pages) == {"NVIDIA B200", "NVIDIA H200", "NVIDIA-H200", "NVIDIA H200."}
    assert len({href for href, _ in pages.values()}) == 4
    assert pages["NVIDIA-H200"][1] == {dry}
    assert pages["NVIDIA H200."][1] == {rerun}
    assert pages["NVIDIA H200"][1] == {"sitegen-h200-tokens2048-2026-08-20", "sitegen-h200-tokens2048-2026-08-21"}
    assert pages["NVIDIA B200"][0] == "gpus/nvidia-b200/index.html"
    rows = json.loads((out / "implementations" / "sitegen-triton" / "index.json").read_text())["runs"]
    gpu_of = {row["run"]["href"].split("/")[1]: row["gpu"]["href"] for row in rows}
    assert gpu_of[dry] == pages["NVIDIA-H200"][0]


def test_names_without_ascii_letters_get_a_page_each(registry_copy, tmp_path):
    from sitegen.site.build import build_site

    dry, rerun = "sitegen-h200-tokens2048-dry-2026-08-19", "liger-h200-tokens2048-rerun-2026-08-20"
    _move_runs_to_gpu(registry_copy, [dry], "Ускоритель", "cyrillic")
    _move_runs_to_gpu(registry_copy, [rerun], "加速器", "cjk")
    out = tmp_path / "site"
    build_site(registry_copy, out)
    pages = _gpu_pages(out)
    assert pages["Ускоритель"][1] == {dry} and pages["加速器"][1] == {rerun}
    assert len({href for href, _ in pages.values()}) == 4
    again = tmp_path / "again"
    build_site(registry_copy, again)
    assert _gpu_pages(again) == pages


def test_a_single_run_is_counted_as_one_run(registry_copy, tmp_path):
    """"1 runs" stood on 241 bundled pages (an operation's lead, a listing's caption)."""
    import re

    from sitegen.site.build import build_site

    (registry_copy / "runs" / "liger-jsd-forward-torch-nvidia-b200-tokens4096-vocab128256-fp32-2026-05-27-17-14-35.json").unlink()
    relock(registry_copy)
    out = tmp_path / "site"
    build_site(registry_copy, out)
    said = {p.relative_to(out).as_posix(): re.findall(r"\b1 runs?\b", p.read_text(encoding="utf-8")) for p in out.rglob("*.html")}
    assert "1 run" in said["implementations/torch/index.html"], said["implementations/torch/index.html"]
    assert [path for path, counts in said.items() if "1 runs" in counts] == []


def test_a_gpu_pages_csv_link_says_it_is_the_operations(site):
    """The B200 page's "download every run as CSV" gave the whole operation's runs, the H200's too."""
    import csv

    page = parse(site, B200_PAGE)
    [link] = [a for a in page.find_all("a") if a.get("download") is not None and a.get("href", "").endswith(".csv")
              and "every run" in _text(a)]
    target, _ = resolve(page.path, link.get("href"))
    rows = list(csv.DictReader((site / target).read_text(encoding="utf-8").splitlines()))
    gpus = {value for row in rows for key, value in row.items() if key == "gpu"}
    assert len(gpus) > 1, gpus  # the file holds other GPUs' runs: the link must say so
    assert _text(link).endswith("on every GPU, as CSV"), _text(link)
