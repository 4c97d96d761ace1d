"""`sitegen sign` signs by default exactly what a rerun wrote: the files of the rerun journal whose
bytes are unchanged. A record planted beside them (with its own lock entry), one edited since the
rerun wrote it, or a journal entry added while measured code ran, is never signed by default."""

from __future__ import annotations

import json
from pathlib import Path

from test_signatures import keys, lock, page, registry, trust_toml  # noqa: F401 (fixtures)
from trust_registry import RUN, cli, write_json

NAME = RUN.stem
PLANTED = "rerun-jsd-full-sitegen-nvidia-h200-tokens2048-vocab128256-fp32-planted"


def _plant(root: Path) -> Path:
    """What an outside implementation could leave in --out: a rerun record under a name of its own (here a
    copy of the measured one, observed a minute later); then `lock` gives it a lock entry like any new record."""
    doc = json.loads((root / "runs" / RUN.name).read_text())
    doc["metadata"]["name"] = PLANTED
    doc["spec"]["observedAt"] = doc["spec"]["observedAt"].replace(":47:", ":48:")
    path = root / "runs" / f"{PLANTED}.json"
    write_json(path, doc)
    lock(root)
    return path


def _signed(path: Path) -> bool:
    return bool(json.loads(path.read_text())["metadata"].get("signature"))


def test_a_planted_record_is_not_signed_by_default(registry, keys, tmp_path):
    lock(registry)
    planted = _plant(registry)
    result = cli("sign", "--key", keys["trusted"][0], "--records", registry)
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [
        f"signed {NAME}",
        "left unsigned: 1 controlled rerun(s) that no rerun wrote here (name them to sign them)",
        "signed 1 run(s); 1 file(s) changed",
    ]
    assert _signed(registry / "runs" / RUN.name) and not _signed(planted)
    lock(registry)
    assert page(registry, tmp_path)[0] == "Verified"  # the journalled rerun


def test_a_journalled_file_edited_since_the_rerun_is_refused(registry, keys):
    lock(registry)
    path = registry / "runs" / RUN.name
    doc = json.loads(path.read_text())
    doc["spec"]["correctness"]["notes"] = "edited after the rerun"
    write_json(path, doc)
    lock(registry)
    result = cli("sign", "--key", keys["trusted"][0], "--records", registry)
    assert result.exit_code == 0, result.output
    assert f"{path}: changed since the rerun wrote it; not signed (name its runs to sign them)" in result.stderr.splitlines()
    assert not _signed(path)
    # Named, the holder has read it: it is signed.
    assert cli("sign", NAME, "--key", keys["trusted"][0], "--records", registry).exit_code == 0
    assert _signed(path)


def test_an_entry_measured_code_adds_to_the_journal_during_a_rerun_is_not_kept(registry, keys, tmp_path):
    from sitegen.rerun.outcome import records

    from sitegen.registry import journal
    lock(registry)
    kept = journal.read(registry)  # what `sitegen rerun` reads before any measuring process starts
    planted = _plant(registry)
    # The measured code journals its planted record as a rerun would...
    forged = {**kept, f"runs/{planted.name}": journal.digest(planted.read_bytes())}
    (registry / journal.JOURNAL).write_bytes(journal.render(forged))
    # ...then the rerun writes what it measured, with the journal it read.
    other = json.loads((registry / "runs" / RUN.name).read_text())
    other["metadata"]["name"] += "-second"
    other["spec"]["observedAt"] = other["spec"]["observedAt"].replace(":47:", ":49:")
    records.write_all(registry, [(registry / "runs" / f"{other['metadata']['name']}.json",
                                  (json.dumps(other, indent=2) + "\n").encode())], journal=kept)
    assert f"runs/{planted.name}" not in journal.read(registry)
    result = cli("sign", "--key", keys["trusted"][0], "--records", registry, "--json")
    assert result.exit_code == 0, result.output
    assert not _signed(planted)
    assert json.loads(result.stdout)["signed"] == sorted([NAME, other["metadata"]["name"]])


def test_sign_empties_the_journal_it_signed(registry, keys):
    from sitegen.registry import journal

    lock(registry)
    assert journal.read(registry) != {}
    assert cli("sign", "--key", keys["trusted"][0], "--records", registry).exit_code == 0
    assert journal.read(registry) == {}
