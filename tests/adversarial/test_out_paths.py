"""--out named as '.' is the same folder as named by its path, and a build that a planted link
makes fail leaves no staging folder beside the site."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from besides import beside
from helpers import build
from hostile import registry

# Without the search index; each test reads the exit code itself.
_build = partial(build, flags=("--no-search",), check=False)


def _files(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in sorted(site.rglob("*"))
            if p.is_file() and not p.name.startswith(".sitegen")}


def test_out_dot_in_an_empty_folder_is_that_folder(tmp_path, monkeypatch):
    records = registry(tmp_path)
    by_path, by_dot = tmp_path / "by-path", tmp_path / "by-dot"
    by_path.mkdir()
    by_dot.mkdir()
    assert _build(records, str(by_path)).exit_code == 0
    monkeypatch.chdir(by_dot)
    first = _build(records, ".")
    assert first.exit_code == 0, first.output
    assert _files(by_dot) == _files(by_path)
    # Nothing made beside either but its standby (the copy the next build brings up to date).
    assert beside(tmp_path) == [".by-dot.standby-*", ".by-path.standby-*", "by-dot", "by-path", "records"]
    # Built by sitegen now: a second build knows it, as it would by path. The site was swapped in
    # under the folder's name, so the folder this process stood in is the old one: enter it again,
    # as `cd .` does in a shell.
    monkeypatch.chdir(by_dot)
    again = _build(records, ".")
    assert again.exit_code == 0 and "up to date" in again.output, again.output


def test_a_build_refused_over_a_planted_link_leaves_no_staging_folder(tmp_path):
    records = registry(tmp_path)
    site = tmp_path / "site"
    assert _build(records, str(site)).exit_code == 0
    (tmp_path / "elsewhere").mkdir()
    (site / "linked").symlink_to(tmp_path / "elsewhere")
    for title in ("changed once", "changed twice"):  # not up to date, so the build stages a new site
        (records / "sitegen.toml").write_text((records / "sitegen.toml").read_text().replace(
            'title = "sitegen registry"', f'title = "{title}"').replace('title = "changed once"', f'title = "{title}"'))
        result = _build(records, str(site))
        assert result.exit_code == 1 and "site/linked: $: not written by sitegen" in result.output
        assert beside(tmp_path) == [".site.standby-*", "elsewhere", "records", "site"]
