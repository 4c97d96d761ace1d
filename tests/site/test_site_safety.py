"""A build never loses the previous site, never writes half a site, never deletes foreign files."""

from __future__ import annotations

import json

import pytest

from besides import beside
from conftest import SEED_RUN
from sitegen.core.problems import InputError
from sitegen.site.build import build_site
from sitegen.site.engine.marker import MARKER


def _snapshot(root):
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _break_a_run(registry):
    path = registry / "runs" / f"{SEED_RUN}.json"
    doc = json.loads(path.read_text())
    doc["spec"]["timing"]["latencyNs"]["median"] = "fast"
    path.write_text(json.dumps(doc))


def test_failed_build_writes_nothing(registry_copy, tmp_path):
    _break_a_run(registry_copy)
    out = tmp_path / "out"
    with pytest.raises(InputError) as caught:
        build_site(registry_copy, out)
    assert any("latencyNs.median" in p.path for p in caught.value.problems)
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["records"]


def test_failed_build_leaves_the_previous_site_intact(registry_copy, tmp_path):
    out = tmp_path / "out"
    build_site(registry_copy, out)
    before = _snapshot(out)
    _break_a_run(registry_copy)
    with pytest.raises(InputError):
        build_site(registry_copy, out)
    assert _snapshot(out) == before
    assert beside(tmp_path) == [".out.standby-*", "out", "records"]


def test_rebuild_replaces_its_own_site(registry_copy, tmp_path):
    out = tmp_path / "out"
    build_site(registry_copy, out)
    (registry_copy / "sitegen.toml").write_text('[site]\ntitle = "Renamed registry"\n')
    build_site(registry_copy, out)
    assert "Renamed registry" in (out / "index.html").read_text()
    # The site it replaced is kept beside it as the standby, which the next build brings up to date.
    assert beside(tmp_path) == [".out.standby-*", "out", "records"]
    assert json.loads((out / MARKER).read_text())["generator"] == "sitegen"


def test_refuses_a_folder_it_did_not_build(registry_copy, tmp_path):
    out = tmp_path / "docs"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(InputError) as caught:
        build_site(registry_copy, out)
    assert "not built by sitegen" in caught.value.problems[0].message
    assert _snapshot(out) == {"notes.txt": b"mine"}


def test_refuses_to_replace_a_site_holding_foreign_files(registry_copy, tmp_path):
    out = tmp_path / "out"
    build_site(registry_copy, out)
    (out / "CNAME").write_text("registry.example.org")
    with pytest.raises(InputError) as caught:
        build_site(registry_copy, out)
    assert caught.value.problems[0].file.endswith("CNAME")
    assert (out / "CNAME").read_text() == "registry.example.org"
    assert (out / "index.html").exists()


def test_builds_into_an_empty_folder(registry_copy, tmp_path):
    out = tmp_path / "empty"
    out.mkdir()
    build_site(registry_copy, out)
    assert (out / "index.html").is_file()


def test_a_render_failure_midway_leaves_the_previous_site_and_no_temporary_folder(registry_copy, tmp_path, monkeypatch):
    from sitegen.site.render import Renderer

    out = tmp_path / "out"
    build_site(registry_copy, out)
    before = _snapshot(out)
    calls = {"n": 0}
    original = Renderer.render

    def flaky(self, template, page, **extra):
        calls["n"] += 1
        if calls["n"] == 5:
            raise RuntimeError("disk full")
        return original(self, template, page, **extra)

    monkeypatch.setattr(Renderer, "render", flaky)
    with pytest.raises(RuntimeError):
        # Another base URL, so that the build is not skipped as up to date.
        build_site(registry_copy, out, base_url="https://example.org/moved/")
    assert _snapshot(out) == before
    assert beside(tmp_path) == [".out.standby-*", "out", "records"]


@pytest.mark.parametrize("inside", ["site", "."])
def test_refuses_an_output_inside_the_registry(registry_copy, inside):
    with pytest.raises(InputError) as caught:
        build_site(registry_copy, registry_copy / inside)
    assert "outside the registry folder" in caught.value.problems[0].message
    assert not (registry_copy / "site").exists()


def test_refuses_an_output_that_contains_the_registry(registry_copy):
    with pytest.raises(InputError):
        build_site(registry_copy, registry_copy.parent)


def _list_in_marker(out, entry):
    marker = json.loads((out / MARKER).read_text())
    marker.setdefault("files", []).append(entry)
    (out / MARKER).write_text(json.dumps(marker))


