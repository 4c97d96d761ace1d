"""Whether the code a controlled rerun measured may earn Verified: code sitegen ships, or outside
code the registry lists as reviewed.

An outside implementation runs in the process that times and judges it, so it can replace the
gate, the timed-output check or the clock before they run (sitegen.rerun.guards catches the
patches it knows of, not every one). A signature proves which code ran, not that the checks were
honest; only a person who read the code can vouch for that. Runs are judged from their records:
sitegen's own peers are recognized by the implementation record their shipped class writes
(name, project, callable), which an outside implementation cannot write (`sitegen rerun`
describes outside code by its own module and class, always with a source digest).
"""

from __future__ import annotations

import re
from functools import cache

from sitegen.site.runfacts import RunFacts

UNREVIEWED = ("not Verified: outside code not reviewed by this registry: it runs in the measuring process and "
              "could forge its checks")


def _identity(spec) -> tuple:
    """What identifies a shipped peer across versions and commits (both change; these do not)."""
    call = spec.get("callable") or {}
    return spec["name"], spec["projectRevision"]["project"], call.get("module"), call.get("name"), call.get("variant")


@cache
def shipped_peers() -> frozenset[tuple]:
    """(operation name, identity) of every peer of every operation sitegen ships (sitegen.operations.BUILTIN).

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
            out.add((op_doc["metadata"]["name"], _identity(doc["spec"])))
    return frozenset(out)


def _canonical(name: str) -> str:
    # PEP 503: distribution names compare case-insensitively, runs of -_. as one -.
    return re.sub(r"[-_.]+", "-", name).lower()


def reviewed(revision, entries) -> bool:
    """Whether ``entries`` (sitegen.config.ReviewedCode) list this projectRevision's code."""
    for entry in entries:
        if entry.source_digest is not None and entry.source_digest == revision.sourceDigest:
            return True
        if entry.distribution is not None and revision.version:
            name, _, version = entry.distribution.rpartition("@")
            if _canonical(name) == _canonical(revision.project) and version == revision.version:
                return True
    return False


def trusted_code(facts: RunFacts, entries) -> bool:
    """A shipped peer of the run's operation, or code the registry reviewed."""
    spec = facts.implementation.model.spec
    ident = _identity(spec.model_dump(exclude_none=True))
    return (facts.operation.name, ident) in shipped_peers() or reviewed(spec.projectRevision, entries)
