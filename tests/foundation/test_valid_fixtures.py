"""Valid fixtures of every kind pass; the seed manifest's digests are the ones its run cites."""

from __future__ import annotations

import json
import shutil

from manifest_edits import REGISTRY, SEED, VALID, cli, problem_lines

from sitegen.format.model import KINDS


def test_a_valid_fixture_for_every_kind():
    for kind in KINDS:
        path = VALID / f"{kind}.json"
        document = json.loads(path.read_text(encoding="utf-8"))
        assert document["kind"] == kind
        result = cli("validate", path)
        assert result.exit_code == 0, result.stderr
        assert result.stderr.splitlines() == ["1 document(s) valid."]


def test_the_valid_folder_passes_as_a_whole():
    result = cli("validate", "--json", VALID)
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    # One document per kind, plus the seed bundle's three.
    assert payload == {"ok": True, "problems": [], "documents": len(KINDS) + 3}


def test_seed_digests_match_the_references_of_its_run():
    result = cli("digest", "--json", SEED)
    assert result.exit_code == 0, result.stderr
    rows = {row["kind"]: row for row in json.loads(result.stdout)["documents"]}
    spec = json.loads(SEED.read_text(encoding="utf-8"))["run"]["spec"]
    assert rows["BenchmarkProtocol"]["digest"] == spec["protocolDigest"]
    assert rows["ExecutionEnvironment"]["digest"] == spec["environmentDigest"]
    assert rows["BenchmarkRun"]["digest"].startswith("sha256:efaaa145f23845f43342a26")
    assert {row["pointer"] for row in rows.values()} == {"$.run", "$.protocol", "$.environment"}


def test_digest_prints_one_line_per_document():
    result = cli("digest", SEED, VALID / "OperationSpec.json")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 4
    names = {
        "BenchmarkRun": json.loads(SEED.read_text(encoding="utf-8"))["run"]["metadata"]["name"],
        "OperationSpec": json.loads((VALID / "OperationSpec.json").read_text(encoding="utf-8"))["metadata"]["name"],
    }
    for line in lines:
        digest, kind, name = line.split()
        assert len(digest) == len("sha256:") + 64 and digest.startswith("sha256:")
        assert kind in KINDS
        if kind in names:
            assert name == names[kind]


def test_fixture_registry_verifies(tmp_path):
    result = cli("verify", "--json", REGISTRY)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {"ok": True, "problems": [], "documents": len(KINDS)}


def test_lock_reproduces_the_committed_lock(tmp_path):
    root = tmp_path / "registry"
    shutil.copytree(REGISTRY, root)
    (root / "digests.lock").unlink()
    assert cli("lock", root).exit_code == 0
    assert (root / "digests.lock").read_bytes() == (REGISTRY / "digests.lock").read_bytes()
    # Deterministic: locking again changes nothing.
    assert cli("lock", root).exit_code == 0
    assert (root / "digests.lock").read_bytes() == (REGISTRY / "digests.lock").read_bytes()


def test_verify_refuses_a_document_missing_from_the_lock(tmp_path):
    root = tmp_path / "registry"
    shutil.copytree(REGISTRY, root)
    shutil.copy(SEED.parent / "seed-manifest.json", root / "seed.json")
    result = cli("verify", root)
    assert result.exit_code == 1
    # The seed's run cites a workload and an implementation this registry lacks, and none
    # of its three documents is locked.
    assert any("not in digests.lock" in line for line in problem_lines(result))
    assert all(line.startswith(str(root / "seed.json")) for line in problem_lines(result))


def test_verify_refuses_a_locked_document_that_disappeared(tmp_path):
    root = tmp_path / "registry"
    shutil.copytree(REGISTRY, root)
    (root / "Attestation.json").unlink()
    result = cli("verify", root)
    assert result.exit_code == 1
    [line] = problem_lines(result)
    assert line.startswith(f"{root / 'digests.lock'}: $.documents['Attestation/") and "missing" in line


def test_a_hand_edited_lock_key_cannot_split_the_report_line(tmp_path):
    root = tmp_path / "registry"
    shutil.copytree(REGISTRY, root)
    lock = json.loads((root / "digests.lock").read_text(encoding="utf-8"))
    lock["documents"]["Run/it's\nbroken"] = "sha256:" + "0" * 64
    (root / "digests.lock").write_text(json.dumps(lock), encoding="utf-8")
    result = cli("verify", root)
    assert result.exit_code == 1
    assert problem_lines(result) == [f"{root / 'digests.lock'}: $.documents['Run/it\\'s\\nbroken']: locked document is missing from the registry"]
