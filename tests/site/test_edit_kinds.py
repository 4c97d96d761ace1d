"""Issue 32's promise, edit by edit: after each kind of edit a user makes (a run's value, a note,
an implementation's name, a GPU's datasheet entry, the site title, a template) the site an
incremental `sitegen build` leaves is byte for byte the site `sitegen build --full` makes, and a
build killed partway leaves the previous site served and the build state usable.

Each test keeps its own cache folder (SITEGEN_CACHE_DIR): tests/conftest.py sets one for the
whole session, which tests of the same registry path would otherwise share.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import pytest

from besides import beside
from conftest import TORCH_RUN
from helpers import build, invoke, lock as _lock

TORCH_RUN_4096 = "liger-jsd-forward-torch-nvidia-b200-tokens4096-vocab128256-fp32-2026-05-27-17-14-35"


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch) -> Path:
    """A cache folder of this test's own, for in-process and child builds alike."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("SITEGEN_CACHE_DIR", str(cache))
    return cache


# --- helpers -------------------------------------------------------------------------------


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _first_difference(a: bytes, b: bytes) -> str:
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"at byte {at}: {a[max(0, at - 60):at + 60]!r} vs {b[max(0, at - 60):at + 60]!r}"


def _assert_same_site(incremental: Path, full: Path) -> None:
    """Every file, and the same set of files, with a message naming what differs and where."""
    a, b = _files(incremental), _files(full)
    only_a, only_b = sorted(set(a) - set(b)), sorted(set(b) - set(a))
    differing = sorted(name for name in set(a) & set(b) if a[name] != b[name])
    if only_a or only_b or differing:
        lines = [f"incremental site {incremental} differs from --full site {full}:",
                 f"only in incremental ({len(only_a)}): {only_a[:10]}",
                 f"only in --full ({len(only_b)}): {only_b[:10]}",
                 f"different bytes ({len(differing)}): {differing[:10]}"]
        lines += [f"  {name} {_first_difference(a[name], b[name])}" for name in differing[:3]]
        pytest.fail("\n".join(lines))


# Every build here must exit 0 (helpers.build's check); the search index is left out.
_build = partial(build, flags=("--no-search",))


def _leftovers(out: Path) -> list[str]:
    """The staging and previous-site folders builds leave beside --out (its one standby aside)."""
    return [name for name in beside(out.parent) if name.startswith(f".{out.name}.") and name != f".{out.name}.standby-*"]


def _sitegen(*args: str) -> list[str]:
    return [sys.executable, "-m", "sitegen", *args]


# --- the edits, each as a user makes it -------------------------------------------------------
# Each takes the registry and the files of the site built before it, and returns the page a reader
# would look at, text that page must show after the edit and text it must no longer show.


def _edit_run_value(records: Path, before: dict[str, bytes]) -> dict:
    """A corrected latency in one run file (its median and the published p20/p80), then `sitegen lock`."""
    path = records / "runs" / f"{TORCH_RUN}.json"
    document = json.loads(path.read_text())
    document["spec"]["timing"]["latencyNs"]["median"] = 7_340_000
    for measurement in document["spec"]["measurements"]:
        measurement["value"] = 7_340_000
    path.write_text(json.dumps(document, indent=2) + "\n")
    _lock(records)
    return {"page": f"runs/{TORCH_RUN}/index.html", "shows": ["7.34 ms"], "gone": ["4.97 ms"]}


def _edit_note(records: Path, before: dict[str, bytes]) -> dict:
    """`sitegen attest`, the way users add a note to a run (newer than every record, so the site's date moves too)."""
    text = "Reproduced on our own B200, within a percent of the published median."
    invoke("attest", TORCH_RUN, "--kind", "reproduced", "--value", "5.01 ms", "--note", text,
           "--author", "E. Dits", "--date", "2026-09-01", "--records", str(records), check=True)
    return {"page": f"runs/{TORCH_RUN}/index.html", "shows": [text, "E. Dits"], "gone": []}


