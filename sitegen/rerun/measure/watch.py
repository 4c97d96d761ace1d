"""A measuring process's stderr as the parent sees it: log lines passed on, progress events
turned into the progress display (cases done out of total across every process, ETA).

A worker reports progress as one stderr line per event, ``PREFIX`` + JSON, only when its
plan asks for it; run by hand it prints nothing of the kind.
"""

from __future__ import annotations

import json
import sys
from collections import deque
from typing import IO, Any

from sitegen.core.progress import Progress

PREFIX = "@sitegen-progress "


def emit(enabled: bool, **event: Any) -> None:
    """Worker side: report ``event`` (stage, done, total) to the parent, where its plan asks for it (``enabled``)."""
    if enabled:
        print(PREFIX + json.dumps(event), file=sys.stderr, flush=True)


class Watch:
    """Parent side: one per rerun, fed each process's stderr in turn.

    The gate runs in the first process only; the timed cases are counted over all the
    processes, a later process's share estimated from the latest one's until it reports.
    """

    def __init__(self, progress: Progress, processes: int, *, logs: bool = True):
        self.progress = progress
        self.processes = processes
        self.logs = logs
        self.finished = 0  # cases timed by processes that have exited
        self.per_process: int | None = None
        self.tail: deque[str] = deque(maxlen=40)  # kept for a failure when logs are hidden
        self.timing_started = False

    def follow(self, k: int, stream: IO[str]) -> None:
        """Read process ``k``'s stderr to its end."""
        done = 0
        for raw in stream:
            line = raw.rstrip("\n")
            if not line.startswith(PREFIX):
                self.tail.append(line)
                if self.logs:
                    self.progress.log(line)
                continue
            try:
                event = json.loads(line[len(PREFIX):])
            except ValueError:
                continue
            done = self._event(k, event, done)
        self.finished += done

    def _event(self, k: int, event: dict[str, Any], done: int) -> int:
        where = f"process {k + 1}/{self.processes}"
        if event.get("stage") == "gate":
            self.progress.stage(f"{where} · correctness gate (workloads)", total=event.get("total"))
            self.progress.update(completed=event.get("done", 0))
            return done
        total, done = event.get("total", 0), event.get("done", 0)
        self.per_process = total
        expected = self.finished + total + total * (self.processes - k - 1)
        if not self.timing_started:
            self.progress.stage(f"{where} · cases", total=expected)
            self.timing_started = True
        self.progress.update(description=f"{where} · cases", completed=self.finished + done, total=expected)
        return done

    def failure_lines(self) -> list[str]:
        """The last lines a failed process printed, for when they were not shown."""
        return [] if self.logs else list(self.tail)
