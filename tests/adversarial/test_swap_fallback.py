"""The swap without renameat2 (two renames): it replaces the site, and a build killed
between the renames loses nothing, because the next build puts the old site back first."""

from __future__ import annotations

import os

import sitegen.site.engine.swap as swap
import sitegen.site.engine.write as write
from besides import beside
from faults import FIXTURE, snapshot
from helpers import build


def _build(out):
    build(FIXTURE, out)  # must exit 0


def test_two_renames_replace_the_site(tmp_path, monkeypatch):
    out = tmp_path / "site"
    _build(out)
    first = snapshot(out)
    monkeypatch.setattr(swap, "exchange", lambda a, b: False)
    _build(out)
    # Beside the site, its standby alone (the site it replaced, kept for the next build to update).
    assert snapshot(out) == first and beside(tmp_path) == [".site.standby-*", "site"]


def test_a_site_lost_in_the_gap_is_put_back_by_the_next_build(tmp_path, monkeypatch):
    out = tmp_path / "site"
    _build(out)
    first = snapshot(out)
    # What a kill between the two renames leaves: the old site under .previous-, no --out.
    os.rename(out, tmp_path / ".site.previous-k1ll3d")
    (tmp_path / ".site.building-k1ll3d").mkdir()
    (tmp_path / ".site.building-k1ll3d" / "index.html").write_text("half")
    monkeypatch.setattr(swap, "exchange", lambda a, b: False)
    swap.clean_leftovers(out)
    assert snapshot(out) == first and beside(tmp_path) == [".site.standby-*", "site"]
    _build(out)
    assert snapshot(out) == first and beside(tmp_path) == [".site.standby-*", "site"]


def test_a_running_builds_folder_is_left_alone(tmp_path):
    out = tmp_path / "site"
    writer = write.SiteWriter(out)
    try:
        swap.clean_leftovers(out)
        assert writer.tmp.is_dir()
    finally:
        writer.abort()
    assert list(tmp_path.iterdir()) == []
