"""Only evidence nobody can type in takes a place: in a cohort of controlled reruns a run ranks, leads
and counts in a summary only when Verified (or Replicated); every other rerun stays listed with its
value and one line saying why. Each test plants what a forger would (the fixture registry's H200
cohort: sitegen's Replicated pair and Liger's signed rerun)."""

from __future__ import annotations

import json

from conftest import FIXTURE_KEY, OPERATION, relock
from helpers import build, invoke
from sitecheck import catalog_runs
from sitegen.trust.registrysigning import sign_registry
from sitegen.rules.stats import summary
from sitegen.core.signing import keygen

SITEGEN = "sitegen-h200-tokens2048-2026-08-21"
LIGER = "liger-h200-tokens2048-rerun-2026-08-20"
FORGED = "liger-h200-tokens2048-rerun-2026-08-22"
H200_PAGE = f"operations/{OPERATION}/nvidia-h200/index"


def _plant(root, source: str, name: str, *, factor: float, implementation: dict | None = None) -> dict:
    """A copy of run ``source`` named ``name``, its samples (and the figures they give) ``factor`` times
    the original's, unsigned: what a forger types by hand, consistent enough to pass validation."""
    doc = json.loads((root / "runs" / f"{source}.json").read_text())
    doc["metadata"]["name"] = name
    doc["metadata"]["title"] = "a forged rerun"
    doc["metadata"].pop("signature", None)
    timing = doc["spec"]["timing"]
    timing["samplesNs"] = [round(s * factor) for s in timing["samplesNs"]]
    stated = summary(timing["samplesNs"])
    timing["latencyNs"] = {k: stated[k] for k in timing["latencyNs"]}
    doc["spec"]["observedAt"] = "2026-08-22T10:00:00Z"
    if implementation is not None:
        from sitegen.core.digest import document_digest

        (root / "implementations" / f"{implementation['metadata']['name']}.json").write_text(json.dumps(implementation, indent=2))
        doc["spec"]["implementationDigest"] = document_digest(implementation)
    (root / "runs" / f"{name}.json").write_text(json.dumps(doc, indent=2))
    relock(root)
    return doc


def _outside_implementation(root) -> dict:
    """A new implementation of outside code, as a pull request would add one."""
    [path] = [p for p in (root / "implementations").glob("*.json") if '"sitegen.' in p.read_text()][:1]
    doc = json.loads(path.read_text())
    doc["metadata"]["name"] = "fastest-jsd-0-1"
    doc["metadata"].pop("title", None)
    doc["spec"]["name"] = "Fastest JSD"
    doc["spec"]["projectRevision"] = {"project": "fastest-jsd", "version": "0.1"}
    doc["spec"]["callable"] = {"module": "fastest_jsd.kernel", "name": "FastestJSD"}
    return doc


def _build(root, tmp_path):
    out = tmp_path / "site"
    build(root, out, "--no-search", "--quiet")  # must exit 0
    return out, {run["name"]: run for run in catalog_runs(out)}


def _summary_leaders(out) -> list[str]:
    twin = json.loads((out / f"{H200_PAGE}.json").read_text())
    return [row["leader"]["text"] for group in twin["summary"] for row in group["rows"]]


def test_an_unsigned_rerun_typed_by_hand_takes_no_place(registry_copy, tmp_path):
    _plant(registry_copy, LIGER, FORGED, factor=0.25)
    out, runs = _build(registry_copy, tmp_path)
    forged = runs[FORGED]
    assert forged["rank"] is None and forged["notEligible"] == ["not Verified: unsigned"]
    assert runs[SITEGEN]["rankLabel"] == "1"  # no "faster but set aside" either: its speed is unproven
    assert _summary_leaders(out) == ["sitegen Triton JSD"]
    page = (out / "runs" / FORGED / "index.html").read_text()
    assert "Not eligible to rank: not Verified: unsigned" in page
    operation = (out / f"{H200_PAGE}.html").read_text()
    assert "not ranked: not Verified: unsigned" in operation  # still listed, with its value