def _edit_implementation_name(records: Path, before: dict[str, bytes]) -> dict:
    """The torch implementation's display name (its spec.name, part of its digest): its runs name the
    new digest, as a user must update them, then `sitegen lock`."""
    from sitegen.core.digest import document_digest

    path = records / "implementations" / "torch.json"
    document = json.loads(path.read_text())
    old = document_digest(document)
    document["spec"]["name"] = "PyTorch eager"
    new = document_digest(document)
    path.write_text(json.dumps(document, indent=2) + "\n")
    updated = 0
    for run in (records / "runs").glob("*.json"):
        doc = json.loads(run.read_text())
        if doc["spec"]["implementationDigest"] == old:
            doc["spec"]["implementationDigest"] = new
            run.write_text(json.dumps(doc, indent=2) + "\n")
            updated += 1
    assert updated == 2  # both torch runs of the fixture registry
    _lock(records)
    return {"page": "implementations/torch/index.html", "shows": ["PyTorch eager"], "gone": []}


def _edit_gpu_entry(records: Path, before: dict[str, bytes]) -> dict:
    """The nominal bandwidth of a GPU the registry's runs use (NVIDIA B200), in gpus.toml."""
    gpus = records / "gpus.toml"
    text = gpus.read_text()
    entry = '["NVIDIA B200"]\nnominal_memory_bandwidth_gbs = 8000\n'
    assert entry in text
    gpus.write_text(text.replace(entry, entry.replace("8000", "6500"), 1))
    # A B200 run's page, where a reader sees the run's share of the B200's nominal peak.
    shown = sorted(name for name, data in before.items()
                   if name.startswith("runs/") and name.endswith("/index.html") and b"nominal peak (8.00 TB/s)" in data)
    assert shown, "no run page shows the B200's nominal peak"
    return {"page": shown[0], "shows": ["nominal peak (6.50 TB/s)"], "gone": ["nominal peak (8.00 TB/s)"]}


def _edit_title(records: Path, before: dict[str, bytes]) -> dict:
    path = records / "sitegen.toml"
    text = path.read_text()
    assert 'title = "sitegen registry"' in text
    path.write_text(text.replace('title = "sitegen registry"', 'title = "Edited kernel registry"', 1))
    return {"page": "index.html", "shows": ["<title>Home · Edited kernel registry</title>"],
            "gone": ["sitegen registry"]}


EDITS = {
    "a run's value": _edit_run_value,
    "a note on a run": _edit_note,
    "an implementation's name": _edit_implementation_name,
    "a GPU entry in gpus.toml": _edit_gpu_entry,
    "sitegen.toml's title": _edit_title,
}

NO_REGISTRY_TEMPLATES = (
    "sitegen has no per-registry template mechanism: pages are rendered only from the templates "
    "shipped as the sitegen.templates package (sitegen/site/render.py reads resources.files("
    "'sitegen.templates')); sitegen.toml has no templates setting (config.Site: title, base_url, "
    "repository_url, issue_tracker_url, license) and docs/ describe none. Edits of sitegen's own "
    "templates are tested in test_an_edit_of_sitegens_own_templates_equals_a_full_build."
)


@pytest.mark.parametrize("kind", [*EDITS, "a template"])
def test_after_each_kind_of_edit_the_incremental_site_is_the_full_site(kind, registry_copy, bundled_without_kernelbench, tmp_path):
    if kind == "a template":
        pytest.skip(NO_REGISTRY_TEMPLATES)
    if kind == "a GPU entry in gpus.toml":
        # The fixture registry has no gpus.toml and no operation with bytesMoved, so no page of
        # it shows a nominal bandwidth: the bundled registry's Liger B200 runs do.
        records = tmp_path / "bundled"
        shutil.copytree(bundled_without_kernelbench, records)
    else:
        records = registry_copy
    site, full = tmp_path / "site", tmp_path / "full"
    _build(records, site)
    before = _files(site)
    expect = EDITS[kind](records, before)
    result = _build(records, site)
    assert "up to date" not in result.output
    _build(records, full, "--full")
    _assert_same_site(site, full)

    after = _files(site)
    changed = sorted(name for name in after if after[name] != before.get(name))
    # More than the build's own bookkeeping (its marker and file lists) changed.
    assert any(name.endswith(".html") for name in changed), changed
    assert expect["page"] in changed, (expect["page"], changed[:20])
    page = after[expect["page"]].decode()
    for text in expect["shows"]:
        assert text in page, text
    for text in expect["gone"]:
        assert text not in page, text


