"""`sitegen build --explain PAGE` (issue 32): whether the build took the page unchanged from the
site it replaced or made it again, and the registry files behind the change."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import FIXTURE, TORCH_RUN, edit_run
from helpers import build, lock


def _build(records: Path, out: Path, *explain: str) -> list[str]:
    args: list[str] = []
    for page in explain:
        args += ["--explain", page]
    result = build(records, out, "--no-search", "--quiet", *args)  # must exit 0
    # One stdout line per page asked about, in the order asked; the build's own line is on stderr.
    lines = [line for line in result.stdout.splitlines() if line]
    assert len(lines) == len(explain), result.stdout
    return lines


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _small(tmp_path: Path) -> tuple[Path, Path]:
    records = tmp_path / "records"
    shutil.copytree(FIXTURE, records)
    out = tmp_path / "site"
    _build(records, out)
    return records, out


def test_an_edited_run_s_page_is_made_again_and_its_file_named(tmp_path):
    records, out = _small(tmp_path)

    def double(spec):
        spec["timing"]["latencyNs"].update({k: v * 2 for k, v in spec["timing"]["latencyNs"].items()})

    edit_run(records, TORCH_RUN, double)
    [line] = _build(records, out, f"runs/{TORCH_RUN}/")
    assert line.startswith(f"runs/{TORCH_RUN}/index.html: made again: ")
    assert f"runs/{TORCH_RUN}.json" in line and "its bytes changed" in line
    assert "shares" not in line  # the edit is the run's own, not one every page shares


def test_a_shared_setting_names_the_file_every_page_depends_on(tmp_path):
    records, out = _small(tmp_path)
    config = records / "sitegen.toml"
    config.write_text(config.read_text().replace('title = "', 'title = "Renamed ', 1))
    [line] = _build(records, out, f"/runs/{TORCH_RUN}")
    assert line.startswith(f"runs/{TORCH_RUN}/index.html: made again: what every page shares changed: sitegen.toml")


def test_a_no_op_build_says_nothing_was_made_and_an_unknown_page_is_named(tmp_path):
    records, out = _small(tmp_path)
    assert _build(records, out, "index.html", "no/such/page/") == [
        "index.html: unchanged: the site was already built from the same records and options",
        "no/such/page/index.html: not a page of this site",
    ]


def test_asking_changes_nothing_that_is_built(tmp_path):
    records, plain = _small(tmp_path)
    asked = tmp_path / "asked"
    _build(records, asked)
    edit_run(records, TORCH_RUN, lambda spec: spec["timing"]["latencyNs"].update(median=spec["timing"]["latencyNs"]["median"] + 1))
    _build(records, plain)
    _build(records, asked, "index.html", f"runs/{TORCH_RUN}/", "implementations/")
    assert _files(asked) == _files(plain)


def test_pages_of_an_operation_whose_runs_did_not_change_are_taken_without_being_made(tmp_path, bundled_without_kernelbench):
    records = tmp_path / "records"
    shutil.copytree(bundled_without_kernelbench, records)
    out = tmp_path / "site"
    _build(records, out)
    edited = json.loads(sorted((records / "runs" / "rms-norm").glob("liger-*.json"))[0].read_text())["metadata"]["name"]
    other = json.loads(sorted((records / "runs" / "geglu").glob("*.json"))[0].read_text())["metadata"]["name"]

    def double(spec):
        spec["timing"]["latencyNs"].update({k: v * 2 for k, v in spec["timing"]["latencyNs"].items()})

    path = records / "runs" / "rms-norm" / f"{edited}.json"
    doc = json.loads(path.read_text())
    double(doc["spec"])
    path.write_text(json.dumps(doc, indent=2))
    lock(records)  # must exit 0
    edited_line, other_line, operation_line = _build(records, out, f"runs/{edited}/", f"runs/{other}/", "operations/geglu/")
    assert edited_line.startswith(f"runs/{edited}/index.html: made again: the runs or notes of operation rms-norm's group changed: "
                                  f"runs/rms-norm/{edited}.json")
    assert other_line == (f"runs/{other}/index.html: taken unchanged from the previous site without being made: "
                          "the key of operation geglu's group is the one the previous build recorded")
    assert operation_line.startswith("operations/geglu/index.html: taken unchanged from the previous site without being made")


def test_files_are_named_only_against_the_site_that_is_there(tmp_path):
    # The build state's record of what a build saw (sitegen.state.store) is of the site it
    # made; a site since replaced by a build that kept no record (--full) is not that site.
    records, out = _small(tmp_path)

    def scale(factor):
        def edit(spec):
            spec["timing"]["latencyNs"].update({k: v * factor for k, v in spec["timing"]["latencyNs"].items()})
        return edit

    edit_run(records, TORCH_RUN, scale(2))
    result = build(records, out, "--no-search", "--quiet", "--full", check=False)
    assert result.exit_code == 0, result.output
    edit_run(records, TORCH_RUN, scale(3))
    [line] = _build(records, out, f"runs/{TORCH_RUN}/")
    assert line.startswith(f"runs/{TORCH_RUN}/index.html: made again: ")
    assert "kept no record of the previous build's files" in line
    # Once a build kept its record, the next one names the file again.
    edit_run(records, TORCH_RUN, scale(5))
    [line] = _build(records, out, f"runs/{TORCH_RUN}/")
    assert f"runs/{TORCH_RUN}.json" in line and "its bytes changed" in line
