"""The harness writes, word for word, the protocol documents its committed reruns cite (#18
item 8: a change to the protocol's text or numbers comes with a re-measure). Each committed
controlled protocol is written again from its operation and compared by digest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sitegen.core.digest import document_digest
from sitegen.operations import by_name, known
from sitegen.rules import protocol

PROTOCOLS = sorted((Path(__file__).resolve().parents[2] / "records" / "protocols").glob("sitegen-rerun-controlled-*.json"))


def _operation(doc):
    reference = doc["spec"]["correctness"]["reference"]
    ops = [op for op in map(by_name, known()) if op is not None and op.reference_name == reference]
    assert len(ops) == 1, reference
    return ops[0]


@pytest.mark.parametrize("path", PROTOCOLS, ids=lambda p: p.stem)
def test_the_harness_writes_the_committed_protocol_again(path):
    doc = json.loads(path.read_text(encoding="utf-8"))
    harness = doc["spec"]["harness"]
    again = protocol.protocol_document(_operation(doc), version=harness.get("version"), commit=harness.get("commit"),
                                       repository=harness.get("repository"), interpret=False,
                                       processes=doc["spec"]["measurement"]["processes"])
    assert again == doc
    assert document_digest(again) == document_digest(doc) and doc["metadata"]["name"] == path.stem


def test_an_interpreter_rehearsal_states_its_own_protocol():
    op = _operation(json.loads(PROTOCOLS[0].read_text(encoding="utf-8")))
    dry = protocol.protocol_document(op, version=None, commit=None, repository=None, interpret=True)
    spec = dry["spec"]
    assert dry["metadata"]["name"].startswith("sitegen-rerun-interpret-") and "harness" in spec
    assert spec["harness"] == {"name": protocol.HARNESS}
    assert spec["measurement"]["timer"] == "host_perf_counter" and spec["measurement"]["l2Flush"] is False
    assert spec["measurement"]["minSamples"] == protocol.INTERPRET_MIN_SAMPLES
    assert spec["measurement"]["warmup"]["minIterations"] == protocol.INTERPRET_WARMUP[0] + 1
    assert spec["correctness"]["poisonOutputs"] is False
    assert spec["devicePolicy"] == {"clocks": "as found", "l2FlushBytes": 0, "tritonInterpret": True}
    assert spec["comparability"]["family"] == protocol.INTERPRET_FAMILY
    assert spec["measurement"]["minTimeMs"] == protocol.INTERPRET_MIN_TIME_MS
    assert dry["metadata"]["title"] == "sitegen rerun · CPU rehearsal under Triton's interpreter"
    notes = spec["comparability"]["notes"]
    assert notes.startswith("A dry run on the CPU under Triton's interpreter: it rehearses the pipeline and its numbers "
                            "time numpy, not a GPU. Timed: ")
    # No GPU, no throttling to wait out: the notes go from the flags straight to comparability.
    assert "is flagged. Comparable with runs of this family" in notes and "Throttled time is kept out" not in notes


def test_the_harness_is_named_with_every_fact_given():
    op = _operation(json.loads(PROTOCOLS[0].read_text(encoding="utf-8")))
    doc = protocol.protocol_document(op, version="1.2", commit="abc123", repository="https://example.org/r", interpret=False)
    assert doc["spec"]["harness"] == {"name": protocol.HARNESS, "version": "1.2", "repository": "https://example.org/r",
                                      "commit": "abc123"}
    assert doc["metadata"]["title"] == "sitegen rerun · controlled GPU rerun"


# --- what the workers do under a protocol document (protocol.settings) --------------------

TOLERANCES = {"fp32": 1e-3, "bf16": 1e-2}


def _settings(measurement, interpret=False):
    return protocol.settings({"spec": {"measurement": measurement}}, interpret, TOLERANCES)


def test_a_document_s_own_counts_drive_the_workers_with_defaults_for_what_it_leaves_out():
    got = _settings({"minSamples": 7, "processes": 2})
    assert got == {"processes": 2, "minSamples": 7, "minTimeMs": 0.0, "maxTimeMs": protocol.MAX_TIME_MS / 2,
                   "warmup": [0, 0.0], "rtol": TOLERANCES}
    # A minimum time past this harness's maximum is the maximum too.
    long = _settings({"minSamples": 7, "minTimeMs": 3000.0, "processes": 3, "warmup": {"minIterations": 4, "minMs": 9.0}})
    assert (long["minTimeMs"], long["maxTimeMs"], long["warmup"]) == (1000.0, 1000.0, [3, 9.0])


def test_a_protocol_without_sample_counts_is_timed_by_this_harness_s_numbers_in_one_process():
    got = _settings({"timer": "do_bench"})
    assert got == {"processes": 1, "minSamples": protocol.MIN_SAMPLES, "minTimeMs": protocol.MIN_TIME_MS,
                   "maxTimeMs": protocol.MAX_TIME_MS, "warmup": list(protocol.WARMUP), "rtol": TOLERANCES}


def test_the_interpreter_keeps_its_tiny_budget_whatever_the_document_says():
    stated = {"minSamples": 50, "minTimeMs": 3000.0, "processes": 3, "warmup": {"minIterations": 10, "minMs": 100.0}}
    for measurement in (stated, {}):
        got = _settings(measurement, interpret=True)
        assert got["minSamples"] == protocol.INTERPRET_MIN_SAMPLES and got["warmup"] == list(protocol.INTERPRET_WARMUP)
        assert got["minTimeMs"] == protocol.INTERPRET_MIN_TIME_MS / got["processes"]
        assert got["maxTimeMs"] == protocol.INTERPRET_MIN_TIME_MS / got["processes"]
