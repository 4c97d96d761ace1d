"""Evidence levels and rerun verdicts follow the records, never a declaration."""

from __future__ import annotations

import html

import pytest

from conftest import SEED_RUN, edit_run
from sitegen.registry.config import load_config
from sitegen.registry.folder import open_registry
from sitegen.site.build import build_site
from sitegen.facts.index import build_index

SECOND = "sitegen-h200-tokens2048-2026-08-21"
FIRST = "sitegen-h200-tokens2048-2026-08-20"


def _index(root):
    index = build_index(open_registry(root), load_config(root))
    return {f.name: f for f in index.runs}


def test_levels_of_the_fixture(registry_copy):
    runs = _index(registry_copy)
    assert runs[SEED_RUN].level == "Reported"
    assert runs[FIRST].level == runs[SECOND].level == "Replicated"
    assert runs["liger-h200-tokens2048-rerun-2026-08-20"].level == "Verified"
    assert runs["sitegen-h200-tokens2048-dry-2026-08-19"].level == "Reproducible"


def _slow_down(spec):
    spec["timing"]["samplesNs"] = [1_000_000] * 5
    spec["timing"]["latencyNs"] = {"median": 1_000_000, "min": 1_000_000, "max": 1_000_000, "p20": 1_000_000, "p80": 1_000_000}


def test_disagreeing_machines_are_not_replicated_and_the_rerun_is_not_reproduced(registry_copy, tmp_path):
    edit_run(registry_copy, SECOND, _slow_down)
    runs = _index(registry_copy)
    assert runs[FIRST].level == runs[SECOND].level == "Verified"
    build_site(registry_copy, tmp_path / "out")
    page = (tmp_path / "out" / "runs" / SECOND / "index.html").read_text()
    assert "not reproduced (23.5% slower)" in page


def test_same_gpu_twice_is_not_replicated(registry_copy):
    edit_run(registry_copy, SECOND, lambda spec: spec["evidence"]["instance"].update(gpuUuid="GPU-1111aaaa"))
    runs = _index(registry_copy)
    assert runs[FIRST].level == runs[SECOND].level == "Verified"


@pytest.mark.parametrize("change", [
    lambda s: s["evidence"]["integrity"][0].update(passed=False),
    lambda s: s["correctness"]["cases"][1].update(passed=False),
    lambda s: s["evidence"].update(dryRun=True),
    lambda s: s["evidence"]["instance"].pop("gpuUuid"),
    lambda s: s["timing"].pop("samplesNs"),
])
def test_any_failed_gate_withholds_verified(registry_copy, change):
    edit_run(registry_copy, "liger-h200-tokens2048-rerun-2026-08-20", change)
    assert _index(registry_copy)["liger-h200-tokens2048-rerun-2026-08-20"].level in {"Reported", "Reproducible"}


def test_attestations_never_change_the_level(registry_copy):
    runs = _index(registry_copy)
    assert runs[SEED_RUN].attestations and runs[SEED_RUN].level == "Reported"


def test_a_dry_runs_unmade_gpu_checks_do_not_read_as_a_failed_kernel(registry_copy, tmp_path):
    # A CPU rehearsal cannot read NVML, so its throttle check says "not checked"; its page must
    # not tell a kernel author that their code failed an integrity check.
    dry = "sitegen-h200-tokens2048-dry-2026-08-19"

    def unmade(spec):
        spec["evidence"]["integrity"].append({"name": "throttle", "passed": False, "detail": "not checked: NVML unavailable"})
    edit_run(registry_copy, dry, unmade)
    build_site(registry_copy, tmp_path / "site")
    page = html.unescape((tmp_path / "site" / "runs" / dry / "index.html").read_text())
    assert "flagged: throttle: not checked: NVML unavailable" in page
    assert "a run that failed an integrity check" not in page
    assert "A dry run (CPU rehearsal)" in page
