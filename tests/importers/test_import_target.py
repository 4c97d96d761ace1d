"""`sitegen import liger` into a registry that already holds things: checked before any write,
and its digests.lock extended, never rebuilt from whatever is on disk."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sitegen.registry.lockfile import LOCK_NAME
from sitegen.registry.folder import lock_contents, open_registry
from helpers import invoke as _invoke
from sharedinputs import CSV, require_csv

SEED_RUN = "runs/jsd/liger-jsd-forward-liger-nvidia-b200-tokens2048-vocab128256-fp32-2026-05-27-17-14-29.json"


@pytest.fixture(autouse=True)
def _needs_csv():
    require_csv()


def _small_csv(tmp_path: Path) -> Path:
    # Header, then Liger's B200 jsd forward rows at tokens 1024 and 2048.
    lines = CSV.read_text(encoding="utf-8").splitlines()
    path = tmp_path / "small.csv"
    path.write_text("\n".join([lines[0], lines[2201], lines[2202]]) + "\n", encoding="utf-8")
    return path


def _snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mtime_ns) for p in sorted(root.rglob("*")) if p.is_file()}


def _edit(path: Path, change) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    change(document)
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")


def _variant_operation(source: Path, target: Path, name: str) -> None:
    """An OperationSpec the importer never writes: another name and a different spec."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source.read_bytes())

    def change(document):
        document["metadata"]["name"] = name
        document["spec"]["axes"][0]["description"] += " (variant)"

    _edit(target, change)


@pytest.fixture
def imported(tmp_path) -> tuple[Path, Path]:
    """A locked registry: the small CSV's import plus one locked document it did not write."""
    csv_file = _small_csv(tmp_path)
    out = tmp_path / "records"
    assert _invoke("import", "liger", str(csv_file), "--out", str(out)).exit_code == 0
    _variant_operation(out / "operations" / "jsd.json", out / "operations" / "hand" / "jsd-variant.json", "jsd-variant")
    assert _invoke("lock", str(out)).exit_code == 0
    return csv_file, out


def _bump_median(document):
    document["spec"]["timing"]["latencyNs"]["median"] += 1


def _bump_axis(document):
    document["spec"]["axes"][0]["description"] += "!"


@pytest.mark.parametrize(("relative", "change"), [
    (SEED_RUN, _bump_median),  # a file the import writes
    ("operations/hand/jsd-variant.json", _bump_axis),  # a file it does not write
])
def test_an_edited_record_aborts_the_import_and_nothing_is_written(imported, relative, change):
    csv_file, out = imported
    _edit(out / relative, change)
    before = _snapshot(out)
    result = _invoke("import", "liger", str(csv_file), "--out", str(out))
    assert result.exit_code == 1
    problem = [line for line in result.stderr.splitlines() if line.startswith(f"{out / relative}: $.spec: digest ")]
    assert problem and f"in {LOCK_NAME}: the spec changed" in problem[0]
    assert _snapshot(out) == before
    # The edit is still caught afterwards: the import did not bless it.
    assert _invoke("verify", str(out)).exit_code == 1


def test_a_broken_file_in_the_folder_aborts_before_any_write(tmp_path):
    out = tmp_path / "records"
    out.mkdir()
    (out / "junk.json").write_text("{", encoding="utf-8")
    result = _invoke("import", "liger", str(_small_csv(tmp_path)), "--out", str(out))
    assert result.exit_code == 1
    assert any(line.startswith(f"{out / 'junk.json'}: ") for line in result.stderr.splitlines())
    assert [p.name for p in out.rglob("*")] == ["junk.json"]


def test_a_document_the_import_would_collide_with_aborts_before_any_write(tmp_path):
    first = tmp_path / "first"
    csv_file = _small_csv(tmp_path)
    assert _invoke("import", "liger", str(csv_file), "--out", str(first)).exit_code == 0
    out = tmp_path / "records"
    # Same name as the import's OperationSpec "jsd", another spec, another file.
    _variant_operation(first / "operations" / "jsd.json", out / "operations" / "mine.json", "jsd")
    result = _invoke("import", "liger", str(csv_file), "--out", str(out))
    assert result.exit_code == 1
    assert "OperationSpec name 'jsd' is already used in" in result.stderr
    assert [str(p.relative_to(out)) for p in sorted(out.rglob("*"))] == ["operations", "operations/mine.json"]


def test_the_lock_keeps_its_entries_and_gains_the_new_documents(imported):
    csv_file, out = imported
    lines = CSV.read_text(encoding="utf-8").splitlines()
    newer = csv_file.parent / "newer.csv"
    newer.write_text(csv_file.read_text(encoding="utf-8") + lines[2203] + "\n", encoding="utf-8")
    old_lock = json.loads((out / LOCK_NAME).read_text())["documents"]
    result = _invoke("import", "liger", str(newer), "--out", str(out))
    assert result.exit_code == 0, result.output
    new_lock = json.loads((out / LOCK_NAME).read_text())["documents"]
    assert {k: v for k, v in new_lock.items() if k in old_lock} == old_lock
    assert set(new_lock) - set(old_lock) == {
        "BenchmarkRun/liger-jsd-forward-liger-nvidia-b200-tokens4096-vocab128256-fp32-2026-05-27-17-14-29",
        "WorkloadCase/jsd-tokens4096-vocab128256-fp32",
    }
    assert _invoke("verify", str(out)).exit_code == 0
    # Byte for byte what `sitegen lock` would write for the same registry.
    assert (out / LOCK_NAME).read_bytes() == lock_contents(open_registry(out))


def test_a_folder_without_a_lock_gets_a_lock_of_only_what_the_import_wrote(tmp_path):
    csv_file = _small_csv(tmp_path)
    first = tmp_path / "first"
    assert _invoke("import", "liger", str(csv_file), "--out", str(first)).exit_code == 0
    out = tmp_path / "records"
    _variant_operation(first / "operations" / "jsd.json", out / "operations" / "hand" / "jsd-variant.json", "jsd-variant")
    result = _invoke("import", "liger", str(csv_file), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "1 document(s) this import did not write are not in digests.lock" in result.stderr
    assert (out / LOCK_NAME).read_bytes() == (first / LOCK_NAME).read_bytes()
    verify = _invoke("verify", str(out))
    assert verify.exit_code == 1 and "OperationSpec/jsd-variant is not in digests.lock" in verify.stderr


def test_a_source_file_linked_out_of_the_registry_is_one_line_and_nothing_is_written(imported, tmp_path):
    # Every input goes through the registry's one reader: the importer's read of the existing
    # source file (for its published date) too. A link out is refused unless asked for.
    csv_file, out = imported
    source = out / "sources" / "liger-kernel-bench.toml"
    outside = tmp_path / "elsewhere.toml"
    outside.write_bytes(source.read_bytes())
    source.unlink()
    source.symlink_to(outside)
    before = _snapshot(out)
    result = _invoke("import", "liger", str(csv_file), "--out", str(out))
    assert result.exit_code == 1, result.output
    problems = [line for line in result.output.splitlines() if ": $: " in line]
    assert len(problems) == 1, result.output
    assert "sources/liger-kernel-bench.toml: $: is a link" in problems[0] and "outside the registry" in problems[0]
    assert _snapshot(out) == before
    allowed = _invoke("import", "liger", str(csv_file), "--out", str(out), "--allow-outside-links")
    assert allowed.exit_code == 0, allowed.output
