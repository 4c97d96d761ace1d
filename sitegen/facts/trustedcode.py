"""Whether the code a controlled rerun measured may earn Verified: code sitegen ships, or outside
code the registry lists as reviewed.

An outside implementation runs in the process that times and judges it, so it can replace the
gate, the timed-output check or the clock before they run (sitegen.rerun.checks.guards catches the
patches it knows of, not every one). A signature proves which code ran, not that the checks were
honest; only a person who read the code can vouch for that. Runs are judged from their records,
which `sitegen rerun` writes in its planning process, where no outside code runs: sitegen's own
code by a callable inside the sitegen package, and the shipped peers (Liger's modules, torch's) by
the project and callable their shipped class writes. An outside implementation cannot get either:
`sitegen rerun` names it by its own module and class, and a module inside the sitegen package is
sitegen's code.
"""

from __future__ import annotations

import re
from functools import cache

from sitegen.facts.runfacts import RunFacts

UNREVIEWED = ("not Verified: outside code not reviewed by this registry: it runs in the measuring process and "
              "could forge its checks")


def _identity(spec) -> tuple:
    """What identifies a shipped peer's code across versions and commits (both change; these do not)."""
    call = spec.get("callable") or {}
    return spec["projectRevision"]["project"], call.get("module"), call.get("name"), call.get("variant")


@cache
def shipped_peers() -> frozenset[tuple]:
    """The identity of every peer of every operation sitegen ships (sitegen.operations.BUILTIN).

    Only the shipped operations are imported: an entry point's operation is outside code too,
    and the site build runs none."""
    from sitegen.operations import BUILTIN, import_target

    out = set()
    for target in BUILTIN.values():
        op = import_target(target, "--operation")()
        op_doc = op.operation_document()
        for name, peer in op.peers.items():
            doc = import_target(peer, name)().document(op_doc, version=None, commit=None, repository=None,
                                                       run_version=None)
            out.add(_identity(doc["spec"]))
    return frozenset(out)


def _canonical(name: str) -> str:
    # PEP 503: distribution names compare case-insensitively, runs of -_. as one -.
    return re.sub(r"[-_.]+", "-", name).lower()


def reviewed(revision, entries) -> bool:
    """Whether ``entries`` (sitegen.registry.config.ReviewedCode) list this projectRevision's code."""
    for entry in entries:
        if entry.source_digest is not None and entry.source_digest == revision.sourceDigest:
            return True
        if entry.distribution is not None and revision.version:
            name, _, version = entry.distribution.rpartition("@")
            if _canonical(name) == _canonical(revision.project) and version == revision.version:
                return True
    return False


def trusted_code(facts: RunFacts, entries) -> bool:
    """sitegen's own code, a peer sitegen ships, or code the registry reviewed."""
    spec = facts.implementation.model.spec
    module = spec.callable.module if spec.callable else ""
    return (module == "sitegen" or module.startswith("sitegen.")
            or _identity(spec.model_dump(exclude_none=True)) in shipped_peers()
            or reviewed(spec.projectRevision, entries))
