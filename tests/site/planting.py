"""Plant runs of sitegen's kernel into a copy of the small fixture registry: copies of its
newest H200 run (same cohort) with the samples, implementation, time and evidence a test needs.
The caller relocks the registry (conftest.relock) once every run is planted."""

from __future__ import annotations

import json
from pathlib import Path

from sitegen.core.digest import document_digest
from sitegen.rules.stats import summary

BASE_RUN = "sitegen-h200-tokens2048-2026-08-21"


def implementation(root: Path, file_name: str, *, name: str | None = None, commit: str | None = None) -> dict:
    """A copy of sitegen-triton named ``file_name`` (metadata), with another ``name`` (a different
    implementation) or ``commit`` (another revision of the same one)."""
    document = json.loads((root / "implementations" / "sitegen-triton.json").read_text())
    document["metadata"]["name"] = file_name
    if name is not None:
        document["spec"]["name"] = name
    if commit is not None:
        document["spec"]["projectRevision"]["commit"] = commit
    (root / "implementations" / f"{file_name}.json").write_text(json.dumps(document, indent=2))
    return document


def environment(root: Path, file_name: str) -> dict:
    """A copy of the H200 environment on another driver: another machine's setup, the same GPU."""
    document = json.loads((root / "environments" / "sitegen-nvidia-h200.json").read_text())
    document["metadata"]["name"] = file_name
    document["spec"]["software"]["driver"] = "590.00.00"
    (root / "environments" / f"{file_name}.json").write_text(json.dumps(document, indent=2))
    return document


def run(root: Path, name: str, implementation_doc: dict, samples_ns: list[int], *, observed: str | None = None,
        details: dict | None = None, environment_doc: dict | None = None) -> None:
    """One run of ``implementation_doc`` with these raw samples (its stated statistics follow from them)."""
    document = json.loads((root / "runs" / f"{BASE_RUN}.json").read_text())
    document["metadata"] = {"name": name, "title": f"{implementation_doc['spec']['name']} · {name}"}
    stated = summary(samples_ns)
    document["spec"]["implementationDigest"] = document_digest(implementation_doc)
    document["spec"]["timing"] = {"latencyNs": {k: stated[k] for k in ("median", "min", "max", "p20", "p80")},
                                  "primaryStatistic": "median", "samplesNs": samples_ns}
    document["spec"]["evidence"].pop("rerunOf", None)
    if observed is not None:
        document["spec"]["observedAt"] = observed
    if details is not None:
        document["spec"]["evidence"]["details"] = details
    if environment_doc is not None:
        document["spec"]["environmentDigest"] = document_digest(environment_doc)
    (root / "runs" / f"{name}.json").write_text(json.dumps(document, indent=2))


def ms(*values: float) -> list[int]:
    return [round(v * 1e6) for v in values]


def planted_site(folder: Path, plant) -> Path:
    """Copy the small fixture registry into ``folder``/records, ``plant(root)`` runs in it, relock
    it and build its site into ``folder``/site (returned)."""
    import shutil

    from conftest import FIXTURE, relock
    from sitegen.site.build import build_site

    root = folder / "records"
    shutil.copytree(FIXTURE, root)
    plant(root)
    relock(root)
    sign_planted(root)
    build_site(root, folder / "site")
    return folder / "site"


def sign_planted(root: Path) -> None:
    """Sign every unsigned run planted in ``root`` with the fixtures' key, as the key holder of the machine
    that measured them would: a controlled rerun takes a place only when Verified."""
    from conftest import FIXTURE_KEY
    from sitegen.trust.registrysigning import sign_registry

    unsigned = [p.stem for p in sorted((root / "runs").glob("*.json"))
                if (doc := json.loads(p.read_text()))["spec"].get("evidence") and not doc["metadata"].get("signature")
                and not doc["spec"]["evidence"].get("dryRun") and doc["spec"]["evidence"].get("integrity")]
    if unsigned:
        sign_registry(root, FIXTURE_KEY, tuple(unsigned))
