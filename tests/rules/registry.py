"""A registry written for one rule: the small fixture's documents, its runs replaced by the test's.

Every run lands in one cohort (JSD forward, fp32, 2048 tokens, on an H200, under sitegen's
controlled protocol) unless the test says otherwise, so a test states only what its rule is
about: medians, samples, levels. Runs start from the fixture's controlled rerun, so they are
what `sitegen rerun` writes, signed with the fixtures' key, which the registry's sitegen.toml
trusts: a controlled rerun takes a place only when Verified, which needs it. `signed=False`
leaves a run unsigned (Reproducible, out of every ranking).
"""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
from pathlib import Path

from sitegen.registry.config import load_config
from sitegen.core.digest import document_digest
from sitegen.registry.folder import open_registry
from sitegen.trust.registrysigning import sign_registry
from sitegen.rules.stats import summary
from sitegen.facts.index import build_index

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "registry-small"
KEY = FIXTURE.parent / "keys" / "fixture_ed25519"
TEMPLATE_RUN = "sitegen-h200-tokens2048-2026-08-20"
STATED = ("median", "min", "max", "p20", "p80")


def spread(center_ns: float, half_width: float, n: int = 41) -> list[int]:
    """n samples evenly spaced over center ± half_width·center: a known, seed-free distribution."""
    return [round(center_ns * (1 + half_width * (2 * k / (n - 1) - 1))) for k in range(n)]


class RuleRegistry:
    def __init__(self, root: Path, *, family: str | None = None):
        """``family``: the runs' protocol is a copy of sitegen's under that comparability family, a
        source's own. Its cohort then holds published runs beside reruns measured under it (as
        `--like` reruns are), which a cohort of sitegen's own family never does: a run there that
        is no Verified rerun holds no place."""
        shutil.copytree(FIXTURE, root)
        self.root = root
        self.template = self._read("runs", TEMPLATE_RUN)
        for folder in ("runs", "attestations"):
            for path in (root / folder).glob("*.json"):
                path.unlink()
        self.to_sign: list[str] = []
        self.protocol = "sitegen-rerun-forward"
        """The file name (no .json) of the protocol the runs reference, for amend()."""
        if family is not None:
            self.protocol = f"{family}-forward"
            self.template["spec"]["protocolDigest"] = self.variant(
                "protocols", "sitegen-rerun-forward", self.protocol,
                lambda spec: spec["comparability"].update(family=family))

    def _read(self, folder: str, name: str) -> dict:
        return json.loads((self.root / folder / f"{name}.json").read_text())

    def _write(self, folder: str, doc: dict) -> str:
        (self.root / folder / f"{doc['metadata']['name']}.json").write_text(json.dumps(doc, indent=2))
        return document_digest(doc)

    def variant(self, folder: str, template: str, name: str, change) -> str:
        """A copy of a fixture document under a new name, ``change`` applied to its spec; its digest."""
        doc = self._read(folder, template)
        doc["metadata"] = {"name": name}
        change(doc["spec"])
        return self._write(folder, doc)

    def amend(self, folder: str, name: str, change) -> str:
        """Change a document in place, and every reference to it, down the chain (a workload that
        names the operation gets a new digest, so do the runs naming the workload): its new digest."""
        doc = self._read(folder, name)
        old = document_digest(doc)
        change(doc["spec"])
        pending = [(old, self._write(folder, doc))]
        while pending:
            before, after = pending.pop()
            self.template = json.loads(json.dumps(self.template).replace(before, after))
            for path in self.root.rglob("*.json"):
                text = path.read_text()
                if before in text:
                    referrer = json.loads(text)
                    path.write_text(text.replace(before, after))
                    pending.append((document_digest(referrer), document_digest(json.loads(path.read_text()))))
        return document_digest(self._read(folder, name))

    def implementation(self, name: str, **revision) -> str:
        """An implementation like the fixture's sitegen one; ``revision`` replaces its projectRevision fields."""
        def change(spec):
            spec["name"] = name
            spec["projectRevision"].update(commit=hashlib.sha1(name.encode()).hexdigest()[:12])
            spec["projectRevision"].update(revision)
            spec["projectRevision"] = {k: v for k, v in spec["projectRevision"].items() if v is not None}
        return self.variant("implementations", "sitegen-triton", name, change)

    def run(self, name: str, implementation: str, samples_ns: list[int] | None, *, observed: str = "2026-08-20T10:00:00Z",
            uuid: str = "GPU-1111aaaa", signed: bool = True, controlled: bool = True, stated: dict | None = None,
            **spec_fields) -> str:
        """A run of ``implementation``: a controlled rerun with these samples, or (controlled=False)
        a published one with ``stated`` latency statistics and no samples, evidence or correctness."""
        doc = copy.deepcopy(self.template)
        doc["metadata"] = {"name": name}
        spec = doc["spec"]
        spec.update(implementationDigest=implementation, observedAt=observed)
        if samples_ns is not None:
            figures = summary(samples_ns)
            spec["timing"] = {"latencyNs": {k: figures[k] for k in STATED}, "primaryStatistic": "median",
                              "samplesNs": samples_ns}
        else:
            spec["timing"] = {"latencyNs": stated, "primaryStatistic": "median"}
        spec["evidence"]["instance"]["gpuUuid"] = uuid
        if not controlled:
            del spec["evidence"], spec["correctness"]
        spec.update(spec_fields)
        spec = {k: v for k, v in spec.items() if v is not None}
        doc["spec"] = spec
        if signed:
            self.to_sign.append(name)
        return self._write("runs", doc)

    def edit(self, name: str, change) -> None:
        """Apply ``change`` to a written run's spec (before index(), which locks and signs)."""
        path = self.root / "runs" / f"{name}.json"
        doc = json.loads(path.read_text())
        change(doc["spec"])
        path.write_text(json.dumps(doc, indent=2))

    def index(self):
        """The registry as the site sees it, locked and signed first: facts by run name."""
        from sitegen.core.atomicwrite import write_atomic
        from sitegen.registry.lockfile import LOCK_NAME
        from sitegen.registry.folder import lock_contents

        write_atomic(self.root / LOCK_NAME, lock_contents(open_registry(self.root, check_lock_file=False)))
        if self.to_sign:
            sign_registry(self.root, KEY, tuple(self.to_sign))
        config = load_config(self.root)
        return {f.name: f for f in build_index(open_registry(self.root), config).runs}, config
