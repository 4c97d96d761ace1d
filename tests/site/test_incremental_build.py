"""Rebuilds: worker processes give the bytes of a one-process build, an unchanged registry
is not rebuilt, and a one-run edit rewrites only the files whose bytes change."""

from __future__ import annotations

import json
import shutil
from datetime import date, timedelta
from pathlib import Path

import pytest

from besides import beside
from conftest import FIXTURE, TORCH_RUN, edit_run
from helpers import build as _build, copy_registry, invoke, lock as _lock
from sitegen.site.engine.marker import MARKER
from sitegen.registry.transaction import COMMITTED, JOURNAL, STAGED



def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _inodes(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix(): p.stat().st_ino for p in root.rglob("*") if p.is_file()}


def _spy_renders(monkeypatch) -> tuple[list[str], list[str]]:
    """(run pages, operations) the next build renders, as it renders them."""
    from sitegen.site import operation_files, writepages

    rendered, operations = [], []
    record_page, operation_pages = writepages.record_page, operation_files.operation_pages_with_runs
    monkeypatch.setattr(writepages, "record_page", lambda facts, index: rendered.append(facts.name) or record_page(facts, index))
    monkeypatch.setattr(operation_files, "operation_pages_with_runs",
                        lambda operation, index: operations.append(operation.name) or operation_pages(operation, index))
    return rendered, operations


def _double_first_run(records: Path) -> tuple[Path, dict]:
    """The registry's first run file with every latency doubled, locked again: (its path, the document)."""
    run = sorted((records / "runs").rglob("*.json"))[0]
    document = json.loads(run.read_text())
    latency = document["spec"]["timing"]["latencyNs"]
    latency.update({k: v * 2 for k, v in latency.items()})
    run.write_text(json.dumps(document, indent=2))
    _lock(records)
    return run, document


def test_workers_build_the_same_bytes_as_one_process(tmp_path, bundled_without_kernelbench):
    # The bundled registry: thousands of runs, so every worker renders many slices.
    one, many = tmp_path / "one", tmp_path / "many"
    _build(bundled_without_kernelbench, one, "--jobs", "1")
    _build(bundled_without_kernelbench, many, "--jobs", "3")
    assert _files(one) == _files(many)
    # Workers write each sampled run's raw samples as the one process does.
    assert any(name.endswith("/samples.json") for name in _files(many))


def test_an_unchanged_registry_leaves_the_site_untouched(registry_copy, tmp_path):
    out = tmp_path / "site"
    _build(registry_copy, out)
    before = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in out.rglob("*")}
    result = _build(registry_copy, out)
    assert "is up to date" in result.output
    assert {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in out.rglob("*")} == before


def test_other_options_or_a_missing_file_rebuild(registry_copy, tmp_path):
    out = tmp_path / "site"
    _build(registry_copy, out)
    expected = _files(out)
    (out / "index.html").unlink()
    assert "up to date" not in _build(registry_copy, out).output
    assert _files(out) == expected
    assert "up to date" not in _build(registry_copy, out, "--base-url", "https://example.org/x/").output