@pytest.mark.parametrize("template, needle, page", [
    ("base.html", "Built by sitegen from manifest records.", "index.html"),
    ("record.html", '<h2 id="primary-h" class="label">Primary measurement</h2>', f"runs/{TORCH_RUN}/index.html"),
    ("list.html", "<h1>{{ p.heading }}</h1>", "implementations/torch/index.html"),
])
def test_an_edit_of_sitegens_own_templates_equals_a_full_build(template, needle, page, registry_copy, tmp_path, monkeypatch):
    # There are no per-registry templates, but `sitegen serve` watches sitegen's template folder
    # and rebuilds incrementally when one changes (its --help says so): the rebuilt site must be
    # the site a --full build makes from the edited templates. The templates are read from a
    # copy here (importlib.resources.files, as sitegen reads them), so the checkout is not touched.
    import importlib.resources

    real = importlib.resources.files
    folder = tmp_path / "templates"
    shutil.copytree(Path(str(real("sitegen.templates"))), folder)
    monkeypatch.setattr(importlib.resources, "files",
                        lambda package, *rest: folder if package == "sitegen.templates" else real(package, *rest))
    site, full = tmp_path / "site", tmp_path / "full"
    _build(registry_copy, site)
    before = _files(site)
    text = (folder / template).read_text()
    assert text.count(needle) == 1
    marked = needle.replace("</", " [edited template]</", 1) if "</" in needle else needle.replace(".", " [edited template].", 1)
    (folder / template).write_text(text.replace(needle, marked, 1))
    assert "up to date" not in _build(registry_copy, site).output
    _build(registry_copy, full, "--full")
    _assert_same_site(site, full)
    after = _files(site)
    assert after[page] != before[page]
    assert "[edited template]" in after[page].decode()


# --- killed builds -----------------------------------------------------------------------------


def _staging(out: Path) -> list[Path]:
    return sorted(out.parent.glob(f".{out.name}.building-*"))


def _count_files(folder: Path) -> int:
    count = 0
    for _where, _folders, names in os.walk(folder):
        count += len(names)
    return count


def test_a_build_killed_mid_render_keeps_the_previous_site_and_the_state_usable(bundled_without_kernelbench, tmp_path):
    # The bundled registry: thousands of pages, and a title edit re-renders every one of them,
    # so the kill reliably lands while the staging folder is being filled.
    records, site, full = tmp_path / "records", tmp_path / "site", tmp_path / "full"
    shutil.copytree(bundled_without_kernelbench, records)
    _build(records, site)
    previous = _files(site)
    config = records / "sitegen.toml"
    config.write_text(config.read_text().replace('title = "KernelIndex benchmark registry"', 'title = "Killed build registry"', 1))
    run = sorted((records / "runs").rglob("*.json"))[0]
    document = json.loads(run.read_text())
    document["spec"]["timing"]["latencyNs"] = {k: v * 2 for k, v in document["spec"]["timing"]["latencyNs"].items()}
    run.write_text(json.dumps(document, indent=2))
    _lock(records)

    log = tmp_path / "killed.log"
    with open(log, "wb") as output:
        process = subprocess.Popen(_sitegen("build", "--records", str(records), "--out", str(site), "--no-search", "--jobs", "2"),
                                   stdout=output, stderr=subprocess.STDOUT, env=os.environ.copy())
    try:
        deadline = time.monotonic() + 120
        # Until the build has written pages into its staging folder beside --out.
        while time.monotonic() < deadline and process.poll() is None:
            folders = _staging(site)
            if folders and _count_files(folders[0]) >= 50:
                break
            time.sleep(0.005)
        still_running = process.poll() is None
        process.send_signal(signal.SIGKILL)
        code = process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    # The kill landed mid-build: the process was running and died of it, its staging folder left.
    assert still_running, log.read_text()
    assert code == -signal.SIGKILL, (code, log.read_text())
    assert _staging(site), _leftovers(site)
    # The previous site is served, complete and unchanged.
    assert _files(site) == previous

    # The state is usable: the next incremental build finishes the edit and equals a --full build,
    # removes what the killed build left, and a build after it has nothing to do.
    assert "up to date" not in _build(records, site).output
    _build(records, full, "--full")
    _assert_same_site(site, full)
    assert "Killed build registry" in (site / "index.html").read_text()
    assert _leftovers(site) == []
    assert "is up to date" in _build(records, site).output


