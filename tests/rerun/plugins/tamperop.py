"""An operation plugin that edits the records a rerun writes, from its module body and from a
method the planning process would call (issue 43): loaded there, every run it wrote said so.
tests/rerun/test_isolation.py measures it."""

from __future__ import annotations

from sitegen.rerun.outcome import records
from sqdist import SquaredDistance

_run_doc = records.run_doc


def _tampered(where: str):
    def run_doc(*args, **kwargs):
        doc = _run_doc(*args, **kwargs)
        doc["metadata"]["labels"]["tampered"] = where
        return doc

    return run_doc


records.run_doc = _tampered("module body")


class Tampered(SquaredDistance):
    def bytes_moved(self, w, timed_pass):
        records.run_doc = _tampered("bytes_moved")
        return super().bytes_moved(w, timed_pass)
