"""A rerun follows the protocol document it cites, not the harness's current constants."""

from __future__ import annotations

import json
from pathlib import Path

from sitegen.operations.jsd import JSD
from sitegen.rules import protocol

TOLERANCES = JSD.tolerances

RECORDS = Path(__file__).resolve().parents[2] / "records"


def _doc(measurement, tolerances=None):
    spec = {"measurement": measurement}
    if tolerances is not None:
        spec["correctness"] = {"tolerances": tolerances}
    return {"spec": spec}


def test_a_protocol_s_own_numbers_drive_the_workers():
    doc = _doc({"minSamples": 20, "minTimeMs": 900.0, "processes": 2, "warmup": {"minIterations": 6, "minMs": 40.0}},
               {"fp32": {"rtol": 1e-4}})
    got = protocol.settings(doc, interpret=False, tolerances=TOLERANCES)
    assert got["processes"] == 2 and got["minSamples"] == 20 and got["minTimeMs"] == 450.0
    assert got["warmup"] == [5, 40.0]
    assert got["rtol"]["fp32"] == 1e-4 and got["rtol"]["bf16"] == TOLERANCES["bf16"]


def test_this_harness_s_protocol_reads_back_as_its_constants():
    doc = protocol.protocol_document(JSD(), version=None, commit=None, repository=None, interpret=False)
    got = protocol.settings(doc, interpret=False, tolerances=TOLERANCES)
    assert (got["processes"], got["minSamples"], got["warmup"]) == (protocol.PROCESSES, protocol.MIN_SAMPLES, list(protocol.WARMUP))
    assert got["minTimeMs"] == protocol.MIN_TIME_MS / protocol.PROCESSES and got["rtol"] == TOLERANCES


def test_liger_s_do_bench_protocol_runs_in_one_process_and_the_interpreter_keeps_its_tiny_budget():
    liger = json.loads((RECORDS / "protocols" / "liger-bench-do-bench-forward.json").read_text())
    assert protocol.settings(liger, interpret=False, tolerances=TOLERANCES)["processes"] == 1
    controlled = json.loads(next((RECORDS / "protocols").glob("sitegen-rerun-controlled-*.json")).read_text())
    dry = protocol.settings(controlled, interpret=True, tolerances=TOLERANCES)
    assert dry["minSamples"] == protocol.INTERPRET_MIN_SAMPLES and dry["warmup"] == list(protocol.INTERPRET_WARMUP)


def test_every_committed_h200_rerun_was_measured_under_the_current_protocol():
    # A change to the protocol's text or numbers must come with a re-measure (#18 item 8): for each
    # operation, the harness as it stands must write the very protocol its committed reruns cite.
    from sitegen import operations
    from sitegen.core.digest import document_digest

    protocols = {document_digest(d): d for d in (json.loads(p.read_text(encoding="utf-8"))
                                                 for p in sorted((RECORDS / "protocols").glob("*.json")))}
    stale = set()
    for path in sorted((RECORDS / "runs").rglob("rerun-*nvidia-h200*.json")):
        cited = protocols[json.loads(path.read_text(encoding="utf-8"))["spec"]["protocolDigest"]]
        if cited["metadata"]["name"].startswith("liger-"):
            continue  # --like reruns of Liger's records follow Liger's own protocol
        harness = cited["spec"]["harness"]
        current = protocol.protocol_document(operations.by_name(path.parent.name), version=harness.get("version"),
                                             commit=harness.get("commit"), repository=harness.get("repository"),
                                             interpret=False)
        if document_digest(current) != document_digest(cited):
            stale.add(f"{path.parent.name}: {cited['metadata']['name']}")
    assert not stale, sorted(stale)