# Deterministic kill points, each where a build holds something half done: the child build kills
# itself with SIGKILL on reaching that call (the rest of the process is the real CLI).
KILL_POINTS = {
    "before the swap": ("sitegen.site.engine.swap", "put_in_place"),
    "while the standby is brought up to date": ("sitegen.site.engine.write", "_remove_empty"),
    "after the swap, before the standby is kept": ("sitegen.site.engine.session", "_keep_a_standby"),
    "after the swap, before the row tokens are saved": ("sitegen.site.engine.rowtokens", "RowTokens.save"),
    "after the row tokens, before the rankings are saved": ("sitegen.site.engine.rankcache", "Rankings.save"),
    "after the caches, before the explain state is saved": ("sitegen.site.engine.explain", "save_state"),
}

_DIE_AT = """
import importlib, os, signal, sys
module, name = sys.argv[1], sys.argv[2]
owner = importlib.import_module(module)
*path, attribute = name.split(".")
for part in path:
    owner = getattr(owner, part)
setattr(owner, attribute, lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL))
from sitegen.cli.main import main
sys.argv = ["sitegen", *sys.argv[3:]]
main()
"""


def _edit_second_run(records: Path) -> None:
    path = records / "runs" / f"{TORCH_RUN_4096}.json"
    document = json.loads(path.read_text())
    document["spec"]["timing"]["latencyNs"]["median"] += 1000
    path.write_text(json.dumps(document, indent=2) + "\n")
    _lock(records)


@pytest.mark.parametrize("point", sorted(KILL_POINTS))
def test_a_build_killed_at_each_step_leaves_a_whole_site_and_usable_state(point, registry_copy, tmp_path):
    site, new_full, last_full = tmp_path / "site", tmp_path / "new-full", tmp_path / "last-full"
    _build(registry_copy, site)
    previous = _files(site)
    _edit_run_value(registry_copy, previous)
    _build(registry_copy, new_full, "--full")

    module, name = KILL_POINTS[point]
    killed = subprocess.run([sys.executable, "-c", _DIE_AT, module, name,
                             "build", "--records", str(registry_copy), "--out", str(site), "--no-search"],
                            capture_output=True, text=True, env=os.environ.copy(), timeout=120)
    assert killed.returncode == -signal.SIGKILL, (killed.returncode, killed.stdout, killed.stderr)
    # --out names a whole site, the old one or the new one, never a mix.
    if point in ("before the swap", "while the standby is brought up to date"):
        assert _files(site) == previous
    else:
        _assert_same_site(site, new_full)

    # The next build finishes the job and equals --full; a build after it has nothing to do.
    _build(registry_copy, site)
    _assert_same_site(site, new_full)
    assert _leftovers(site) == []
    assert "is up to date" in _build(registry_copy, site).output
    # The caches the killed build may have left unsaved still serve the next edit correctly.
    _edit_second_run(registry_copy)
    assert "up to date" not in _build(registry_copy, site).output
    _build(registry_copy, last_full, "--full")
    _assert_same_site(site, last_full)