def test_a_pull_requests_fabricated_outside_run_passes_verify_and_takes_no_place(registry_copy, tmp_path):
    _plant(registry_copy, LIGER, FORGED, factor=0.25, implementation=_outside_implementation(registry_copy))
    relock(registry_copy)
    trust = registry_copy / "sitegen.toml"  # the base branch's list: the pull request adds no key
    verified = invoke("verify", registry_copy, "--full", "--trust", trust)
    assert verified.exit_code == 0, verified.output
    out, runs = _build(registry_copy, tmp_path)
    assert runs[FORGED]["rank"] is None
    assert _summary_leaders(out) == ["sitegen Triton JSD"]
    # CI's recipe runs verify --strict, which names the unsigned rerun.
    strict = invoke("verify", registry_copy, "--full", "--strict", "--trust", trust)
    assert strict.exit_code == 1
    assert strict.stderr.splitlines()[0] == (
        f"{registry_copy / 'runs' / (FORGED + '.json')}: $.metadata.signature: a controlled rerun without a "
        "signature: it holds no place until a trusted key signs it")


def test_a_rerun_signed_by_a_key_the_registry_does_not_trust_takes_no_place(registry_copy, tmp_path):
    _plant(registry_copy, LIGER, FORGED, factor=0.25)
    stranger = tmp_path / "stranger"
    keygen(stranger, "not trusted")
    sign_registry(registry_copy, stranger, (FORGED,))
    out, runs = _build(registry_copy, tmp_path)
    assert runs[FORGED]["rank"] is None
    assert "not Verified: signed by a key this registry does not trust" in (out / "runs" / FORGED / "index.html").read_text()
    assert _summary_leaders(out) == ["sitegen Triton JSD"]


def test_outside_code_signed_by_a_trusted_key_but_not_reviewed_takes_no_place(registry_copy, tmp_path):
    _plant(registry_copy, LIGER, FORGED, factor=0.25, implementation=_outside_implementation(registry_copy))
    sign_registry(registry_copy, FIXTURE_KEY, (FORGED,))
    out, runs = _build(registry_copy, tmp_path)
    assert runs[FORGED]["rank"] is None
    assert "not Verified: outside code not reviewed by this registry" in (out / "runs" / FORGED / "index.html").read_text()
    assert _summary_leaders(out) == ["sitegen Triton JSD"]


def test_the_same_run_signed_by_the_trusted_key_ranks_first(registry_copy, tmp_path):
    # The rule's other side: sign the planted run with the registry's key and it leads.
    _plant(registry_copy, LIGER, FORGED, factor=0.25)
    sign_registry(registry_copy, FIXTURE_KEY, (FORGED,))
    out, runs = _build(registry_copy, tmp_path)
    assert runs[FORGED]["rankLabel"] == "1" and runs[FORGED]["evidenceLevel"] == "Verified"
    assert _summary_leaders(out) == ["Liger"]


def test_a_retired_keys_new_signature_is_refused(registry_copy, tmp_path):
    # The key's entry pins what it signed; a kept private half signs a new run dated inside the window.
    config = registry_copy / "sitegen.toml"
    from sitegen.core.digest import document_digest

    runs_before = [json.loads(p.read_text()) for p in sorted((registry_copy / "runs").glob("*.json"))]
    pinned = [doc for doc in runs_before if doc["metadata"].get("signature")]
    assert len(pinned) == 3

    digests = ", ".join(f'"{document_digest(doc)}"' for doc in pinned)
    config.write_text(config.read_text() + f"runs = [{digests}]\n")
    _plant(registry_copy, LIGER, FORGED, factor=0.25)
    sign_registry(registry_copy, FIXTURE_KEY, (FORGED,))
    out, runs = _build(registry_copy, tmp_path)
    assert runs[FORGED]["rank"] is None
    assert "a retired key that vouches only for the runs its trust entry lists" in (out / "runs" / FORGED / "index.html").read_text()
    assert runs[LIGER]["evidenceLevel"] == "Verified"
    verify = invoke("verify", registry_copy, "--full")
    assert verify.exit_code == 1
    assert verify.stderr.splitlines()[:2] == [
        f"{registry_copy / 'runs' / (FORGED + '.json')}: $.metadata.signature: signed by sitegen test fixtures, a retired "
        "key that vouches only for the runs its trust entry lists, not this one", "1 problem(s) found."]


