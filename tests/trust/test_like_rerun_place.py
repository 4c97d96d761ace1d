"""A --like rerun (under a cited protocol, whose harness is not sitegen's) is known as a rerun by its
command and its integrity checks: stripping the command must not turn the unsigned rerun into a
Reported run that takes first place in the cited protocol's cohort."""

from __future__ import annotations

import json
from pathlib import Path

from trust_registry import RECORDS, mini_registry

LIKE_RUN = min((RECORDS / "runs" / "jsd").glob("rerun-jsd-forward-liger-nvidia-h200-tokens2048-vocab128256-fp32-*.json"))


def _facts(root: Path):
    from sitegen.registry.config import load_config
    from sitegen.registry.folder import open_registry
    from sitegen.facts.index import build_index

    index = build_index(open_registry(root, check_lock_file=False), load_config(root))
    [facts] = [f for f in index.runs if f.name == json.loads(LIKE_RUN.read_text())["metadata"]["name"]]
    return facts


def test_an_unsigned_like_rerun_takes_no_place(tmp_path):
    root = mini_registry(tmp_path / "records", LIKE_RUN)
    facts = _facts(root)
    assert facts.harness != "sitegen rerun"  # the cited protocol's harness: only the command says rerun
    assert facts.rank is None and facts.reasons == ["not Verified: unsigned"]


def test_the_same_rerun_without_its_command_takes_no_place_either(tmp_path):
    root = mini_registry(tmp_path / "records", LIKE_RUN)
    path = root / "runs" / LIKE_RUN.name
    doc = json.loads(path.read_text())
    assert doc["spec"]["evidence"]["integrity"]
    del doc["spec"]["evidence"]["command"]
    path.write_text(json.dumps(doc, indent=2))
    facts = _facts(root)
    assert facts.rank is None
    assert facts.reasons == ["not Verified: it carries a rerun's integrity checks but no record of the command that ran them"]
