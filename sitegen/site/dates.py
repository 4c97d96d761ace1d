"""The dates a site states: the build's (home, citation, feeds) and each operation feed's."""

from __future__ import annotations

import os
from datetime import datetime, timezone

from sitegen.facts.index import Index


def _epoch_date() -> str | None:
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch and epoch.isdigit():
        return datetime.fromtimestamp(int(epoch), tz=timezone.utc).date().isoformat()
    return None


def build_date(index: Index) -> str:
    """SOURCE_DATE_EPOCH when set (reproducible-builds convention), else the newest record date."""
    dates = [f.observed for f in index.runs]
    dates += [a.model.spec.date for a in index.registry.of_kind("Attestation")]
    dates += [s.published for s in index.config.sources.values()]
    return _epoch_date() or max(dates, default="1970-01-01")


def operation_date(index: Index, runs) -> str:
    """An operation feed's updated day: SOURCE_DATE_EPOCH, else the newest date of its own runs,
    their notes and their sources. Its own, not the registry's: a note on another operation's run
    must leave this feed's bytes, and so its page group (sitegen.site.engine.reuse), as they were."""
    dates = [f.observed for f in runs] + [a.model.spec.date for f in runs for a in f.attestations]
    sources = {f.run.spec.sourceNative.source for f in runs if f.run.spec.sourceNative}
    dates += [index.config.sources[s].published for s in sources if s in index.config.sources]
    # build_date scans every run: asked only for an operation without dates, since once per
    # operation it made a build O(operations x runs).
    return _epoch_date() or (max(dates) if dates else build_date(index))