@pytest.mark.parametrize("entry", ["../precious.txt", "assets/../../precious.txt", "PRECIOUS"])
def test_a_marker_listing_paths_outside_the_folder_is_refused_and_nothing_outside_is_deleted(registry_copy, tmp_path, entry):
    out = tmp_path / "m" / "site"
    build_site(registry_copy, out)
    precious = tmp_path / "m" / "precious.txt"
    precious.write_text("keep me")
    _list_in_marker(out, entry.replace("PRECIOUS", str(precious)))
    before = _snapshot(out)
    with pytest.raises(InputError) as caught:
        build_site(registry_copy, out)
    assert len(caught.value.problems) == 1
    assert "outside" in caught.value.problems[0].message
    assert precious.read_text() == "keep me"
    assert _snapshot(out) == before


def test_cli_refuses_a_marker_listing_a_parent_path_in_one_line(registry_copy, tmp_path):
    from click.testing import CliRunner

    from sitegen.cli.main import main

    out = tmp_path / "m" / "site"
    build_site(registry_copy, out)
    (tmp_path / "m" / "precious.txt").write_text("keep me")
    _list_in_marker(out, "../precious.txt")
    result = CliRunner().invoke(main, ["build", "--records", str(registry_copy), "--out", str(out)])
    assert result.exit_code == 1
    assert len([line for line in result.output.splitlines() if line.startswith(str(out))]) == 1
    assert (tmp_path / "m" / "precious.txt").read_text() == "keep me"


def _link_out(out, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "precious.txt").write_text("keep me")
    (out / "linked").symlink_to(elsewhere, target_is_directory=True)
    return elsewhere / "precious.txt"


def test_a_link_in_the_site_is_a_foreign_file(registry_copy, tmp_path):
    out = tmp_path / "m" / "site"
    build_site(registry_copy, out)
    precious = _link_out(out, tmp_path)
    _list_in_marker(out, "linked/precious.txt")
    with pytest.raises(InputError) as caught:
        build_site(registry_copy, out)
    assert caught.value.problems[0].file.endswith("linked")
    assert precious.read_text() == "keep me"


def test_removing_the_old_site_never_follows_a_link_out_of_it(registry_copy, tmp_path):
    out = tmp_path / "m" / "site"
    build_site(registry_copy, out)
    precious = _link_out(out, tmp_path)
    _list_in_marker(out, "linked")
    _list_in_marker(out, "linked/precious.txt")
    build_site(registry_copy, out)
    assert precious.read_text() == "keep me"
    assert (out / "index.html").is_file()


def test_the_file_list_is_one_list_per_operation_beside_a_small_marker(registry_copy, tmp_path, monkeypatch):
    import hashlib

    from sitegen.site.engine import marker as site_marker

    out = tmp_path / "site"
    build_site(registry_copy, out)
    marker = json.loads((out / MARKER).read_text())
    # One list for the operation's pages and runs, one for the rest of the site.
    assert "files" not in marker and sorted(marker["lists"]) == ["", "jensen-shannon-divergence"]
    assert (out / MARKER).stat().st_size < 10_000
    listed = set(site_marker.read_marker(out))
    assert listed == {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()} - {MARKER}
    # Each list names each of its files with the digest of its bytes.
    for name, _ in marker["lists"].values():
        for path, found in site_marker.parse_list((out / name).read_bytes()).items():
            assert found == hashlib.sha256((out / path).read_bytes()).hexdigest()[:32], path
    assert not build_site(registry_copy, out).fresh  # read back: the site is recognised as up to date
    (out / "stray.txt").write_text("someone's")
    with pytest.raises(InputError, match="not written by sitegen"):
        build_site(registry_copy, out)
    (out / "stray.txt").unlink()
    # A damaged list is no list: where the folders' stats vouch for the site, the next build makes
    # the lists again; where nothing does (another machine's cache), the folder is not sitegen's.
    site_list = out / marker["lists"][""][0]
    site_list.write_bytes(b"\x1f\x8b not a gzip stream")
    monkeypatch.setenv("SITEGEN_CACHE_DIR", str(tmp_path / "another-cache"))
    with pytest.raises(InputError, match="not built by sitegen"):
        build_site(registry_copy, out)
    monkeypatch.undo()
    (registry_copy / "sitegen.toml").write_text('[site]\ntitle = "Renamed registry"\n')
    build_site(registry_copy, out)
    build_site(registry_copy, tmp_path / "fresh", full=True)
    assert _snapshot(out) == _snapshot(tmp_path / "fresh")