EDITS = {
    "a site page": lambda root: (root / "pages").mkdir() or (root / "pages" / "about.md").write_text("# About\n\nHello.\n"),
    "an operation description": lambda root: (root / "operations" / "jensen-shannon-divergence.md").write_text(
        "# Jensen-Shannon divergence\n\nWhat it computes.\n"),
    "the GPU datasheets": lambda root: (root / "gpus.toml").write_text(
        '["NVIDIA B200"]\nnominal_memory_bandwidth_gbs = 7000\nsource = "https://example.org/b200"\n'),
    "a setting": lambda root: (root / "sitegen.toml").write_text(
        (root / "sitegen.toml").read_text().replace('license = "CC-BY-4.0"', 'license = "MIT"', 1)),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_every_input_beside_the_records_rebuilds(registry_copy, tmp_path, edit):
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    _build(registry_copy, out, "--no-search")
    before = _files(out)
    EDITS[edit](registry_copy)
    assert "up to date" not in _build(registry_copy, out, "--no-search").output
    _build(registry_copy, fresh, "--no-search")
    assert _files(out) == _files(fresh) != before


def test_search_on_or_off_rebuilds(registry_copy, tmp_path):
    out = tmp_path / "site"
    _build(registry_copy, out, "--no-search")
    assert not (out / "pagefind").exists()
    assert "up to date" not in _build(registry_copy, out).output
    assert (out / "pagefind").is_dir()
    assert "up to date" in _build(registry_copy, out).output
    assert "up to date" not in _build(registry_copy, out, "--no-search").output
    assert not (out / "pagefind").exists()


def test_a_registry_write_killed_after_its_commit_point_is_finished_and_built(registry_copy, tmp_path):
    # A journal as `attest` leaves it when killed after COMMITTED: the next command, this
    # build included, must finish it before deciding that nothing changed.
    out, edited = tmp_path / "site", tmp_path / "edited"
    _build(registry_copy, out, "--no-search")
    shutil.copytree(registry_copy, edited)
    edit_run(edited, TORCH_RUN, lambda spec: spec["timing"]["latencyNs"].update(median=spec["timing"]["latencyNs"]["median"] + 1))
    changed = [f"runs/{TORCH_RUN}.json", "digests.lock"]
    for relative in changed:
        staged = registry_copy / JOURNAL / STAGED / relative
        staged.parent.mkdir(parents=True, exist_ok=True)
        staged.write_bytes((edited / relative).read_bytes())
    (registry_copy / JOURNAL / COMMITTED).write_text(json.dumps(changed))
    assert "up to date" not in _build(registry_copy, out, "--no-search").output
    assert not (registry_copy / JOURNAL).exists()
    _build(edited, tmp_path / "fresh", "--no-search")
    assert _files(out) == _files(tmp_path / "fresh")


def test_one_edited_run_rewrites_only_the_files_that_change(registry_copy, tmp_path):
    out, fresh = tmp_path / "site", tmp_path / "fresh"
    _build(registry_copy, out)
    before, inodes = _files(out), _inodes(out)
    edit_run(registry_copy, TORCH_RUN, lambda spec: spec["timing"]["latencyNs"].update(median=spec["timing"]["latencyNs"]["median"] + 1))
    _build(registry_copy, out)
    _build(registry_copy, fresh)
    after = _files(out)
    assert after == _files(fresh)  # the same site as a build from scratch
    changed = {name for name in after if after[name] != before.get(name)}
    assert f"runs/{TORCH_RUN}/index.html" in changed
    assert len(changed) < len(after) / 2
    kept = {name for name, ino in _inodes(out).items() if inodes.get(name) == ino}
    # Every file with unchanged bytes is the previous file, linked; every other is new.
    assert kept == set(after) - changed - {MARKER}


def test_a_registry_copied_elsewhere_builds_the_same_site(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    copy_registry(a, FIXTURE)
    copy_registry(b, FIXTURE)
    _build(a / "records", a / "site")
    _build(b / "records", b / "site")
    assert _files(a / "site") == _files(b / "site")


def test_a_worker_killed_fails_the_build_and_keeps_the_site(registry_copy, tmp_path, monkeypatch):
    # As the OOM killer would: the build must stop with one line, not wait for the slice for ever.
    import os
    import signal

    from sitegen.site import build

    out = tmp_path / "site"
    _build(registry_copy, out, "--no-search")
    before = _files(out)
    parent = os.getpid()
    write_runs = build.write_run_pages

    def dies_in_a_worker(*args):
        if os.getpid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)
        write_runs(*args)

    monkeypatch.setattr(build, "write_run_pages", dies_in_a_worker)
    edit_run(registry_copy, TORCH_RUN, lambda spec: spec["timing"]["latencyNs"].update(median=spec["timing"]["latencyNs"]["median"] + 1))
    result = _build(registry_copy, out, "--no-search", "--jobs", "2", check=False)
    assert result.exit_code != 0
    assert "a process rendering record pages died" in result.output and "Traceback" not in result.output
    assert _files(out) == before
    assert beside(tmp_path) == [".site.standby-*", "records", "site"]


def test_a_one_run_edit_renders_only_its_operation_and_equals_a_cold_build(tmp_path, monkeypatch, bundled_without_kernelbench):
    # The bundled registry: many operations, so the pages of every other operation's runs
    # are taken from the previous site (sitegen.site.engine.reuse) and must still be current.
    records, out, fresh = tmp_path / "records", tmp_path / "site", tmp_path / "fresh"
    shutil.copytree(bundled_without_kernelbench, records, ignore=shutil.ignore_patterns(".*"))
    _build(records, out, "--no-search")
    run, document = _double_first_run(records)
    rendered, operations = _spy_renders(monkeypatch)
    _build(records, out, "--no-search", "--jobs", "1")
    same_operation = {p.stem for p in run.parent.glob("*.json")}
    assert document["metadata"]["name"] in rendered
    assert set(rendered) <= same_operation
    assert operations == [run.parent.name]
    monkeypatch.undo()
    _build(records, fresh, "--no-search", "--jobs", "1")
    assert _files(out) == _files(fresh)


def test_a_one_run_edit_renders_only_the_listing_pages_that_show_it(registry_copy, tmp_path, monkeypatch):
    from sitegen.site.render import Renderer

    out, fresh = tmp_path / "site", tmp_path / "fresh"
    _build(registry_copy, out, "--no-search")
    listings = json.loads((out / MARKER).read_text())["pageKeys"]
    edit_run(registry_copy, TORCH_RUN, lambda spec: spec["timing"]["latencyNs"].update(median=spec["timing"]["latencyNs"]["median"] * 3))
    rendered = []
    render = Renderer.render
    monkeypatch.setattr(Renderer, "render", lambda self, template, page, **extra: (
        rendered.append(page.path) if template == "list.html" else None) or render(self, template, page, **extra))
    _build(registry_copy, out, "--no-search", "--jobs", "1")
    # The run's implementation and GPU pages show its new value; the other listings are linked.
    assert rendered and len(rendered) < len(listings)
    assert any(path.startswith("gpus/") for path in rendered)
    monkeypatch.undo()
    _build(registry_copy, fresh, "--no-search", "--jobs", "1")
    assert _files(out) == _files(fresh)


@pytest.mark.parametrize("when", ["before the newest record", "after every record"])
def test_an_attestation_renders_only_its_runs_operation_and_equals_a_cold_build(tmp_path, monkeypatch, bundled_without_kernelbench, when):
    # A note shows on its run's page and that operation's pages: `attest` must not
    # re-render the whole site (issue 32), and what it does render must be all that changed.
    # A note newer than every record moves the site's date: the other operations' feeds,
    # taken unrendered with their pages, must still be what a cold build makes.
    records, out, fresh = tmp_path / "records", tmp_path / "site", tmp_path / "fresh"
    shutil.copytree(bundled_without_kernelbench, records, ignore=shutil.ignore_patterns(".*"))
    _build(records, out, "--no-search")
    run = sorted((records / "runs").rglob("*.json"))[0]
    name = json.loads(run.read_text())["metadata"]["name"]
    newest = max(json.loads(p.read_text())["spec"]["observedAt"][:10] for p in (records / "runs").rglob("*.json"))
    day = "2024-01-02" if when.startswith("before") else (date.fromisoformat(newest) + timedelta(days=1)).isoformat()
    result = invoke("attest", name, "--kind", "reproduced", "--note", "Same median on our A100.",
                    "--date", day, "--records", str(records))
    assert result.exit_code == 0, result.output
    rendered, operations = _spy_renders(monkeypatch)
    _build(records, out, "--no-search", "--jobs", "1")
    assert name in rendered and set(rendered) <= {p.stem for p in run.parent.glob("*.json")}
    assert operations == [run.parent.name]
    assert "Same median on our A100." in (out / "runs" / name / "index.html").read_text()
    monkeypatch.undo()
    _build(records, fresh, "--no-search", "--jobs", "1")
    assert _files(out) == _files(fresh)


def test_one_edit_reindexes_only_its_search_shards_and_equals_a_cold_search_build(tmp_path, monkeypatch, bundled_without_kernelbench):
    # Search is indexed in shards (sitegen.site.outputs.search): one run's edit must re-index the
    # shards holding pages that changed, not the whole site (issue 32), and the bundles it
    # keeps must be what a cold build makes.
    from sitegen.site.outputs import search

    records, out, fresh = tmp_path / "records", tmp_path / "site", tmp_path / "fresh"
    shutil.copytree(bundled_without_kernelbench, records, ignore=shutil.ignore_patterns(".*"))
    _build(records, out)
    run, document = _double_first_run(records)
    indexed = []
    real = search._run_pagefind
    monkeypatch.setattr(search, "_run_pagefind", lambda dirty, *rest: indexed.extend(
        page for members in dirty.values() for page in members) or real(dirty, *rest))
    _build(records, out, "--jobs", "1")
    pages = [p for p in out.rglob("*.html")]
    # Only shards whose pages changed; record pages are never indexed (issue 49).
    assert not any(page.startswith("runs/") for page in indexed)
    assert 0 < len(indexed) < len(pages) / 3, (len(indexed), len(pages))
    monkeypatch.undo()
    _build(records, fresh, "--jobs", "1")
    assert _files(out) == _files(fresh)


def test_a_note_reindexes_its_operations_shard_and_the_summary_pages_only(tmp_path, monkeypatch, bundled_without_kernelbench):
    # The home page shows the latest notes, so every `attest` changes it. It is indexed in a
    # shard with the other pages that sum up the registry, so that a note re-indexes its own
    # operation's shard and those few pages, never a shard of unrelated listing pages that
    # happened to share the home page's bucket (issue 32: one attest's rebuild).
    from sitegen.site.outputs import search

    records, out = tmp_path / "records", tmp_path / "site"
    shutil.copytree(bundled_without_kernelbench, records, ignore=shutil.ignore_patterns(".*"))
    _build(records, out)
    run = sorted((records / "runs").rglob("*.json"))[0]
    name = json.loads(run.read_text())["metadata"]["name"]
    result = invoke("attest", name, "--kind", "reproduced", "--note", "Same median here.",
                    "--date", "2024-01-02", "--records", str(records))
    assert result.exit_code == 0, result.output
    indexed, shards = [], []
    real = search._run_pagefind
    monkeypatch.setattr(search, "_run_pagefind", lambda dirty, *rest: shards.extend(dirty) or indexed.extend(
        page for members in dirty.values() for page in members) or real(dirty, *rest))
    _build(records, out, "--jobs", "1")
    assert "index.html" in indexed and not any(page.startswith("runs/") for page in indexed)
    # The summary pages' shard, and the run's operation's if its pages changed: never a shard of unrelated pages.
    assert search.SUMMARY_SHARD in shards and len(shards) <= 2, shards
    others = [page for page in indexed if not page.startswith(("runs/", "operations/")) and page != "index.html"]
    assert set(others) <= {"operations/index.html", "implementations/index.html", "gpus/index.html"}, others


def test_a_deleted_site_is_built_whole_again_without_its_standby(registry_copy, tmp_path):
    # "Delete --out to force a full build": the standby kept beside it shares the old site's files
    # (hard links), so a page edited in place before the delete must not come back from it; and
    # with no site to exchange it with, the build once failed with "cannot write".
    out, full = tmp_path / "site", tmp_path / "full"
    _build(registry_copy, out)
    _build(registry_copy, full, "--full")
    assert any(p.name.startswith(".site.standby-") for p in tmp_path.iterdir())
    page = out / "runs" / TORCH_RUN / "index.html"
    with page.open("r+b") as handle:
        handle.write(b"tampered")
    shutil.rmtree(out)
    _build(registry_copy, out)
    assert _files(out) == _files(full)