def test_a_gpu_page_says_which_reruns_it_holds_and_when_they_were_measured(registry_copy, tmp_path):
    # Issue 48: the H200 page names the registry's own reruns per operation; the B200 (sources only) none.
    _plant(registry_copy, LIGER, FORGED, factor=0.25)  # one more rerun, unsigned: counted, not placed
    out, _ = _build(registry_copy, tmp_path)
    h200 = (out / "gpus" / "nvidia-h200" / "index.html").read_text()
    assert (f'reruns: Jensen-Shannon divergence loss</dt> <dd><a href="../../operations/{OPERATION}/nvidia-h200/index.html">'
            "4 controlled reruns, 3 Verified or Replicated, measured 2026-08-20 to 2026-08-22</a>") in h200
    assert "<dt>reruns:" not in (out / "gpus" / "nvidia-b200" / "index.html").read_text()


def test_the_compare_app_gives_no_verdict_on_a_run_that_holds_no_place(registry_copy, tmp_path, browser):
    import headless

    _plant(registry_copy, LIGER, FORGED, factor=0.25)
    out, _ = _build(registry_copy, tmp_path)
    assert json.loads((out / "compare" / "index.json").read_text())["no_place"] == {
        FORGED: "not Verified: unsigned", "sitegen-h200-tokens2048-dry-2026-08-19": "dry run (CPU rehearsal)"}
    with headless.served(out) as url:
        page = browser.new_page()
        page.goto(url + f"compare/index.html?a={FORGED}&b={SITEGEN}")
        verdict = page.locator("#compare-verdict")
        verdict.filter(has_text="verdict").wait_for(timeout=20_000)
        # Four times faster by its samples, and still not called faster: its speed is unproven.
        assert verdict.inner_text() == (
            "No verdict: a forged rerun holds no place in its comparison group (not Verified: unsigned). "
            "Only runs that hold a place in the group are compared, as in its ranks.")
        page.close()


def test_a_rebuild_after_a_flagged_runs_signature_stops_counting_drops_its_set_aside_note(registry_copy, tmp_path):
    # A run flagged only for a slowed GPU, faster than the leader, undercuts it while its signature is
    # trusted; re-signed by a stranger it counts for nothing. Its level (Reproducible) is the same
    # both times: the next build must not take the cohort's ranking from the build state.
    from conftest import edit_run

    edit_run(registry_copy, LIGER, lambda s: s["evidence"]["integrity"].append(
        {"name": "throttle", "passed": False, "detail": "SM clocks seen [1560, 1965] MHz of 1980 max"}))
    edit_run(registry_copy, LIGER, lambda s: s["timing"].update(
        samplesNs=[v // 4 for v in s["timing"]["samplesNs"]],
        latencyNs={k: v for k, v in summary([v // 4 for v in s["timing"]["samplesNs"]]).items() if k in s["timing"]["latencyNs"]}))
    _, runs = _build(registry_copy, tmp_path)
    assert runs[SITEGEN]["rankLabel"] == "1 · faster but set aside: Liger (flagged: throttle)"
    stranger = tmp_path / "stranger"
    keygen(stranger, "not trusted")
    sign_registry(registry_copy, stranger, (LIGER,))
    _, runs = _build(registry_copy, tmp_path)
    assert runs[SITEGEN]["rankLabel"] == "1"


def test_verify_strict_names_an_unsigned_rerun_whose_command_was_removed(registry_copy):
    # Integrity checks are a rerun's alone: without its command line it is still a rerun to sign.
    doc = _plant(registry_copy, LIGER, FORGED, factor=0.25)
    doc["spec"]["evidence"].pop("command", None)
    (registry_copy / "runs" / f"{FORGED}.json").write_text(json.dumps(doc, indent=2))
    relock(registry_copy)
    strict = invoke("verify", registry_copy, "--full", "--strict")
    assert strict.exit_code == 1
    assert strict.stderr.splitlines()[0].startswith(f"{registry_copy / 'runs' / (FORGED + '.json')}: $.metadata.signature: ")
